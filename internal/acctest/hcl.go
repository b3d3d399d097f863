package acctest

import (
	"strconv"
	"strings"
)

// HCLList is an HCL list of strings.
func HCLList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
