package jsonscan

import "math/bits"

// The string scanners look at eight bytes at a time: the bytes of a long
// string are nearly all plain, and a byte at a time they were most of the
// cost of a large payload (each passes through several scans).
const (
	lsb = 0x0101010101010101 // the low bit of each byte
	msb = 0x8080808080808080 // the high bit of each byte
)

// load8 reads s[i:i+8] as a little-endian word: s[i] is its low byte.
// The compiler makes it one load.
func load8[T string | []byte](s T, i int) uint64 {
	w := s[i : i+8]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// special sets the high bit of each byte of v that is '"', '\\' or a
// control character (below 0x20). Only the lowest bit set is sure to be
// such a byte: a borrow out of a byte that is one can mark a byte above
// it too. Bytes from 0x80 up are never marked.
func special(v uint64) uint64 {
	q := v ^ (lsb * '"')
	b := v ^ (lsb * '\\')
	return ((q-lsb)&^q | (b-lsb)&^b | (v-lsb*0x20)&^v) & msb
}

// plainLen returns the length of the longest prefix of s with no '"',
// '\\' or control character: what a JSON string holds before its next
// escape or its end.
func plainLen(s []byte) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if m := special(load8(s, i)); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 {
			break
		}
	}
	return i
}

// PlainASCII returns the length of the longest prefix of s that goes
// into a JSON string as it is and needs no check: printable ASCII other
// than '"' and '\\'.
func PlainASCII[T string | []byte](s T) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		v := load8(s, i)
		if m := special(v) | v&msb; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			break
		}
	}
	return i
}
