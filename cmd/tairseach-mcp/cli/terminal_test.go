package cli

import "testing"

func TestPrintableEscapesWhatATerminalWouldObey(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"notes.create", "notes.create"},
		{"héllo wörld ✓", "héllo wörld ✓"},
		{"red\x1b[31mtext", `red\x1b[31mtext`},
		{"bell\a and tab\t and newline\n", `bell\a and tab\t and newline\n`},
		{"c1 \u009b csi", `c1 \u009b csi`},
		{"bidi \u202e override", `bidi \u202e override`},
		{"bad \xff byte", `bad \xff byte`},
		{"real \uFFFD replacement", "real \uFFFD replacement"},
	} {
		if got := printable(tc.in); got != tc.want {
			t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
