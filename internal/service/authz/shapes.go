package authz

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/policyexpr"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// What a policy holds beyond what a resource grants. A policy holds shapes, not only ids: a
// topology path (the web UI's usual grant: every host under business 1), every instance, an
// attribute condition, a combination of types; and IAM keeps one expiry for all of it. So the
// expiry check asks of each alternative of the policy's expression (policyexpr.Alternatives)
// whether the resource's own grant covers it, and names every one it does not.

// shape is what one resource grants of one action, for telling its own alternatives from others.
type shape struct {
	// everything: an action related to no resource type, which a grant holds whole.
	everything bool
	// resources: the grant's instances by type (one type, or several for a combined resource),
	// ids as keys.
	resources []grantplan.Resource
	// under maps an id to the path of its ancestors ("/biz,1/", policyexpr.BackendPath), for a
	// creator grant of an instance under ancestors; "" or absent for a plain id.
	under map[string]string
}

// instanceShape is the shape of an instance grant.
func instanceShape(g grantplan.Grant) shape {
	return shape{everything: len(g.Resources) == 0, resources: g.Resources}
}

// creatorShape is the shape of a creator grant of instances of a type, for an action related to
// the type (related false: an action related to no type, which IAM grants whole).
func creatorShape(t grantplan.CreatorTarget, instances map[string]grantplan.CreatorInstance, related bool) shape {
	if !related {
		return shape{everything: true}
	}
	r := grantplan.Resource{System: t.System, Type: t.Type, Instances: map[string]string{}}
	under := map[string]string{}
	for id, in := range instances {
		r.Instances[id] = in.Name
		nodes := make([]policyexpr.Node, len(in.Ancestors))
		for i, a := range in.Ancestors {
			nodes[i] = policyexpr.Node{Type: a.Type, ID: a.ID}
		}
		under[id] = policyexpr.BackendPath(nodes)
	}
	return shape{resources: []grantplan.Resource{r}, under: under}
}

// beyond describes what expr holds that the shape does not grant: the ids of the shape's type it
// does not name, counted, then each other alternative; "" when nothing. A policy too complex to
// flatten is described as such, never taken as covered.
func (s shape) beyond(expr *policyexpr.Expr) string {
	if s.everything || expr == nil {
		return ""
	}
	alts, ok := expr.Alternatives()
	if !ok {
		return fmt.Sprintf("a policy of more than %d alternatives, not told apart here", policyexpr.MaxAlternatives)
	}
	var others []string // ids of a one-type grant's type, granted bare, that it does not name
	var rest []string
	for _, alt := range alts {
		left, bare := s.uncovered(alt)
		switch {
		case left == nil:
		case bare:
			ids, _ := left[0].IDs()
			others = append(others, ids...)
		default:
			rest = append(rest, left.String())
		}
	}
	slices.Sort(others)
	others = slices.Compact(others)
	rest = unique(rest)
	var parts []string
	if len(others) > 0 {
		r := s.resources[0]
		parts = append(parts, fmt.Sprintf("%d %s/%s instances this resource does not manage (%s)", len(others), r.System, r.Type,
			protocol.SomeIDs(others)))
	}
	const most = 5
	if len(rest) > most {
		rest = append(rest[:most], fmt.Sprintf("%d more", len(rest)-most))
	}
	parts = append(parts, rest...)
	return strings.Join(parts, "; ")
}

// uncovered returns what of alt the shape does not grant (nil: all of it is granted), and
// whether that is a bare id list of the shape's one type (to be counted with the others).
func (s shape) uncovered(alt policyexpr.Alternative) (policyexpr.Alternative, bool) {
	if len(s.resources) != 1 {
		return s.uncoveredCombination(alt), false
	}
	r := s.resources[0]
	// A condition on another type makes alt a combination; a time window
	// (IAM's environment) only narrows it.
	if slices.ContainsFunc(alt, func(c policyexpr.Condition) bool { return c.Type != r.Type && c.Type != "" && !c.Environment() }) {
		return alt, false
	}
	// The ids alt grants of the type; its other conditions only narrow them.
	ids, ok := alt.IDsOf(r.Type)
	if !ok {
		return alt, false // every instance, a path, an attribute: not an instance grant
	}
	idAt := slices.IndexFunc(alt, func(c policyexpr.Condition) bool { _, isID := c.IDs(); return isID })
	var left []string
	for _, id := range ids {
		if _, mine := r.Instances[id]; !mine || !s.underOf(id, alt) {
			left = append(left, id)
		}
	}
	if len(left) == 0 {
		return nil, false
	}
	out := slices.Clone(alt)
	out[idAt].Values = left
	if len(out) == 1 {
		return out, true
	}
	// Keep the id condition and what narrows it, less the other id conditions.
	narrowed := policyexpr.Alternative{out[idAt]}
	for i, c := range out {
		if _, isID := c.IDs(); i != idAt && (!isID || c.Type != r.Type) {
			narrowed = append(narrowed, c)
		}
	}
	return narrowed, false
}

// underOf reports whether the shape grants id the way alt holds it: anywhere for a plain id; for
// an id granted under ancestors, only where alt keeps it under them (a path condition whose every
// prefix lies within theirs).
func (s shape) underOf(id string, alt policyexpr.Alternative) bool {
	path := s.under[id]
	if path == "" {
		return true
	}
	for _, c := range alt {
		if prefixes, ok := c.Prefixes(); ok && !slices.ContainsFunc(prefixes, func(p string) bool { return !strings.HasPrefix(p, path) }) {
			return true
		}
	}
	// A bare id is the instance itself: the ignore_iam_path collapse stores a creator's path
	// grant so, and IAM then allows it anywhere.
	return len(alt) == 1
}

// uncoveredCombination is uncovered for a combined grant: alt is covered when it names, for
// every type of the grant, ids among the grant's (the grant holds their product), and no other
// type.
func (s shape) uncoveredCombination(alt policyexpr.Alternative) policyexpr.Alternative {
	for _, typ := range alt.Types() {
		if !slices.ContainsFunc(s.resources, func(r grantplan.Resource) bool { return r.Type == typ }) {
			return alt
		}
	}
	for _, r := range s.resources {
		found := false
		for _, c := range alt {
			ids, ok := c.IDs()
			if !ok || c.Type != r.Type {
				continue
			}
			found = true
			for _, id := range ids {
				if _, mine := r.Instances[id]; !mine {
					return alt
				}
			}
		}
		if !found {
			return alt
		}
	}
	return nil
}

// unique sorts and compacts ss.
func unique(ss []string) []string {
	slices.Sort(ss)
	return slices.Compact(ss)
}
