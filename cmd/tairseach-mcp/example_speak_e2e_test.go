//go:build unix

//lint:file-ignore SA1019 sampling, roots and logging are what these tests exercise; 2026-07-28 deprecates them (SEP-2577) but still has them, and clients use them

package main

// End-to-end tests of a backend that speaks during a call: the example
// backend, built from cmd/tairseach-example-backend, behind the built
// bridge over manifests-example, and the Go SDK client with handlers for
// sampling, elicitation and roots and a progress handler, in every era:
// up to 2025-11-25 questions are requests of the bridge's, and in
// 2026-07-28 they come in input_required results; over stdio, and over
// Streamable HTTP from 2025-03-26, which brought it. Before 2025-06-18
// there is no structuredContent (a result's text is its JSON) and no
// elicitation.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tairseach/tairseach-mcp/protocol/protocoltest"
)

// exampleManifests is the folder of the example manifests.
const exampleManifests = "../../manifests-example"

// exampleBackendBinary builds the example backend once, beside the
// bridge's binary (TestMain removes both).
var exampleBackendBinary = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(filepath.Dir(binary), "tairseach-example-backend")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, "../tairseach-example-backend")...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build the example backend: %v\n%s", err, out)
	}
	return bin, nil
})

// startExampleBackend starts the example backend on a socket of its own,
// with an empty notes folder, and returns the socket's path once it
// listens. The test's end stops it.
func startExampleBackend(t *testing.T) string {
	t.Helper()
	bin, err := exampleBackendBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "tse") // short: socket paths are limited to about 104 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "b.sock")
	cmd := exec.Command(bin, "-socket", sock, "-data", filepath.Join(dir, "data"), "-files-root", t.TempDir(), "-log-level", "info")
	dieWithTheTest(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	listening := make(chan struct{})
	// Reads the backend's log until it exits, which the cleanup waits for.
	go func() {
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			if !said && strings.Contains(sc.Text(), `"message":"listening"`) {
				said = true
				close(listening)
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(20 * time.Second):
		t.Fatal("the example backend did not listen within 20s")
	}
	return sock
}

// speakingClient is a client that can be asked everything, and records
// what it was asked and told.
type speakingClient struct {
	label string // the user's answer to a form: a label, or "" to decline

	told chan struct{} // a notification came (buffered, 1)

	mu       sync.Mutex
	sampled  []*mcp.CreateMessageParams
	elicited []*mcp.ElicitParams
	progress []string
	logs     []string
}

func newSpeakingClient(label string) *speakingClient {
	return &speakingClient{label: label, told: make(chan struct{}, 1)}
}

// tell notes that a notification came.
func (c *speakingClient) tell() {
	select {
	case c.told <- struct{}{}:
	default:
	}
}

// waitTold waits until done says the notifications expected came: the
// SDK hands notifications to their handlers apart from the responses.
func (c *speakingClient) waitTold(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !done() {
		select {
		case <-c.told:
		case <-deadline:
			t.Fatalf("no %s within 10s", what)
		}
	}
}

var clientRoots = []*mcp.Root{{URI: "file:///home/ann/notes", Name: "notes"}}

func (c *speakingClient) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			c.mu.Lock()
			c.sampled = append(c.sampled, req.Params)
			c.mu.Unlock()
			return &mcp.CreateMessageResult{Role: "assistant", Model: "e2e-model", StopReason: "endTurn", Content: &mcp.TextContent{Text: "Two trips planned."}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			c.mu.Lock()
			c.elicited = append(c.elicited, req.Params)
			label := c.label
			c.mu.Unlock()
			if label == "" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"label": label}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress = append(c.progress, fmt.Sprintf("%g/%g %s", req.Params.Progress, req.Params.Total, req.Params.Message))
			c.mu.Unlock()
			c.tell()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			c.mu.Lock()
			c.logs = append(c.logs, fmt.Sprintf("%s %s %v", req.Params.Level, req.Params.Logger, req.Params.Data))
			c.mu.Unlock()
			c.tell()
		},
	}
}

