// Package grantplan computes the batch calls that turn one desired IAM
// grant into another: pure functions, no I/O, no Terraform.
//
// IAM keeps one policy per (subject, system, action). A batch_instance call
// grants or revokes a set of actions over the same resource entries, each
// entry holding at most a server-set number of instances (200 on grant,
// 1000 on revoke by default). The planner sends only what changed, in the
// fewest calls those limits allow, and never a grant entry without
// instances: to IAM an empty instance list means every instance.
package grantplan

import (
	"errors"
	"fmt"
	"sort"
)

// Operation is what a call does.
type Operation string

const (
	OperationGrant  Operation = "grant"
	OperationRevoke Operation = "revoke"
)

// Resource is one resource entry of a grant: instances of one type, keyed
// by id, with their display names.
type Resource struct {
	System    string
	Type      string
	Instances map[string]string
}

// Grant is what one subject should hold in one system: every action over
// the product of the resource entries (one entry per resource type the
// actions relate to, in the actions' order; none for actions related to no
// type).
type Grant struct {
	Actions   []string
	Resources []Resource
	// ExpiresAt is the expiry in unix seconds that grants send.
	ExpiresAt int64
}

// Instance is an instance as sent.
type Instance struct {
	ID   string
	Name string
}

// CallResource is a resource entry as sent, instances sorted by id.
type CallResource struct {
	System    string
	Type      string
	Instances []Instance
}

// Call is one batch_instance request.
type Call struct {
	Operation Operation
	// Actions is sorted; a call carries every action that shares its
	// instances, so that no call is split by action.
	Actions   []string
	Resources []CallResource
	// ExpiresAt is set on grants only.
	ExpiresAt int64
}

// InstanceCount is the number of instances the call names, over all entries.
func (c Call) InstanceCount() int {
	n := 0
	for _, r := range c.Resources {
		n += len(r.Instances)
	}
	return n
}

// Limits bound the instances of one resource entry in one call.
type Limits struct {
	Grant  int
	Revoke int
}

// ErrEmptyInstances reports a grant with a resource entry that has no
// instances. The planner refuses it rather than send it: IAM reads an
// empty instance list as "every instance".
var ErrEmptyInstances = errors.New("a resource entry has no instances; IAM would read that as every instance")

// Plan returns the calls that turn old into next, grants before revokes
// wherever that is safe, so that a change never opens a window without the
// access both sides agree on. old == nil plans a create, next == nil a
// delete. Actions are a set; display names of kept instances are not
// compared, as IAM keeps the name it was first given.
func Plan(old, next *Grant, limits Limits) ([]Call, error) {
	if limits.Grant < 1 || limits.Revoke < 1 {
		return nil, fmt.Errorf("grantplan: limits must be at least 1, got grant %d, revoke %d", limits.Grant, limits.Revoke)
	}
	for _, g := range []*Grant{old, next} {
		if err := g.check(); err != nil {
			return nil, err
		}
	}
	p := planner{limits: limits}
	switch {
	case old == nil && next == nil:
	case old == nil:
		p.grant(next.Actions, next.Resources, next.ExpiresAt)
	case next == nil:
		p.revoke(old.Actions, old.Resources)
	default:
		p.update(old, next)
	}
	if err := p.verify(); err != nil {
		return nil, err
	}
	return p.calls, nil
}

// check rejects what must never reach IAM.
func (g *Grant) check() error {
	if g == nil {
		return nil
	}
	if len(g.Actions) == 0 {
		return errors.New("grantplan: a grant needs at least one action")
	}
	for _, r := range g.Resources {
		if len(r.Instances) == 0 {
			return fmt.Errorf("grantplan: resource %s/%s: %w", r.System, r.Type, ErrEmptyInstances)
		}
	}
	return nil
}

type planner struct {
	limits Limits
	calls  []Call
}

func (p *planner) update(old, next *Grant) {
	kept, added, removed := diffStrings(old.Actions, next.Actions)
	sameShape := shape(old.Resources) == shape(next.Resources)
	combined := len(old.Resources) > 1 || len(next.Resources) > 1
	instancesChanged := !sameShape || !sameInstanceIDs(old.Resources, next.Resources)

	switch {
	case next.ExpiresAt < old.ExpiresAt, combined && instancesChanged:
		// IAM only ever raises an expiry, so lowering one means revoking
		// first. A combined-resource revoke removes the requested paths
		// from every stored combination it overlaps, which would cut into
		// a new combination granted before it: revoke first there too.
		p.revoke(old.Actions, old.Resources)
		p.grant(next.Actions, next.Resources, next.ExpiresAt)
		return
	case !sameShape:
		// Different resource types cannot overlap: grant first.
		p.grant(next.Actions, next.Resources, next.ExpiresAt)
		p.revoke(old.Actions, old.Resources)
		return
	}

	if next.ExpiresAt > old.ExpiresAt {
		// Every kept policy must carry the new expiry: grant everything.
		p.grant(next.Actions, next.Resources, next.ExpiresAt)
	} else {
		p.grant(added, next.Resources, next.ExpiresAt)
		if len(next.Resources) == 1 && len(kept) > 0 {
			p.grant(kept, resourceDelta(next.Resources, old.Resources), next.ExpiresAt)
		}
	}
	p.revoke(removed, old.Resources)
	if len(old.Resources) == 1 && len(kept) > 0 {
		p.revoke(kept, resourceDelta(old.Resources, next.Resources))
	}
}

