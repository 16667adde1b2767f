package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// buildVersion is set at link time: -ldflags "-X .../cli.buildVersion=v1.2.3".
var buildVersion = ""

// version names this build, for `version` and every client's serverInfo.
func version() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(buildVersion, bi)
}

// versionOf names a build: the release set at link time, else what Go
// recorded in bi (nil: nothing). That is the module version for go
// install …@v1.2.3; for a build in a clone, a pseudo-version naming the
// commit, with +dirty when the clone had uncommitted changes; for a Go
// that records the commit without a version, "dev-" and the commit. Only
// a build that recorded none of it (-buildvcs=false, or built outside a
// repository) is "dev".
func versionOf(linked string, bi *debug.BuildInfo) string {
	switch {
	case linked != "":
		return linked
	case bi == nil:
		return "dev"
	case bi.Main.Version != "" && bi.Main.Version != "(devel)":
		return bi.Main.Version
	}
	if rev := revision(bi); rev != "" {
		return "dev-" + rev
	}
	return "dev"
}

// revision returns the commit Go recorded, shortened as pseudo-versions
// do, with "+dirty" for uncommitted changes; "" when none was recorded.
func revision(bi *debug.BuildInfo) string {
	var rev, dirty string
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value[:min(len(kv.Value), 12)]
		case "vcs.modified":
			if kv.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

// versionString adds the commit, when the version does not name it, and
// the Go version and platform.
func versionString() string {
	bi, _ := debug.ReadBuildInfo()
	v := versionOf(buildVersion, bi)
	s := "tairseach-mcp " + v
	if bi != nil {
		if rev := revision(bi); rev != "" && !strings.Contains(v, strings.TrimSuffix(rev, "+dirty")) {
			s += " (" + rev + ")"
		}
	}
	return s + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

func newVersionCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Long: `version prints the version, which names the commit the binary was built from when Go
recorded it (go install from a clone does, unless GOFLAGS holds -buildvcs=false: then
install with -buildvcs=auto), the Go version and the platform. Clients see the same
version in serverInfo.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(e.stdout, versionString())
			return err
		},
	}
}