func (c *speakingClient) setLabel(label string) {
	c.mu.Lock()
	c.label = label
	c.mu.Unlock()
}

func (c *speakingClient) seen() (progress, logs []string, sampled []*mcp.CreateMessageParams, elicited []*mcp.ElicitParams) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.progress), slices.Clone(c.logs), slices.Clone(c.sampled), slices.Clone(c.elicited)
}

// connectVia connects a client with opts to a bridge over the example
// manifests and sock, over stdio or HTTP.
func connectVia(t *testing.T, transport, sock, version string, opts *mcp.ClientOptions, roots ...*mcp.Root) *mcp.ClientSession {
	t.Helper()
	if transport == "http" {
		b := startHTTPBridge(t, exampleManifests, sock)
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e-speak", Version: "1"}, opts)
		client.AddRoots(roots...)
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: b.url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect over HTTP (%s): %v", version, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-speak", Version: "1"}, opts)
	client.AddRoots(roots...)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: bridgeCmd(exampleManifests, sock)}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// structured returns a result's structured content as JSON, with its
// members sorted. From 2025-06-18 on, the result must carry it as
// structuredContent; before, which has none, the result must carry none
// and its text is the JSON instead.
func structured(t *testing.T, version string, res *mcp.CallToolResult) string {
	t.Helper()
	v := res.StructuredContent
	if version < "2025-06-18" {
		if v != nil {
			t.Fatalf("structuredContent in %s, which has none: %v", version, v)
		}
		if err := json.Unmarshal([]byte(textOf(res)), &v); err != nil {
			t.Fatalf("the text of a result in %s is not JSON: %v: %q", version, err, textOf(res))
		}
	} else if v == nil {
		t.Fatalf("no structuredContent in %s: %q", version, textOf(res))
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func callOK(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatalf("%s: %v", params.Name, err)
	}
	if res.IsError {
		t.Fatalf("%s: isError: %s", params.Name, textOf(res))
	}
	return res
}

func TestTheExampleToolsThatSpeak(t *testing.T) {
	for _, era := range []struct {
		version    string
		transports []string
	}{
		// Streamable HTTP came with 2025-03-26; 2024-11-05's HTTP was the
		// older HTTP+SSE transport, which the bridge does not serve.
		{"2024-11-05", []string{"stdio"}},
		{"2025-03-26", []string{"stdio", "http"}},
		{"2025-06-18", []string{"stdio", "http"}},
		{"2025-11-25", []string{"stdio", "http"}},
		{"2026-07-28", []string{"stdio", "http"}},
	} {
		version := era.version
		for _, transport := range era.transports {
			t.Run(version+" over "+transport, func(t *testing.T) {
				t.Parallel()
				sock := startExampleBackend(t)
				c := newSpeakingClient("travel")
				cs := connectVia(t, transport, sock, version, c.options(), clientRoots...)
				if got := cs.InitializeResult().ProtocolVersion; got != version {
					t.Fatalf("negotiated %s", got)
				}

				// notes.import: progress per note, then a log message.
				params := &mcp.CallToolParams{Name: "tairseach_notes_import", Arguments: map[string]any{"count": 3, "delay_ms": 20, "title": "Trip"}}
				params.SetProgressToken("import-1")
				if version == "2026-07-28" {
					params.Meta["io.modelcontextprotocol/logLevel"] = "info"
				} else if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
				res := callOK(t, cs, params)
				var imported struct {
					Imported int
					IDs      []string
				}
				if err := json.Unmarshal([]byte(structured(t, version, res)), &imported); err != nil || imported.Imported != 3 || len(imported.IDs) != 3 {
					t.Errorf("import: %s", structured(t, version, res))
				}
				// Progress a client has not read yet is coalesced: it may see
				// fewer than three, never one out of order.
				last := "3/3 3 of 3 notes"
				c.waitTold(t, "progress "+last+" and a log message", func() bool {
					progress, logs, _, _ := c.seen()
					return slices.Contains(progress, last) && len(logs) > 0
				})
				progress, logs, _, _ := c.seen()
				all := []string{"1/3 1 of 3 notes", "2/3 2 of 3 notes", last}
				if i := slices.Index(all, progress[0]); i < 0 || !slices.Equal(progress, slices.DeleteFunc(all[i:], func(p string) bool { return !slices.Contains(progress, p) })) {
					t.Errorf("progress %q, want from %q in order", progress, all)
				}
				if want := []string{"info notes imported 3 notes"}; !slices.Equal(logs, want) {
					t.Errorf("log messages %q, want %q", logs, want)
				}

				// notes.digest: the client's model summarizes.
				res = callOK(t, cs, &mcp.CallToolParams{Name: "tairseach_notes_digest", Arguments: map[string]any{"topic": "trip"}})
				if got := structured(t, version, res); got != `{"digest":"Two trips planned."}` {
					t.Errorf("digest: %s", got)
				}
				_, _, sampled, _ := c.seen()
				if len(sampled) != 1 || sampled[0].MaxTokens != 300 || len(sampled[0].Messages) != 1 {
					t.Fatalf("sampled %+v", sampled)
				}
				if tc, ok := sampled[0].Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "## Trip 2 of 3") {
					t.Errorf("the model was asked %+v", sampled[0].Messages[0].Content)
				}

				id := imported.IDs[0]
				if version < "2025-06-18" {
					// No elicitation before 2025-06-18: the user cannot be
					// asked, whatever the client declared, and the call says so.
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "tairseach_notes_label", Arguments: map[string]any{"id": id}})
					if err != nil {
						t.Fatalf("tairseach_notes_label: %v", err)
					}
					if want := "this client cannot ask its user for a label: it offers no forms (MCP elicitation capability)"; !res.IsError || !strings.Contains(textOf(res), "error -32021") || !strings.Contains(textOf(res), want) {
						t.Errorf("label: isError %v, %q; want %q", res.IsError, textOf(res), want)
					}
					if _, _, _, elicited := c.seen(); len(elicited) != 0 {
						t.Errorf("asked in %s, which has no elicitation: %q", version, elicited[0].Message)
					}
					res = callOK(t, cs, &mcp.CallToolParams{Name: "tairseach_notes_get", Arguments: map[string]any{"id": id}})
					if got := structured(t, version, res); strings.Contains(got, `"label"`) {
						t.Errorf("the note after a label nobody was asked for: %s", got)
					}
				} else {
					// notes.label: the user's label is stored; a decline changes nothing.
					res = callOK(t, cs, &mcp.CallToolParams{Name: "tairseach_notes_label", Arguments: map[string]any{"id": id}})
					if got, want := structured(t, version, res), `{"answer":"accept","changed":true,"id":"`+id+`","label":"travel","title":"Trip 1 of 3"}`; got != want {
						t.Errorf("label: %s, want %s", got, want)
					}
					c.setLabel("")
					res = callOK(t, cs, &mcp.CallToolParams{Name: "tairseach_notes_label", Arguments: map[string]any{"id": id}})
					if got, want := structured(t, version, res), `{"answer":"decline","changed":false,"id":"`+id+`","label":"travel","title":"Trip 1 of 3"}`; got != want {
						t.Errorf("declined label: %s, want %s", got, want)
					}
					_, _, _, elicited := c.seen()
					if len(elicited) != 2 || elicited[0].Message != "A label for the note “Trip 1 of 3”?" {
						t.Errorf("asked %+v", elicited)
					}
					res = callOK(t, cs, &mcp.CallToolParams{Name: "tairseach_notes_get", Arguments: map[string]any{"id": id}})
					if !strings.Contains(structured(t, version, res), `"label":"travel"`) {
						t.Errorf("the note after a decline: %s", structured(t, version, res))
					}
				}

				// files.roots: the client's own.
				res = callOK(t, cs, &mcp.CallToolParams{Name: "tairseach_files_roots", Arguments: map[string]any{}})
				if got := structured(t, version, res); got != `{"roots":[{"name":"notes","uri":"file:///home/ann/notes"}]}` {
					t.Errorf("roots: %s", got)
				}
			})
		}
	}
}

