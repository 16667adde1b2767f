package console

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry/audit"
)

// serve routes a request of the console: the static files to anyone the
// guard lets through (they hold nothing of the owner's), everything else
// to the owner alone.
func (c *Console) serve(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	rest, ok := strings.CutPrefix(r.URL.Path, Path)
	switch {
	case !ok:
		http.NotFound(w, r)
		return
	case rest == "":
		to := Path + "/"
		if r.URL.RawQuery != "" {
			to += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, to, http.StatusMovedPermanently)
		return
	case strings.HasPrefix(rest, "/static/"):
		if d := c.opts.Guard.Check(r, false); d.Status != 0 {
			c.refuse(w, r, d.Status, d.Reason)
			return
		}
		c.pages.static(w, r, strings.TrimPrefix(rest, "/static/"))
		return
	}
	select {
	case <-c.live.done:
		c.pages.refusal(w, http.StatusServiceUnavailable, "the bridge is stopping")
		return
	default:
	}
	v, ok := c.admit(w, r)
	if !ok {
		return
	}
	if r.Method == http.MethodPost {
		if rest != "/answer" {
			c.pages.refusal(w, http.StatusMethodNotAllowed, "nothing here takes a POST")
			return
		}
		c.answer(w, r, v)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		c.pages.refusal(w, http.StatusMethodNotAllowed, r.Method+" is not served here")
		return
	}
	switch rest {
	case "/":
		c.render(w, r, v, "overview", "Overview", c.overview(r))
	case "/tools":
		c.render(w, r, v, "tools", "Tools", c.toolsPage(r))
	case "/clients":
		c.render(w, r, v, "clients", "Clients", c.clientsPage())
	case "/calls":
		c.render(w, r, v, "calls", "Calls", c.callsPage(r))
	case "/charts":
		c.render(w, r, v, "charts", "Charts", c.chartsPage(r))
	case "/questions":
		switch r.URL.Query().Get("part") {
		case "list":
			c.pages.fragment(w, "questions-list", c.pageOf(v, "questions", "Questions", c.questionsPage()))
		case "tasks":
			c.pages.fragment(w, "tasks-list", c.pageOf(v, "questions", "Questions", c.questionsPage()))
		default:
			c.render(w, r, v, "questions", "Questions", c.questionsPage())
		}
	case "/events":
		c.events(w, r)
	default:
		c.pages.refusal(w, http.StatusNotFound, "")
	}
}

// render answers with the page name, made of body.
func (c *Console) render(w http.ResponseWriter, r *http.Request, v viewer, name, title string, body any) {
	c.pages.render(w, r, name, c.pageOf(v, name, title, body))
}

// pageOf is what every page shows around its body.
func (c *Console) pageOf(v viewer, name, title string, body any) page {
	return page{Title: title, Nav: name, CSRF: c.csrf(v), Waiting: c.asks.count(), AnswersHere: c.opts.AnswersHere,
		Version: c.opts.Version, Body: body}
}

// answer takes the owner's answer to a question, from the questions
// page's form, and goes back to the page.
func (c *Console) answer(w http.ResponseWriter, r *http.Request, v viewer) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		c.pages.refusal(w, http.StatusBadRequest, "a form the console cannot read")
		return
	}
	if !c.csrfValid(v, r.PostForm.Get("csrf")) {
		c.refuse(w, r, http.StatusForbidden, "a form without this page's token")
		return
	}
	id := r.PostForm.Get("id")
	var q *question
	for _, w := range c.asks.list() {
		if w.ID == id {
			q = w
		}
	}
	if q == nil {
		c.pages.refusal(w, http.StatusConflict, errNoQuestion.Error())
		return
	}
	var res jsontext.Value
	switch a := r.PostForm.Get("answer"); {
	case q.Confirm && (a == "allow" || a == "deny"):
		res, _ = json.Marshal(map[string]any{"action": "accept", "content": map[string]bool{"confirm": a == "allow"}}, json.Deterministic(true))
	case !q.Confirm && a == "decline":
		res = jsontext.Value(`{"action":"decline"}`)
	case !q.Confirm && a == "accept":
		var err error
		res, err = formAnswer(q.Fields, func(k string) (string, bool) {
			vs, ok := r.PostForm[k]
			if !ok || len(vs) == 0 {
				return "", false
			}
			return vs[0], true
		})
		if err != nil {
			c.pages.refusal(w, http.StatusBadRequest, err.Error())
			return
		}
	default:
		c.pages.refusal(w, http.StatusBadRequest, "an answer the question does not take")
		return
	}
	if err := c.asks.answer(id, res); err != nil {
		c.pages.refusal(w, http.StatusConflict, err.Error())
		return
	}
	c.log.Info().Str("tool", q.Tool).Str("principal", q.Principal).Str("answer", r.PostForm.Get("answer")).Msg("the owner answered on the console")
	http.Redirect(w, r, Path+"/questions", http.StatusSeeOther)
}

