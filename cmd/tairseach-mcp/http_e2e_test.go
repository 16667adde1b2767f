//go:build unix

package main

// End-to-end tests of --transport http: the built binary serves
// Streamable HTTP on a loopback port, and the official Go SDK's
// Streamable HTTP client uses it in both protocol eras.

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// httpBridge is a bridge serving HTTP, and what it said on stderr.
type httpBridge struct {
	cmd    *exec.Cmd
	url    string
	exited chan struct{} // closed once its stderr has ended

	mu     sync.Mutex
	stderr strings.Builder
	said   chan struct{} // a line came (buffered, 1)
}

var servingLine = regexp.MustCompile(`serving MCP on (?:unix:\S+ )?(http\S+/mcp)`)

// startHTTPBridge starts a bridge with --transport http on a free
// loopback port and returns once it serves.
func startHTTPBridge(t *testing.T, dir, sock string, extra ...string) *httpBridge {
	t.Helper()
	return startHTTP(t, bridgeCmd(dir, sock, append([]string{"--transport", "http", "--listen", "127.0.0.1:0"}, extra...)...))
}

// startHTTP starts cmd, a bridge serving HTTP, and returns once it says
// where. The test's end stops it.
func startHTTP(t *testing.T, cmd *exec.Cmd) *httpBridge {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &httpBridge{cmd: cmd, exited: make(chan struct{}), said: make(chan struct{}, 1)}
	found := make(chan string, 1)
	go func() { // reads stderr until the bridge exits
		defer close(b.exited)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			b.mu.Lock()
			b.stderr.WriteString(sc.Text() + "\n")
			b.mu.Unlock()
			select {
			case b.said <- struct{}{}:
			default:
			}
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	select {
	case b.url = <-found:
	case <-b.exited:
		t.Fatalf("the bridge exited:\n%s", b.log())
	case <-time.After(20 * time.Second):
		t.Fatalf("the bridge did not say where it serves:\n%s", b.log())
	}
	return b
}

func (b *httpBridge) log() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stderr.String()
}

// waitLog waits until the bridge has logged a line holding s.
func (b *httpBridge) waitLog(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for !strings.Contains(b.log(), s) {
		select {
		case <-b.said:
		case <-b.exited:
			t.Fatalf("the bridge exited before it logged %q:\n%s", s, b.log())
		case <-deadline:
			t.Fatalf("the bridge did not log %q:\n%s", s, b.log())
		}
	}
}

func connectHTTP(t *testing.T, url, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect over HTTP (%s): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestGoSDKClientOverHTTP(t *testing.T) {
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	b := startHTTPBridge(t, dir, be.Path, "--progress-interval", "100ms")
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			var progress sync.WaitGroup
			progress.Add(1)
			var once sync.Once
			cs := connectHTTP(t, b.url, version, &mcp.ClientOptions{
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { once.Do(progress.Done) },
			})
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("negotiated %s, want %s", got, version)
			}
			ctx := t.Context()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if names := toolNames(tools); !slices.Contains(names, "tairseach_notes_create") {
				t.Fatalf("tools %v lack tairseach_notes_create", names)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_create", Arguments: map[string]any{"title": "groceries"}})
			if err != nil || res.IsError || !strings.Contains(textOf(res), `"title":"groceries"`) {
				t.Fatalf("call: %v, %+v %s", err, res, textOf(res))
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_fail", Arguments: map[string]any{}})
			if err != nil || !res.IsError || !strings.Contains(textOf(res), "Permission denied") {
				t.Fatalf("a backend error: %v, %s", err, textOf(res))
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_create", Arguments: map[string]any{"title": ""}})
			if err != nil || !res.IsError || !strings.Contains(textOf(res), "Invalid arguments") {
				t.Fatalf("bad arguments: %v, %s", err, textOf(res))
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_nope"}); err == nil {
				t.Fatal("an unknown tool is no error")
			}
			// A slow call with a progress token gets its heartbeats over
			// the response's event stream.
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_slow", Arguments: map[string]any{},
				Meta: mcp.Meta{"progressToken": "p1"}})
			if err != nil || res.IsError {
				t.Fatalf("slow call: %v, %s", err, textOf(res))
			}
			waitGroup(t, &progress, "a progress notification")
		})
	}
}

// waitGroup waits for wg, failing the test after 10 s.
func waitGroup(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }() // ends when wg does, or leaks with the failed test
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
	}
}

// Cancelling a call over HTTP reaches the backend: in the legacy era by
// notifications/cancelled, in the modern one by closing the response.
func TestACallCancelledOverHTTPIsCancelledAtTheBackend(t *testing.T) {
	started, cancelled := make(chan struct{}, 4), make(chan struct{}, 4)
	be := sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			cancelled <- struct{}{}
		case <-time.After(20 * time.Second):
		}
		return map[string]bool{"slept": true}, nil
	})
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	b := startHTTPBridge(t, dir, be.Path)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cs := connectHTTP(t, b.url, version, nil)
			ctx, cancel := context.WithCancel(t.Context())
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_notes_slow", Arguments: map[string]any{}})
				errc <- err
			}()
			<-started
			cancel()
			if err := <-errc; err == nil {
				t.Error("a cancelled call returned no error")
			}
			select {
			case <-cancelled:
			case <-time.After(10 * time.Second):
				t.Fatalf("the backend's call was not cancelled:\n%s", b.log())
			}
		})
	}
}

// A manifest edit reaches every connected client: legacy clients on their
// GET stream, modern ones on subscriptions/listen.
func TestListChangedReachesEveryHTTPClient(t *testing.T) {
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	b := startHTTPBridge(t, dir, be.Path)
	versions := []string{"2025-03-26", "2025-11-25", "2026-07-28", "2025-11-25"}
	changed := make([]chan struct{}, len(versions))
	for i, v := range versions {
		changed[i] = make(chan struct{}, 8)
		cs := connectHTTP(t, b.url, v, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed[i] <- struct{}{} },
		})
		if _, err := cs.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}
	// The clients open their streams on their own: edit until each saw it.
	edited := strings.Replace(notesManifest, `"Create a note."`, `"Create a note, edited."`, 1)
	write(t, filepath.Join(dir, "notes.json"), edited)
	for i, ch := range changed {
		select {
		case <-ch:
		case <-time.After(15 * time.Second):
			t.Fatalf("client %d (%s) was not told the list changed:\n%s", i, versions[i], b.log())
		}
	}
}

// Four clients at once share one bridge: one tool table, one backend pool.
func TestFourHTTPClientsShareOneBridge(t *testing.T) {
	be := backend(t)
	dir := manifestDir(t, map[string]string{"notes.json": notesManifest})
	b := startHTTPBridge(t, dir, be.Path)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			cs := connectHTTP(t, b.url, []string{"2025-11-25", "2026-07-28"}[i%2], nil)
			for j := range 25 {
				title := fmt.Sprintf("c%d-%d", i, j)
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_create", Arguments: map[string]any{"title": title}})
				if err != nil || res.IsError || !strings.Contains(textOf(res), title) {
					t.Errorf("client %d call %d: %v %s", i, j, err, textOf(res))
					return
				}
			}
		})
	}
	wg.Wait()
	if n := countMethod(be, "notes.create"); n != 100 {
		t.Errorf("the backend got %d calls, want 100", n)
	}
}