// A client that offers neither sampling, nor forms, nor roots gets an
// isError result that says so, at once: the question is never sent.
func TestAClientThatCannotBeAskedGetsAClearError(t *testing.T) {
	sock := startExampleBackend(t)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(version+" over "+transport, func(t *testing.T) {
				cs := connectVia(t, transport, sock, version, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
				id := strings.Trim(fmt.Sprint(callOK(t, cs, &mcp.CallToolParams{Name: "tairseach_notes_create", Arguments: map[string]any{"title": "a trip"}}).StructuredContent.(map[string]any)["id"]), `"`)
				for _, tt := range []struct {
					tool string
					args map[string]any
					want string
				}{
					{"tairseach_notes_digest", map[string]any{"topic": "trip"}, "this client cannot summarize: it offers no sampling (MCP sampling capability)"},
					{"tairseach_notes_label", map[string]any{"id": id}, "this client cannot ask its user for a label: it offers no forms (MCP elicitation capability)"},
					{"tairseach_files_roots", map[string]any{}, "this client cannot list its roots: it offers no roots (MCP roots capability)"},
				} {
					// Well within --ask-timeout (5 minutes) and the call timeout.
					ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
					cancel()
					if err != nil {
						t.Fatalf("%s: %v", tt.tool, err)
					}
					if !res.IsError || !strings.Contains(textOf(res), "error -32021") || !strings.Contains(textOf(res), tt.want) {
						t.Errorf("%s: isError %v, %q; want %q", tt.tool, res.IsError, textOf(res), tt.want)
					}
				}
			})
		}
	}
}

