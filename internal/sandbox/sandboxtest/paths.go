package sandboxtest

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// What the tests of several packages read back from the sandbox, in the
// notation they compare: one path per instance, "/system,type,id/".

// HeldPaths is what the sandbox stores for a subject: action → sorted
// paths (for a combined resource, each group rendered as its paths joined
// with " & "); "any" for a policy over every instance. The rows of one
// action (a custom policy and template rows) are merged; a row with an
// attribute condition holds no paths and adds none.
func HeldPaths(sb *Sandbox, system, subjectType, subjectID string) map[string][]string {
	out := map[string][]string{}
	for _, p := range sb.Policies(sandbox.PolicyFilter{System: system, SubjectType: subjectType, SubjectID: subjectID}).Policies {
		if p.Expression != nil {
			continue
		}
		var paths []string
		switch {
		case p.Any:
			paths = []string{"any"}
		case len(p.Groups) > 0:
			for _, g := range p.Groups {
				var parts []string
				for _, typ := range slices.Sorted(maps.Keys(g)) {
					parts = append(parts, g[typ]...)
				}
				paths = append(paths, strings.Join(parts, " & "))
			}
			sort.Strings(paths)
		default:
			paths = append(paths, p.Paths...)
		}
		out[p.Action] = append(out[p.Action], paths...)
	}
	for a, paths := range out {
		sort.Strings(paths)
		out[a] = slices.Compact(paths)
	}
	return out
}

// HostPaths renders the sandbox paths of bk_cmdb hosts with the given ids.
func HostPaths(ids ...string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "/bk_cmdb,host," + id + "/"
	}
	sort.Strings(out)
	return out
}

// IDRange returns the ids from..to-1 as strings.
func IDRange(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

func HostName(id string) string { return "host" + id }
