package grantplan

import (
	"maps"
	"slices"
	"strings"
)

// Holding is what one action holds on the server, as far as its resource
// knows: exactly, except where Partial says it is only an upper bound.
type Holding struct {
	// Resources are the held instances, one entry per resource type; none
	// for an action related to no type.
	Resources []Resource
	ExpiresAt int64
	// Partial marks a holding known only as an upper bound: the action
	// holds at most Resources, maybe less. A grant whose answer never came
	// leaves it (ApplyUncertain), and so does a failed run over a combined
	// resource, which IAM stores as separate groups that calls add and cut
	// and one product cannot describe. The planner grants such a holding
	// again in full (a combination after revoking it whole).
	Partial bool
}

// Holdings maps action ids to what they hold.
type Holdings map[string]Holding

// Held returns the holdings of a grant applied in full.
func Held(g *Grant) Holdings {
	h := Holdings{}
	if g == nil {
		return h
	}
	for _, action := range g.Actions {
		h[action] = Holding{Resources: cloneResources(g.Resources), ExpiresAt: g.ExpiresAt}
	}
	return h
}

// Apply records a call that IAM answered with success, with IAM's rules: a
// grant merges instances and only ever raises the expiry; a revoke removes
// instances, and a policy left empty is gone.
func (h Holdings) Apply(c Call) {
	for _, action := range c.Actions {
		old, held := h[action]
		switch c.Operation {
		case OperationGrant:
			h[action] = granted(old, held, c)
		case OperationRevoke:
			if !held {
				continue
			}
			if next, left := revoked(old, c); left {
				h[action] = next
			} else {
				delete(h, action)
			}
		}
	}
}

// ApplyUncertain records a call whose outcome is unknown (the request was
// sent but no answer came). A grant is recorded as held, so that a
// destroy revokes it, and in doubt, so that the next plan sends it again.
// A revoke leaves the holding as it was, and in doubt too: IAM may no
// longer hold what it names, so the holding is only an upper bound, and
// the next plan revokes again what is unwanted and grants again what is
// wanted. Left exact, it would hide a revoke IAM carried out: a later
// configuration that grants those instances again would send nothing.
func (h Holdings) ApplyUncertain(c Call) {
	if c.Operation == OperationGrant {
		h.Apply(c)
	}
	for _, action := range c.Actions {
		held, ok := h[action]
		if !ok {
			continue
		}
		held.Partial = true
		h[action] = held
	}
}

func granted(old Holding, held bool, c Call) Holding {
	combined := len(c.Resources) > 1
	if !held || shape(old.Resources) != callShape(c.Resources) {
		// A new policy (or one this resource never saw with these types,
		// which IAM would have refused).
		next := Holding{ExpiresAt: c.ExpiresAt, Partial: combined}
		if held {
			next.ExpiresAt = max(old.ExpiresAt, c.ExpiresAt)
		}
		for _, r := range c.Resources {
			next.Resources = append(next.Resources, Resource{System: r.System, Type: r.Type, Instances: instanceMap(r.Instances)})
		}
		return next
	}
	next := Holding{Resources: cloneResources(old.Resources), ExpiresAt: max(old.ExpiresAt, c.ExpiresAt), Partial: old.Partial || combined}
	for i, r := range c.Resources {
		for _, in := range r.Instances {
			if _, ok := next.Resources[i].Instances[in.ID]; !ok {
				next.Resources[i].Instances[in.ID] = in.Name
			}
		}
	}
	return next
}

// revoked reports what is left after a revoke, and whether anything is.
func revoked(old Holding, c Call) (Holding, bool) {
	switch {
	case len(c.Resources) == 0:
		return Holding{}, false
	case len(c.Resources) > 1 || len(old.Resources) != 1 || callShape(c.Resources) != shape(old.Resources):
		// What a combined revoke leaves depends on how IAM grouped the
		// grants: keep the upper bound, marked partial.
		next := old
		next.Partial = true
		return next, true
	}
	next := Holding{Resources: cloneResources(old.Resources), ExpiresAt: old.ExpiresAt, Partial: old.Partial}
	for _, in := range c.Resources[0].Instances {
		delete(next.Resources[0].Instances, in.ID)
	}
	return next, len(next.Resources[0].Instances) > 0
}

