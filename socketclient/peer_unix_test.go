//go:build unix

package socketclient

import (
	"io/fs"
	"syscall"
	"testing"
	"time"
)

// ownedBy is a FileInfo of a file that uid owns.
type ownedBy uint32

func (ownedBy) Name() string       { return "backend.sock" }
func (ownedBy) Size() int64        { return 0 }
func (ownedBy) Mode() fs.FileMode  { return fs.ModeSocket | 0o600 }
func (ownedBy) ModTime() time.Time { return time.Time{} }
func (ownedBy) IsDir() bool        { return false }
func (o ownedBy) Sys() any         { return &syscall.Stat_t{Uid: uint32(o)} }

func TestCheckOwner(t *testing.T) {
	tests := []struct {
		name string
		fi   fs.FileInfo
		uid  int
		want string // "" means accepted
	}{
		{name: "a socket of ours is accepted", fi: ownedBy(501), uid: 501},
		{name: "a socket of another user is refused", fi: ownedBy(0), uid: 501, want: "socket is owned by uid 0, not you (uid 501); refusing"},
		{name: "root does not trust a user's socket either", fi: ownedBy(501), uid: 0, want: "socket is owned by uid 501, not you (uid 0); refusing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkOwner(tt.fi, tt.uid)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("checkOwner = %q, want %q", got, tt.want)
			}
		})
	}
}
