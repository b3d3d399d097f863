package grantplan

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Creator grants (batch_resource_creator_action) register a user as the
// creator of instances; IAM grants the creator the actions the system
// configured for the type, on each instance's path: its ancestors, then
// the instance. IAM has no creator revoke: undoing one is a batch_path
// revoke of each path, for the actions the grant reported. So a creator
// grant holds a set of paths, and a plan is: creator-grant the wanted
// instances whose path is not held, then revoke the held paths no longer
// wanted. A moved instance (new ancestors) is granted at its new path
// before its old one is revoked.

// Node is one ancestor of a created instance.
type Node struct {
	System string
	Type   string
	ID     string
}

// CreatorInstance is an instance with its creator, as configured.
type CreatorInstance struct {
	ID        string
	Name      string
	Ancestors []Node
}

// Path renders the instance's path in IAM's form, "/system,type,id/…/".
func (c CreatorInstance) Path(system, typ string) string {
	var b strings.Builder
	b.WriteByte('/')
	for _, a := range c.Ancestors {
		fmt.Fprintf(&b, "%s,%s,%s/", a.System, a.Type, a.ID)
	}
	fmt.Fprintf(&b, "%s,%s,%s/", system, typ, c.ID)
	return b.String()
}

// CreatorTarget names what a creator grant is for.
type CreatorTarget struct {
	System string
	Type   string
}

// CreatorHolding is one path a creator holds.
type CreatorHolding struct {
	Instance CreatorInstance
	// Doubt marks a path whose creator grant got no answer: it may be
	// held (a destroy revokes it) or not (the next plan grants it again).
	Doubt bool
}

// CreatorHoldings maps paths to what is held there.
type CreatorHoldings map[string]CreatorHolding

// CreatorCall is one call: a creator grant of Instances, or a batch_path
// revoke of their paths.
type CreatorCall struct {
	Operation Operation
	Instances []CreatorInstance
}

// CreatorHeld returns the holdings of instances granted in full.
func CreatorHeld(t CreatorTarget, instances map[string]CreatorInstance) CreatorHoldings {
	h := CreatorHoldings{}
	for _, in := range instances {
		h[in.Path(t.System, t.Type)] = CreatorHolding{Instance: in}
	}
	return h
}

// PlanCreator returns the calls that turn what is held into next (nil:
// nothing), grants first unless they would cross limits.Policy, each call
// within its limit. next maps instance ids to instances.
func PlanCreator(t CreatorTarget, held CreatorHoldings, next map[string]CreatorInstance, limits Limits) ([]CreatorCall, error) {
	if limits.Grant < 1 || limits.Revoke < 1 {
		return nil, fmt.Errorf("grantplan: limits must be at least 1, got grant %d, revoke %d", limits.Grant, limits.Revoke)
	}
	if next != nil && len(next) == 0 {
		return nil, fmt.Errorf("grantplan: creator grant of %s/%s: %w", t.System, t.Type, ErrEmptyInstances)
	}
	wanted := CreatorHeld(t, next)
	var grants, revokes []CreatorInstance
	for _, path := range sortedPaths(wanted) {
		if h, ok := held[path]; !ok || h.Doubt {
			grants = append(grants, wanted[path].Instance)
		}
	}
	for _, path := range sortedPaths(held) {
		if _, ok := wanted[path]; !ok {
			revokes = append(revokes, held[path].Instance)
		}
	}
	var grantCalls, revokeCalls []CreatorCall
	for _, chunk := range Chunk(grants, limits.Grant) {
		grantCalls = append(grantCalls, CreatorCall{Operation: OperationGrant, Instances: chunk})
	}
	for _, chunk := range Chunk(revokes, limits.Revoke) {
		revokeCalls = append(revokeCalls, CreatorCall{Operation: OperationRevoke, Instances: chunk})
	}
	if limits.Policy > 0 && len(held)+len(grants) > limits.Policy {
		// Granting first would push the creator's policies past IAM's
		// per-policy limit; the revokes only take away unwanted paths.
		return append(revokeCalls, grantCalls...), nil
	}
	return append(grantCalls, revokeCalls...), nil
}

