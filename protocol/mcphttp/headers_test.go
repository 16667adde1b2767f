package mcphttp

import (
	"strings"
	"testing"
)

// Values of the headers that mirror the body (Mcp-Name, Mcp-Param-*),
// including those net/http does not carry as they are: it trims a
// value's white space, and refuses to send control characters.
func TestHeaderValuesDecode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, value, want, err string
	}{
		{name: "plain ASCII is itself", value: "us-west1", want: "us-west1"},
		{name: "a tab or a space inside is plain", value: "a\tb c", want: "a\tb c"},
		{name: "base64 is decoded", value: "=?base64?SGVsbG8sIOS4lueVjA==?=", want: "Hello, 世界"},
		{name: "base64 of nothing is empty", value: "=?base64??=", want: ""},
		{name: "a value that starts like base64 but does not end so is plain", value: "=?base64?SGVsbG8=", want: "=?base64?SGVsbG8="},
		{name: "a value that ends like base64 but does not start so is plain", value: "SGVsbG8=?=", want: "SGVsbG8=?="},
		{name: "the sentinel's case matters", value: "=?BASE64?SGVsbG8=?=", want: "=?BASE64?SGVsbG8=?="},
		{name: "base64 without its padding is refused", value: "=?base64?SGVsbG8?=", err: `bad base64 in "=?base64?SGVsbG8?="`},
		{name: "base64 with bits past its end is refused", value: "=?base64?SGVsbG9=?=", err: "bad base64"},
		{name: "base64 with characters outside its alphabet is refused", value: "=?base64?SGVs!!!bG8=?=", err: "bad base64"},
		{name: "base64 in the URL alphabet is refused", value: "=?base64?_w==?=", err: "bad base64"},
		{name: "base64 of bytes that are not UTF-8 is refused", value: "=?base64?/w==?=", err: `"=?base64?/w==?=" is not UTF-8 in base64`},
		{name: "base64 with a newline, which Go's decoder would skip, is refused", value: "=?base64?SGVs\nbG8=?=", err: "byte 0x0a is not visible ASCII"},
		{name: "spaces at the ends must be in base64", value: " padded ", err: `" padded " starts or ends with white space: send such a value as =?base64?…?=`},
		{name: "a tab at an end must be in base64", value: "padded\t", err: "starts or ends with white space"},
		{name: "a newline is refused", value: "line1\nline2", err: "byte 0x0a is not visible ASCII, a space or a tab: send such a value as =?base64?…?="},
		{name: "a carriage return is refused", value: "a\rb", err: "byte 0x0d"},
		{name: "a NUL is refused", value: "a\x00b", err: "byte 0x00"},
		{name: "a DEL is refused", value: "a\x7fb", err: "byte 0x7f"},
		{name: "UTF-8 sent as it is is refused", value: "Région", err: "byte 0xc3"},
		{name: "a long value is cut in the message", value: " " + strings.Repeat("x", 100), err: `" ` + strings.Repeat("x", 63) + `…" starts or ends`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeHeaderValue(tt.value)
			switch {
			case tt.err == "" && (err != nil || got != tt.want):
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("got %q, %v; want an error saying %q", got, err, tt.err)
			}
		})
	}
}