// grant appends the grant calls for actions over the product of resources.
func (p *planner) grant(actions []string, resources []Resource, expiresAt int64) {
	p.add(OperationGrant, actions, resources, expiresAt, p.limits.Grant)
}

func (p *planner) revoke(actions []string, resources []Resource) {
	p.add(OperationRevoke, actions, resources, 0, p.limits.Revoke)
}

// add splits one (actions, resources) group into calls of at most limit
// instances per entry. A multi-entry group is the product of its entries,
// and the product of the chunks covers it exactly, so it is split into the
// product of the entries' chunks.
func (p *planner) add(op Operation, actions []string, resources []Resource, expiresAt int64, limit int) {
	if len(actions) == 0 {
		return
	}
	chunked := make([][][]Instance, len(resources))
	for i, r := range resources {
		if len(r.Instances) == 0 {
			// Nothing of this entry to send: the product is empty.
			return
		}
		chunked[i] = Chunk(sortedInstances(r.Instances), limit)
	}
	sortedActions := uniqueSorted(actions)

	// Walk the product of the chunk lists like an odometer.
	index := make([]int, len(resources))
	for {
		call := Call{Operation: op, Actions: sortedActions, Resources: make([]CallResource, len(resources))}
		if op == OperationGrant {
			call.ExpiresAt = expiresAt
		}
		for i, r := range resources {
			call.Resources[i] = CallResource{System: r.System, Type: r.Type, Instances: chunked[i][index[i]]}
		}
		p.calls = append(p.calls, call)

		i := len(index) - 1
		for ; i >= 0; i-- {
			index[i]++
			if index[i] < len(chunked[i]) {
				break
			}
			index[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// verify is the last guard before anything is sent: no grant entry
// without instances and no entry over its limit, whatever the inputs.
func (p *planner) verify() error {
	for i, c := range p.calls {
		limit := p.limits.Revoke
		if c.Operation == OperationGrant {
			limit = p.limits.Grant
		}
		for _, r := range c.Resources {
			if len(r.Instances) == 0 {
				return fmt.Errorf("grantplan: bug: call %d (%s) has an empty %s/%s entry: %w", i+1, c.Operation, r.System, r.Type, ErrEmptyInstances)
			}
			if len(r.Instances) > limit {
				return fmt.Errorf("grantplan: bug: call %d (%s) has %d instances of %s/%s, over the limit %d", i+1, c.Operation, len(r.Instances), r.System, r.Type, limit)
			}
		}
	}
	return nil
}

// Chunk splits items into consecutive slices of at most size items.
func Chunk[T any](items []T, size int) [][]T {
	if size < 1 {
		panic("grantplan: chunk size must be at least 1")
	}
	chunks := make([][]T, 0, (len(items)+size-1)/size)
	for len(items) > size {
		chunks = append(chunks, items[:size:size])
		items = items[size:]
	}
	if len(items) > 0 {
		chunks = append(chunks, items)
	}
	return chunks
}

// CallCount is the number of calls Plan uses for a group of entries of the
// given sizes: the lower bound, the product of ceil(size / limit).
func CallCount(sizes []int, limit int) int {
	n := 1
	for _, s := range sizes {
		n *= (s + limit - 1) / limit
	}
	return n
}

func sortedInstances(m map[string]string) []Instance {
	out := make([]Instance, 0, len(m))
	for id, name := range m {
		out = append(out, Instance{ID: id, Name: name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// resourceDelta returns, entry by entry, the instances of a not in b.
// Callers use it only for single-entry grants of the same shape.
func resourceDelta(a, b []Resource) []Resource {
	out := make([]Resource, len(a))
	for i, r := range a {
		delta := map[string]string{}
		for id, name := range r.Instances {
			if _, ok := b[i].Instances[id]; !ok {
				delta[id] = name
			}
		}
		out[i] = Resource{System: r.System, Type: r.Type, Instances: delta}
	}
	return out
}

// shape identifies the resource types of a grant, in order.
func shape(resources []Resource) string {
	s := ""
	for _, r := range resources {
		s += r.System + "\x00" + r.Type + "\x01"
	}
	return s
}

func sameInstanceIDs(a, b []Resource) bool {
	for i := range a {
		if len(a[i].Instances) != len(b[i].Instances) {
			return false
		}
		for id := range a[i].Instances {
			if _, ok := b[i].Instances[id]; !ok {
				return false
			}
		}
	}
	return true
}

func uniqueSorted(items []string) []string {
	seen := make(map[string]bool, len(items))
	out := make([]string, 0, len(items))
	for _, s := range items {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// diffStrings returns the strings in both, only in b, and only in a.
func diffStrings(a, b []string) (both, added, removed []string) {
	inA := make(map[string]bool, len(a))
	for _, s := range a {
		inA[s] = true
	}
	inB := make(map[string]bool, len(b))
	for _, s := range b {
		if inB[s] {
			continue
		}
		inB[s] = true
		if inA[s] {
			both = append(both, s)
		} else {
			added = append(added, s)
		}
	}
	for s := range inA {
		if !inB[s] {
			removed = append(removed, s)
		}
	}
	sort.Strings(both)
	sort.Strings(added)
	sort.Strings(removed)
	return both, added, removed
}
