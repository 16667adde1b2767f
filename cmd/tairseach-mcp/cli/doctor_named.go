package cli

// The doctor's checks of the named clients (a clients file): the file
// itself, the clients whose policy hides every tool, and those no
// installed config uses.

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/tairseach/tairseach-mcp/cmd/tairseach-mcp/clientconfig"
	"github.com/tairseach/tairseach-mcp/registry"
	"github.com/tairseach/tairseach-mcp/registry/clients"
)

// checkNamedClients checks the clients file at path, when there is one:
// that a bridge would serve it, that it has client (--client, when
// given), what each client's policy leaves it of reg's tools, and which
// clients no config on m uses (as the entry called name: a bridge
// started with --client NAME, or a URL entry with NAME's token). Without
// a file, and without --client, there is nothing to say.
func checkNamedClients(path, client string, reg *registry.Registry, m clientconfig.Machine, name string) []result {
	r := result{Name: "named clients"}
	f, err := clients.Read(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && client == "":
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return []result{r.fail(fmt.Sprintf("--client %s: no clients file at %s", client, path), "tairseach-mcp clients add "+client)}
	case err != nil:
		return []result{r.fail(err.Error(), "tairseach-mcp validate --clients "+path+" lists the problems; a bridge refuses to start with this file, and keeps the last good one while it runs")}
	}
	if len(f.Clients) == 0 {
		return []result{r.warn(path+": no clients: over HTTP every request needs the owner's token", "tairseach-mcp clients add NAME, or remove the file")}
	}
	if _, ok := f.Clients[client]; client != "" && !ok {
		return []result{r.fail(fmt.Sprintf("--client %s: %s has no such client", client, path), "tairseach-mcp clients add "+client+", or name one of "+strings.Join(f.Names(), ", "))}
	}
	rs := []result{r.ok(fmt.Sprintf("%s: %s", path, plural(len(f.Clients), "client")))}
	var blind []string
	for _, n := range f.Names() {
		if len(reg.View(f.Clients[n].Policy.Registry(n)).Snapshot().Entries) == 0 {
			blind = append(blind, n)
		}
	}
	if len(blind) > 0 {
		rs = append(rs, result{"client policies", statusWarn,
			fmt.Sprintf("the policy of %s hides every tool the bridge serves", strings.Join(blind, ", ")),
			"widen its --include or --exclude (tairseach-mcp clients remove, then add), or check the bridge's own filters"})
	}
	used := usedClients(m, name, f)
	var unused []string
	for _, n := range f.Names() {
		if !used[n] {
			unused = append(unused, n)
		}
	}
	if len(unused) > 0 {
		rs = append(rs, result{"client configs", statusInfo,
			fmt.Sprintf("no installed config uses %s (as the entry %q)", strings.Join(unused, ", "), name),
			"tairseach-mcp install CLIENT --client NAME (with --url for a bridge serving HTTP), or remove the client if nothing uses it"})
	}
	return rs
}

// usedClients returns the named clients of f that the entry called name
// in a config on m uses: a command entry with --client NAME, a URL entry
// with NAME's token.
func usedClients(m clientconfig.Machine, name string, f *clients.File) map[string]bool {
	used := map[string]bool{}
	for _, c := range clientconfig.Clients() {
		if !c.Found(m) {
			continue
		}
		file, err := c.Read(m)
		if err != nil {
			continue
		}
		v, ok := file.Server(name)
		if !ok {
			continue
		}
		switch e, _ := clientconfig.ParseEntry(v); e := e.(type) {
		case clientconfig.CommandEntry:
			for i, a := range e.Args {
				if n, ok := strings.CutPrefix(a, "--client="); ok {
					used[n] = true
				} else if a == "--client" && i+1 < len(e.Args) {
					used[e.Args[i+1]] = true
				}
			}
		case clientconfig.URLEntry:
			for k, h := range e.Headers {
				if token, ok := strings.CutPrefix(h, "Bearer "); ok && strings.EqualFold(k, "Authorization") {
					if n, ok := f.Owner(strings.TrimSpace(token)); ok {
						used[n] = true
					}
				}
			}
		}
	}
	return used
}
