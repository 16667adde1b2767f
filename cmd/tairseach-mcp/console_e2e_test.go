//go:build unix

package main

// End-to-end tests of the owner's console with the built binary:
// --confirm-unsupported page, a client without elicitation calling a
// destructive tool while the owner's console is open (its event stream),
// and with none open.

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var consoleLine = regexp.MustCompile(`the owner's console: (http\S+)`)

// owner is the owner at the console of a bridge: a browser's cookies, and
// the console's address.
type owner struct {
	t      *testing.T
	base   string // scheme://host:port
	hc     *http.Client
	stream io.Closer
}

// openConsole opens the console at the address the bridge logged, as the
// owner does from the log, and returns the owner with its cookie.
func openConsole(t *testing.T, log string) *owner {
	t.Helper()
	m := consoleLine.FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("the bridge did not say where its console is:\n%s", log)
	}
	u, err := url.Parse(m[1])
	if err != nil || u.Query().Get("s") == "" {
		t.Fatalf("console address %q", m[1])
	}
	jar, _ := cookiejar.New(nil)
	o := &owner{t: t, base: u.Scheme + "://" + u.Host, hc: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
	res, err := o.hc.Get(m[1])
	if err != nil || res.StatusCode != 200 || res.Request.URL.RawQuery != "" {
		t.Fatalf("opening the console: %v %v", res, err)
	}
	res.Body.Close()
	return o
}

// watch opens the console's event stream, as an open page does, and
// returns once it is open; the test's end closes it.
func (o *owner) watch() {
	o.t.Helper()
	req, _ := http.NewRequest("GET", o.base+"/ui/events", nil)
	ctx, cancel := context.WithCancel(context.Background())
	o.t.Cleanup(cancel)
	hc := &http.Client{Jar: o.hc.Jar}
	res, err := hc.Do(req.WithContext(ctx))
	if err != nil || res.StatusCode != 200 {
		o.t.Fatalf("event stream: %v %v", res, err)
	}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() && !strings.HasPrefix(sc.Text(), "event: stats") {
	}
	o.stream = res.Body
	// Reads the stream until the test ends it.
	go func() { io.Copy(io.Discard, res.Body) }()
}

var (
	csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	idField   = regexp.MustCompile(`name="id" value="([^"]+)"`)
)

// answer waits for a question on the questions page and answers it
// (allow or deny) as the page's form does.
func (o *owner) answer(answer string) string {
	o.t.Helper()
	var body string
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		res, err := o.hc.Get(o.base + "/ui/questions")
		if err != nil {
			o.t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		body = string(b)
		if m := idField.FindStringSubmatch(body); m != nil {
			form := url.Values{"csrf": {csrfField.FindStringSubmatch(body)[1]}, "id": {m[1]}, "answer": {answer}}
			req, _ := http.NewRequest("POST", o.base+"/ui/answer", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", o.base)
			res, err := o.hc.Do(req)
			if err != nil || res.StatusCode != 200 || res.Request.URL.Path != "/ui/questions" {
				o.t.Fatalf("answering: %v %v", res, err)
			}
			res.Body.Close()
			return body
		}
		time.Sleep(20 * time.Millisecond)
	}
	o.t.Fatalf("no question came:\n%s", body)
	return ""
}

// callDelete calls tairseach_notes_delete with id from a client without
// elicitation, on a goroutine, and returns its result's text and whether
// it is an error.
func callDelete(t *testing.T, cs *mcp.ClientSession, id string) <-chan string {
	out := make(chan string, 1)
	// Ends with the call.
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_notes_delete", Arguments: map[string]any{"id": id}})
		switch {
		case err != nil:
			out <- "error " + err.Error()
		case res.IsError:
			out <- "isError " + textOf(res)
		default:
			out <- textOf(res)
		}
	}()
	return out
}

func TestTheOwnerAnswersOnTheConsoleForAClientThatCannotAsk(t *testing.T) {
	be := deleteBackend(t)
	dir := manifestDir(t, map[string]string{"notes.json": deleteManifest})
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			var cs *mcp.ClientSession
			var log func() string
			if transport == "http" {
				b := startHTTPBridge(t, dir, be.Path, "--confirm-unsupported", "page")
				cs, log = connectHTTP(t, b.url, "2025-11-25", nil), b.log
			} else {
				cmd := bridgeCmd(dir, be.Path, "--confirm-unsupported", "page", "--ui", "127.0.0.1:0")
				var stderr syncBuffer
				cmd.Stderr = &stderr
				cs, log = connectSDKWith(t, cmd, "2025-11-25", &mcp.ClientOptions{}), stderr.String
			}
			o := openConsole(t, log())
			o.watch()
			for _, tt := range []struct {
				answer, id, want string
				deleted          bool
			}{
				{"allow", transport + "-a", `"done":"notes.delete"`, true},
				{"deny", transport + "-d", "isError The user did not allow tairseach_notes_delete (answered no)", false},
			} {
				before := len(deletedIDs(be))
				got := callDelete(t, cs, tt.id)
				page := o.answer(tt.answer)
				if !strings.Contains(page, "Delete the note "+tt.id+"?") || !strings.Contains(page, "e2e") {
					t.Errorf("the question page does not show the question and the client:\n%s", page)
				}
				if res := <-got; !strings.Contains(res, tt.want) {
					t.Errorf("%s: %s, want %s", tt.answer, res, tt.want)
				}
				if deleted := len(deletedIDs(be)) > before; deleted != tt.deleted {
					t.Errorf("%s: deleted %v", tt.answer, deleted)
				}
			}
		})
	}
}

