//go:build unix

package socketclient

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestWhatIsAtTheSocketPathIsNamed(t *testing.T) {
	t.Parallel()
	dir := shortTempDir(t)
	fifo := filepath.Join(dir, "fifo.sock")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       SocketPathError
	}{
		{"a named pipe", fifo, SocketPathError{Kind: "a named pipe"}},
		{"a device", os.DevNull, SocketPathError{Kind: "a device"}},
		{"nothing", filepath.Join(dir, "none.sock"), SocketPathError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newClient(t, tt.path, nil).Call(callCtx(t, 5*time.Second), "m", nil, nil)
			var got *SocketPathError
			if !errors.As(err, &got) || *got != tt.want {
				t.Fatalf("err = %v, want one wrapping %q", err, &tt.want)
			}
			if want := "backend unavailable at " + tt.path + ": " + tt.want.Error(); err.Error() != want {
				t.Errorf("err = %q, want %q", err, want)
			}
			if errors.Is(err, fs.ErrNotExist) != (tt.want.Kind == "") {
				t.Errorf("errors.Is(%v, fs.ErrNotExist) = %v, want it only when nothing is there", err, !(tt.want.Kind == ""))
			}
		})
	}
}
