package toolsearch

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// kept returns the terms of text's words that are not stop words.
func kept(text string) []string {
	var out []string
	for w := range words(text, false) {
		if !w.stop {
			out = append(out, w.term)
		}
	}
	return out
}

func TestWords(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"gmail.list_messages", []string{"gmail", "list", "messag"}},
		{"getUnreadCount", []string{"get", "unread", "count", "getunreadcount"}},
		{"SpO2 during sleep", []string{"spo2", "dure", "sleep"}},
		{"What's on Ana's agenda?", []string{"ana", "agenda"}},
		{"Replied, replies, reply", []string{"repli", "repli", "repli"}},
		{"creating created create", []string{"creat", "creat", "creat"}},
		{"running planned emails", []string{"run", "plan", "email"}},
		{"class status", []string{"class", "status"}},
		{"my to-do list", []string{"todo", "list"}},
		{"Wi-Fi", []string{"wi", "fi", "wifi"}},
	} {
		if got := kept(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("words(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// flags shows the flags of each word of text that is not a stop word.
func flags(text string) string {
	var out []string
	for w := range words(text, false) {
		if w.stop {
			continue
		}
		s := w.text
		for _, f := range []struct {
			on   bool
			name string
		}{{w.gap, "gap"}, {w.verb, "verb"}, {w.topic, "topic"}, {w.said, "said"}, {w.name, "name"}, {w.joined, "joined"}} {
			if f.on {
				s += "/" + f.name
			}
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestWordFlags(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"Text Mark a note about the meeting", "text/gap/verb mark/name note meeting/topic"},
		{`tick off "buy milk", then email Tom`, `tick/gap/verb off buy/gap/topic milk/topic email/gap/verb tom/name`},
		{"can you book lunch. Sam says hi", "book/gap/verb lunch sam/gap/verb hi/topic"},
		{"email-address", "email/gap/verb address emailaddress/joined"},
		{"text Ana that I'm late, delete that note", "text/gap/verb ana/name late/said delete/gap/verb note"},
	} {
		if got := flags(tt.text); got != tt.want {
			t.Errorf("flags(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestEntities(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"go to github.com.", `go to web address "github.com".`},
		{"mail john@example.com now", `mail email address "john@example.com" now`},
		{"open ~/notes/todo.md", `open file "~/notes/todo.md"`},
		{"rename draft.docx to final.docx", `rename file "draft.docx" to file "final.docx"`},
		{"e.g. version 1.2 at 3.30pm", "e.g. version 1.2 at 3.30pm"},
	} {
		if got := entities(tt.text); got != tt.want {
			t.Errorf("entities(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		most int
		want int
	}{
		{"sned", "send", 1, 1},
		{"calandar", "calendar", 2, 1},
		{"attachmnet", "attachment", 2, 1},
		{"volum", "volume", 1, 1},
		{"kitten", "sitting", 2, 3},
		{"abc", "abc", 1, 0},
		{"abcdef", "a", 2, 3},
	} {
		if got := distance(tt.a, tt.b, tt.most, nil); got != tt.want {
			t.Errorf("distance(%q, %q, %d) = %d, want %d", tt.a, tt.b, tt.most, got, tt.want)
		}
	}
}

var testDocs = []Doc{
	{Name: "mail.send", Title: "Send email", Description: "Send a new email.", Group: "Mail"},
	{Name: "mail.reply", Title: "Reply to email", Description: "Reply to an email in its thread.", Group: "Mail"},
	{Name: "health.spo2", Title: "Blood oxygen", Description: "SpO2 during sleep, per night.", Group: "Health", ReadOnly: true},
	{Name: "calendar.list_events", Title: "List events", Description: "Events between two times.", Group: "Calendar", ReadOnly: true},
	{Name: "a.same", Description: "twin"},
	{Name: "b.same", Description: "twin"},
	{Name: "safari.bookmarks", Title: "Bookmarks", Description: "List or search bookmarks and the reading list.", Group: "Safari", ReadOnly: true},
}

func docs(hits []Hit) []int {
	var out []int
	for _, h := range hits {
		out = append(out, h.Doc)
	}
	return out
}

func TestSearch(t *testing.T) {
	ix := New(testDocs, Options{})
	for _, tt := range []struct {
		query string
		want  []int
	}{
		{"answer Ana's email", []int{1, 0}},
		{"oxygen overnight", []int{2}},
		{"what is on the agenda", []int{3, 6}},
		{"twin", []int{4, 5}}, // equal scores keep the docs' order
		{"sned an emial", []int{0, 1}},
		{"get back to Ana", []int{1, 0}}, // a pair of words the table gives
		{"", nil},
		{"zzz", nil},
	} {
		if got := docs(ix.Search(tt.query, 2, nil)); !slices.Equal(got, tt.want) {
			t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
	if got := New(nil, Options{}).Search("anything", 5, nil); len(got) != 0 {
		t.Errorf("empty index found %v", got)
	}
}

// Each signal decides between two docs that are otherwise alike: the
// first with it, the second without it.
func TestSearchSignal(t *testing.T) {
	for _, tt := range []struct {
		name  string
		docs  []Doc
		query string
		off   Options
	}{
		{
			"a word as written counts more than its stem",
			[]Doc{
				{Name: "cal.list_events", Title: "List events", Description: "Events between two times, across all calendars or one."},
				{Name: "cal.get_event", Title: "Read event", Description: "Read one event."},
			},
			"events", Options{NoSurface: true},
		},
		{
			"a description's first sentence says what a tool does",
			[]Doc{
				{Name: "net.status", Description: "The network the Mac is on, its signal and its address. Fails when offline."},
				{Name: "net.send", Description: "Send a file. Fails when the network is down."},
			},
			"network", Options{NoFirstSentence: true},
		},
		{
			"what follows that is what to say",
			[]Doc{
				{Name: "messages.send", Title: "Send text", Description: "Send a text."},
				{Name: "calendar.update_event", Title: "Change event", Description: "Change an event's time."},
			},
			"text Ana that the event time changed", Options{NoClauses: true},
		},
		{
			"where in mid-sentence asks for no place",
			[]Doc{
				{Name: "notes.list", Title: "List notes", Description: "List saved notes."},
				{Name: "location.current", Title: "Current location", Description: "Where the Mac is, with a note of the address."},
			},
			"the note where I wrote it", Options{NoClauses: true},
		},
		{
			"asking to be shown prefers a tool that only reads",
			[]Doc{
				{Name: "clipboard.read", Title: "Read clipboard", Description: "Read what the clipboard holds.", ReadOnly: true},
				{Name: "clipboard.write", Title: "Copy to clipboard", Description: "Copy text to the clipboard."},
			},
			"show what I copied", Options{NoQuestions: true},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := docs(New(tt.docs, Options{}).Search(tt.query, 2, nil)); !slices.Equal(got, []int{0, 1}) {
				t.Errorf("Search(%q) = %v, want [0 1]", tt.query, got)
			}
			if got := docs(New(tt.docs, tt.off).Search(tt.query, 2, nil)); !slices.Equal(got, []int{1, 0}) {
				t.Errorf("without the signal, Search(%q) = %v, want [1 0]", tt.query, got)
			}
		})
	}
}

func TestFirstSentence(t *testing.T) {
	for _, tt := range []struct{ text, first, later string }{
		{"One. Two. Three.", "One.", " Two. Three."},
		{"Only one.", "Only one.", ""},
		{"Version 1.2 of it", "Version 1.2 of it", ""},
	} {
		if first, later := firstSentence(tt.text); first != tt.first || later != tt.later {
			t.Errorf("firstSentence(%q) = %q, %q, want %q, %q", tt.text, first, later, tt.first, tt.later)
		}
	}
}

// A hit says which of the query's words it matched, where, and as what.
func TestSearchExplains(t *testing.T) {
	hits := New(testDocs, Options{}).Search("answer Zed's emial", 1, nil)
	if len(hits) != 1 {
		t.Fatalf("hits %v", hits)
	}
	want := []Match{{Word: "answer", As: "reply", Field: FieldName}, {Word: "emial", As: "email", Field: FieldTitle}}
	if h := hits[0]; h.Doc != 1 || !slices.Equal(h.Matched, want) || !slices.Equal(h.Missed, []string{"zed's"}) {
		t.Errorf("hit %+v, want doc 1 matching %+v and missing zed's", h, want)
	}
}

// A prior moves hits within 5% of the top score, and no other.
func TestSearchPrior(t *testing.T) {
	ix := New(testDocs, Options{})
	favour := func(doc int) func(int) float64 {
		return func(d int) float64 {
			if d == doc {
				return 1
			}
			return 0
		}
	}
	if got := docs(ix.Search("twin", 2, favour(5))); !slices.Equal(got, []int{5, 4}) {
		t.Errorf("a tie: %v, want the favoured doc first", got)
	}
	if got := docs(ix.Search("twin", 2, func(int) float64 { return 7 })); !slices.Equal(got, []int{4, 5}) {
		t.Errorf("equal priors: %v, want the docs' order", got)
	}
	plain := ix.Search("send email", 3, nil)
	if len(plain) < 2 || plain[1].Score >= (1-nearTie)*plain[0].Score {
		t.Fatalf("want a clear winner: %+v", plain)
	}
	if got := docs(ix.Search("send email", 3, favour(plain[1].Doc))); !slices.Equal(got, docs(plain)) {
		t.Errorf("a clear winner: %v, want %v whatever the prior", got, docs(plain))
	}
}

func TestClosest(t *testing.T) {
	ix := New(testDocs, Options{})
	if got := ix.Closest("bookmrks", 2); len(got) == 0 || got[0] != 6 {
		t.Errorf("Closest(bookmrks) = %v, want safari.bookmarks first", got)
	}
	if got := ix.Closest("qqqq", 2); len(got) != 0 {
		t.Errorf("Closest(qqqq) = %v, want none", got)
	}
}

// FuzzSearch: any query is searched without panic, and the results are
// distinct docs, at most limit of them, the same each time.
func FuzzSearch(f *testing.F) {
	for _, s := range []string{"reply to Ana's email", "SpO2 overnight", "getUnreadCount", "aB", "'", "É\u00e9\xff", "running ies", `"x`, "a-", "-b", "x@y.z ~/a http://q", "write back"} {
		f.Add(s)
	}
	ix := New(testDocs, Options{})
	f.Fuzz(func(t *testing.T, query string) {
		got := ix.Search(query, 2, nil)
		if len(got) > 2 || (len(got) == 2 && got[0].Doc == got[1].Doc) {
			t.Fatalf("Search(%q) = %v", query, got)
		}
		if again := ix.Search(query, 2, nil); fmt.Sprint(got) != fmt.Sprint(again) {
			t.Fatalf("Search(%q) = %v, then %v", query, got, again)
		}
		ix.Closest(query, 3)
		New([]Doc{{Name: query, Title: query, Description: query, Params: query, Group: query}}, Options{}).Search(query, 1, nil)
	})
}
