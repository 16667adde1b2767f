package toolsearch

import (
	"math/bits"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// concept is what one word of a query, or two side by side, stands for:
// the word itself and the words it may mean, each with its weight. A
// concept counts once per doc however many of its words the doc has,
// with the document frequency of its commonest word, so that a synonym
// never weighs more than the word it stands for.
type concept struct {
	word    string // in lower case; for a phrase, its two words
	phrase  bool
	weight  float64
	members []member
}

type member struct {
	term   string
	weight float64
	as     string // the word it stands for, as written, when not the query's
}

// query is a request parsed.
type query struct {
	concepts []concept
	// question says the request asks something ("what's on today?",
	// "show my notes"), which tools that only read answer.
	question bool
}

// parse returns the concepts of a query, each once, in the query's order.
func (ix *Index) parse(text string) query {
	syn := synonymTable(ix.opts.NoStemming)
	var q query
	if !ix.opts.NoQuestions {
		q.question = isQuestion(text)
	}
	if !ix.opts.NoEntities {
		text = entities(text)
	}
	at := map[string]int{} // concept's position by term
	add := func(c concept, key string) {
		if i, ok := at[key]; ok {
			q.concepts[i].weight = max(q.concepts[i].weight, c.weight)
			return
		}
		at[key] = len(q.concepts)
		q.concepts = append(q.concepts, c)
	}
	var prevAny *word
	for w := range words(text, ix.opts.NoStemming) {
		weight := 1.0
		if w.topic && !ix.opts.NoTopics || w.said && !ix.opts.NoClauses {
			weight = ix.w.Topic
		}
		// Two words side by side that mean something together.
		if prevAny != nil && !w.gap && !w.joined && !ix.opts.NoSynonyms {
			key := prevAny.term + " " + w.term
			if means := syn.of[key]; len(means) > 0 {
				c := concept{word: prevAny.text + " " + w.text, phrase: true, weight: weight}
				for _, s := range means {
					c.members = append(c.members, member{term: s.term, weight: 1, as: s.text})
				}
				add(c, key)
			}
		}
		if !w.joined {
			prevAny = &w
		}
		if w.stop || w.term == "where" && !w.verb && !ix.opts.NoClauses {
			// "the message where Tom sent the address" asks for no
			// place, as "where is it" does.
			continue
		}
		if _, ok := at[w.term]; ok {
			add(concept{weight: weight}, w.term)
		} else {
			c := concept{word: w.text, weight: weight, members: []member{{term: w.term, weight: 1}}}
			if !ix.opts.NoSurface && w.text != w.term {
				c.members = append(c.members, member{term: asWritten(w.text), weight: ix.w.Surface})
			}
			if len(ix.postings[w.term]) == 0 && syn.of[w.term] == nil && syn.verbs[w.term] == nil && !ix.opts.NoCorrection && correctable(w) {
				// Several words as close share the weight.
				known := ix.corrections(w.text)
				for _, k := range known {
					c.members = append(c.members, member{term: ix.surface[k], weight: ix.w.Correction / float64(len(known)), as: k})
				}
			}
			if !ix.opts.NoSynonyms {
				for _, m := range c.members {
					for _, s := range syn.of[m.term] {
						c.members = append(c.members, member{term: s.term, weight: m.weight * ix.w.Synonym, as: s.text})
					}
					if w.verb && !ix.opts.NoVerbs {
						for _, s := range syn.verbs[m.term] {
							if !slices.ContainsFunc(c.members, func(o member) bool { return o.term == s.term }) {
								c.members = append(c.members, member{term: s.term, weight: m.weight * ix.w.Verb, as: s.text})
							}
						}
					}
				}
			}
			add(c, w.term)
		}
	}
	return q
}

// isQuestion reports whether a request asks something: it ends with a
// question mark, starts as questions do, or asks to be shown something
// ("show my notes", "check my inbox").
func isQuestion(text string) bool {
	text = strings.TrimSpace(text)
	if strings.HasSuffix(text, "?") {
		return true
	}
	first, _, _ := strings.Cut(lower(text), " ")
	first = strings.Trim(first, ",.!")
	return questionWords[first] || showWords[first]
}

var (
	questionWords = setOf(`what what's whats which who who's when where where's why how how's is are am was were do does did have has any anything`)
	showWords     = setOf(`show list see view display find search look check read get tell give`)
)

// entities rewrites the email addresses, web addresses and file names of
// a request as the kind of thing each is, with its own words in quotes,
// as a topic: "go to github.com" asks for a web page, not for GitHub.
func entities(text string) string {
	fields := strings.Fields(text)
	changed := false
	for i, f := range fields {
		core := strings.TrimRight(f, `.,;:!?)"'`)
		var kind string
		at := strings.IndexByte(core, '@')
		switch {
		case at > 0 && strings.Contains(core[at:], "."):
			kind = "email address"
		case strings.Contains(core, "://") || strings.HasPrefix(core, "www."):
			kind = "web address"
		case strings.HasPrefix(core, "~/") || strings.HasPrefix(core, "/") || strings.HasPrefix(core, "./"):
			kind = "file"
		default:
			dot := strings.LastIndexByte(core, '.')
			if dot < 2 || dot == len(core)-1 || strings.ContainsFunc(core[dot+1:], func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) ||
				!strings.ContainsFunc(core[dot+1:], unicode.IsLetter) || len(core)-dot > 6 {
				continue
			}
			kind = "file"
			if domains[lower(core[dot+1:])] {
				kind = "web address"
			}
		}
		fields[i] = kind + ` "` + strings.ReplaceAll(core, `"`, "") + `"` + f[len(core):]
		changed = true
	}
	if !changed {
		return text
	}
	return strings.Join(fields, " ")
}

// domains are the commonest top-level domains.
var domains = setOf(`com org net io dev app co uk ie eu de fr ai me info edu gov`)

// correctable reports whether w may be a misspelt word: a word of
// letters long enough to tell, and no proper name.
func correctable(w word) bool {
	if w.name || utf8.RuneCountInString(w.text) < 4 {
		return false
	}
	for _, r := range w.text {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// corrections returns the known words closest to text, in order, when
// one is within an edit (two for words of eight letters or more): a
// letter added, dropped, changed, or two swapped. Most words of four
// letters are words, not slips: only two letters swapped are taken for
// one ("sned").
func (ix *Index) corrections(text string) []string {
	most := 1
	if len(text) >= 8 {
		most = 2
	}
	var out []string
	best := most + 1
	rows := make([]int, 3*(len(text)+most+1))
	mask := letters(text)
	for n := len(text) - most; n <= len(text)+most; n++ {
		for _, k := range ix.byLen[n] {
			// An edit adds or drops at most one letter of each: a cheap
			// test that spares most words the full one.
			if bits.OnesCount32(mask^k.letters) > 2*most || len(text) < 5 && !swapped(text, k.text) {
				continue
			}
			d := distance(text, k.text, min(best, most), rows)
			switch {
			case d < best:
				best, out = d, append(out[:0], k.text)
			case d == best:
				out = append(out, k.text)
			}
		}
	}
	if best > most {
		return nil
	}
	return out
}

// known is a word the docs or the synonym table have, as written.
type known struct {
	text    string
	letters uint32 // which of a to z and other bytes it has (see letters)
}

// letters returns the set of a word's bytes: a bit for each of a to z,
// and one for anything else.
func letters(w string) uint32 {
	var m uint32
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 'a' && c <= 'z' {
			m |= 1 << (c - 'a')
		} else {
			m |= 1 << 26
		}
	}
	return m
}

// swapped reports whether b is a with two neighbouring letters swapped.
func swapped(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
}

// distance returns the optimal string alignment distance of a and b
// (Levenshtein's, with swaps of two neighbours), or more than most when
// it is more than most. It compares bytes: the words corrected are
// letters, and a non-ASCII one only counts an edit too many. rows, when
// it has room for three rows of the shorter word plus one, is used for
// them.
func distance(a, b string, most int, rows []int) int {
	if len(a) < len(b) {
		a, b = b, a
	}
	if len(a)-len(b) > most {
		return most + 1
	}
	n := len(b) + 1
	if len(rows) < 3*n {
		rows = make([]int, 3*n)
	}
	prev2, prev, cur := rows[:n], rows[n:2*n], rows[2*n:3*n]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			low = min(low, cur[j])
		}
		if low > most {
			return most + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
