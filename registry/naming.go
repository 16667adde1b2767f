package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// MaxNameLen is the longest tool name clients accept: Claude Desktop and
// the model APIs reject a whole server when one name fails
// ^[a-zA-Z0-9_-]{1,64}$.
const MaxNameLen = 64

// hashLen is the number of hex digits of the suffix that keeps shortened
// names apart.
const hashLen = 8

// ClientName returns the name a client sees for a manifest tool:
// <prefix>_<name> (just name when prefix is empty), with every character
// outside [a-zA-Z0-9_-] replaced by "_" and, when longer than 64
// characters, shortened to 55 characters plus "_" and a hash of the
// unmapped name, so the result is stable across runs and distinct names
// stay distinct. changed reports whether the mapping altered the name
// beyond adding the prefix.
func ClientName(prefix, name string) (client string, changed bool) {
	full := name
	if prefix != "" {
		full = prefix + "_" + name
	}
	var b strings.Builder
	b.Grow(len(full))
	for _, r := range full {
		if r < utf8.RuneSelf && isNameByte(byte(r)) {
			b.WriteByte(byte(r))
		} else {
			b.WriteByte('_')
		}
	}
	client = b.String()
	if client == "" {
		client = "_"
	}
	if len(client) > MaxNameLen {
		sum := sha256.Sum256([]byte(full))
		client = client[:MaxNameLen-hashLen-1] + "_" + hex.EncodeToString(sum[:])[:hashLen]
	}
	return client, client != full
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// ValidName reports whether name is acceptable to every client.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return false
		}
	}
	return true
}
