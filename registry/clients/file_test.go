package clients

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2025, 6, 1, 9, 30, 0, 0, time.UTC)

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

// A file the command line writes is one a bridge reads back: mode 0600,
// the tokens as hashes only, each token its client's.
func TestAFileWrittenIsReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "clients.json")
	f, err := Load(path)
	if err != nil || len(f.Clients) != 0 {
		t.Fatalf("Load of no file: %v %v", f, err)
	}
	policy := Policy{Include: []string{"notes.*"}, ReadOnly: true, Confirm: []string{"*"}, ConfirmUnsupported: "deny",
		MaxInFlight: 2, CallsPerMinute: 30, Sampling: no(), Elicitation: yes()}
	cursor, err := f.Add("cursor", policy, now)
	if err != nil {
		t.Fatal(err)
	}
	script, err := f.Add("nightly.script", Policy{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved: %v, mode %v; want 0600", err, fi.Mode())
	}
	data, _ := os.ReadFile(path)
	for _, token := range []string{cursor, script} {
		if !regexp.MustCompile(`^tsk_[0-9a-f]{8}_[0-9a-f]{32}$`).MatchString(token) {
			t.Errorf("token %q: want tsk_<8 hex>_<32 hex> (128 random bits)", token)
		}
		if strings.Contains(string(data), token) || strings.Contains(string(data), token[13:]) {
			t.Errorf("the file holds the token %s:\n%s", token, data)
		}
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Clients["cursor"].Policy.Summary(); got != "read-only; include notes.*; confirm *; confirm-unsupported deny; max 2 in flight; 30 calls a minute; no sampling" {
		t.Errorf("policy read back: %s", got)
	}
	if name, ok := back.Owner(cursor); !ok || name != "cursor" {
		t.Errorf("Owner(cursor's token) = %q %v", name, ok)
	}
	if _, ok := back.Owner(script[:len(script)-1] + "0"); ok && !strings.HasSuffix(script, "0") {
		t.Error("a token one digit off has an owner")
	}
	if back.Clients["cursor"].Created != "2025-06-01T09:30:00Z" {
		t.Errorf("created %q", back.Clients["cursor"].Created)
	}

	rotated, err := back.Rotate("cursor", now.Add(time.Hour))
	if err != nil || rotated == cursor {
		t.Fatalf("Rotate: %q %v", rotated, err)
	}
	if back.Clients["cursor"].Token.Matches(cursor) || !back.Clients["cursor"].Token.Matches(rotated) {
		t.Error("after Rotate the old token still matches, or the new one does not")
	}
	if err := back.Remove("nightly.script"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{back.Remove("nobody"), func() error { _, err := back.Rotate("nobody", now); return err }()} {
		if err == nil || !strings.Contains(err.Error(), `no client "nobody"; the clients are cursor`) {
			t.Errorf("an unknown client: %v", err)
		}
	}
	if _, err := back.Add("cursor", Policy{}, now); err == nil {
		t.Error("Add of a name that is there: no error")
	}
	for _, bad := range []string{"", "-x", "a b", "client:x", strings.Repeat("a", 65)} {
		if _, err := back.Add(bad, Policy{}, now); err == nil {
			t.Errorf("Add(%q): no error", bad)
		}
	}
	if _, err := back.Add("x", Policy{Include: []string{"[a"}}, now); err == nil {
		t.Error("Add with a malformed glob: no error")
	}
}

// Read refuses what a bridge must not serve, saying where the problem
// is: a file others can read, one that breaks the format, one that gives
// two clients one token id, one with a malformed glob.
func TestReadRefusesAFileItMustNotServe(t *testing.T) {
	dir := t.TempDir()
	const hash = `"sha256":"0000000000000000000000000000000000000000000000000000000000000000"`
	for _, tc := range []struct {
		name, data string
		mode       os.FileMode
		want       string
	}{
		{"others may read it", `{"clients":{}}`, 0o644, "others may read it (mode 0644)"},
		{"not JSON", `{"clients":`, 0o600, "not a clients file"},
		{"no clients member", `{}`, 0o600, `missing properties: 'clients'`},
		{"a name past the rules", `{"clients":{"a b":{"token":{"id":"0123abcd",` + hash + `}}}}`, 0o600, "does not match pattern"},
		{"a short token id", `{"clients":{"a":{"token":{"id":"0123",` + hash + `}}}}`, 0o600, "clients.a.token.id: "},
		{"an unknown member", `{"clients":{"a":{"token":{"id":"0123abcd",` + hash + `},"policy":{"readonly":true}}}}`, 0o600, "clients.a.policy: "},
		{"two clients, one token id", `{"clients":{"a":{"token":{"id":"0123abcd",` + hash + `}},"b":{"token":{"id":"0123abcd",` + hash + `}}}}`, 0o600,
			"clients.b.token.id: the token id 0123abcd is a's too"},
		{"a malformed glob", `{"clients":{"a":{"token":{"id":"0123abcd",` + hash + `},"policy":{"exclude":["[x"]}}}}`, 0o600,
			`clients.a.policy: bad pattern "[x"`},
		{"confirmUnsupported past its values", `{"clients":{"a":{"token":{"id":"0123abcd",` + hash + `},"policy":{"confirmUnsupported":"ask"}}}}`, 0o600,
			"clients.a.policy.confirmUnsupported: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			if err := os.WriteFile(path, []byte(tc.data), tc.mode); err != nil {
				t.Fatal(err)
			}
			os.Chmod(path, tc.mode) // past the umask
			_, err := Read(path)
			var fe *FileError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read = %v, want a FileError saying %q", err, tc.want)
			}
		})
	}
	if _, err := Read(filepath.Join(dir, "absent.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of no file = %v, want fs.ErrNotExist", err)
	}
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Read of a folder = %v", err)
	}
}

func TestTokenHashMatches(t *testing.T) {
	f := &File{Clients: map[string]*Entry{}}
	token, err := f.Add("a", Policy{}, now)
	if err != nil {
		t.Fatal(err)
	}
	h := f.Clients["a"].Token
	for _, tc := range []struct {
		token string
		want  bool
	}{
		{token, true},
		{token + "0", false},
		{strings.ToUpper(token), false},
		{"tsk_" + h.ID + "_" + strings.Repeat("0", 32), false},
		{"", false},
		{"Bearer " + token, false},
	} {
		if got := h.Matches(tc.token); got != tc.want {
			t.Errorf("Matches(%q) = %v, want %v", tc.token, got, tc.want)
		}
	}
}
