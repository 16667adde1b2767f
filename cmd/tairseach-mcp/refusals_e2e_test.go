//go:build unix

package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every refused answer to a confirmation leaves a trace: forged,
// replayed and cross-used 2026-07-28 requestStates are each an audit
// line with its reason, the backend is never called, and stats counts
// them apart from the questions asked.
func TestRefusedConfirmationsAreRecorded(t *testing.T) {
	be := deleteBackend(t)
	dir := manifestDir(t, map[string]string{"notes.json": deleteManifest})
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	lb := startLive(t, bridgeCmd(dir, be.Path, "--audit-log", log))
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	const yes = `"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}}`
	id := 0
	call := func(tool, args, state string) string {
		id++
		extra := ""
		if state != "" {
			extra = `,` + yes + `,"requestState":"` + state + `"`
		}
		lb.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s%s,%s}}`, id, tool, args, extra, meta))
		return lb.next(fmt.Sprintf(`"id":%d,`, id))
	}
	stateOf := func(line string) string {
		var r struct {
			Result struct {
				RequestState string `json:"requestState"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &r) != nil || r.Result.RequestState == "" {
			t.Fatalf("not an input_required result: %s", line)
		}
		return r.Result.RequestState
	}

	state := stateOf(call("tairseach_notes_delete", `{"id":"a"}`, ""))
	payload, sig, _ := strings.Cut(state, ".")
	forgedPayload := base64.RawURLEncoding.EncodeToString([]byte(`{"m":"tools/call","n":"tairseach_notes_delete","a":"0","e":99999999999999,"r":"1"}`))
	attempts := []struct{ tool, args, state, reason string }{
		{"tairseach_notes_delete", `{"id":"a"}`, "hello", "forged"},
		{"tairseach_notes_delete", `{"id":"a"}`, forgedPayload + "." + sig, "forged"},
		{"tairseach_notes_delete", `{"id":"a"}`, payload + ".AAAA", "forged"},
		{"tairseach_notes_delete", `{"id":"a"}`, payload, "forged"},
		{"tairseach_notes_purge", `{"id":"a"}`, state, "other_call"},
		{"tairseach_notes_read", `{"id":"a"}`, state, "other_call"},
		{"tairseach_notes_delete", `{"id":"b"}`, state, "other_call"},
		{"tairseach_notes_delete", `{"id":"a","password":"x"}`, state, "other_call"},
	}
	for _, a := range attempts {
		if got := call(a.tool, a.args, a.state); !strings.Contains(got, `"code":-32602`) {
			t.Fatalf("%s with a %s state: %s, want -32602", a.tool, a.reason, got)
		}
	}
	if got := call("tairseach_notes_delete", `{"id":"a"}`, state); !strings.Contains(got, `"done":"notes.delete"`) {
		t.Fatalf("the state's own call: %s", got)
	}
	for range 5 {
		attempts = append(attempts, struct{ tool, args, state, reason string }{"tairseach_notes_delete", `{"id":"a"}`, state, "replayed"})
		if got := call("tairseach_notes_delete", `{"id":"a"}`, state); !strings.Contains(got, "used already") {
			t.Fatalf("a replayed state: %s", got)
		}
	}
	lb.stdin.Close()
	lb.cmd.Wait()

	if ids := deletedIDs(be); len(ids) != 1 {
		t.Errorf("the backend deleted %q, want only the confirmed a", ids)
	}
	var refusals []string
	for _, e := range auditEntries(t, log) {
		if e.Refusal != "" {
			if e.Outcome != "refused" || e.Confirmation != "input_required" {
				t.Errorf("a refusal recorded as outcome %q, confirmation %q", e.Outcome, e.Confirmation)
			}
			refusals = append(refusals, e.Name+" "+e.Refusal)
		}
	}
	var want []string
	for _, a := range attempts {
		want = append(want, a.tool+" "+a.reason)
	}
	if strings.Join(refusals, "\n") != strings.Join(want, "\n") {
		t.Errorf("refusals recorded:\n%s\nwant:\n%s", strings.Join(refusals, "\n"), strings.Join(want, "\n"))
	}
	out, err := exec.Command(binary, "stats", log).Output()
	if err != nil || !strings.Contains(string(out), "Answers to confirmations refused unread: 13 (4 forged, 4 other_call, 5 replayed)") {
		t.Errorf("stats: %v\n%s", err, out)
	}
}
