package sandbox

import (
	"sort"
	"strings"
)

// The backend expression of a stored policy, built the way the SaaS translator builds it (see the
// package doc of internal/bkiam, "Policy expressions"): field names drop the system ("host.id"), ids are strings, one type's conditions
// are OR-ed, the types of a combined group AND-ed, several groups OR-ed.

type expr = map[string]any

func leaf(field, op string, value any) expr { return expr{"field": field, "op": op, "value": value} }

func composite(op string, content []expr) expr {
	if len(content) == 1 {
		return content[0]
	}
	return expr{"op": op, "content": content}
}

// expression builds the policy's expression for the action's related types.
func (p *policy) expression(a *Action) expr {
	if p.Cond != nil {
		return p.Cond
	}
	types := []string{""}
	if a != nil && len(a.typeIDs) > 0 {
		types = a.typeIDs // the backend's fields name a type by its id alone, whatever its system
	}
	if p.Any {
		parts := make([]expr, len(types))
		for i, t := range types {
			parts[i] = anyLeaf(t)
		}
		return composite("AND", parts)
	}
	// collapse gives, per type, the path length the ignore_iam_path collapse applies to: -1 none, 0 any.
	collapse := func(t string) int {
		if !p.Collapsed || a == nil {
			return -1
		}
		return a.chainLen(t)
	}
	if !p.Combined {
		return typeExpr(types[0], p.Paths, collapse(types[0]))
	}
	var groups []expr
	for _, g := range p.Groups {
		parts := make([]expr, 0, len(types))
		for _, t := range types {
			parts = append(parts, typeExpr(t, g[t], collapse(t)))
		}
		groups = append(groups, composite("AND", parts))
	}
	return composite("OR", groups)
}

func anyLeaf(typ string) expr {
	if typ == "" {
		return leaf("", "any", []string{})
	}
	return leaf(typ+".id", "any", []string{})
}

// typeExpr translates one type's paths. Plain instances (one-node paths, a lone "*" included: the
// literal id) merge into one eq/in; instances under the same ancestors into AND(id, _bk_iam_path_
// starts_with ancestors); a path ending at an ancestor (or, after ancestors, at a "*" of the type,
// which is dropped; an ancestor "*" stays) into a bare starts_with. The
// ignore_iam_path collapse (a user grant of such an action) drops the ancestors of the instance
// paths whose length is collapseLen (0: any length; -1: no collapse), the real server's rule of the
// instance selection's chain length.
func typeExpr(typ string, paths map[string][]Node, collapseLen int) expr {
	if len(paths) == 0 {
		return anyLeaf(typ)
	}
	byPrefix := map[string][]string{} // ancestors path ("" for none) -> ids
	var prefixes []string
	var startsWith []string
	for _, k := range sortedKeys(paths) {
		nodes := paths[k]
		last := nodes[len(nodes)-1]
		// A one-node path of the type is its id, "*" included: IAM's translator writes it as an id
		// comparison, so a lone "*" is the literal id "*", not every instance.
		if last.Type != typ || last.ID == "*" && len(nodes) > 1 {
			// Only a "*" leaf of the action's own type is dropped; an ancestor "*" stays and gives a
			// ",*/" prefix ("every set under biz 1"), which readers match by stripping the "*/".
			if last.ID == "*" && last.Type == typ {
				nodes = nodes[:len(nodes)-1]
			}
			startsWith = append(startsWith, backendPath(nodes))
			continue
		}
		prefix := ""
		if collapseLen < 0 || collapseLen > 0 && len(nodes) != collapseLen {
			prefix = backendPath(nodes[:len(nodes)-1])
		}
		if _, ok := byPrefix[prefix]; !ok {
			prefixes = append(prefixes, prefix)
		}
		byPrefix[prefix] = append(byPrefix[prefix], last.ID)
	}
	sort.Strings(prefixes)
	var parts []expr
	for _, prefix := range prefixes {
		ids := byPrefix[prefix]
		sort.Strings(ids)
		var idCond expr
		if len(ids) == 1 {
			idCond = leaf(typ+".id", "eq", ids[0])
		} else {
			idCond = leaf(typ+".id", "in", ids)
		}
		if prefix == "" || prefix == "/" {
			parts = append(parts, idCond)
			continue
		}
		parts = append(parts, expr{"op": "AND", "content": []expr{idCond, leaf(typ+"._bk_iam_path_", "starts_with", prefix)}})
	}
	for _, sw := range startsWith {
		parts = append(parts, leaf(typ+"._bk_iam_path_", "starts_with", sw))
	}
	return composite("OR", parts)
}

// backendPath renders nodes the backend's way: "/type,id/type,id/" (no system).
func backendPath(nodes []Node) string {
	if len(nodes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('/')
	for _, n := range nodes {
		b.WriteString(n.Type + "," + n.ID + "/")
	}
	return b.String()
}
