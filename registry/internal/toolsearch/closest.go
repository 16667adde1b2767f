package toolsearch

import (
	"cmp"
	"slices"
	"strings"
)

// Closest returns the docs whose name and title look the most like query,
// letter for letter, best first, at most limit of them: what to suggest
// when Search finds nothing. Docs that share no three letters in a row
// with query are not returned.
func (ix *Index) Closest(query string, limit int) []int {
	q := trigrams(lower(query))
	if len(q) == 0 {
		return nil
	}
	type near struct {
		doc   int
		score float64
	}
	var found []near
	for i, name := range ix.names {
		t := trigrams(name)
		shared := 0
		for g := range q {
			if t[g] {
				shared++
			}
		}
		if shared > 0 {
			// Dice's coefficient.
			found = append(found, near{i, 2 * float64(shared) / float64(len(q)+len(t))})
		}
	}
	slices.SortFunc(found, func(x, y near) int { return cmp.Or(cmp.Compare(y.score, x.score), cmp.Compare(x.doc, y.doc)) })
	out := make([]int, 0, min(limit, len(found)))
	for _, n := range found[:min(limit, len(found))] {
		out = append(out, n.doc)
	}
	return out
}

// trigrams returns the runs of three letters or digits of each word of s.
func trigrams(s string) map[string]bool {
	t := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !isWordRune(r) || r == '\'' || r == '’' }) {
		rs := []rune(" " + w + " ")
		for i := 0; i+3 <= len(rs); i++ {
			t[string(rs[i:i+3])] = true
		}
	}
	return t
}
