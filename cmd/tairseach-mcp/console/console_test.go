package console

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/mcphttp"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/socketclient"
)

// hostile is what a client or a model may send, to be shown as text.
const hostile = `<img src=x onerror=alert(1)>`

const notesManifest = `{"id":"notes","tools":[
 {"name":"notes.delete","description":"Delete a note.","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}},
  "annotations":{"destructiveHint":true}},
 {"name":"notes.list","description":"List the notes. ` + hostile + `","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
 {"name":"notes.hidden","description":"Hidden.","inputSchema":{"type":"object"},"mcpExpose":false}
],"implementation":{"methods":{"notes.delete":"notes.delete","notes.list":"notes.list","notes.hidden":"notes.hidden"}}}`

// backendFunc is a registry.Caller.
type backendFunc func(method string) (jsontext.Value, error)

func (f backendFunc) Call(_ context.Context, method string, _ jsontext.Value, _ socketclient.Call) (jsontext.Value, error) {
	return f(method)
}

// fixture is a console over a registry and its protocol server, served
// by an httptest server.
type fixture struct {
	c   *Console
	ps  *protocol.Server
	reg *registry.Registry
	srv *httptest.Server
}

// newFixture is a console over a registry of notesManifest, whose backend
// answers at once: notes.list with an error.
func newFixture(t *testing.T, o Options) *fixture {
	t.Helper()
	return newFixtureOf(t, o, notesManifest, backendFunc(func(method string) (jsontext.Value, error) {
		if method == "notes.list" {
			return nil, &socketclient.RPCError{Code: -32011, Message: "Permission denied " + hostile}
		}
		return jsontext.Value(`{"ok":true}`), nil
	}))
}

// newFixtureOf is a console over a registry of manifest, whose calls go
// to backend; a call that may run as a task becomes one after 10 ms.
func newFixtureOf(t *testing.T, o Options, manifest string, backend registry.Caller) *fixture {
	t.Helper()
	return newFixtureWith(t, o, manifest, backend, nil)
}

