package toolsearch

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// word is a word of a text worth searching for.
type word struct {
	text string // in lower case, as written
	term string // what it is matched as: its stem, unless stemming is off
	// gap says that punctuation stands between the word and the one
	// before it, so that the two are no phrase.
	gap bool
	// joined says the word is the parts of a hyphenated or camelCase
	// word joined ("todo" of "to-do", "imessage" of "iMessage"), given
	// besides the parts.
	joined bool
	// topic says the word tells what an item is about rather than which
	// tool acts on it: it comes after about, saying, called... in the
	// same clause, or is in quotes.
	topic bool
	// name says the word is capitalised in mid-sentence: a proper name,
	// not to be taken for a misspelt word.
	name bool
	// verb says the word comes first in its clause, where a request
	// puts its verb: "text Ana", "book a table", "and email it".
	verb bool
	// part says the word is a part of a hyphenated or camelCase word.
	part bool
	// said says the word is in a clause of what to say or write, after
	// "that": "text Ana that I'm late", "email the team that the release
	// is delayed".
	said bool
	// stop says the word is a stop word, given only for phrases such
	// as "get rid" and "pop up".
	stop bool
}

// words returns the words of text: split at anything but letters,
// digits and apostrophes, in lower case, stemmed with Snowball's English
// stemmer (Porter2) unless noStemming, without single letters. Stop words
// are given with their stop flag set. Hyphenated and camelCase words give
// their parts and the parts joined.
func words(text string, noStemming bool) iter.Seq[word] {
	return func(yield func(word) bool) {
		var (
			gap      = true // no phrase with what came before the text
			start    = true // of a sentence
			clause   = true // no word of the clause yet
			quoted   bool
			topic    bool
			parts    []string
			partCaps bool
			said     bool
			that     bool // the word before was "that", not first in its clause
		)
		emit := func(w word) bool {
			w.gap, gap = gap, false
			w.verb, clause = clause, false
			return yield(w)
		}
		// flush emits the word made of parts, and its parts.
		flush := func() bool {
			if len(parts) == 0 {
				return true
			}
			name := partCaps && !start
			start = false
			defer func() { parts = parts[:0] }()
			for _, p := range parts {
				// "that I'm late", "that the release is delayed": a
				// clause, not "that email".
				said = said || that && subjects[p]
				that = p == "that" && !clause
				switch {
				case keep(p):
					if !emit(word{text: p, term: termOf(p, noStemming), topic: topic || quoted, said: said, name: name, part: len(parts) > 1}) {
						return false
					}
				case utf8.RuneCountInString(p) > 1:
					if topicMarkers[p] {
						topic = true
					}
					if clauseMarkers[p] {
						clause = true
					}
					g := gap
					if !yield(word{text: p, term: p, stop: true, gap: g}) {
						return false
					}
				}
			}
			if len(parts) > 1 {
				joined := strings.Join(parts, "")
				if keep(joined) {
					g := gap
					ok := yield(word{text: joined, term: termOf(joined, noStemming), joined: true, topic: topic || quoted, said: said, name: name})
					gap = g
					return ok
				}
			}
			return true
		}
		// boundary ends the current clause: no phrase across it, and a
		// topic ends with it.
		boundary := func(sentence bool) {
			gap, topic, clause, said, that = true, false, true, false, false
			if sentence {
				start = true
			}
		}
		for i := 0; i < len(text); {
			r, size := utf8.DecodeRuneInString(text[i:])
			if !isWordRune(r) {
				next, _ := utf8.DecodeRuneInString(text[i+size:])
				joins := r == '-' && len(parts) > 0 && isWordRune(next) && i+size < len(text)
				if joins {
					i += size
					continue
				}
				if !flush() {
					return
				}
				switch {
				case r == '"' || r == '“' || r == '”':
					quoted = !quoted && r != '”'
					gap = true
				case strings.ContainsRune(".!?:;", r) && (i+size == len(text) || !isWordRune(next)):
					boundary(true)
				case strings.ContainsRune(",()[]{}\n", r):
					boundary(false)
				}
				i += size
				continue
			}
			// A run of word runes, split at camelCase humps.
			j := i
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if !isWordRune(r2) {
					break
				}
				j += s2
			}
			run := text[i:j]
			if len(parts) == 0 {
				partCaps = unicode.IsUpper(r)
			}
			for _, p := range humps(run) {
				if p = strings.Trim(strings.ToLower(p), "'’"); p != "" {
					parts = append(parts, p)
				}
			}
			i = j
		}
		flush()
	}
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’'
}

// humps splits a camelCase word: getUnreadCount, iMessage (but SpO2 is
// one word).
func humps(s string) []string {
	var out []string
	rs := []rune(s)
	from := 0
	for i := 1; i+1 < len(rs); i++ {
		if unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i-1]) && unicode.IsLower(rs[i+1]) {
			out = append(out, string(rs[from:i]))
			from = i
		}
	}
	return append(out, string(rs[from:]))
}

// keep reports whether a word is worth searching for.
func keep(w string) bool {
	return utf8.RuneCountInString(w) > 1 && !stopWords[w]
}

// termOf is what a word is matched as.
func termOf(w string, noStemming bool) string {
	w = strings.ReplaceAll(w, "’", "'")
	if noStemming {
		return strings.TrimSuffix(w, "'s")
	}
	return english.Stem(w, true)
}

func lower(s string) string { return strings.ToLower(s) }

var stopWords = setOf(`a an the to of for from on in at by with and or is are was be been it its this that these those
what what's which who whom whose me my i i'm i've i'll i'd you your we our us he she they them their all any some please can could would
will do does did so as if then than there here into about up out just also only very too how be not no yes
don't dont let's it's that's there's whats have has had much many ever still already even really regarding saying says called named titled mentioning`)

// clauseMarkers start a clause, whose first word is its verb.
var clauseMarkers = setOf(`and then please can could would will you`)

// topicMarkers start a topic: the words after them, to the end of the
// clause, say what an item is about, not which tool acts on it.
var topicMarkers = setOf(`about regarding saying says called named titled mentioning`)

// subjects start a clause's subject.
var subjects = setOf(`i i'm i'll i've i'd we we're we'll we've you you're he he's she she's it it's they they're there there's the my our his her their a an`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
