// Package toolsearch ranks tools for a request written in everyday words,
// as models write them ("reply to the last message from Ana"): BM25 over
// the words of each tool's fields, weighted by field, with light stemming
// and a small table of everyday synonyms. It is deterministic, local and
// knows nothing of MCP or manifests.
package toolsearch

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"
)

// Doc is one tool to search. Name is split into words at _ . - and
// camelCase humps.
type Doc struct {
	Name        string
	Title       string
	Description string
	// Params are the parameters' names and descriptions.
	Params string
	// Group describes the tool's group: its manifest's name, description
	// and category.
	Group string
}

// Field weights: a word in the name says more about a tool than one in a
// parameter's description. The group's words are shared by every tool
// of the group, so they pick the group, and the other fields the tool.
const (
	weightName        = 3
	weightTitle       = 2
	weightDescription = 1
	weightParams      = 0.5
	weightGroup       = 0.75
	// weightSynonym is the weight of a word a query term stands for,
	// relative to the term itself.
	weightSynonym = 0.5
)

// BM25 parameters, the usual ones.
const (
	k1 = 1.2
	b  = 0.75
)

// Index is an immutable search index over docs. It is safe for
// concurrent use.
type Index struct {
	postings map[string][]posting
	length   []float64 // weighted number of words of each doc
	avg      float64
}

type posting struct {
	doc int
	tf  float64 // weighted term frequency
}

// New indexes docs; Search returns positions in docs.
func New(docs []Doc) *Index {
	ix := &Index{postings: map[string][]posting{}, length: make([]float64, len(docs))}
	var total float64
	for i, d := range docs {
		tf := map[string]float64{}
		for _, f := range []struct {
			text   string
			weight float64
		}{{d.Name, weightName}, {d.Title, weightTitle}, {d.Description, weightDescription}, {d.Params, weightParams}, {d.Group, weightGroup}} {
			for _, t := range terms(f.text) {
				tf[t] += f.weight
				ix.length[i] += f.weight
			}
		}
		total += ix.length[i]
		// Map order does not matter: each term's postings are in doc order.
		for t, n := range tf {
			ix.postings[t] = append(ix.postings[t], posting{i, n})
		}
	}
	if len(docs) > 0 {
		ix.avg = total / float64(len(docs))
	}
	return ix
}

// Search returns the positions of the docs that match query, best first,
// at most limit of them. Equal scores keep the docs' order.
func (ix *Index) Search(query string, limit int) []int {
	weights := map[string]float64{}
	for _, t := range terms(query) {
		weights[t] = 1
	}
	// The query's own terms, sorted, so that expanding a query does not
	// depend on map order.
	for _, t := range slices.Sorted(maps.Keys(weights)) {
		for _, s := range synonyms[t] {
			if _, ok := weights[s]; !ok {
				weights[s] = weightSynonym
			}
		}
	}
	n := float64(len(ix.length))
	score := map[int]float64{}
	for t, w := range weights {
		ps := ix.postings[t]
		if len(ps) == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(len(ps))+0.5)/(float64(len(ps))+0.5))
		for _, p := range ps {
			norm := k1 * (1 - b + b*ix.length[p.doc]/ix.avg)
			score[p.doc] += w * idf * p.tf * (k1 + 1) / (p.tf + norm)
		}
	}
	docs := slices.Collect(maps.Keys(score))
	slices.SortFunc(docs, func(x, y int) int {
		if c := cmp.Compare(score[y], score[x]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	return docs[:min(limit, len(docs))]
}

// terms returns the stemmed words of text that are worth searching for:
// lower case, split at anything but letters and digits and at camelCase
// humps, without stop words.
func terms(text string) []string {
	var out []string
	word := func(w string) {
		if w = strings.ToLower(strings.Trim(w, "'")); w != "" && !stopWords[w] {
			out = append(out, stem(w))
		}
	}
	rs := []rune(text)
	start := -1
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'':
			if start >= 0 {
				word(string(rs[start:i]))
				start = -1
			}
		case start < 0:
			start = i
		case unicode.IsUpper(r) && unicode.IsLower(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			// getUnreadCount: a hump starts a word (but SpO2 is one).
			word(string(rs[start:i]))
			start = i
		}
	}
	if start >= 0 {
		word(string(rs[start:]))
	}
	return out
}

// stem strips the common English endings, so that words of one family
// meet: emails and email, replied and reply, scheduling and schedule,
// created and create. It is deliberately light; two words it maps apart
// are bridged by the synonym table where it matters.
func stem(w string) string {
	w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "'")
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ies") || strings.HasSuffix(w, "ied"):
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	for _, suffix := range []string{"ing", "ed"} {
		stem, ok := strings.CutSuffix(w, suffix)
		if !ok || len(stem) < 3 || !strings.ContainsAny(stem, "aeiouy") {
			continue
		}
		w = stem
		if n := len(w); w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) {
			w = w[:n-1] // running, planned
		}
		break
	}
	if len(w) > 3 {
		w = strings.TrimSuffix(w, "e") // create, created, creating
	}
	return w
}

var stopWords = setOf(`a an the to of for from on in at by with and or is are was be been it its this that these those
what what's which who whom whose me my i i'm you your we our us he she they them their all any some please can could would
will do does did so as if then than there here into about up out just also only very too how be not no yes`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
