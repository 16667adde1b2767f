package console

import (
	"cmp"
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tairseach/tairseach-mcp/manifest"
	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/registry/audit"
)

//go:embed templates/*.html static/*
var files embed.FS

// pages are the console's templates and static files.
type pages struct {
	byName map[string]*template.Template
	assets fs.FS
}

// page is what every page shows: the navigation, the questions waiting,
// and its body.
type page struct {
	Title, Nav  string
	CSRF        string // for the forms of this page
	Waiting     int    // questions waiting for the owner
	AnswersHere bool
	Version     string
	Body        any
}

func newPages() *pages {
	p := &pages{byName: map[string]*template.Template{}}
	p.assets, _ = fs.Sub(files, "static")
	for _, name := range []string{"overview", "tools", "clients", "calls", "charts", "questions", "refusal"} {
		p.byName[name] = template.Must(template.New(name).ParseFS(files, "templates/layout.html", "templates/"+name+".html"))
	}
	return p
}

// render writes the page name.
func (p *pages) render(w http.ResponseWriter, r *http.Request, name string, data page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method == http.MethodHead {
		return
	}
	_ = p.byName[name].ExecuteTemplate(w, "layout", data) // a write error: the browser is gone
}

// fragment writes one named template of the page that defines it, for the
// script to put in place.
func (p *pages) fragment(w http.ResponseWriter, name string, data page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = p.byName[data.Nav].ExecuteTemplate(w, name, data)
}

// refusal answers a request the console does not serve with status, and
// why, for a person.
func (p *pages) refusal(w http.ResponseWriter, status int, why string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = p.byName["refusal"].ExecuteTemplate(w, "layout", page{Title: http.StatusText(status), Nav: "refusal",
		Body: struct {
			Status int
			Why    string
		}{status, why}})
}

