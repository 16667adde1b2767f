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
		if got := Terms(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.text, got, tt.want)
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
