//go:build unix

package main

// The owner's console in a real browser: Debian's headless Chromium,
// driven with chromedp, against the built bridge and the example backend.
// Each page renders without a console error, the screenshots go to a
// folder the test prints (TAIRSEACH_SCREENSHOTS, or a new temporary one),
// a client without elicitation deletes a note only once the browser
// clicks Allow, hostile names and arguments show as text, and a
// cross-site POST is refused. Without Chromium the test skips, except
// under CI (CI=true), whose .ci/run installs it.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const chromium = "/usr/bin/chromium"

// needChromium skips the test without Chromium, but under CI.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: .ci/run installs it (apt-get install chromium)", chromium)
		}
		t.Skipf("browser tests skipped: no %s (apt-get install chromium)", chromium)
	}
}

// exampleBackend builds and starts the example backend, with its notes in
// a folder of the test's, and returns its socket.
func exampleBackend(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tsx") // short: a socket's path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "backend")
	if out, err := exec.Command("go", "build", "-o", bin, "../tairseach-example-backend").CombinedOutput(); err != nil {
		t.Fatalf("build the example backend: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "s.sock")
	cmd := exec.Command(bin, "-socket", sock, "-data", filepath.Join(dir, "data"), "-files-root", dir)
	dieWithTheTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 200 {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return sock
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatal("the example backend did not listen")
	return ""
}

// hostile is what a client and a model may send, to be shown as text.
const hostile = `<img src=x onerror=alert(1)>`

// browser is a headless Chromium tab, with what it said: console errors,
// exceptions, and dialogs (an alert would be one).
type browser struct {
	t   *testing.T
	ctx context.Context
	dir string // of the screenshots

	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	dir := os.Getenv("TAIRSEACH_SCREENSHOTS")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "tairseach-console-"); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, dir: dir}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil { // starts the browser
		t.Fatalf("start Chromium: %v", err)
	}
	dialogs := make(chan struct{}, 8)
	err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				b.errors = append(b.errors, "console."+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			b.errors = append(b.errors, "exception: "+ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				b.errors = append(b.errors, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		case *page.EventJavascriptDialogOpening:
			b.errors = append(b.errors, "a dialog opened: "+ev.Message)
			select {
			case dialogs <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// Dismisses the dialogs a page opens (none should), until the test ends.
	go func() {
		for {
			select {
			case <-dialogs:
				chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			case <-ctx.Done():
				return
			}
		}
	}()
	return b
}

// run runs steps within 20 seconds.
func (b *browser) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// value runs a that returns a value, within 20 seconds.
func value[T any](b *browser, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// said returns and forgets what the browser reported.
func (b *browser) said() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.errors
	b.errors = nil
	return out
}

// shot saves a screenshot of the viewport as name.png.
func (b *browser) shot(name string) {
	b.t.Helper()
	buf := value(b, "screenshot "+name, chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(b.dir, name+".png"), buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// open opens a console page, waits until it follows the bridge live, and
// checks that it said nothing wrong.
func (b *browser) open(url, name string) {
	b.t.Helper()
	b.run("open "+url, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)))
	if errs := b.said(); len(errs) > 0 {
		b.t.Errorf("%s: the browser reported:\n%s", name, strings.Join(errs, "\n"))
	}
}

// until waits until the JavaScript expression cond is true on the page.
func (b *browser) until(what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.shot("failed")
	b.t.Fatalf("%s: %s is still false", what, cond)
}

// text returns the page's text, and how many img elements it has.
func (b *browser) text() (string, int) {
	return value(b, "read the page", chromedp.Evaluate[string](`document.body.innerText`)),
		value(b, "count the images", chromedp.Evaluate[int](`document.querySelectorAll("img").length`))
}

func TestTheConsoleInARealBrowser(t *testing.T) {
	needChromium(t)
	sock := exampleBackend(t)
	manifests, err := filepath.Abs("../../manifests-example")
	if err != nil {
		t.Fatal(err)
	}
	bridge := startHTTP(t, bridgeCmd(manifests, sock, "--transport", "http", "--listen", "127.0.0.1:0",
		"--confirm-unsupported", "page", "--audit-log", filepath.Join(t.TempDir(), "audit.log"), "--audit-values"))
	m := consoleLine.FindStringSubmatch(bridge.log())
	if m == nil {
		t.Fatalf("no console address:\n%s", bridge.log())
	}
	consoleURL, base := m[1], strings.TrimSuffix(bridge.url, "/mcp")

	// A client without elicitation, calling itself by a hostile name.
	client := mcp.NewClient(&mcp.Implementation{Name: hostile, Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: bridge.url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	call := func(name string, args map[string]any) (string, bool) {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return textOf(res), res.IsError
	}
	newNote := func(title string) string {
		text, isErr := call("tairseach_notes_create", map[string]any{"title": title})
		var n struct{ ID string }
		if isErr || json.Unmarshal([]byte(text), &n) != nil || n.ID == "" {
			t.Fatalf("create a note: %s", text)
		}
		return n.ID
	}
	exists := func(id string) bool {
		text, isErr := call("tairseach_notes_get", map[string]any{"id": id})
		if isErr && !strings.Contains(text, "not found") {
			t.Fatalf("get the note: %s", text)
		}
		return !isErr
	}
	first := newNote(hostile)
	call("tairseach_system_info", nil)

	b := newBrowser(t)
	b.open(consoleURL, "the console's address")
	if at := value(b, "where the address led", chromedp.Location()); at != base+"/ui/" {
		t.Errorf("the address with the secret led to %s, want %s/ui/ (the secret out of the address bar)", at, base)
	}
	b.shot("overview")
	for _, p := range []struct{ path, name string }{
		{"/ui/tools", "tools"}, {"/ui/clients", "clients"}, {"/ui/calls", "calls"}, {"/ui/charts", "charts"}, {"/ui/charts?by=client", "charts-by-client"},
	} {
		b.open(base+p.path, p.name)
		b.shot(p.name)
		if text, imgs := b.text(); imgs != 0 || p.name != "tools" && p.name != "charts" && !strings.Contains(text, hostile) {
			t.Errorf("%s: %d img elements; the client's name as text: %v", p.name, imgs, strings.Contains(text, hostile))
		}
	}
	b.open(base+"/ui/calls?tool=tairseach_notes_create", "calls filtered")
	if text, _ := b.text(); !strings.Contains(text, `{"title":"`+hostile+`"}`) {
		t.Errorf("the calls page does not show the argument as text:\n%s", text)
	}

	// A task (the local user's: no token on loopback), which the
	// questions page lists and follows while it runs.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_notes_import","arguments":{"count":20,"delay_ms":700,"title":"From the browser test"},` + tasksMeta + `}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, bridge.url, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "tairseach_notes_import"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	created, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	taskIDIn(t, string(created))
	b.open(base+"/ui/questions", "questions with a task")
	tasks := `document.querySelector("#tasks").innerText`
	b.until("the task listed, working", tasks+`.includes("tairseach_notes_import") && `+tasks+`.includes("working") && `+tasks+`.includes("of 20 notes")`)
	progress := `(` + tasks + `.match(/\d+ of 20 notes/) || [""])[0]`
	before := value(b, "the task's progress", chromedp.Evaluate[string](progress))
	b.until("the task's progress followed", progress+` !== `+strconv.Quote(before)+` && `+progress+` !== ""`)
	t.Logf("the task's progress on the page: %s, then %s", before, value(b, "the task's progress", chromedp.Evaluate[string](progress)))

	// Allow: the note is gone; deny: it stays.
	for _, tt := range []struct {
		button string
		id     string
		gone   bool
	}{
		{"allow", first, true},
		{"deny", newNote("groceries"), false},
	} {
		b.open(base+"/ui/questions", "questions")
		done := make(chan string, 1)
		go func() { // ends with the call
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_notes_delete", Arguments: map[string]any{"id": tt.id}})
			if err != nil {
				done <- err.Error()
				return
			}
			done <- textOf(res)
		}()
		b.run("the question appears", chromedp.WaitVisible(chromedp.CSS(`button.`+tt.button)))
		if tt.button == "allow" {
			b.shot("question")
		}
		b.run("click "+tt.button, chromedp.Click(chromedp.CSS(`button.`+tt.button)))
		select {
		case res := <-done:
			t.Logf("%s: %s", tt.button, res)
		case <-time.After(15 * time.Second):
			b.shot("failed-" + tt.button)
			t.Fatalf("the call did not end after %s", tt.button)
		}
		// The answer's redirect, loaded: the questions page without the question, live.
		b.until("back on the questions page", `location.pathname === "/ui/questions" && document.readyState === "complete" && `+
			`document.body.dataset.live === "on" && !document.querySelector("button.`+tt.button+`")`)
		if exists(tt.id) == tt.gone {
			t.Errorf("%s: the note exists: %v", tt.button, !tt.gone)
		}
		if errs := b.said(); len(errs) > 0 {
			t.Errorf("answering: the browser reported:\n%s", strings.Join(errs, "\n"))
		}
	}
	b.open(base+"/ui/calls", "calls after the answers")
	b.shot("calls-answered")
	if text, _ := b.text(); !strings.Contains(text, "console: accept") || !strings.Contains(text, "console: no") {
		t.Errorf("the calls page does not show the answers:\n%s", text)
	}

	// A page of another origin that posts an answer to the console.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/ui/answer"><input name="id" value="x"><input name="answer" value="allow"></form>`+
			`<script>document.forms[0].submit()</script>`, base)
	}))
	defer evil.Close()
	b.run("a cross-site POST", chromedp.Navigate(evil.URL), chromedp.WaitVisible(chromedp.CSS(`h1`)))
	if status := value(b, "read the refusal", chromedp.Text(chromedp.CSS(`main`))); !strings.Contains(status, "403") || !strings.Contains(status, "another origin") {
		t.Errorf("a cross-site POST was answered: %q", status)
	}
	b.said() // the refusal's 403 is reported as a failed load
}
