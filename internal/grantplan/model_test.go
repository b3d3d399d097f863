package grantplan

import (
	"fmt"
	"sort"
	"strings"
)

// store models what IAM keeps for one subject in one system, as the
// sandbox (internal/sandbox) keeps it: one policy per action; a
// single-type policy is a set of instances that grants merge into and
// revokes subtract from; a combined-resource policy is a list of groups
// (one per grant, identical groups not repeated), and a revoke removes the
// requested instances from every group that it overlaps in every type,
// dropping a group left with an empty type; a policy emptied by a revoke
// is deleted; a grant only ever raises the expiry.
type store map[string]*policy

// policyLimit, when set, is IAM's bound on the instances of one type in
// one policy after a grant; a grant past it is refused (the model panics,
// as no plan may send one).
var policyLimit int

type policy struct {
	any       bool                           // granted with no resource type
	groups    []map[string]map[string]string // type key → instance id → name
	expiresAt int64
}

func typeKey(system, typ string) string { return system + "/" + typ }

func (s store) apply(c Call) {
	for _, action := range c.Actions {
		switch c.Operation {
		case OperationGrant:
			s.grant(action, c)
		case OperationRevoke:
			s.revoke(action, c)
		}
	}
}

func (s store) grant(action string, c Call) {
	p := s[action]
	if p == nil {
		p = &policy{expiresAt: c.ExpiresAt}
		s[action] = p
	}
	if c.ExpiresAt > p.expiresAt {
		p.expiresAt = c.ExpiresAt
	}
	switch len(c.Resources) {
	case 0:
		p.any = true
	case 1:
		if len(p.groups) == 0 {
			p.groups = []map[string]map[string]string{{}}
		}
		merge(p.groups[0], c.Resources[0])
		for key, ids := range p.groups[0] {
			if policyLimit > 0 && len(ids) > policyLimit {
				panic(fmt.Sprintf("a grant of %s leaves %d %s instances in its policy, over IAM's limit %d", action, len(ids), key, policyLimit))
			}
		}
	default:
		group := map[string]map[string]string{}
		for _, r := range c.Resources {
			merge(group, r)
		}
		for _, g := range p.groups {
			if groupKey(g) == groupKey(group) {
				return
			}
		}
		p.groups = append(p.groups, group)
	}
}

func merge(group map[string]map[string]string, r CallResource) {
	key := typeKey(r.System, r.Type)
	if group[key] == nil {
		group[key] = map[string]string{}
	}
	for _, in := range r.Instances {
		if _, ok := group[key][in.ID]; !ok {
			group[key][in.ID] = in.Name // IAM keeps the first name
		}
	}
}

func (s store) revoke(action string, c Call) {
	p := s[action]
	if p == nil {
		return // revoking what was never granted is silently fine
	}
	if len(c.Resources) == 0 {
		delete(s, action)
		return
	}
	var kept []map[string]map[string]string
	for _, g := range p.groups {
		overlaps := len(c.Resources) == len(g)
		for _, r := range c.Resources {
			if !overlaps {
				break
			}
			overlaps = false
			for _, in := range r.Instances {
				if _, ok := g[typeKey(r.System, r.Type)][in.ID]; ok {
					overlaps = true
					break
				}
			}
		}
		if overlaps {
			emptied := false
			for _, r := range c.Resources {
				for _, in := range r.Instances {
					delete(g[typeKey(r.System, r.Type)], in.ID)
				}
				if len(g[typeKey(r.System, r.Type)]) == 0 {
					emptied = true
				}
			}
			if emptied {
				continue
			}
		}
		kept = append(kept, g)
	}
	p.groups = kept
	if len(p.groups) == 0 && !p.any {
		delete(s, action)
	}
}

// holdings renders what the store grants, independent of how it was
// split into groups: per action, its expiry and the sorted set of
// instance tuples (one instance per type) the policy covers.
func (s store) holdings() map[string]string {
	out := map[string]string{}
	for action, p := range s {
		tuples := map[string]bool{}
		for _, g := range p.groups {
			for _, t := range product(g) {
				tuples[t] = true
			}
		}
		list := make([]string, 0, len(tuples))
		for t := range tuples {
			list = append(list, t)
		}
		sort.Strings(list)
		out[action] = fmt.Sprintf("any=%v exp=%d %s", p.any, p.expiresAt, strings.Join(list, " "))
	}
	return out
}

// product lists the instance tuples of a group, with names, so that a
// rename that was wrongly sent would show.
func product(g map[string]map[string]string) []string {
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tuples := []string{""}
	for _, k := range keys {
		var next []string
		for _, t := range tuples {
			for id := range g[k] {
				next = append(next, t+"|"+k+":"+id)
			}
		}
		tuples = next
	}
	return tuples
}

// groupKey identifies a group by its instance sets, type by type.
func groupKey(g map[string]map[string]string) string {
	keys := make([]string, 0, len(g))
	for k, ids := range g {
		list := make([]string, 0, len(ids))
		for id := range ids {
			list = append(list, id)
		}
		sort.Strings(list)
		keys = append(keys, k+"="+strings.Join(list, ","))
	}
	sort.Strings(keys)
	return strings.Join(keys, ";")
}

// expected is what the store should hold for a grant: every action over
// the product of its entries.
func expected(g *Grant) map[string]string {
	return heldTuples(Held(g))
}
