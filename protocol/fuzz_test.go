package protocol

import (
	"bufio"
	"bytes"
	"context"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// FuzzServe feeds arbitrary input to a whole session: the server must
// never panic or hang, every line it writes must be one JSON object (or a
// batch array) in valid UTF-8, and it must answer no more requests than
// it was sent lines.
func FuzzServe(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}` + "\n" + `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t_plain","arguments":{"a":[1,{"b":null}]}}}]`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"bzE"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t_echo","arguments":{"x":"\ud800"},"_meta":{"progressToken":1}}}`,
		"\xff\xfe{\"jsonrpc\":\"2.0\"}\n\n[]\n[1]\n{}",
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}\r\n{\"id\":\"\xff\",\"result\":1}",
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://items/a%2"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"resources/templates/list","params":{"cursor":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"embed","arguments":{"id":"\u0000"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"x"},"context":{"arguments":{}}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		srv := newTestServer(&fakeTools{set: testTools()}) // every tool echoes
		c := newFakeContent()
		c.blocking = false // nothing waits for a cancellation that never comes
		srv.Resources, srv.Prompts, srv.Completions = c, c, c
		srv.MaxMessageSize = 4096
		var out bytes.Buffer
		done := make(chan error, 1)
		go func() { done <- srv.Serve(context.Background(), bytes.NewReader(input), &out) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return at EOF")
		}
		lines := bytes.Count(input, []byte{'\n'}) + 1
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		responses := 0
		for sc.Scan() {
			if !utf8.Valid(sc.Bytes()) {
				t.Fatalf("invalid UTF-8 written: %q", sc.Bytes())
			}
			var v any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				t.Fatalf("invalid JSON written: %q: %v", sc.Bytes(), err)
			}
			switch m := v.(type) {
			case map[string]any:
				if _, ok := m["id"]; ok {
					responses++
				}
			case []any:
				responses++
			default:
				t.Fatalf("neither object nor array written: %q", sc.Bytes())
			}
		}
		if responses > lines {
			t.Fatalf("%d responses to %d lines", responses, lines)
		}
	})
}

// FuzzIDFromPrefix holds idFromPrefix to what the whole message says: on
// any cut of a message, an id it finds is the message's own, and a
// message it takes for a response is not answered as a request.
func FuzzIDFromPrefix(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1234,"method":"ping"}`,
		`{"id":"a\u0062c","params":{"id":7}}`,
		`{"params":{"pad":"xx"},"id":-5}`,
		`{"id":null}`,
		`{"id":3,"result":{}}`,
	} {
		f.Add([]byte(seed), uint16(10))
	}
	f.Fuzz(func(t *testing.T, msg []byte, cut uint16) {
		prefix := msg[:min(int(cut), len(msg))]
		id, response := idFromPrefix(prefix)
		if id != nil && !validID(id) {
			t.Fatalf("idFromPrefix(%q) = %s, not a valid id", prefix, id)
		}
		rq, ignore, _, err := decodeMessage(msg)
		if err != nil {
			return
		}
		if response && !ignore {
			t.Fatalf("idFromPrefix(%q) saw a response in the request %q", prefix, msg)
		}
		if id != nil && !ignore && !bytes.Equal(rq.id, id) {
			t.Fatalf("idFromPrefix(%q) = %s, but the message's id is %s", prefix, id, rq.id)
		}
	})
}

// FuzzDecodeMessage holds decodeMessage to its contract: a request it
// returns has a valid id or none, a method, and params that are an
// object or nothing; an error is answered with a valid id or null.
func FuzzDecodeMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"ping","params":null}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"id":2}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"p\xffing\"}",
		`42`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rq, ignore, errID, err := decodeMessage(data)
		switch {
		case err != nil:
			if string(errID) != "null" && !validID(errID) {
				t.Fatalf("error %v answered with id %q", err, errID)
			}
		case ignore:
		default:
			if rq.id != nil && !validID(rq.id) || rq.method == "" || rq.params != nil && rq.params.Kind() != '{' {
				t.Fatalf("decodeMessage(%q) = %+v", data, rq)
			}
			if rq.params != nil && !jsontext.Value(rq.params).IsValid(lenient) {
				t.Fatalf("params %q are not JSON", rq.params)
			}
		}
	})
}