// conversation is a session with a bridge over stdio, by hand: every
// line the bridge writes is checked against the official schema of the
// version in force.
type conversation struct {
	t       *testing.T
	lb      *liveBridge
	checker *protocoltest.Checker
}

func (cv *conversation) send(line string) {
	cv.checker.ClientLine([]byte(line))
	cv.lb.send(line)
}

// until reads lines until one for which done says true, and returns the
// lines read, that one last.
func (cv *conversation) until(what string, done func(m map[string]json.RawMessage) bool) []map[string]json.RawMessage {
	cv.t.Helper()
	var read []map[string]json.RawMessage
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-cv.lb.lines:
			if !ok {
				cv.t.Fatalf("the bridge exited before %s", what)
			}
			if err := cv.checker.ServerLine([]byte(l)); err != nil {
				cv.t.Errorf("invalid message on stdout: %s\n  %v", l, err)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				cv.t.Fatalf("%s: %v", l, err)
			}
			if read = append(read, m); done(m) {
				return read
			}
		case <-timeout:
			cv.t.Fatalf("no %s within 20s", what)
		}
	}
}

// reply reads until the response to id.
func (cv *conversation) reply(id string) map[string]json.RawMessage {
	cv.t.Helper()
	read := cv.until("response "+id, func(m map[string]json.RawMessage) bool { return string(m["id"]) == id && m["method"] == nil })
	return read[len(read)-1]
}

// answers of the client, to each kind of question.
var clientAnswers = map[string]string{
	"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"Two trips planned."},"model":"e2e-model","stopReason":"endTurn"}`,
	"elicitation/create":     `{"action":"accept","content":{"label":"travel"}}`,
	"roots/list":             `{"roots":[{"uri":"file:///home/ann/notes","name":"notes"}]}`,
}

