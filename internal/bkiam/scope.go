package bkiam

import "strings"

// ScopeCovers reports whether a grade manager's authorization scope for one
// resource type admits a group grant of the path grant, as IAM's SaaS
// decides it (see the package doc, "The management API"): paths holds the
// scope's paths of the type, and none at all is the unlimited scope, which
// admits everything. Otherwise both become "/type,id/…/" (no systems), a
// scope path ending in ",*/" is cut to a prefix there, and the grant's path
// must start with one of them: a one-node "*" admits grants of one node
// only, and a "*" above the last node is no wildcard.
func ScopeCovers(paths [][]PathNode, grant []PathNode) bool {
	if len(paths) == 0 {
		return true
	}
	g := ScopePath(grant)
	for _, p := range paths {
		if len(p) == 0 {
			continue
		}
		prefix := ScopePath(p)
		if strings.HasSuffix(prefix, ",*/") {
			prefix = strings.TrimSuffix(prefix, "*/")
		}
		if strings.HasPrefix(g, prefix) {
			return true
		}
	}
	return false
}

// ScopePath is a path as IAM's scope check writes it: "/type,id/…/",
// without systems.
func ScopePath(nodes []PathNode) string {
	var b strings.Builder
	b.WriteByte('/')
	for _, n := range nodes {
		b.WriteString(n.Type + "," + n.ID + "/")
	}
	return b.String()
}

// ScopeOfType gathers the paths scopes admit of one resource type: nil with
// typed true is the unlimited scope (some scope names the type with no
// paths); typed false means no scope names the type.
func ScopeOfType(scopes []AuthorizationScope, system, typ string) (paths [][]PathNode, typed bool) {
	for _, sc := range scopes {
		for _, r := range sc.Resources {
			if r.System != system || r.Type != typ {
				continue
			}
			if len(r.Paths) == 0 {
				return nil, true
			}
			paths, typed = append(paths, r.Paths...), true
		}
	}
	return paths, typed
}