// syncBuffer is a strings.Builder safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestWithNoConsoleOpenTheCallIsRefusedAtOnceWithTheConsolesAddress(t *testing.T) {
	be := deleteBackend(t)
	dir := manifestDir(t, map[string]string{"notes.json": deleteManifest})
	b := startHTTPBridge(t, dir, be.Path, "--confirm-unsupported", "page", "--audit-log", t.TempDir()+"/audit.log")
	cs := connectHTTP(t, b.url, "2025-11-25", nil)
	start := time.Now()
	res := <-callDelete(t, cs, "n1")
	base := strings.TrimSuffix(b.url, "/mcp")
	if !strings.Contains(res, "isError tairseach_notes_delete asks the user before it runs, and this client cannot ask") ||
		!strings.Contains(res, "the owner can answer on the console at "+base+"/ui/ ") || strings.Contains(res, "?s=") {
		t.Errorf("answer %q", res)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("refused after %s, want at once", took)
	}
	if len(deletedIDs(be)) != 0 {
		t.Error("the note was deleted")
	}
}

func TestConfirmUnsupportedPageNeedsAConsole(t *testing.T) {
	cmd := exec.Command(binary, "--confirm-unsupported", "page", "--manifests", t.TempDir())
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "--confirm-unsupported page waits for the owner's answer on the console") {
		t.Errorf("exit %d (%v):\n%s", code, err, out)
	}
}

// A named client whose policy says confirmUnsupported page has the owner
// asked on the console, while another client of the same bridge, under
// the default --confirm-unsupported allow, runs the same tool unasked at
// the same time. Over stdio without --ui, where there is no console, the
// page client's call is refused, never run unasked.
func TestANamedClientsQuestionsGoToTheConsole(t *testing.T) {
	be := deleteBackend(t)
	dir := manifestDir(t, map[string]string{"notes.json": deleteManifest})
	path := filepath.Join(t.TempDir(), "clients.json")
	pager := addClient(t, path, "pager", "--confirm-unsupported", "page")
	free := addClient(t, path, "free")
	if out := clientsCommand(t, path, "list"); !strings.Contains(out, "confirm-unsupported page") {
		t.Errorf("clients list does not show the page policy:\n%s", out)
	}

	t.Run("http", func(t *testing.T) {
		b := startHTTPBridge(t, dir, be.Path, "--clients", path)
		o := openConsole(t, b.log())
		o.watch()
		ps, fs := connectAs(t, b.url, pager, "2025-11-25"), connectAs(t, b.url, free, "2025-11-25")
		asked := callDelete(t, ps, "by-pager")
		unasked := callDelete(t, fs, "by-free")
		select {
		case res := <-unasked:
			if !strings.Contains(res, `"done":"notes.delete"`) {
				t.Errorf("the other client's call: %s", res)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the other client's call waited for the owner too")
		}
		select {
		case res := <-asked:
			t.Fatalf("the page client's call ran before the owner answered: %s", res)
		default:
		}
		page := o.answer("allow")
		if !strings.Contains(page, "Delete the note by-pager?") || !strings.Contains(page, "pager") || strings.Contains(page, "by-free") {
			t.Errorf("the questions page:\n%s", page)
		}
		if res := <-asked; !strings.Contains(res, `"done":"notes.delete"`) {
			t.Errorf("the page client's call after Allow: %s", res)
		}
		if ids := deletedIDs(be); !slices.Contains(ids, "by-pager") || !slices.Contains(ids, "by-free") {
			t.Errorf("deleted %q", ids)
		}
	})

	t.Run("stdio without a console", func(t *testing.T) {
		cs := connectSDK(t, bridgeCmd(dir, be.Path, "--clients", path, "--client", "pager"), "2025-11-25", nil)
		res := <-callDelete(t, cs, "refused")
		if !strings.HasPrefix(res, "isError") || !strings.Contains(res, "serves no console") || slices.Contains(deletedIDs(be), "refused") {
			t.Errorf("the page client's call over stdio without --ui: %s", res)
		}
	})
}