// View returns the one grant that Terraform's state shows for the holdings
// when next was wanted (nil: nothing). It is next itself when the holdings
// are exactly next; otherwise it is as close to the holdings as one grant
// can be while still differing from next, so that the next plan shows a
// change and the next apply completes the rest. shape supplies the
// resource types when no action is held. Whether the view describes the
// holdings exactly is Held(&view).Equal(h).
func (h Holdings) View(next *Grant, shape []Resource) Grant {
	if next != nil && h.Equal(Held(next)) {
		return Grant{Actions: uniqueSorted(next.Actions), Resources: cloneResources(next.Resources), ExpiresAt: next.ExpiresAt}
	}
	// A partial holding of a wanted action is left out of the view (the
	// action shows as missing); one of an unwanted action is kept in (it
	// shows as to be removed). Either way the view differs from next.
	var actions []string
	for _, action := range h.actions() {
		if !h[action].Partial || next == nil || !contains(next.Actions, action) {
			actions = append(actions, action)
		}
	}
	union := h.combine(actions, shape, true)
	if next == nil || differs(union, next) {
		return union
	}
	if intersection := h.combine(actions, shape, false); differs(intersection, next) {
		return intersection
	}
	// Same actions and instances: some action's expiry is not next's.
	for _, action := range actions {
		if exp := h[action].ExpiresAt; exp != next.ExpiresAt {
			union.ExpiresAt = exp
			break
		}
	}
	return union
}

// UpperBound is the one grant that covers everything the holdings may
// hold: every action, doubtful ones included, over the union of their
// instances, entry by entry. It is the state a failed create shows:
// Terraform replaces a tainted resource without handing its private state
// to the destroy, which then revokes what the public state shows, and so
// must see every grant the create may have made. For a create, every
// holding is part of the wanted grant, so the bound revokes nothing the
// configuration did not ask to grant.
func (h Holdings) UpperBound(shape []Resource) Grant {
	return h.combine(h.actions(), shape, true)
}

// combine describes the given actions' holdings as one grant: the union
// (or the intersection) of their instances, entry by entry, and the
// earliest expiry.
func (h Holdings) combine(actions []string, shape []Resource, union bool) Grant {
	view := Grant{Actions: actions}
	for i, action := range actions {
		held := h[action]
		if i == 0 {
			view.Resources = cloneResources(held.Resources)
			view.ExpiresAt = held.ExpiresAt
			continue
		}
		view.ExpiresAt = min(view.ExpiresAt, held.ExpiresAt)
		for j := range view.Resources {
			if j >= len(held.Resources) {
				break
			}
			mine, theirs := view.Resources[j].Instances, held.Resources[j].Instances
			if union {
				for id, name := range theirs {
					if _, ok := mine[id]; !ok {
						mine[id] = name
					}
				}
				continue
			}
			for id := range mine {
				if _, ok := theirs[id]; !ok {
					delete(mine, id)
				}
			}
		}
	}
	if len(actions) == 0 {
		for _, r := range shape {
			view.Resources = append(view.Resources, Resource{System: r.System, Type: r.Type, Instances: map[string]string{}})
		}
	}
	return view
}

// differs reports whether Terraform sees a change between a state holding
// view and a configuration asking for next.
func differs(view Grant, next *Grant) bool {
	if strings.Join(uniqueSorted(view.Actions), ",") != strings.Join(uniqueSorted(next.Actions), ",") ||
		view.ExpiresAt != next.ExpiresAt || shape(view.Resources) != shape(next.Resources) {
		return true
	}
	return !sameInstanceIDs(view.Resources, next.Resources)
}

// Equal reports whether two holdings hold the same: the same actions, each
// with the same instance ids, expiry and partial mark. Names are not
// compared: IAM keeps the first name it was given.
func (h Holdings) Equal(o Holdings) bool {
	if len(h) != len(o) {
		return false
	}
	for action, a := range h {
		b, ok := o[action]
		if !ok || a.ExpiresAt != b.ExpiresAt || a.Partial != b.Partial ||
			shape(a.Resources) != shape(b.Resources) || !sameInstanceIDs(a.Resources, b.Resources) {
			return false
		}
	}
	return true
}

func (h Holdings) actions() []string { return slices.Sorted(maps.Keys(h)) }

func callShape(resources []CallResource) string {
	rs := make([]Resource, len(resources))
	for i, r := range resources {
		rs[i] = Resource{System: r.System, Type: r.Type}
	}
	return shape(rs)
}

func instanceMap(instances []Instance) map[string]string {
	m := make(map[string]string, len(instances))
	for _, in := range instances {
		m[in.ID] = in.Name
	}
	return m
}

func cloneResources(rs []Resource) []Resource {
	if rs == nil {
		return nil
	}
	out := make([]Resource, len(rs))
	for i, r := range rs {
		out[i] = Resource{System: r.System, Type: r.Type, Instances: maps.Clone(r.Instances)}
	}
	return out
}
