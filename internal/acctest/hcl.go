package acctest

import (
	"maps"
	"slices"
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

// HCLMap is an HCL map of strings, keys sorted.
func HCLMap(m map[string]string) string {
	var b strings.Builder
	b.WriteString("{")
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(k) + " = " + strconv.Quote(m[k]))
	}
	return b.String() + "}"
}
