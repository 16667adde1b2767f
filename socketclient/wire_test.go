package socketclient

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

func TestDecodeReply(t *testing.T) {
	type want struct {
		ID, Result   string
		Notification bool
		Request      string // the method of a request of the backend's
		Err          *RPCError
	}
	tests := []struct {
		name    string
		line    string
		want    want
		wantErr string // a substring; "" means success
	}{
		{name: "a result is kept byte for byte", line: `{"jsonrpc":"2.0","id":1,"result":{"a": [1, 2.50, "\u00e9"]}}`,
			want: want{ID: `1`, Result: `{"a": [1, 2.50, "\u00e9"]}`}},
		{name: "a null result is a result", line: `{"jsonrpc":"2.0","id":1,"result":null}`,
			want: want{ID: `1`, Result: `null`}},
		{name: "white space around members is allowed", line: " { \"id\" : 2 ,\t\"result\" : true , \"jsonrpc\" : \"2.0\" } \r",
			want: want{ID: `2`, Result: `true`}},
		{name: "an error keeps code, message and data", line: `{"jsonrpc":"2.0","id":1,"error":{"code":-32011,"message":"Permission \"denied\"","data":{"x":[1]}}}`,
			want: want{ID: `1`, Err: &RPCError{Code: -32011, Message: `Permission "denied"`, Data: jsontext.Value(`{"x":[1]}`)}}},
		{name: "an error may lack data and message", line: `{"jsonrpc":"2.0","id":1,"error":{"code":5}}`,
			want: want{ID: `1`, Err: &RPCError{Code: 5}}},
		{name: "a null error beside a result is no error", line: `{"jsonrpc":"2.0","id":1,"result":3,"error":null}`,
			want: want{ID: `1`, Result: `3`}},
		{name: "escaped member names are unescaped", line: `{"\u0069d":4,"r\u0065sult":5}`,
			want: want{ID: `4`, Result: `5`}},
		{name: "a string id is returned for the caller to refuse", line: `{"id":"1","result":1}`,
			want: want{ID: `"1"`, Result: `1`}},
		{name: "a notification is recognised", line: `{"jsonrpc":"2.0","method":"log","params":{"level":"info"}}`,
			want: want{Notification: true}},
		{name: "invalid UTF-8 in a result is replaced, and the result compacted", line: "{\"id\":1,\"result\":{\"a\": \"x\xffy\", \"b\": \"\xc3\"}}",
			want: want{ID: `1`, Result: `{"a":"x` + "\uFFFD" + `y","b":"` + "\uFFFD" + `"}`}},
		{name: "an escaped lone surrogate in a result is replaced", line: `{"id":1,"result":["\ud800", "\u00e9"]}`,
			want: want{ID: `1`, Result: `["` + "\uFFFD" + `","é"]`}},
		{name: "invalid UTF-8 elsewhere leaves a valid result as it is", line: "{\"jsonrpc\":\"\xff\",\"id\":1,\"result\":[1, \"\\u00e9\"]}",
			want: want{ID: `1`, Result: `[1, "\u00e9"]`}},
		{name: "invalid UTF-8 in an error is replaced", line: "{\"id\":1,\"error\":{\"code\":1,\"message\":\"bad \xc3 byte\",\"data\":[\"\xff\"]}}",
			want: want{ID: `1`, Err: &RPCError{Code: 1, Message: "bad \uFFFD byte", Data: jsontext.Value(`["` + "\uFFFD" + `"]`)}}},

		{name: "both result and error is refused", line: `{"id":1,"result":1,"error":{"code":1,"message":"x"}}`, wantErr: "both result and error"},
		{name: "neither result nor error is refused", line: `{"jsonrpc":"2.0","id":1}`, wantErr: "neither"},
		{name: "member names match exactly", line: `{"id":1,"RESULT":1}`, wantErr: "neither"},
		{name: "a repeated result is refused", line: `{"id":1,"result":1,"result":2}`, wantErr: `duplicate object member name "result"`},
		{name: "a repeated id is refused", line: `{"id":1,"id":2,"result":1}`, wantErr: `duplicate object member name "id"`},
		{name: "a request from the backend is recognised", line: `{"jsonrpc":"2.0","id":"q1","method":"roots/list","params":{}}`,
			want: want{ID: `"q1"`, Request: "roots/list"}},
		{name: "a request whose method is not a string is refused", line: `{"id":1,"method":7}`, wantErr: "method is not a string"},
		{name: "a request whose id is not a string or an integer is refused", line: `{"id":1.5,"method":"x"}`, wantErr: "request id"},
		{name: "a request with a null id is refused", line: `{"id":null,"method":"x"}`, wantErr: "request id"},
		{name: "garbage is refused", line: `this is not json`, wantErr: "invalid character"},
		{name: "an array is refused", line: `[{"id":1,"result":1}]`, wantErr: "unmarshal JSON array into Go"},
		{name: "a truncated line is refused", line: `{"id":1,"result":{"a":`, wantErr: "unexpected EOF"},
		{name: "data after the object is refused", line: `{"id":1,"result":1} {}`, wantErr: "after top-level value"},
		{name: "a bad escape is refused", line: `{"id":1,"result":"\x"}`, wantErr: "invalid escape"},
		{name: "a control character in a string is refused", line: "{\"id\":1,\"result\":\"a\tb\"}", wantErr: "invalid character '\\t' in string"},
		{name: "a leading zero is refused", line: `{"id":01,"result":1}`, wantErr: "invalid character"},
		{name: "a trailing comma is refused", line: `{"id":1,"result":[1,]}`, wantErr: "invalid character ']'"},
		{name: "a huge error code is refused", line: `{"id":1,"error":{"code":123456789012345678901234567890,"message":"x"}}`, wantErr: "out of range"},
		{name: "a fractional error code is refused", line: `{"id":1,"error":{"code":-32000.5,"message":"x"}}`, wantErr: "into Go int64"},
		{name: "an error without a code is refused", line: `{"id":1,"error":{"message":"x"}}`, wantErr: "no code"},
		{name: "an error that is not an object is refused", line: `{"id":1,"error":"bad"}`, wantErr: "unmarshal JSON string into Go"},
		{name: "a message that is not a string is refused", line: `{"id":1,"error":{"code":1,"message":2}}`, wantErr: "into Go string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, result, err := decodeReply([]byte(tt.line))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := want{ID: string(r.ID), Result: string(result), Notification: r.notification()}
			if r.request() {
				got.Request = r.method()
			}
			if e := r.Error; e != nil {
				got.Err = &RPCError{Code: *e.Code, Message: e.Message, Data: e.Data}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEncodeRequest(t *testing.T) {
	tests := []struct {
		name   string
		method string
		params string
		want   string // "" means an error
	}{
		{name: "params go out compact, strings and numbers as written", method: "notes.create", params: "{\n  \"title\": \"a\\u00e9\\/\",\r\n  \"n\": [1.50, 1e3]\n}",
			want: `{"jsonrpc":"2.0","id":7,"method":"notes.create","params":{"title":"a\u00e9\/","n":[1.50,1e3]}}` + "\n"},
		{name: "no params leaves params out", method: "m", params: ``, want: `{"jsonrpc":"2.0","id":7,"method":"m"}` + "\n"},
		{name: "blank params leave params out", method: "m", params: " \t\n", want: `{"jsonrpc":"2.0","id":7,"method":"m"}` + "\n"},
		{name: "empty objects and null go out", method: "m", params: `{}`, want: `{"jsonrpc":"2.0","id":7,"method":"m","params":{}}` + "\n"},
		{name: "a method name is escaped", method: "a\"b\\c\n\u00e9", params: `[]`,
			want: `{"jsonrpc":"2.0","id":7,"method":"a\"b\\c\n` + "\u00e9" + `","params":[]}` + "\n"},
		{name: "invalid params are refused", method: "m", params: "{\n"},
		{name: "params followed by more are refused", method: "m", params: `{} {}`},
		{name: "params with invalid UTF-8 are refused", method: "m", params: "\"\xff\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bufs, err := requestLine(7, tt.method, jsontext.Value(tt.params))
			got := bytes.Join(bufs, nil)
			if tt.want == "" {
				if err == nil {
					t.Errorf("got %s, want an error", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
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
		wantErr error
	}{
		{name: "a line of max bytes is read", input: strings.Repeat("a", max) + "\nnext", max: max, want: strings.Repeat("a", max)},
		{name: "a line of max bytes and a CR is read", input: strings.Repeat("a", max) + "\r\n", max: max, want: strings.Repeat("a", max) + "\r"},
		{name: "a line of max+1 bytes is refused", input: strings.Repeat("a", max+1) + "\n", max: max, wantErr: errReplyTooLarge},
		{name: "a line of max+1 bytes and a CR is refused", input: strings.Repeat("a", max+1) + "\r\n", max: max, wantErr: errReplyTooLarge},
		{name: "a line longer than the buffer is gathered", input: long + "\n", max: 10000, want: long},
		{name: "a line longer than the buffer and max is refused", input: long + long + "\n", max: 4500, wantErr: errReplyTooLarge},
		{name: "no line at all is an EOF", input: "", max: max, wantErr: io.EOF},
		{name: "a line cut short is an unexpected EOF", input: "abc", max: max, wantErr: io.ErrUnexpectedEOF},
		{name: "a long line cut short is an unexpected EOF", input: long, max: 10000, wantErr: io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tt.input), 1024)
			got, err := readLine(r, tt.max, noBudget)
			if !errors.Is(err, tt.wantErr) || string(got) != tt.want {
				t.Errorf("got %d bytes, %v; want %d, %v", len(got), err, len(tt.want), tt.wantErr)
			}
		})
	}
}

// TestAnOverlongLineIsNotBuffered: refusing a line far over the limit
// reads past it without holding it.
func TestAnOverlongLineIsNotBuffered(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's own allocations would be counted; the test runs without it (go test, and CI's fresh clone)")
	}
	r := bufio.NewReaderSize(io.MultiReader(strings.NewReader("{"), infinite{}), 4096)
	if n := testing.AllocsPerRun(10, func() {
		if _, err := readLine(r, 64<<10, noBudget); err != errReplyTooLarge {
			t.Fatal(err)
		}
	}); n > 20 {
		t.Errorf("%v allocations to refuse an endless line, want a few", n)
	}
}

// noBudget counts nothing.
func noBudget(int) error { return nil }

// infinite is an endless stream of x.
type infinite struct{}

func (infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// FuzzDecodeReply checks the reply decoder: it never panics; what it
// accepts is one JSON object without repeated names; a reply has exactly
// one of a result and an error, its id is the member a plain decoding
// finds, and so is its result unless that was not valid UTF-8; the result
// is valid JSON text.
// The seeds are in testdata/fuzz/FuzzDecodeReply.
func FuzzDecodeReply(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		r, result, err := decodeReply(line)
		if err != nil {
			return
		}
		var m map[string]jsontext.Value
		if err := json.Unmarshal(line, &m, jsontext.AllowInvalidUTF8(true)); err != nil {
			t.Fatalf("accepted %q, which is not one JSON object: %v", line, err)
		}
		if r.notification() {
			return
		}
		if (r.Error == nil) == (result == nil) {
			t.Fatalf("decoded %q with result %q and error %v: want exactly one", line, result, r.Error)
		}
		if !bytes.Equal(r.ID, m["id"]) {
			t.Fatalf("id %q, a plain decoding finds %q", r.ID, m["id"])
		}
		if result != nil {
			if !result.IsValid() || !utf8.Valid(result) {
				t.Fatalf("result %q is not valid JSON text", result)
			}
			if m["result"].IsValid() && !bytes.Equal(result, m["result"]) {
				t.Fatalf("result %q, a plain decoding finds %q", result, m["result"])
			}
		}
	})
}
