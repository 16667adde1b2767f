// The owner's console follows the bridge live: server-sent events from
// /ui/events add the calls as they start and end, refresh the questions
// waiting, the live tasks, and the counters. Every value is set as text,
// never as HTML, but the lists of questions and tasks, which the server
// renders and escapes.
(function () {
  'use strict';
  var live = document.getElementById('live');
  var es = new EventSource('/ui/events');
  var maxRows = 50;

  es.onopen = function () {
    live.textContent = 'live';
    live.classList.add('on');
    document.body.setAttribute('data-live', 'on');
  };
  es.onerror = function () {
    live.textContent = 'reconnecting…';
    live.classList.remove('on');
    document.body.removeAttribute('data-live');
  };

  function cell(row, text, cls) {
    var td = document.createElement('td');
    td.textContent = text;
    if (cls) { td.className = cls; }
    row.appendChild(td);
    return td;
  }

  es.addEventListener('call', function (ev) {
    var c = JSON.parse(ev.data);
    var body = document.getElementById('live-calls');
    if (!body) { return; }
    var row = body.querySelector('tr[data-seq="' + Number(c.seq) + '"]');
    if (!row) {
      row = document.createElement('tr');
      row.setAttribute('data-seq', String(Number(c.seq)));
      cell(row, c.time);
      cell(row, c.name);
      cell(row, c.client);
      cell(row, '', 'state');
      cell(row, '', 'dur');
      body.insertBefore(row, body.firstChild);
      while (body.rows.length > maxRows) { body.deleteRow(body.rows.length - 1); }
    } else {
      row.cells[1].textContent = c.name;
    }
    row.className = c.state === 'running' ? 'running' : (c.failed ? 'failed' : '');
    var state = c.state === 'running' ? 'running' : c.outcome;
    if (c.confirmation) { state += ' (' + c.confirmation + ': ' + c.answer + ')'; }
    row.querySelector('.state').textContent = state;
    row.querySelector('.dur').textContent = c.dur || '';
  });

  function setStat(name, value) {
    var els = document.querySelectorAll('[data-stat="' + name + '"]');
    for (var i = 0; i < els.length; i++) { els[i].textContent = String(value); }
  }

  function setWaiting(n) {
    setStat('waiting', n);
    var banner = document.getElementById('waiting');
    if (banner) { banner.hidden = n === 0; }
  }

  // refresher returns a function that puts the server's fragment part
  // of the questions page in the element id, one fetch at a time.
  function refresher(id, part) {
    var busy = false;
    return function () {
      var box = document.getElementById(id);
      if (!box || busy) { return; }
      busy = true;
      fetch('/ui/questions?part=' + part, { credentials: 'same-origin' })
        .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
        .then(function (html) {
          // Rendered and escaped by the server's templates.
          var doc = new DOMParser().parseFromString('<div>' + html + '</div>', 'text/html');
          box.replaceChildren.apply(box, Array.prototype.slice.call(doc.body.firstChild.childNodes));
        })
        .catch(function () {})
        .then(function () { busy = false; });
    };
  }
  var refreshQuestions = refresher('questions', 'list');
  var refreshTasks = refresher('tasks', 'tasks');

  es.addEventListener('stats', function (ev) {
    var s = JSON.parse(ev.data);
    Object.keys(s).forEach(function (k) { if (k !== 'waiting') { setStat(k, s[k]); } });
    setWaiting(s.waiting);
    refreshTasks(); // their ages, and their statuses, which no event tells
  });

  es.addEventListener('questions', function (ev) {
    setWaiting(JSON.parse(ev.data).waiting);
    refreshQuestions();
  });

  es.addEventListener('dropped', function () {
    var note = document.getElementById('dropped');
    if (note) { note.hidden = false; }
  });
}());
