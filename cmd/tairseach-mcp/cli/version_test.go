package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersionNamesTheBuild(t *testing.T) {
	t.Parallel()
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "65ec820b1f2c7faf4dd9890f6d9b068ed657ec90"
	tests := []struct {
		name   string
		linked string
		bi     *debug.BuildInfo
		want   string
	}{
		{"a release names itself", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-x"}}, "v1.2.3"},
		{"go install of a module version", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"a clone's pseudo-version, dirty", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124001647-65ec820b1f2c+dirty"}, Settings: vcs(rev, "true")},
			"v0.0.0-20261124001647-65ec820b1f2c+dirty"},
		{"a commit recorded without a version", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "dev-65ec820b1f2c"},
		{"a dirty commit recorded without a version", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, "dev-65ec820b1f2c+dirty"},
		{"nothing recorded", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"no build information", "", nil, "dev"},
	}
	for _, tt := range tests {
		if got := versionOf(tt.linked, tt.bi); got != tt.want {
			t.Errorf("%s: versionOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}
