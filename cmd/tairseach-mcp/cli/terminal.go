package cli

import "strconv"

// plural returns "1 warning", "2 warnings", "0 warnings".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