// Intervals of an event stream.
const (
	statsEvery     = 2 * time.Second
	keepAliveEvery = 15 * time.Second
	eventStall     = 10 * time.Second // a browser that reads nothing for this long loses its stream
)

// events serves the event stream of a page: calls as they start and
// end, the questions waiting, and the counters every 2 seconds. An open
// stream is what says that the owner is at the console.
func (c *Console) events(w http.ResponseWriter, r *http.Request) {
	s, ok := c.live.subscribe()
	if !ok {
		c.pages.refusal(w, http.StatusServiceUnavailable, "too many consoles open")
		return
	}
	defer c.live.unsubscribe(s)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(name string, data []byte) error {
		_ = rc.SetWriteDeadline(time.Now().Add(eventStall))
		if name == "" {
			fmt.Fprint(w, ": keep-alive\n\n")
		} else {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
		}
		return rc.Flush()
	}
	stats := func() error {
		b, _ := json.Marshal(c.stats(), json.Deterministic(true))
		return send("stats", b)
	}
	if stats() != nil {
		return
	}
	tick, alive := time.NewTicker(statsEvery), time.NewTicker(keepAliveEvery)
	defer tick.Stop()
	defer alive.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-c.live.done:
			return
		case ev := <-s.ch:
			if n := c.live.takeDropped(s); n > 0 {
				if err = send("dropped", fmt.Appendf(nil, `{"dropped":%d}`, n)); err != nil {
					return
				}
			}
			err = send(ev.name, ev.data)
		case <-tick.C:
			err = stats()
		case <-alive.C:
			err = send("", nil)
		}
		if err != nil {
			return
		}
	}
}

// statsEvent are the counters an event stream sends every 2 seconds.
type statsEvent struct {
	Sessions     int    `json:"sessions"`
	InFlight     int    `json:"inflight"`
	Tasks        int    `json:"tasks"`
	TasksRunning int    `json:"tasksrunning"`
	Held         string `json:"held"`
	Rate         string `json:"rate"`
	Errors       int    `json:"errors"`
	Waiting      int    `json:"waiting"`
}

func (c *Console) stats() statsEvent {
	st := c.opts.Server.Stats()
	rate, _, errs := c.rates(time.Now())
	tasks, running := c.taskCounts()
	return statsEvent{Sessions: len(st.Sessions), InFlight: st.InFlight, Tasks: tasks, TasksRunning: running, Held: formatBytes(st.HeldBytes),
		Rate: rate, Errors: errs, Waiting: c.asks.count()}
}

// rates returns the calls per second over the last minute, and the calls
// and errors of the last hour, of this bridge.
func (c *Console) rates(now time.Time) (perSecond string, calls, errors int) {
	minute := 0
	for _, e := range c.live.recent() {
		if now.Sub(e.end) <= time.Minute {
			minute++
		}
		if now.Sub(e.end) <= time.Hour {
			calls++
			if e.e.Outcome != "ok" {
				errors++
			}
		}
	}
	return fmt.Sprintf("%.2f", float64(minute)/60), calls, errors
}

// CallStarted is part of registry.Observer: the console shows the call
// live.
func (c *Console) CallStarted(call *protocol.Call, kind, name string, at time.Time) {
	c.live.CallStarted(call, kind, name, at)
}

// CallEnded is part of registry.Observer.
func (c *Console) CallEnded(call *protocol.Call, e *audit.Entry) { c.live.CallEnded(call, e) }
