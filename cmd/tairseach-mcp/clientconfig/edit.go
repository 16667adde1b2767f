package clientconfig

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Options say which entry Install and Uninstall change, and how.
type Options struct {
	Name   string // the entry's name in the client's file
	DryRun bool   // show the change, write nothing
	Force  bool   // replace a different entry of the same name; write for a client not found
}

// Install adds e to c's file on m under o.Name, keeping the rest of the
// file and the previous one as FILE.bak, and says what it did on w. An
// entry that is already there as given is left alone; a different one
// only with o.Force.
func Install(w io.Writer, m Machine, c Client, e Entry, o Options) error {
	e, err := e.in(c)
	if err != nil {
		return err
	}
	dir, path := c.paths(m)
	if !c.Found(m) && !o.Force {
		return fmt.Errorf("%s not found: %s does not exist; start %s once, or pass --force to write %s anyway", c.Title, dir, c.Title, path)
	}
	f, err := c.Read(m)
	if err != nil {
		return err
	}
	if e.secret() && f.perm&0o077 != 0 {
		// The token is a password to the bridge: only you may read it.
		fmt.Fprintf(w, "%s will hold the bridge's token: its mode becomes 0600 (was %#o).\n", f.Path, f.perm)
		f.perm = 0o600
	}
	want, err := json.Marshal(e)
	if err != nil {
		return err
	}
	old, had := f.servers.get(o.Name)
	switch {
	case had && e.same(old):
		fmt.Fprintf(w, "%s already has %q as given, in %s: nothing to change.\n", c.Title, o.Name, f.Path)
		return nil
	case had && !o.Force:
		return fmt.Errorf("%s already has a different server %q in %s:\n%s\npass --force to replace it, or --name to add the bridge under another name", c.Title, o.Name, f.Path, showEntry("  ", o.Name, old))
	}
	f.servers.set(o.Name, want)
	done := fmt.Sprintf("Added %q to %s", o.Name, c.Title)
	if had {
		done = fmt.Sprintf("Replaced %q in %s", o.Name, c.Title)
	}
	return apply(w, c, f, o, done, old, want)
}

// Uninstall removes the entry o.Name from c's file on m, and nothing
// else, keeping the previous file as FILE.bak; it says what it did on w.
func Uninstall(w io.Writer, m Machine, c Client, o Options) error {
	f, err := c.Read(m)
	if err != nil {
		return err
	}
	old, had := f.servers.get(o.Name)
	if !had {
		fmt.Fprintf(w, "%s has no server %q in %s: nothing to remove.\n", c.Title, o.Name, f.Path)
		return nil
	}
	f.servers.remove(o.Name)
	return apply(w, c, f, o, fmt.Sprintf("Removed %q from %s", o.Name, c.Title), old, nil)
}

// apply shows the change to the entry (o.DryRun) or writes it.
func apply(w io.Writer, c Client, f *File, o Options, done string, before, after jsontext.Value) error {
	data, err := f.encode(c)
	if err != nil {
		return err
	}
	if o.DryRun {
		fmt.Fprintf(w, "Would change %s:\n", f.Path)
		if before != nil {
			fmt.Fprintln(w, showEntry("- ", o.Name, before))
		}
		if after != nil {
			fmt.Fprintln(w, showEntry("+ ", o.Name, after))
		}
		fmt.Fprintln(w, "Nothing written (--dry-run).")
		return nil
	}
	backup, err := f.write(data)
	if err != nil {
		return fmt.Errorf("write %s: %w", f.Path, err)
	}
	fmt.Fprintf(w, "%s: %s", done, f.Path)
	if backup != "" {
		fmt.Fprintf(w, " (previous file kept as %s)", backup)
	}
	fmt.Fprintf(w, ".\nRestart %s to load the change.\n", c.Title)
	return nil
}

// showEntry indents an entry, each line after prefix, its credentials
// hidden.
func showEntry(prefix, name string, v jsontext.Value) string {
	v = redact(v).Clone()
	_ = v.Indent(jsontext.WithIndent("  ")) // v was decoded: valid
	lines := strings.Split(fmt.Sprintf("%q: %s", name, v), "\n")
	return prefix + strings.Join(lines, "\n"+prefix)
}

// List shows on w the clients found on m and the state of the entry name
// in each: whether it runs exe (the running binary), another binary, or
// reaches a URL.
func List(w io.Writer, m Machine, exe, name string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tCONFIG\tBRIDGE")
	var missing []string
	for _, c := range clients {
		if !c.Found(m) {
			missing = append(missing, c.Name)
			continue
		}
		_, path := c.paths(m)
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, path, entryState(m, c, name, exe))
	}
	if len(missing) == len(clients) {
		fmt.Fprintf(w, "No clients found (looked for %s).\n", strings.Join(Names(), ", "))
		return nil
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	found, word := len(clients)-len(missing), "clients"
	if found == 1 {
		word = "client"
	}
	fmt.Fprintf(w, "%d %s found", found, word)
	if len(missing) > 0 {
		fmt.Fprintf(w, "; not found: %s", strings.Join(missing, ", "))
	}
	fmt.Fprintln(w, ".")
	return nil
}

func entryState(m Machine, c Client, name, exe string) string {
	f, err := c.Read(m)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	v, ok := f.servers.get(name)
	if !ok {
		return "not installed"
	}
	e, ok := ParseEntry(v)
	if !ok {
		return fmt.Sprintf("%q is neither a command nor a URL entry", name)
	}
	if u, ok := e.(URLEntry); ok {
		return "installed, reaches " + u.Where()
	}
	cmd := e.(CommandEntry).Command
	real, err := ResolveCommand(cmd)
	switch {
	case err != nil:
		return "installed, but its binary is missing: " + cmd
	case real == exe:
		return "installed (this binary)"
	}
	return "installed, another binary: " + cmd
}

// ResolveCommand finds the binary a client's entry runs, as the client
// would: a bare name on PATH, then symbolic links followed.
func ResolveCommand(cmd string) (string, error) {
	if p, err := exec.LookPath(cmd); err == nil {
		cmd = p
	}
	return filepath.EvalSymlinks(cmd)
}