func TestEveryLineOfCallsThatSpeakIsValid(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			sock := startExampleBackend(t)
			cv := &conversation{t: t, lb: startLive(t, bridgeCmd(exampleManifests, sock)), checker: protocoltest.NewChecker(version)}
			modern := version >= "2026-07-28"
			elicitation := `{"form":{}}`
			if version == "2025-06-18" {
				elicitation = `{}`
			}
			caps := `{"sampling":{},"elicitation":` + elicitation + `,"roots":{}}`
			meta := `"_meta":{"progressToken":"p"}`
			if modern {
				meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `,"io.modelcontextprotocol/logLevel":"info","progressToken":"p"}`
			} else {
				cv.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":` + caps + `,"clientInfo":{"name":"e2e","version":"1"}}}`)
				cv.reply("1")
				cv.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				cv.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`)
				cv.reply("2")
			}

			cv.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tairseach_notes_import","arguments":{"count":2,"title":"Trip"},` + meta + `}}`)
			read := cv.until("the import's result", func(m map[string]json.RawMessage) bool { return string(m["id"]) == "3" })
			var methods []string
			for _, m := range read[:len(read)-1] {
				methods = append(methods, strings.Trim(string(m["method"]), `"`))
			}
			if !slices.Contains(methods, "notifications/progress") || !slices.Contains(methods, "notifications/message") {
				t.Errorf("before the import's result: %q", methods)
			}
			var imported struct {
				StructuredContent struct{ IDs []string }
			}
			if err := json.Unmarshal(read[len(read)-1]["result"], &imported); err != nil || len(imported.StructuredContent.IDs) != 2 {
				t.Fatalf("import: %s", read[len(read)-1]["result"])
			}

			// Each tool asks one question, and its answer makes the result.
			for i, tt := range []struct {
				tool, args, question, want string
			}{
				{"tairseach_notes_digest", `{"topic":"trip"}`, "sampling/createMessage", `"digest":"Two trips planned."`},
				{"tairseach_notes_label", `{"id":"` + imported.StructuredContent.IDs[0] + `"}`, "elicitation/create", `"label":"travel"`},
				{"tairseach_files_roots", `{}`, "roots/list", `"uri":"file:///home/ann/notes"`},
			} {
				id := fmt.Sprint(10 + i)
				call := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tt.tool + `","arguments":` + tt.args + `,` + meta + `}}`
				cv.send(call)
				var res map[string]json.RawMessage
				if modern {
					// The question comes in the result; the retry answers it.
					var input struct {
						ResultType    string
						InputRequests map[string]struct{ Method string }
						RequestState  string
					}
					json.Unmarshal(cv.reply(id)["result"], &input)
					name := strings.TrimPrefix(tt.tool, "tairseach_notes_")
					if tt.question == "roots/list" {
						name = "roots"
					}
					if input.ResultType != "input_required" || len(input.InputRequests) != 1 || input.InputRequests[name].Method != tt.question || input.RequestState == "" {
						t.Fatalf("%s: %+v", tt.tool, input)
					}
					id += "0"
					retry := strings.Replace(call, `"id":`+id[:len(id)-1]+`,`, `"id":`+id+`,`, 1)
					retry = strings.Replace(retry, `"arguments":`, `"inputResponses":{"`+name+`":`+clientAnswers[tt.question]+`},"requestState":"`+input.RequestState+`","arguments":`, 1)
					cv.send(retry)
					res = cv.reply(id)
				} else {
					read := cv.until(tt.question, func(m map[string]json.RawMessage) bool { return string(m["method"]) == `"`+tt.question+`"` })
					q := read[len(read)-1]
					cv.send(`{"jsonrpc":"2.0","id":` + string(q["id"]) + `,"result":` + clientAnswers[tt.question] + `}`)
					res = cv.reply(id)
				}
				if !strings.Contains(string(res["result"]), tt.want) || strings.Contains(string(res["result"]), `"isError":true`) {
					t.Errorf("%s: %s", tt.tool, res["result"])
				}
			}
		})
	}
}