// newFixtureWith is newFixtureOf, with setup, when not nil, given the
// registry to complete the console's options (such as the named clients,
// which need it) before the console serves.
func newFixtureWith(t *testing.T, o Options, manifest string, backend registry.Caller, setup func(o *Options, reg *registry.Registry)) *fixture {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.json"), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	ps := &protocol.Server{TaskAfter: 10 * time.Millisecond}
	o.Server = ps
	c := New(o)
	reg := registry.New(registry.Options{Dirs: []string{dir}, Prefix: "tairseach", Observe: c, AuditValues: o.AuditValues, Backend: backend})
	ps.Tools = reg
	c.opts.Registry, c.opts.Tools = reg, reg
	if setup != nil {
		setup(&c.opts, reg)
	}
	mux := http.NewServeMux()
	mux.Handle(Path+"/", c.Handler())
	mux.Handle(Path, c.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(c.Close)
	c.SetBase(srv.URL)
	return &fixture{c: c, ps: ps, reg: reg, srv: srv}
}

// client is a browser without redirects followed, and a cookie jar.
type browser struct {
	t   *testing.T
	f   *fixture
	hc  *http.Client
	jar http.CookieJar
}

type jar struct{ cookies []*http.Cookie }

func (j *jar) SetCookies(_ *url.URL, cs []*http.Cookie) { j.cookies = append(j.cookies, cs...) }
func (j *jar) Cookies(*url.URL) []*http.Cookie          { return j.cookies }

func (f *fixture) browser(t *testing.T) *browser {
	j := &jar{}
	return &browser{t: t, f: f, jar: j, hc: &http.Client{Jar: j, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do makes a request with headers (name, value pairs), and returns the
// response and its body.
func (b *browser) do(method, path string, body io.Reader, headers ...string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(method, b.f.srv.URL+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res, string(data)
}

// login opens the console's URL, as the owner does.
func (b *browser) login() {
	b.t.Helper()
	u, _ := url.Parse(b.f.c.URL())
	res, _ := b.do("GET", u.RequestURI(), nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/" {
		b.t.Fatalf("opening the URL: %d to %q, want 303 to /ui/", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestTheSecretIsExchangedForACookie(t *testing.T) {
	f := newFixture(t, Options{})
	b := f.browser(t)
	if res, body := b.do("GET", "/ui/", nil); res.StatusCode != 401 || !strings.Contains(body, "tairseach-mcp doctor") {
		t.Errorf("without the secret: %d %q", res.StatusCode, body)
	}
	if res, _ := b.do("GET", "/ui/?s=0123456789abcdef0123456789abcdef", nil); res.StatusCode != 401 || len(b.jar.(*jar).cookies) != 0 {
		t.Errorf("a wrong secret: %d, cookies %v", res.StatusCode, b.jar.(*jar).cookies)
	}
	b.login()
	ck := b.jar.(*jar).cookies
	if len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Path != "/ui" || strings.Contains(ck[0].Value, f.c.secret) {
		t.Fatalf("cookie %+v", ck)
	}
	for _, p := range []string{"/ui/", "/ui/tools", "/ui/clients", "/ui/calls", "/ui/charts", "/ui/questions"} {
		if res, body := b.do("GET", p, nil); res.StatusCode != 200 || !strings.Contains(body, "<main>") {
			t.Errorf("%s with the cookie: %d", p, res.StatusCode)
		}
	}
	if !strings.HasPrefix(f.c.URL(), f.srv.URL+"/ui/?s=") || strings.Contains(f.c.PublicURL(), f.c.secret) {
		t.Errorf("URL %s, public URL %s", f.c.URL(), f.c.PublicURL())
	}
}

func TestEveryAnswerCarriesTheSecurityHeaders(t *testing.T) {
	f := newFixture(t, Options{})
	b := f.browser(t)
	for _, p := range []string{"/ui/", "/ui/static/console.js", "/ui/nope"} {
		res, _ := b.do("GET", p, nil)
		h := res.Header
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'") ||
			strings.Contains(csp, "unsafe-inline") || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s: headers %v", p, h)
		}
	}
	b.login()
	_, body := b.do("GET", "/ui/", nil)
	if regexp.MustCompile(`<script>|<script [^>]*>[^<]|\son[a-z]+=|style=`).MatchString(body) {
		t.Errorf("a page with an inline script, handler or style:\n%s", body)
	}
}

func TestOnlyTheOwnersTokenOpensTheConsole(t *testing.T) {
	named := false
	f := newFixture(t, Options{Guard: mcphttp.Guard{Token: "owner-token", Clients: func(string) (mcphttp.Client, bool) {
		named = true // never asked: a client's token opens nothing here
		return nil, true
	}}})
	b := f.browser(t)
	for _, tt := range []struct {
		auth string
		want int
	}{
		{"Bearer owner-token", 200},
		{"bearer owner-token", 200},
		{"Bearer a-client-token", 401},
		{"Bearer owner-token2", 401},
		{"Basic b3duZXI6dG9rZW4=", 401},
	} {
		if res, _ := b.do("GET", "/ui/", nil, "Authorization", tt.auth); res.StatusCode != tt.want {
			t.Errorf("%s: %d, want %d", tt.auth, res.StatusCode, tt.want)
		}
	}
	if named {
		t.Error("the console asked the named clients of a token")
	}
}

func TestTheGuardsHostAndOriginChecksApply(t *testing.T) {
	f := newFixture(t, Options{Guard: mcphttp.Guard{Token: "owner-token"}})
	b := f.browser(t)
	for _, tt := range []struct {
		name    string
		headers []string
		want    int
	}{
		{"loopback", nil, 200},
		{"a rebinding host", []string{"Host", "evil.example:80"}, 403},
		{"another origin", []string{"Origin", "http://evil.example"}, 403},
		{"another loopback origin", []string{"Origin", "http://localhost:1"}, 403},
		{"the console's own origin", []string{"Origin", f.srv.URL}, 200},
		{"a cross-site fetch", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"a typed address", []string{"Sec-Fetch-Site", "none"}, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := append([]string{"Authorization", "Bearer owner-token"}, tt.headers...)
			if res, body := b.do("GET", "/ui/", nil, h...); res.StatusCode != tt.want {
				t.Errorf("%d, want %d: %s", res.StatusCode, tt.want, body)
			}
		})
	}
}

// ask asks the owner on behalf of a call of client, from a goroutine, and
// returns the channel of its answer.
func ask(f *fixture, client string, q protocol.OwnerQuestion) chan string {
	out := make(chan string, 1)
	call := protocol.NewCall(protocol.CallOptions{Client: protocol.ClientInfo{Name: client}, Transport: "stdio"})
	// Ends when the question is answered, or the console closes.
	go func() {
		res, err := f.c.Ask(context.Background(), call, q)
		if err != nil {
			out <- "error " + err.Error()
			return
		}
		out <- string(res)
	}()
	return out
}

// openStream opens the console's event stream, as a page does, and
// returns its lines.
func (b *browser) openStream(t *testing.T) <-chan string {
	t.Helper()
	req, _ := http.NewRequest("GET", b.f.srv.URL+"/ui/events", nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	res, err := b.hc.Do(req.WithContext(ctx))
	if err != nil || res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("event stream: %v %v", res, err)
	}
	lines := make(chan string, 1024)
	// Reads until the test ends the stream.
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return lines
}

func TestWithNoConsoleOpenTheOwnerIsAway(t *testing.T) {
	f := newFixture(t, Options{AnswersHere: true})
	got := <-ask(f, "c", protocol.OwnerQuestion{Confirm: true, Message: "Delete?"})
	if !strings.Contains(got, "no owner's console is open to answer: the owner can answer on the console at "+f.srv.URL+"/ui/ ") || strings.Contains(got, f.c.secret) {
		t.Errorf("answer %q", got)
	}
}

func postAnswer(b *browser, form url.Values, headers ...string) (*http.Response, string) {
	return b.do("POST", "/ui/answer", strings.NewReader(form.Encode()), append([]string{"Content-Type", "application/x-www-form-urlencoded"}, headers...)...)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
var idRE = regexp.MustCompile(`name="id" value="([^"]+)"`)

// questionPage waits until the questions page shows a question, and
// returns its CSRF token, its id and the page.
func (b *browser) questionPage(t *testing.T) (csrf, id, body string) {
	t.Helper()
	for range 200 {
		_, body = b.do("GET", "/ui/questions", nil)
		if m := idRE.FindStringSubmatch(body); m != nil {
			return csrfRE.FindStringSubmatch(body)[1], m[1], body
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no question on the page:\n%s", body)
	return
}

func TestAnAnswerIsAPostFromThePageItself(t *testing.T) {
	f := newFixture(t, Options{AnswersHere: true})
	b := f.browser(t)
	b.login()
	stream := b.openStream(t)
	waitForLine(t, stream, "event: stats")
	answer := ask(f, hostile, protocol.OwnerQuestion{Confirm: true, Message: "Delete the note " + hostile + "?"})
	waitForLine(t, stream, `data: {"waiting":1}`)
	csrf, id, body := b.questionPage(t)
	if strings.Contains(body, hostile) || !strings.Contains(body, "Delete the note &lt;img src=x onerror=alert(1)&gt;?") {
		t.Errorf("the question's text is not escaped:\n%s", body)
	}
	other := f.browser(t)
	other.login()
	otherCSRF, _, _ := other.questionPage(t)
	origin := f.srv.URL
	for _, tt := range []struct {
		name    string
		form    url.Values
		headers []string
		want    int
	}{
		{"no Origin", url.Values{"csrf": {csrf}, "id": {id}, "answer": {"allow"}}, nil, 403},
		{"a cross-site Origin", url.Values{"csrf": {csrf}, "id": {id}, "answer": {"allow"}}, []string{"Origin", "http://evil.example"}, 403},
		{"a cross-site fetch", url.Values{"csrf": {csrf}, "id": {id}, "answer": {"allow"}}, []string{"Origin", origin, "Sec-Fetch-Site", "same-site"}, 403},
		{"no CSRF token", url.Values{"id": {id}, "answer": {"allow"}}, []string{"Origin", origin}, 403},
		{"another session's CSRF token", url.Values{"csrf": {otherCSRF}, "id": {id}, "answer": {"allow"}}, []string{"Origin", origin}, 403},
		{"a forged CSRF token", url.Values{"csrf": {"00." + strings.Repeat("0", 32)}, "id": {id}, "answer": {"allow"}}, []string{"Origin", origin}, 403},
		{"an answer a confirmation does not take", url.Values{"csrf": {csrf}, "id": {id}, "answer": {"accept"}}, []string{"Origin", origin}, 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if res, body := postAnswer(b, tt.form, tt.headers...); res.StatusCode != tt.want {
				t.Errorf("%d, want %d: %s", res.StatusCode, tt.want, body)
			}
		})
	}
	select {
	case got := <-answer:
		t.Fatalf("answered by a refused POST: %s", got)
	default:
	}
	res, _ := postAnswer(b, url.Values{"csrf": {csrf}, "id": {id}, "answer": {"deny"}}, "Origin", origin, "Sec-Fetch-Site", "same-origin")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the page's answer: %d", res.StatusCode)
	}
	if got := <-answer; got != `{"action":"accept","content":{"confirm":false}}` {
		t.Errorf("answer %s", got)
	}
	if res, _ := postAnswer(b, url.Values{"csrf": {csrf}, "id": {id}, "answer": {"allow"}}, "Origin", origin); res.StatusCode != http.StatusConflict {
		t.Errorf("a second answer: %d, want 409", res.StatusCode)
	}
}

func TestAFormIsAnsweredField(t *testing.T) {
	f := newFixture(t, Options{AnswersHere: true})
	b := f.browser(t)
	b.login()
	stream := b.openStream(t)
	waitForLine(t, stream, "event: stats")
	params := `{"message":"A label?","requestedSchema":{"type":"object","properties":{"label":{"type":"string","title":"Label"},"n":{"type":"integer"},"ok":{"type":"boolean"},"color":{"type":"string","enum":["red","blue"]}},"required":["label"]}}`
	answer := ask(f, "c", protocol.OwnerQuestion{Message: "A label?", Params: jsontext.Value(params)})
	csrf, id, body := b.questionPage(t)
	for _, want := range []string{`name="f_label" required`, `type="number" name="f_n"`, `type="checkbox" name="f_ok"`, `<option>blue</option>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the form has no %s:\n%s", want, body)
		}
	}
	if res, _ := postAnswer(b, url.Values{"csrf": {csrf}, "id": {id}, "answer": {"accept"}, "f_n": {"x"}, "f_label": {"a"}}, "Origin", f.srv.URL); res.StatusCode != 400 {
		t.Errorf("a field of the wrong type: %d", res.StatusCode)
	}
	form := url.Values{"csrf": {csrf}, "id": {id}, "answer": {"accept"}, "f_label": {hostile}, "f_n": {"3"}, "f_ok": {"on"}, "f_color": {"blue"}}
	if res, _ := postAnswer(b, form, "Origin", f.srv.URL); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("answer: %d", res.StatusCode)
	}
	if got := <-answer; got != `{"action":"accept","content":{"color":"blue","label":"<img src=x onerror=alert(1)>","n":3,"ok":true}}` {
		t.Errorf("answer %s", got)
	}
}

// Hostile names and values from clients, models and the backend are shown
// as text on every page.
func TestWhatClientsSendIsShownAsText(t *testing.T) {
	f := newFixture(t, Options{AuditValues: true})
	call := protocol.NewCall(protocol.CallOptions{Client: protocol.ClientInfo{Name: hostile, Version: hostile}, Transport: "stdio"})
	if _, err := f.reg.CallTool(t.Context(), call, &protocol.CallToolRequest{Name: "tairseach_notes_delete", Arguments: jsontext.Value(`{"id":"` + hostile + `"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.reg.CallTool(t.Context(), call, &protocol.CallToolRequest{Name: "tairseach_notes_list"}); err != nil {
		t.Fatal(err)
	}
	b := f.browser(t)
	b.login()
	for _, p := range []string{"/ui/", "/ui/tools", "/ui/clients", "/ui/calls", "/ui/charts?by=client", "/ui/calls?client=" + url.QueryEscape(hostile)} {
		_, body := b.do("GET", p, nil)
		if strings.Contains(body, "<img") {
			t.Errorf("%s shows a tag a client sent:\n%s", p, body)
		}
	}
	_, body := b.do("GET", "/ui/calls", nil)
	for _, want := range []string{`&lt;img src=x onerror=alert(1)&gt;`, `{&#34;id&#34;:&#34;&lt;img src=x onerror=alert(1)&gt;&#34;}`, "backend_error"} {
		if !strings.Contains(body, want) {
			t.Errorf("the calls page does not show %s:\n%s", want, body)
		}
	}
}

func TestTheEventStreamFollowsCalls(t *testing.T) {
	f := newFixture(t, Options{})
	b := f.browser(t)
	b.login()
	stream := b.openStream(t)
	waitForLine(t, stream, "event: stats")
	call := protocol.NewCall(protocol.CallOptions{Client: protocol.ClientInfo{Name: "cursor"}})
	if _, err := f.reg.CallTool(t.Context(), call, &protocol.CallToolRequest{Name: "tairseach_notes_delete"}); err != nil {
		t.Fatal(err)
	}
	waitForLine(t, stream, `"state":"running","time":`)
	waitForLine(t, stream, `"outcome":"ok"`)
	if !f.c.live.present() {
		t.Error("a console with its stream open is not present")
	}
}

func TestChartsAreSVG(t *testing.T) {
	f := newFixture(t, Options{})
	for i := range 30 {
		call := protocol.NewCall(protocol.CallOptions{Client: protocol.ClientInfo{Name: []string{"cursor", "claude"}[i%2]}})
		name := []string{"tairseach_notes_delete", "tairseach_notes_list"}[i%2]
		if _, err := f.reg.CallTool(t.Context(), call, &protocol.CallToolRequest{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	b := f.browser(t)
	b.login()
	for _, by := range []string{"tool", "client"} {
		_, body := b.do("GET", "/ui/charts?by="+by, nil)
		if n := strings.Count(body, "<svg"); n != 3 || strings.Count(body, `<polyline class="line s`) != 6 {
			t.Errorf("by %s: %d charts, %d lines:\n%s", by, n, strings.Count(body, "<polyline"), body)
		}
	}
}

func TestCloseRefusesTheQuestionsWaiting(t *testing.T) {
	f := newFixture(t, Options{AnswersHere: true})
	b := f.browser(t)
	b.login()
	stream := b.openStream(t)
	waitForLine(t, stream, "event: stats")
	answer := ask(f, "c", protocol.OwnerQuestion{Confirm: true, Message: "Delete?"})
	b.questionPage(t)
	f.c.Close()
	if got := <-answer; !strings.Contains(got, "no owner's console is open") {
		t.Errorf("after Close: %s", got)
	}
	if res, _ := b.do("GET", "/ui/", nil); res.StatusCode != 503 {
		t.Errorf("a page after Close: %d", res.StatusCode)
	}
	_, err := f.c.Ask(t.Context(), protocol.NewCall(protocol.CallOptions{}), protocol.OwnerQuestion{Confirm: true})
	if !errors.Is(err, protocol.ErrOwnerAway) {
		t.Errorf("asked after Close: %v", err)
	}
}
