package cli

import "strings"

// suggest returns the candidates close to what was typed: one it starts,
// or one at most two single-letter edits away. Case and the separators
// - _ . and space do not count.
func suggest(typed string, candidates []string) []string {
	t := fold(typed)
	if t == "" {
		return nil
	}
	var near []string
	for _, c := range candidates {
		f := fold(c)
		if strings.HasPrefix(f, t) || levenshtein(t, f) <= 2 {
			near = append(near, c)
		}
	}
	return near
}

// fold drops case and the separators - _ . and space, for comparing names
// as people type them.
func fold(s string) string {
	return strings.NewReplacer("-", "", "_", "", " ", "", ".", "").Replace(strings.ToLower(s))
}

// didYouMean formats suggestions as a hint ending a message, or "".
func didYouMean(near []string) string {
	if len(near) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(near, " or ") + "?)"
}

// levenshtein counts the single-letter edits that turn a into b.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := []int{i}
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur = append(cur, min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost))
		}
		prev = cur
	}
	return prev[len(b)]
}
