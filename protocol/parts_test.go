package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// writeString writes what appendString appends, whatever the pieces.
func FuzzWriteString(f *testing.F) {
	for _, seed := range []string{"", "plain", "a\"b\\c\n\t\x01", "\u2028\u2029é€😀", "\xff\xfe\xe2\x82", strings.Repeat("é", 9000) + "\xe2\x82A"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Repeated past a piece's size, so piece boundaries fall all over it.
		s = strings.Repeat(s, 1+(40<<10)/(len(s)+1))
		var out bytes.Buffer
		w := bufio.NewWriter(&out)
		writeString(w, s, nil)
		w.Flush()
		if want := appendString(nil, s); !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("writeString differs from appendString for %q", s[:min(len(s), 64)])
		}
	})
}

// A large result written in parts is the line that would have been built.
func TestAResultInPartsIsTheSameLine(t *testing.T) {
	big := strings.Repeat(`x"é\n`, 20<<10) + "\xff"
	structured := json.RawMessage(`{"s":"` + strings.Repeat("y", 40<<10) + `"}`)
	for name, res := range map[string]*CallToolResult{
		"large text":                             {Content: []Content{{Type: "text", Text: big}}},
		"large structured":                       {Content: []Content{{Type: "text", Text: "ok"}}, StructuredContent: structured},
		"both, and an error":                     {Content: []Content{{Type: "text", Text: big}}, StructuredContent: structured, IsError: true},
		"two texts, one large":                   {Content: []Content{{Type: "text", Text: "a"}, {Type: "text", Text: big}}},
		"small, in one part anyway":              {Content: []Content{{Type: "text", Text: "small"}}},
		"the structured content as its own text": {Content: []Content{{Type: "text", TextBytes: structured}}, StructuredContent: structured},
		"small text bytes":                       {Content: []Content{{Type: "text", TextBytes: []byte(`{"a":"é\n"}`)}}},
	} {
		t.Run(name, func(t *testing.T) {
			for _, sh := range []shape{shapeOf(Version20241105), shapeOf(Version20251125)} {
				want := res.appendJSON([]byte("head:"), sh)
				o := jsonOut{buf: []byte("head:"), parts: &respParts{}}
				res.encode(&o, sh)
				o.cut()
				var out bytes.Buffer
				w := bufio.NewWriter(&out)
				if _, err := o.parts.writeTo(w, nil); err != nil {
					t.Fatal(err)
				}
				w.Flush()
				if got := bytes.TrimSuffix(out.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
					t.Errorf("in parts:\n%.200s\nwant:\n%.200s", got, want)
				}
				for _, sg := range o.parts.segs {
					if len(sg.raw) >= bigPart && &sg.raw[0] != &structured[0] {
						t.Error("a large raw part was copied")
					}
				}
			}
		})
	}
}

// A text given as bytes reads and encodes as the same text given as a string.
func TestContentTextBytes(t *testing.T) {
	text := `{"note":"é \"quoted\"\n"}`
	byString, byBytes := Content{Type: "text", Text: text}, Content{Type: "text", TextBytes: []byte(text)}
	if byBytes.TextString() != text || byString.TextString() != text {
		t.Errorf("TextString: %q, %q", byBytes.TextString(), byString.TextString())
	}
	a, err1 := json.Marshal(byString)
	b, err2 := json.Marshal(byBytes)
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
		t.Fatalf("%s (%v) against %s (%v)", a, err1, b, err2)
	}
	var back struct{ Type, Text string }
	if err := json.Unmarshal(b, &back); err != nil || back.Type != "text" || back.Text != text {
		t.Errorf("decoded %+v, %v", back, err)
	}
}
