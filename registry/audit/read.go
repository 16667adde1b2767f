package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// rotated is the name of the n-th rotated file of the log at path.
func rotated(path string, n int) string { return path + "." + strconv.Itoa(n) }

// Files returns the files of the log at path that exist, oldest first:
// the rotated ones, PATH.<n> down to PATH.1, then PATH. Every numbered
// file counts, also past the Keep in force now.
func Files(path string) ([]string, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var nums []int
	current := false
	for _, de := range des {
		name := de.Name()
		if name == base {
			current = true
		} else if rest, ok := strings.CutPrefix(name, base+"."); ok {
			if n, err := strconv.Atoi(rest); err == nil && n > 0 && strconv.Itoa(n) == rest {
				nums = append(nums, n)
			}
		}
	}
	slices.Sort(nums)
	slices.Reverse(nums)
	files := make([]string, 0, len(nums)+1)
	for _, n := range nums {
		files = append(files, rotated(path, n))
	}
	if current {
		files = append(files, path)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no audit log at %s: %w", path, fs.ErrNotExist)
	}
	return files, nil
}

// chunkSize is how much of a file is read at once.
const chunkSize = 1 << 20

// chunk is whole lines of a log file; last is set when its final line is
// the end of the file without a newline: a line being written, or left
// partial by a writer that was killed.
type chunk struct {
	data []byte
	last bool
}

// readChunks reads r in chunks of whole lines and sends them to out.
func readChunks(r io.Reader, out chan<- chunk) error {
	var carry []byte
	for {
		buf := make([]byte, len(carry), max(chunkSize, 2*len(carry)))
		copy(buf, carry)
		n, err := io.ReadFull(r, buf[len(carry):cap(buf)])
		buf = buf[:len(carry)+n]
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			if len(buf) > 0 {
				out <- chunk{data: buf, last: buf[len(buf)-1] != '\n'}
			}
			return nil
		}
		if err != nil {
			return err
		}
		// A line longer than the buffer grows the next one.
		cut := bytes.LastIndexByte(buf, '\n') + 1
		carry = buf[cut:]
		if cut > 0 {
			out <- chunk{data: buf[:cut:cut]}
		}
	}
}
