package registry

import (
	"strings"
	"testing"
)

func TestClientName(t *testing.T) {
	long := strings.Repeat("a", 80)
	tests := []struct {
		name, prefix, in string
		want             string
		changed          bool
	}{
		{name: "dots become underscores", prefix: "tairseach", in: "contacts.list", want: "tairseach_contacts_list", changed: true},
		{name: "a clean name only gains the prefix", prefix: "tairseach", in: "contacts_list", want: "tairseach_contacts_list"},
		{name: "an empty prefix adds nothing", in: "notes-get", want: "notes-get"},
		{name: "spaces, slashes and colons are replaced", prefix: "t", in: "a b/c:d", want: "t_a_b_c_d", changed: true},
		{name: "a multi-byte character becomes one underscore", prefix: "t", in: "café", want: "t_caf_", changed: true},
		{name: "the prefix is mapped too", prefix: "my.app", in: "x", want: "my_app_x", changed: true},
		{name: "an over-long name is shortened with a hash", prefix: "tairseach", in: long, want: "tairseach_" + strings.Repeat("a", 45) + "_", changed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := ClientName(tt.prefix, tt.in)
			if !ValidName(got) {
				t.Errorf("ClientName(%q, %q) = %q, not a valid client name", tt.prefix, tt.in, got)
			}
			if strings.HasSuffix(tt.want, "_") && len(got) == MaxNameLen {
				if !strings.HasPrefix(got, tt.want) {
					t.Errorf("ClientName(%q, %q) = %q, want prefix %q", tt.prefix, tt.in, got, tt.want)
				}
			} else if got != tt.want {
				t.Errorf("ClientName(%q, %q) = %q, want %q", tt.prefix, tt.in, got, tt.want)
			}
			if changed != tt.changed {
				t.Errorf("changed = %v, want %v", changed, tt.changed)
			}
		})
	}
}

func TestClientNameShorteningIsStableAndDistinct(t *testing.T) {
	a1, _ := ClientName("tairseach", strings.Repeat("x", 70)+".one")
	a2, _ := ClientName("tairseach", strings.Repeat("x", 70)+".one")
	b, _ := ClientName("tairseach", strings.Repeat("x", 70)+".two")
	if a1 != a2 {
		t.Errorf("same name shortened differently: %q, %q", a1, a2)
	}
	if a1 == b {
		t.Errorf("different names shortened to the same %q", a1)
	}
	if len(a1) != MaxNameLen {
		t.Errorf("len = %d, want %d", len(a1), MaxNameLen)
	}
}

func FuzzClientName(f *testing.F) {
	f.Add("tairseach", "contacts.list")
	f.Add("", "")
	f.Add("p", strings.Repeat("é", 100))
	f.Add("x", "\xff\xfe")
	f.Fuzz(func(t *testing.T, prefix, name string) {
		got, _ := ClientName(prefix, name)
		if !ValidName(got) {
			t.Fatalf("ClientName(%q, %q) = %q, invalid", prefix, name, got)
		}
		if again, _ := ClientName(prefix, name); again != got {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
		if full := prefix + "_" + name; prefix != "" && ValidName(full) && got != full {
			t.Fatalf("valid name %q changed to %q", full, got)
		}
	})
}