// Apply records a call IAM answered with success.
func (h CreatorHoldings) Apply(t CreatorTarget, c CreatorCall) {
	for _, in := range c.Instances {
		path := in.Path(t.System, t.Type)
		if c.Operation == OperationGrant {
			h[path] = CreatorHolding{Instance: in}
		} else {
			delete(h, path)
		}
	}
}

// ApplyUncertain records a call that got no answer: a grant's paths as
// held in doubt (unless already held for sure); a revoke's paths stay
// held, in doubt, as IAM may have revoked them: the next plan revokes
// them again if unwanted, and grants them again if wanted. Left held for
// sure, a revoke IAM carried out would hide from a configuration that
// wants the paths back.
func (h CreatorHoldings) ApplyUncertain(t CreatorTarget, c CreatorCall) {
	if c.Operation != OperationGrant {
		for _, in := range c.Instances {
			path := in.Path(t.System, t.Type)
			if old, ok := h[path]; ok {
				old.Doubt = true
				h[path] = old
			}
		}
		return
	}
	for _, in := range c.Instances {
		path := in.Path(t.System, t.Type)
		if old, ok := h[path]; !ok || old.Doubt {
			h[path] = CreatorHolding{Instance: in, Doubt: true}
		}
	}
}

// View returns the instances that Terraform's state shows for the
// holdings when next was wanted (nil: nothing): next itself when the
// holdings are exactly next, otherwise a map that is as close to the
// holdings as one instance per id allows while still differing from next,
// so the next plan shows a change. It also reports whether the map
// describes the holdings exactly.
func (h CreatorHoldings) View(t CreatorTarget, next map[string]CreatorInstance) (map[string]CreatorInstance, bool) {
	byID := map[string][]CreatorHolding{}
	for _, path := range sortedPaths(h) {
		held := h[path]
		byID[held.Instance.ID] = append(byID[held.Instance.ID], held)
	}
	view := map[string]CreatorInstance{}
	exact := true
	for id, candidates := range byID {
		want, wanted := next[id]
		var pick *CreatorHolding
		for i := range candidates {
			c := &candidates[i]
			switch {
			case c.Doubt && wanted && c.Instance.Path(t.System, t.Type) == want.Path(t.System, t.Type):
				// Leave it out: the plan shows it being granted again. (In
				// doubt at another path, after a revoke that got no answer,
				// it is shown like any other path that differs.)
				continue
			case pick == nil:
				pick = c
			case wanted && pick.Instance.Path(t.System, t.Type) == want.Path(t.System, t.Type):
				// A moved instance halfway: show the path that differs.
				pick = c
			}
		}
		if len(candidates) != 1 || candidates[0].Doubt {
			exact = false
		}
		if pick != nil {
			view[id] = pick.Instance
		}
	}
	return view, exact
}

// UpperBound is every path the holdings may hold, doubtful ones included,
// by instance id, and whether that map describes the holdings exactly:
// the state a failed create shows (see Holdings.UpperBound), so that the
// destroy of the tainted resource revokes every path the create may have
// registered.
func (h CreatorHoldings) UpperBound() (map[string]CreatorInstance, bool) {
	out := map[string]CreatorInstance{}
	exact := true
	for _, path := range sortedPaths(h) {
		held := h[path]
		if _, dup := out[held.Instance.ID]; dup || held.Doubt {
			exact = false
		}
		if _, dup := out[held.Instance.ID]; !dup {
			out[held.Instance.ID] = held.Instance
		}
	}
	return out, exact
}

// Equal reports whether two holdings hold the same paths, with the same doubt.
func (h CreatorHoldings) Equal(o CreatorHoldings) bool {
	if len(h) != len(o) {
		return false
	}
	for path, a := range h {
		if b, ok := o[path]; !ok || a.Doubt != b.Doubt {
			return false
		}
	}
	return true
}

func sortedPaths(h CreatorHoldings) []string { return slices.Sorted(maps.Keys(h)) }
