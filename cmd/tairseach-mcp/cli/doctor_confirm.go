package cli

import (
	"fmt"
	"strings"

	"github.com/tairseach/tairseach-mcp/registry"
)

// checkConfirm says which tools ask the user before they run, and why,
// and what happens with a client that cannot ask.
func checkConfirm(opts *options, entries []*registry.Entry) result {
	r := result{Name: "confirm"}
	var asking []string
	for _, en := range entries {
		if en.Confirm != nil {
			asking = append(asking, fmt.Sprintf("%s (%s)", en.Name, strings.TrimPrefix(asksFirst(en.Confirm), "yes: ")))
		}
	}
	if len(asking) == 0 {
		if opts.confirmPolicy.Mode == registry.ConfirmNever {
			return r.warn("no tool asks the user before it runs (--confirm never)", "drop --confirm never to be asked before destructive tools")
		}
		return r.ok("no tool served asks the user before it runs (none is destructive)")
	}
	unsupported := "clients that cannot ask run them unconfirmed (--confirm-unsupported allow)"
	switch {
	case opts.confirmPolicy.DenyUnasked:
		unsupported = "clients that cannot ask are refused them (--confirm-unsupported deny)"
	case opts.confirmPage:
		unsupported = "for clients that cannot ask, the owner answers on the console (--confirm-unsupported page)"
	}
	shown := asking
	if len(shown) > 8 {
		shown = append(shown[:8:8], fmt.Sprintf("and %d more", len(asking)-8))
	}
	return r.ok(fmt.Sprintf("%s ask the user first: %s; %s", plural(len(asking), "tool"), strings.Join(shown, ", "), unsupported))
}
