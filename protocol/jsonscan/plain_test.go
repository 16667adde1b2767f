package jsonscan

import (
	"bytes"
	"strings"
	"testing"
)

// plainLenRef and plainASCIIRef are the byte-at-a-time definitions.
func plainLenRef(s []byte) int {
	for i, c := range s {
		if c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return len(s)
}

func plainASCIIRef(s []byte) int {
	for i, c := range s {
		if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return len(s)
}

func checkPlain(t *testing.T, s []byte) {
	t.Helper()
	if got, want := plainLen(s), plainLenRef(s); got != want {
		t.Fatalf("plainLen(%q) = %d, want %d", s, got, want)
	}
	want := plainASCIIRef(s)
	if got := PlainASCII(s); got != want {
		t.Fatalf("PlainASCII(%q) = %d, want %d", s, got, want)
	}
	if got := PlainASCII(string(s)); got != want {
		t.Fatalf("PlainASCII(string %q) = %d, want %d", s, got, want)
	}
}

// Every byte value at every position of the first two words, after plain
// bytes, and after bytes that borrow in the word arithmetic (0x00, 0x20,
// 0x21, 0x22, 0x5c, 0x80, 0xff), so each byte's own test and the borrows
// between them are covered.
func TestPlainEveryByte(t *testing.T) {
	for _, fill := range []byte{'a', 0x00, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7f, 0x80, 0xa0, 0xff} {
		for n := 0; n <= 17; n++ {
			for pos := 0; pos < n; pos++ {
				for c := 0; c < 256; c++ {
					s := bytes.Repeat([]byte{'a'}, n)
					for i := pos + 1; i < n; i++ {
						s[i] = fill // what follows the byte under test
					}
					s[pos] = byte(c)
					checkPlain(t, s)
				}
			}
		}
	}
}

func TestPlainLong(t *testing.T) {
	long := strings.Repeat("plain text, 64 KiB of it. ", 2600)
	for _, tail := range []string{"", `"`, `\`, "\n", "é", "\x7f"} {
		checkPlain(t, []byte(long+tail+"rest"))
	}
}

func FuzzPlain(f *testing.F) {
	for _, s := range []string{"", "abc", `ab"c`, "abcdefgh\\ij", "abcdefghijklmnop\x01", "héllo wörld, and more", "\x20\x20\x20\x20\x20\x20\x20\x1f"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) { checkPlain(t, s) })
}

func BenchmarkPlainLen(b *testing.B) {
	s := []byte(strings.Repeat("b", 64<<10) + `"`)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if plainLen(s) != len(s)-1 {
			b.Fatal("wrong length")
		}
	}
}
