package socketclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"github.com/tairseach/tairseach-mcp/protocol/jsonscan"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseReply(t *testing.T) {
	// The reply object is the first level of nesting.
	deep := strings.Repeat("[", jsonscan.MaxDepth-1) + strings.Repeat("]", jsonscan.MaxDepth-1)
	tooDeep := "[" + deep + "]"
	tests := []struct {
		name    string
		line    string
		want    reply
		wantErr string // a substring; "" means success
	}{
		{name: "a result is kept byte for byte", line: `{"jsonrpc":"2.0","id":1,"result":{"a": [1, 2.50, "\u00e9"]}}`,
			want: reply{id: []byte(`1`), result: []byte(`{"a": [1, 2.50, "\u00e9"]}`)}},
		{name: "a null result is a result", line: `{"jsonrpc":"2.0","id":1,"result":null}`,
			want: reply{id: []byte(`1`), result: []byte(`null`)}},
		{name: "white space around members is allowed", line: " { \"id\" : 2 ,\t\"result\" : true , \"jsonrpc\" : \"2.0\" } \r",
			want: reply{id: []byte(`2`), result: []byte(`true`)}},
		{name: "an error keeps code, message and data", line: `{"jsonrpc":"2.0","id":1,"error":{"code":-32011,"message":"Permission \"denied\"","data":{"x":[1]}}}`,
			want: reply{id: []byte(`1`), err: &RPCError{Code: -32011, Message: `Permission "denied"`, Data: []byte(`{"x":[1]}`)}}},
		{name: "an error may lack data and message", line: `{"jsonrpc":"2.0","id":1,"error":{"code":5}}`,
			want: reply{id: []byte(`1`), err: &RPCError{Code: 5}}},
		{name: "a null error beside a result is no error", line: `{"jsonrpc":"2.0","id":1,"result":3,"error":null}`,
			want: reply{id: []byte(`1`), result: []byte(`3`)}},
		{name: "escaped member names are unescaped", line: `{"\u0069d":4,"r\u0065sult":5}`,
			want: reply{id: []byte(`4`), result: []byte(`5`)}},
		{name: "a string id is returned for the caller to refuse", line: `{"id":"1","result":1}`,
			want: reply{id: []byte(`"1"`), result: []byte(`1`)}},
		{name: "a notification is recognised", line: `{"jsonrpc":"2.0","method":"log","params":{"level":"info"}}`,
			want: reply{notification: true}},
		{name: "nesting up to the limit is fine", line: `{"id":1,"result":` + deep + `}`,
			want: reply{id: []byte(`1`), result: []byte(deep)}},

		{name: "both result and error is refused", line: `{"id":1,"result":1,"error":{"code":1,"message":"x"}}`, wantErr: "both result and error"},
		{name: "neither result nor error is refused", line: `{"jsonrpc":"2.0","id":1}`, wantErr: "neither"},
		{name: "member names match exactly", line: `{"id":1,"RESULT":1}`, wantErr: "neither"},
		{name: "a repeated result is refused", line: `{"id":1,"result":1,"result":2}`, wantErr: `duplicate member "result"`},
		{name: "a repeated id is refused", line: `{"id":1,"id":2,"result":1}`, wantErr: `duplicate member "id"`},
		{name: "a request from the backend is refused", line: `{"id":1,"method":"x"}`, wantErr: "a request"},
		{name: "garbage is refused", line: `this is not json`, wantErr: "not a JSON object"},
		{name: "an empty line is refused", line: ``, wantErr: "empty"},
		{name: "an array is refused", line: `[{"id":1,"result":1}]`, wantErr: "not a JSON object"},
		{name: "a truncated line is refused", line: `{"id":1,"result":{"a":`, wantErr: "unexpected end of JSON input"},
		{name: "data after the object is refused", line: `{"id":1,"result":1} {}`, wantErr: "after the top-level value"},
		{name: "a bad escape is refused", line: `{"id":1,"result":"\x"}`, wantErr: "invalid escape"},
		{name: "a control character in a string is refused", line: "{\"id\":1,\"result\":\"a\tb\"}", wantErr: "control character"},
		{name: "a leading zero is refused", line: `{"id":01,"result":1}`, wantErr: "expected ',' or '}'"},
		{name: "a trailing comma is refused", line: `{"id":1,"result":[1,]}`, wantErr: "looking for the beginning of a value"},
		{name: "nesting past the limit is refused", line: `{"id":1,"result":` + tooDeep + `}`, wantErr: "nesting too deep"},
		{name: "a huge error code is refused", line: `{"id":1,"error":{"code":123456789012345678901234567890,"message":"x"}}`, wantErr: "not a 64-bit integer"},
		{name: "a fractional error code is refused", line: `{"id":1,"error":{"code":-32000.5,"message":"x"}}`, wantErr: "not a 64-bit integer"},
		{name: "an error without a code is refused", line: `{"id":1,"error":{"message":"x"}}`, wantErr: "no code"},
		{name: "an error that is not an object is refused", line: `{"id":1,"error":"bad"}`, wantErr: "not an object"},
		{name: "a message that is not a string is refused", line: `{"id":1,"error":{"code":1,"message":2}}`, wantErr: "not a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseReply([]byte(tt.line))
			if err == nil && !json.Valid([]byte(tt.line)) {
				t.Errorf("accepted a line encoding/json rejects")
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(reply{})); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppendRequest(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		params  string
		want    string
		wantErr bool
	}{
		{name: "params go out byte for byte", method: "notes.create", params: `{"title": "a\u00e9",  "n": 1.50}`,
			want: `{"jsonrpc":"2.0","id":7,"method":"notes.create","params":{"title": "a\u00e9",  "n": 1.50}}`},
		{name: "no params leaves params out", method: "m", params: ``, want: `{"jsonrpc":"2.0","id":7,"method":"m"}`},
		{name: "blank params leave params out", method: "m", params: " \t", want: `{"jsonrpc":"2.0","id":7,"method":"m"}`},
		{name: "params holding newlines are compacted", method: "m", params: "{\n  \"a\": [1,\r\n 2]\n}",
			want: `{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":[1,2]}}`},
		{name: "invalid params holding a newline are refused", method: "m", params: "{\n", wantErr: true},
		{name: "a method name is escaped", method: "a\"b\\c\n\u00e9", params: `[]`,
			want: `{"jsonrpc":"2.0","id":7,"method":"a\"b\\c\n\u00e9","params":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := appendRequest(nil, 7, tt.method, []byte(tt.params))
			if tt.wantErr {
				if err == nil {
					t.Errorf("got %s, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(got, []byte("\n")) || bytes.Count(got, []byte("\n")) != 1 {
				t.Errorf("%q is not one line", got)
			}
			var wantReq, gotReq any
			json.Unmarshal([]byte(tt.want), &wantReq)
			if err := json.Unmarshal(got, &gotReq); err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			if diff := cmp.Diff(wantReq, gotReq); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if strings.Contains(tt.want, tt.params) && !bytes.Contains(got, []byte(tt.params)) {
				t.Errorf("params were re-encoded: %s", got)
			}
		})
	}
}

func TestReadLine(t *testing.T) {
	const max = 100
	long := strings.Repeat("x", 5000) // longer than the test reader's buffer
	tests := []struct {
		name    string
		input   string
		max     int
		want    string
		wantN   int
		wantErr error
	}{
		{name: "a line of max bytes is read", input: strings.Repeat("a", max) + "\nnext", max: max, want: strings.Repeat("a", max), wantN: max + 1},
		{name: "a line of max+1 bytes is refused", input: strings.Repeat("a", max+1) + "\n", max: max, wantErr: errReplyTooLarge},
		{name: "a line longer than the buffer is gathered", input: long + "\n", max: 10000, want: long, wantN: 5001},
		{name: "a line longer than the buffer and max is refused early", input: long + long + "\n", max: 4500, wantErr: errReplyTooLarge},
		{name: "a line ending without a newline is an EOF", input: "abc", max: max, wantN: 3, wantErr: io.EOF},
		{name: "a long line ending without a newline is an EOF", input: long, max: 10000, wantN: 5000, wantErr: io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tt.input), 1024)
			got, _, n, err := readLine(r, tt.max)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if string(got) != tt.want || (tt.wantN != 0 && n != tt.wantN) {
				t.Errorf("got %d bytes after reading %d, want %d after %d", len(got), n, len(tt.want), tt.wantN)
			}
		})
	}
}

func TestIDMatches(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want bool
	}{{"12", true}, {"13", false}, {`"12"`, false}, {"12.0", false}, {"", false}, {"012", false}} {
		if got := idMatches([]byte(tt.raw), 12); got != tt.want {
			t.Errorf("idMatches(%q, 12) = %v", tt.raw, got)
		}
	}
}

// FuzzParseReply checks the reply parser against encoding/json: it never
// panics; what it accepts is valid JSON; a reply has exactly one of result
// and error, and its result and id are the members encoding/json finds.
// The seeds are in testdata/fuzz/FuzzParseReply.
func FuzzParseReply(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := parseReply(line)
		if err != nil {
			return
		}
		if !json.Valid(line) {
			t.Fatalf("accepted invalid JSON %q", line)
		}
		if r.notification {
			return
		}
		if (r.err == nil) == (r.result == nil) {
			t.Fatalf("parsed %q with result %q and error %v: want exactly one", line, r.result, r.err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("encoding/json cannot decode accepted %q: %v", line, err)
		}
		if r.result != nil && !bytes.Equal(r.result, m["result"]) {
			t.Fatalf("result %q, encoding/json finds %q", r.result, m["result"])
		}
		if !bytes.Equal(r.id, m["id"]) {
			t.Fatalf("id %q, encoding/json finds %q", r.id, m["id"])
		}
		if r.err != nil {
			var e map[string]json.RawMessage
			var msg string
			if err := json.Unmarshal(m["error"], &e); err != nil {
				t.Fatal(err)
			}
			if e["message"] != nil {
				json.Unmarshal(e["message"], &msg)
			}
			code, err := strconv.ParseInt(string(e["code"]), 10, 64)
			if err != nil || code != r.err.Code || msg != r.err.Message || !bytes.Equal(e["data"], r.err.Data) {
				t.Fatalf("error %+v, encoding/json finds %q", r.err, m["error"])
			}
		}
	})
}
