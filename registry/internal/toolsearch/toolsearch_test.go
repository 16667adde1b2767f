package toolsearch

import (
	"slices"
	"testing"
)

func TestTerms(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"gmail.list_messages", []string{"gmail", "list", "messag"}},
		{"getUnreadCount", []string{"get", "unread", "count"}},
		{"SpO2 during sleep", []string{"spo2", "dur", "sleep"}},
		{"What's on Ana's agenda?", []string{"ana", "agenda"}},
		{"Replied, replies, reply", []string{"reply", "reply", "reply"}},
		{"creating created create", []string{"creat", "creat", "creat"}},
		{"running planned emails", []string{"run", "plan", "email"}},
		{"class status", []string{"class", "status"}},
	} {
		if got := terms(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("terms(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestSearch(t *testing.T) {
	ix := New([]Doc{
		{Name: "mail.send", Title: "Send email", Description: "Send a new email.", Group: "Mail"},
		{Name: "mail.reply", Title: "Reply to email", Description: "Reply to an email in its thread.", Group: "Mail"},
		{Name: "health.spo2", Title: "Blood oxygen", Description: "SpO2 during sleep, per night.", Group: "Health"},
		{Name: "calendar.list_events", Title: "List events", Description: "Events between two times.", Group: "Calendar"},
		{Name: "a.same", Description: "twin"},
		{Name: "b.same", Description: "twin"},
	})
	for _, tt := range []struct {
		query string
		want  []int
	}{
		{"answer Ana's message", []int{1, 0}},
		{"oxygen overnight", []int{2}},
		{"what is on the agenda", []int{3}},
		{"twin", []int{4, 5}}, // equal scores keep the docs' order
		{"", nil},
		{"zzz", nil},
	} {
		if got := ix.Search(tt.query, 2); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
	if got := New(nil).Search("anything", 5); len(got) != 0 {
		t.Errorf("empty index found %v", got)
	}
}

// FuzzSearch: any query is searched without panic, and the results are
// distinct docs, at most limit of them, the same each time.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{"reply to Ana's email", "SpO2 overnight", "getUnreadCount", "aB", "'", "É\u00e9\xff", "running ies"} {
		f.Add(s)
	}
	ix := New([]Doc{{Name: "mail.reply", Description: "Reply to an email."}, {Name: "health.spo2", Title: "Blood oxygen"}, {Name: "x"}})
	f.Fuzz(func(t *testing.T, query string) {
		got := ix.Search(query, 2)
		if len(got) > 2 || (len(got) == 2 && got[0] == got[1]) {
			t.Fatalf("Search(%q) = %v", query, got)
		}
		if again := ix.Search(query, 2); !slices.Equal(got, again) {
			t.Fatalf("Search(%q) = %v, then %v", query, got, again)
		}
		New([]Doc{{Name: query, Title: query, Description: query, Params: query, Group: query}}).Search(query, 1)
	})
}