// static serves the console's script and style sheet.
func (p *pages) static(w http.ResponseWriter, r *http.Request, name string) {
	b, err := fs.ReadFile(p.assets, name)
	if err != nil || strings.Contains(name, "/") {
		p.refusal(w, http.StatusNotFound, "")
		return
	}
	switch path.Ext(name) {
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

// callRow is a call as the pages and the event stream show it.
type callRow struct {
	Seq          int64  `json:"seq,omitzero"`
	State        string `json:"state"` // running, ended
	Time         string `json:"time"`
	Kind         string `json:"kind"`
	Name         string `json:"name"`
	Client       string `json:"client"`
	Principal    string `json:"principal"`
	Transport    string `json:"transport,omitzero"`
	Outcome      string `json:"outcome,omitzero"`
	Dur          string `json:"dur,omitzero"`
	Failed       bool   `json:"failed,omitzero"`
	Confirmation string `json:"confirmation,omitzero"`
	Answer       string `json:"answer,omitzero"`
	Args         string `json:"-"` // with --audit-values only
}

// rowOf is the row of a call ended.
func rowOf(e *audit.Entry) callRow {
	at := e.Time
	if t, err := time.Parse(time.RFC3339, e.Time); err == nil {
		at = t.Local().Format("15:04:05")
		if time.Since(t) > 20*time.Hour {
			at = t.Local().Format("Jan 2 15:04:05")
		}
	}
	return callRow{State: "ended", Time: at, Kind: e.Kind, Name: e.Name, Client: who(e.Principal, e.Client), Principal: e.Principal,
		Transport: e.Transport, Outcome: e.Outcome, Dur: formatMillis(e.Duration), Failed: e.Outcome != audit.OutcomeOK,
		Confirmation: e.Confirmation, Answer: e.Answer}
}

func sortRows(rs []callRow) {
	slices.SortFunc(rs, func(a, b callRow) int { return cmp.Compare(a.Seq, b.Seq) })
}

// formatBytes says a size for a person.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// since says how long ago t was, for a person.
func since(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.Local().Format("2006-01-02 15:04")
}

// backend remembers whether the backend answered, checked at most every
// 2 seconds: pages loaded at once do not each dial it.
type backend struct {
	mu      sync.Mutex
	checked time.Time
	err     error
}

func (c *Console) backendState() (shown bool, err error) {
	if c.opts.Backend == nil {
		return false, nil
	}
	b := &c.backend
	b.mu.Lock()
	defer b.mu.Unlock()
	if time.Since(b.checked) > 2*time.Second {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		b.err = c.opts.Backend(ctx)
		cancel()
		b.checked = time.Now()
	}
	return true, b.err
}

// overviewBody is the overview page.
type overviewBody struct {
	BackendShown, BackendUp bool
	BackendWhy              string
	Errors, Warnings        int
	Problems                []string
	Sessions, InFlight      int
	Tasks, TasksRunning     int
	Held, HeldLimit         string
	Rate                    string
	CallsHour, ErrorsHour   int
	Tools                   int
	Audit                   string
	Uptime                  string
	Running                 []callRow
	Consoles                int
}

func (c *Console) overview(*http.Request) overviewBody {
	st := c.opts.Server.Stats()
	snap := c.opts.Registry.Snapshot()
	b := overviewBody{Sessions: len(st.Sessions), InFlight: st.InFlight, Held: formatBytes(st.HeldBytes), HeldLimit: formatBytes(st.HeldLimit),
		Tools: c.opts.Tools.Tools().Len(), Audit: c.opts.AuditLog, Uptime: time.Since(c.started).Round(time.Second).String(),
		Running: c.live.running(), Consoles: c.live.streams()}
	b.Rate, b.CallsHour, b.ErrorsHour = c.rates(time.Now())
	b.Tasks, b.TasksRunning = c.taskCounts()
	shown, err := c.backendState()
	b.BackendShown, b.BackendUp = shown, err == nil
	if err != nil {
		b.BackendWhy = err.Error()
	}
	for _, p := range snap.Problems {
		if p.Severity == manifest.Error {
			b.Errors++
		} else {
			b.Warnings++
		}
		if len(b.Problems) < 20 {
			b.Problems = append(b.Problems, p.String())
		}
	}
	return b
}

// toolsBody is the tools page: what one view serves, what it does not
// and why, and what its list costs.
type toolsBody struct {
	Views         []string // "" is the bridge's own; then the named clients
	View          string
	Served        []toolRow
	Unserved      []registry.Unserved
	Tokens, Bytes int
	CostErr       string
	CostShown     bool
	ListedAs      int // the tools the client lists (search mode lists two)
}

type toolRow struct {
	Name, Tool, Method, File, Description, Asks string
	ReadOnly, Destructive                       bool
}

func (c *Console) toolsPage(r *http.Request) toolsBody {
	b := toolsBody{Views: []string{""}, View: r.URL.Query().Get("client")}
	snap, tools := c.opts.Registry.Snapshot(), c.opts.Tools
	if c.opts.Clients != nil {
		for _, cl := range c.opts.Clients.Clients() {
			b.Views = append(b.Views, cl.Name())
			if cl.Name() == b.View {
				snap = cl.View().Snapshot()
				if p := cl.Session().Providers; p != nil && p.Tools != nil {
					tools = p.Tools
				}
			}
		}
	}
	if !slices.Contains(b.Views, b.View) {
		b.View = ""
	}
	for _, e := range snap.Entries {
		row := toolRow{Name: e.Name, Tool: e.Tool.Name, Method: e.Method, File: e.File, Description: e.Tool.Description}
		if e.Confirm != nil {
			row.Asks = e.Confirm.By
			if e.Confirm.Pattern != "" {
				row.Asks += " " + e.Confirm.Pattern
			}
		}
		if a := e.Tool.Annotations; a != nil {
			row.ReadOnly = a.ReadOnlyHint != nil && *a.ReadOnlyHint
			row.Destructive = a.DestructiveHint != nil && *a.DestructiveHint
		}
		b.Served = append(b.Served, row)
	}
	b.Unserved = snap.Unserved
	b.ListedAs = tools.Tools().Len()
	if c.opts.ListCost != nil {
		b.CostShown = true
		tokens, n, err := c.listCost(tools)
		b.Tokens, b.Bytes = tokens, n
		if err != nil {
			b.CostErr = err.Error()
		}
	}
	return b
}

// listCost measures what the list of tools costs, once per list.
func (c *Console) listCost(tools protocol.ToolProvider) (int, int, error) {
	set := tools.Tools()
	c.costMu.Lock()
	defer c.costMu.Unlock()
	if got, ok := c.costs[set]; ok {
		return got[0], got[1], nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tokens, n, err := c.opts.ListCost(ctx, tools)
	if err != nil {
		return 0, 0, err
	}
	if len(c.costs) > 64 {
		clear(c.costs)
	}
	c.costs[set] = [2]int{tokens, n}
	return tokens, n, nil
}

// clientsBody is the clients page.
type clientsBody struct {
	Named bool
	Rows  []clientRow
}

type clientRow struct {
	Name, Policy, Versions, LastUse string
	Sessions, Calls, Errors         int
	Named                           bool
}

func (c *Console) clientsPage() clientsBody {
	st := c.opts.Server.Stats()
	counts := c.live.counts()
	rows := map[string]*clientRow{}
	row := func(name string) *clientRow {
		if rows[name] == nil {
			rows[name] = &clientRow{Name: name, LastUse: "not since the bridge started"}
		}
		return rows[name]
	}
	var b clientsBody
	if c.opts.Clients != nil && c.opts.Clients.Named() {
		b.Named = true
		for _, cl := range c.opts.Clients.Clients() {
			p := cl.Policy()
			r := row(cl.Name())
			r.Named, r.Policy = true, p.Summary()
		}
	}
	versions := map[string]map[string]bool{}
	for _, s := range st.Sessions {
		name := who(s.Principal.String(), s.Client.Name)
		r := row(name)
		r.Sessions++
		if s.Client.Name != "" {
			if versions[name] == nil {
				versions[name] = map[string]bool{}
			}
			versions[name][strings.TrimSpace(s.Client.Name+" "+s.Client.Version)] = true
		}
	}
	for name, n := range counts {
		r := row(name)
		r.Calls, r.Errors, r.LastUse = n.calls, n.errors, since(n.last)
	}
	for name, vs := range versions {
		rows[name].Versions = strings.Join(slices.Sorted(maps.Keys(vs)), ", ")
	}
	for _, name := range slices.Sorted(maps.Keys(rows)) {
		b.Rows = append(b.Rows, *rows[name])
	}
	return b
}

// callsBody is the calls page.
type callsBody struct {
	Running                  []callRow
	Recent                   []callRow
	Source, Err              string
	Tool, Client, Outcome    string
	Tools, Clients, Outcomes []string
	Values                   bool
	Matched                  int
}

// maxShownCalls bounds the recent calls a page shows.
const maxShownCalls = 200

func (c *Console) callsPage(r *http.Request) callsBody {
	q := r.URL.Query()
	b := callsBody{Running: c.live.running(), Tool: q.Get("tool"), Client: q.Get("client"), Outcome: q.Get("outcome"), Values: c.opts.AuditValues}
	entries, source, err := c.history()
	b.Source = source
	if err != nil {
		b.Err = err.Error()
	}
	tools, clients, outcomes := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := len(entries) - 1; i >= 0; i-- {
		e := &entries[i]
		name := who(e.Principal, e.Client)
		tools[e.Name], clients[name], outcomes[e.Outcome] = true, true, true
		if b.Tool != "" && !globMatch(b.Tool, e.Name, e.ManifestName) || b.Client != "" && name != b.Client || b.Outcome != "" && e.Outcome != b.Outcome {
			continue
		}
		b.Matched++
		if len(b.Recent) < maxShownCalls {
			row := rowOf(e)
			if c.opts.AuditValues && e.Args != nil {
				row.Args = string(e.Args)
			}
			b.Recent = append(b.Recent, row)
		}
	}
	b.Tools, b.Clients, b.Outcomes = slices.Sorted(maps.Keys(tools)), slices.Sorted(maps.Keys(clients)), slices.Sorted(maps.Keys(outcomes))
	return b
}

// globMatch reports whether pattern (path.Match's syntax, or a plain
// substring) matches one of names.
func globMatch(pattern string, names ...string) bool {
	for _, n := range names {
		if ok, _ := path.Match(pattern, n); ok || strings.Contains(n, pattern) {
			return true
		}
	}
	return false
}

// history returns the recent calls, the oldest first: the audit log's
// tail when there is a log (every bridge writing to it), else this
// bridge's last calls; and says which.
func (c *Console) history() ([]audit.Entry, string, error) {
	if c.tail != nil {
		es, err := c.tail.Entries()
		return es, fmt.Sprintf("the last %d entries of the audit log %s (every bridge that writes to it)", len(es), c.opts.AuditLog), err
	}
	rs := c.live.recent()
	es := make([]audit.Entry, len(rs))
	for i, r := range rs {
		es[i] = r.e
	}
	return es, fmt.Sprintf("this bridge's last %d calls (no audit log: --audit-log keeps them, and those of other bridges)", len(es)), nil
}

// chartsBody is the charts page.
type chartsBody struct {
	By     string
	Charts []chart
	Source string
	Err    string
}

func (c *Console) chartsPage(r *http.Request) chartsBody {
	b := chartsBody{By: r.URL.Query().Get("by")}
	if b.By != "client" {
		b.By = "tool"
	}
	entries, source, err := c.history()
	b.Source = source
	if err != nil {
		b.Err = err.Error()
	}
	ps := make([]point, 0, len(entries))
	for i := range entries {
		e := &entries[i]
		at, err := time.Parse(time.RFC3339, e.Time)
		if err != nil {
			continue
		}
		key := e.Name
		if b.By == "client" {
			key = who(e.Principal, e.Client)
		}
		ps = append(ps, point{at: at, key: key, dur: e.Duration, err: e.Outcome != audit.OutcomeOK})
	}
	b.Charts = charts(ps, time.Now())
	return b
}

// questionsBody is the questions page.
type questionsBody struct {
	Questions   []questionView
	Tasks       tasksView
	Running     []callRow
	Present     bool
	AnswersHere bool
	AskTimeout  string
}

type questionView struct {
	*question
	Waited string
}

func (c *Console) questionsPage() questionsBody {
	b := questionsBody{Tasks: c.tasks(time.Now()), Running: c.live.running(), Present: c.live.present(), AnswersHere: c.opts.AnswersHere,
		AskTimeout: cmp.Or(c.opts.Server.AskTimeout, protocol.DefaultAskTimeout).String()}
	for _, q := range c.asks.list() {
		b.Questions = append(b.Questions, questionView{q, time.Since(q.Asked).Round(time.Second).String()})
	}
	return b
}

// tasksView is the live tasks as the questions page lists them.
type tasksView struct {
	Rows   []taskRow
	Hidden int // the older tasks not shown, past maxShownTasks
}

// taskRow is a task as the page shows it.
type taskRow struct {
	Tool, Client, Owner string // Owner: its principal, "" when Client names it
	Status, Message     string
	Age, ExpiresIn      string
	Class               string // of its row: running, failed, cancelled, or "" (completed)
}

// maxShownTasks bounds the tasks a page lists: the store keeps up to
// protocol.DefaultMaxTasks (or --max-tasks).
const maxShownTasks = 200

// tasks returns the tasks the server keeps, the newest maxShownTasks in
// the order they were created.
func (c *Console) tasks(now time.Time) tasksView {
	all := c.opts.Server.LiveTasks()
	var v tasksView
	if len(all) > maxShownTasks {
		v.Hidden, all = len(all)-maxShownTasks, all[len(all)-maxShownTasks:]
	}
	for _, t := range all {
		row := taskRow{Tool: t.Tool, Client: who(t.Owner.String(), t.Client.Name), Status: t.Status, Message: t.Message,
			Age: span(now.Sub(t.Created)), ExpiresIn: span(t.Expires.Sub(now))}
		if t.Owner.Kind != protocol.PrincipalClient {
			row.Owner = t.Owner.String()
		}
		switch {
		case running(t):
			row.Class = "running"
		case t.Status == "failed" || t.IsError:
			row.Class = "failed"
		case t.Status == "cancelled":
			row.Class = "cancelled"
		}
		if t.IsError {
			row.Status += " (tool error)"
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// taskCounts returns the tasks the server keeps, and of them those
// still running (working, or waiting for the client's answers).
func (c *Console) taskCounts() (kept, runs int) {
	for _, t := range c.opts.Server.LiveTasks() {
		kept++
		if running(t) {
			runs++
		}
	}
	return kept, runs
}

// running reports whether t still runs: working, or waiting for its
// client's answers.
func running(t protocol.TaskInfo) bool { return t.Status == "working" || t.Status == "input_required" }

// span says a duration for a person, to the second under an hour.
func span(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
}
