package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tairseach/tairseach-mcp/socketclient/sockettest"
)

// call --task runs a call as a task, as a client that can take one does:
// it shows the task's status and the backend's progress on stderr, and
// prints the result; a tool that does not run as tasks is a usage error,
// and one that runs only as a task needs --task.
func TestCallAsATask(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "n.json"), []byte(`{"id":"n","tools":[
		{"name":"notes.import","description":"I.","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},
		{"name":"notes.sync","description":"S.","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},
		{"name":"notes.keep","description":"K.","inputSchema":{"type":"object"}}],
		"implementation":{"methods":{"notes.import":"notes.import","notes.sync":"notes.import","notes.keep":"notes.keep"}}}`), 0o644)
	be := sockettest.NewServer(t, func(ctx context.Context, req sockettest.Request) (any, error) {
		if req.Method != "notes.import" {
			return map[string]bool{"kept": true}, nil
		}
		for i := 1; i <= 3; i++ {
			if err := req.Peer.Notify("notifications/progress", map[string]any{"progress": i, "total": 3, "message": strings.Repeat("note ", i)}); err != nil {
				return nil, err
			}
			select {
			case <-time.After(400 * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return map[string]int{"imported": 3}, nil
	})
	call := func(args ...string) (int, string, string) {
		e, out, errb := testEnv(nil)
		code := run(t.Context(), e, append([]string{"call", "--manifests", dir, "--socket", be.Path}, args...))
		return code, out.String(), errb.String()
	}
	code, out, errb := call("--task", "notes.import")
	t.Logf("stderr:\n%s", errb)
	if code != exitOK || !strings.Contains(out, `"imported": 3`) || !strings.Contains(errb, "working (note") || !strings.Contains(errb, ": completed") {
		t.Errorf("call --task: exit %d\nstdout %s\nstderr %s", code, out, errb)
	}
	if code, _, errb := call("--task", "notes.keep"); code != exitUsage || !strings.Contains(errb, "does not run as a task") {
		t.Errorf("call --task of a tool that does not run as tasks: exit %d, %s", code, errb)
	}
	if code, _, errb := call("notes.sync"); code != exitUsage || !strings.Contains(errb, "--task") {
		t.Errorf("call of a tool that runs only as a task, without --task: exit %d, %s", code, errb)
	}
	if code, out, _ := call("notes.import"); code != exitOK || !strings.Contains(out, `"imported": 3`) {
		t.Errorf("call of a tool whose taskSupport is optional, without --task: exit %d, %s", code, out)
	}
}
