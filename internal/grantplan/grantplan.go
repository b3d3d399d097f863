// Package grantplan computes the batch calls that turn what a subject holds
// into what it should hold: pure functions, no I/O, no Terraform.
//
// IAM keeps one policy per (subject, system, action). A batch_instance call
// grants or revokes a set of actions over the same resource entries, each
// entry holding at most a server-set number of instances (200 on grant,
// 1000 on revoke by default). The planner diffs action by action, then
// merges the actions that need the same instances into one call, so it
// sends only what changed, in the fewest calls those limits allow; and it
// never sends a grant entry without instances, which IAM would read as
// every instance.
//
// What is held is tracked as Holdings, action by action, rather than as one
// Grant, because a run that fails midway leaves actions holding different
// instances; Apply records each successful call, so that the next plan
// starts from exactly what the server holds.
package grantplan

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Operation is what a call does.
type Operation string

const (
	OperationGrant  Operation = "grant"
	OperationRevoke Operation = "revoke"
)

// Resource is one resource entry: instances of one type, keyed by id, with
// their display names.
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
	// Actions is sorted. A call carries every action that needs the same
	// instances, so that calls are split only by the instance limits.
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
	// Policy bounds the instances of one type in one policy after a grant
	// merges into it (IAM's default is 10000); 0 for no bound. Where a
	// grant before the revokes would cross it, the revokes go first: they
	// only take away what is no longer wanted, so no access that both
	// sides agree on lapses.
	Policy int
}

// ErrEmptyInstances reports a grant with a resource entry that has no
// instances. The planner refuses it rather than send it: IAM reads an
// empty instance list as "every instance".
var ErrEmptyInstances = errors.New("a resource entry has no instances; IAM would read that as every instance")

// Plan returns the calls that turn what is held into next (nil: nothing).
// Grants go before revokes, so that a change never opens a window without
// the access both sides agree on, except where IAM forces the other order:
// an expiry can only be lowered by revoking first, and a combined-resource
// revoke cuts into every stored combination it overlaps, including one
// just granted. Display names of kept instances are not compared: IAM
// keeps the name it was first given.
//
// A later expiry (a renewal) is not a grant of everything again: IAM keeps
// one expiry per policy and raises it, for everything the policy holds, on
// any grant into it with a later expired_at, even one of what it already
// holds. So an action known to hold exactly its instances gets the new
// expiry from the grant of what it lacks, or, lacking nothing, rides along
// the first grant the plan sends anyway, or else is granted one instance
// it holds (the smallest id; one combination of them for a combined
// resource): one call per group of actions. What IAM no longer holds of
// the instances the holdings name is not sent again: only what the
// holdings lack is. A holding in doubt (Partial) is granted whole.
func Plan(held Holdings, next *Grant, limits Limits) ([]Call, error) {
	if limits.Grant < 1 || limits.Revoke < 1 {
		return nil, fmt.Errorf("grantplan: limits must be at least 1, got grant %d, revoke %d", limits.Grant, limits.Revoke)
	}
	if err := next.check(); err != nil {
		return nil, err
	}
	p := planner{policyLimit: limits.Policy}
	if next != nil {
		for _, action := range uniqueSorted(next.Actions) {
			h, ok := held[action]
			p.action(action, h, ok, next)
		}
		p.placeRaises(next)
	}
	for _, action := range held.actions() {
		if next == nil || !contains(next.Actions, action) {
			p.add(phaseRevoke, action, OperationRevoke, held[action].Resources, 0)
		}
	}
	calls := p.calls(limits)
	if err := verify(calls, limits); err != nil {
		return nil, err
	}
	return calls, nil
}

// check rejects a desired grant that must never reach IAM.
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

// The phases of a plan, in the order their calls are sent.
const (
	phaseRevokeFirst = iota // revokes that must precede a grant
	phaseGrant
	phaseRevoke
)

// planner collects per-action needs and merges those with the same
// operation, expiry and instances into one group of actions.
type planner struct {
	groups map[string]*group
	// policyLimit is Limits.Policy.
	policyLimit int
	// raises are the actions known exactly whose expiry next raises, with
	// what they lack of next's instances (placeRaises).
	raises []raise
}

type raise struct {
	action string
	lacks  []Resource
}

type group struct {
	phase     int
	op        Operation
	expiresAt int64
	resources []Resource
	actions   []string
	// riders are actions whose expiry the group's first call raises: they
	// hold every instance it names already (placeRaises).
	riders []string
	// set identifies what the group sends, phase aside.
	set string
}

// action plans one desired action against what it holds.
func (p *planner) action(action string, h Holding, held bool, next *Grant) {
	all := next.Resources
	exp := next.ExpiresAt
	switch {
	case !held:
		p.add(phaseGrant, action, OperationGrant, all, exp)
	case shape(h.Resources) != shape(all):
		// Different resource types cannot overlap: grant first.
		p.add(phaseGrant, action, OperationGrant, all, exp)
		p.add(phaseRevoke, action, OperationRevoke, h.Resources, 0)
	case h.ExpiresAt > exp, len(all) > 1 && (h.Partial || !sameInstanceIDs(h.Resources, all)):
		// IAM only ever raises an expiry, so lowering one means revoking
		// first; a changed combination is revoked first, see Plan.
		p.add(phaseRevokeFirst, action, OperationRevoke, h.Resources, 0)
		p.add(phaseGrant, action, OperationGrant, all, exp)
	case len(all) == 0:
		// No resource type: the one grant is the whole policy, needed for
		// a raised expiry or a holding in doubt.
		if h.ExpiresAt < exp || h.Partial {
			p.add(phaseGrant, action, OperationGrant, all, exp)
		}
	case len(all) > 1:
		// An unchanged combination, known exactly (a combination in doubt
		// is revoked and granted above): only a raised expiry needs a
		// call, which one combination it holds carries (placeRaises).
		if h.ExpiresAt < exp {
			p.raises = append(p.raises, raise{action: action})
		}
	case h.Partial:
		// The instances may be missing: grant them all (IAM ignores what
		// it already holds), with the expiry.
		p.add(phaseGrant, action, OperationGrant, all, exp)
		p.add(p.revokePhase(h, all), action, OperationRevoke, delta(h.Resources, all), 0)
	default:
		// Known exactly: grant what the action lacks. With a raised
		// expiry, that grant carries it to the whole policy, unless one
		// sent anyway can (placeRaises).
		lacks := delta(all, h.Resources)
		if h.ExpiresAt < exp {
			p.raises = append(p.raises, raise{action: action, lacks: lacks})
		} else {
			p.add(phaseGrant, action, OperationGrant, lacks, exp)
		}
		p.add(p.revokePhase(h, all), action, OperationRevoke, delta(h.Resources, all), 0)
	}
}

// placeRaises plans, once every action is planned, the raised expiry of
// the actions known exactly (raises). IAM raises a policy's expiry, for
// everything it holds, on any grant into it with a later expired_at, of
// instances it holds too. An action that lacks instances joins the grant
// of all of next's instances when another action sends it (no call more),
// or is granted what it lacks. One that lacks nothing, over one resource
// type, rides along the first call of the first grant the plan sends
// anyway, which names only next's instances, all held, at next's expiry;
// with none to ride, it is granted one instance, the smallest id: one call
// for all such actions. A combined resource that lacks nothing joins the
// grant of the whole combination, or else is granted one combination of
// the smallest ids, which a group IAM stores contains (a larger grant could
// store a new group beside IAM's, for a later revoke to cut into).
func (p *planner) placeRaises(next *Grant) {
	if len(p.raises) == 0 {
		return
	}
	all, exp := next.Resources, next.ExpiresAt
	whole := p.groups[callGroupKey(phaseGrant, setOf(OperationGrant, exp, all))]
	var rest []string
	for _, r := range p.raises {
		lacks := len(all) == 1 && len(r.lacks[0].Instances) > 0
		switch {
		case whole != nil && (lacks || len(all) > 1):
			whole.actions = append(whole.actions, r.action)
		case lacks:
			p.add(phaseGrant, r.action, OperationGrant, r.lacks, exp)
		default:
			rest = append(rest, r.action)
		}
	}
	if len(rest) == 0 {
		return
	}
	if len(all) == 1 {
		var first *group
		for _, g := range p.groups {
			if g.phase == phaseGrant && (first == nil || groupLess(g, first)) {
				first = g
			}
		}
		if first != nil {
			first.riders = append(first.riders, rest...)
			return
		}
	}
	one := make([]Resource, len(all))
	for i, r := range all {
		id := slices.Min(slices.Collect(maps.Keys(r.Instances)))
		one[i] = Resource{System: r.System, Type: r.Type, Instances: map[string]string{id: r.Instances[id]}}
	}
	for _, action := range rest {
		p.add(phaseGrant, action, OperationGrant, one, exp)
	}
}

// revokePhase places the revokes of a single-type action after its grants,
// unless the grants would first push the policy past IAM's per-policy
// limit: IAM would refuse them.
func (p *planner) revokePhase(h Holding, all []Resource) int {
	if p.policyLimit > 0 && len(h.Resources[0].Instances)+len(delta(all, h.Resources)[0].Instances) > p.policyLimit {
		return phaseRevokeFirst
	}
	return phaseRevoke
}

// add records that action needs op over the product of resources. An
// entry without instances makes the product empty: nothing to send.
func (p *planner) add(phase int, action string, op Operation, resources []Resource, exp int64) {
	for _, r := range resources {
		if len(r.Instances) == 0 {
			return
		}
	}
	if op == OperationRevoke {
		exp = 0
	}
	set := setOf(op, exp, resources)
	key := callGroupKey(phase, set)
	if p.groups == nil {
		p.groups = map[string]*group{}
	}
	g := p.groups[key]
	if g == nil {
		g = &group{phase: phase, op: op, expiresAt: exp, resources: resources, set: set}
		p.groups[key] = g
	}
	g.actions = append(g.actions, action)
}

// setOf identifies what a group sends: the operation, the expiry and the
// instances of each entry.
func setOf(op Operation, exp int64, resources []Resource) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%d", op, exp)
	for _, r := range resources {
		b.WriteString("|" + r.System + "/" + r.Type + ":")
		for i, id := range sortedIDs(r.Instances) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(id)) // quoted: an id may hold ","
		}
	}
	return b.String()
}

func callGroupKey(phase int, set string) string { return fmt.Sprintf("%d|%s", phase, set) }

// calls splits every group into calls of at most the limit per entry, in
// phase order. A multi-entry group is the product of its entries, and the
// product of the chunks covers it exactly.
func (p *planner) calls(limits Limits) []Call {
	// A late revoke only ever takes away what next does not want, so it may
	// as well ride along with an early revoke of the same instances.
	for key, g := range p.groups {
		if g.phase != phaseRevoke {
			continue
		}
		if early := p.groups[callGroupKey(phaseRevokeFirst, g.set)]; early != nil {
			early.actions = append(early.actions, g.actions...)
			delete(p.groups, key)
		}
	}
	groups := make([]*group, 0, len(p.groups))
	for _, g := range p.groups {
		sort.Strings(g.actions)
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool { return groupLess(groups[i], groups[j]) })
	var calls []Call
	for _, g := range groups {
		limit := limits.Revoke
		if g.op == OperationGrant {
			limit = limits.Grant
		}
		calls = appendProduct(calls, g, limit)
	}
	return calls
}

// groupLess orders groups as their calls are sent: by phase, then by
// actions and what they send.
func groupLess(a, b *group) bool {
	if a.phase != b.phase {
		return a.phase < b.phase
	}
	if x, y := strings.Join(uniqueSorted(a.actions), ","), strings.Join(uniqueSorted(b.actions), ","); x != y {
		return x < y
	}
	return a.set < b.set
}

func appendProduct(calls []Call, g *group, limit int) []Call {
	chunked := make([][][]Instance, len(g.resources))
	for i, r := range g.resources {
		chunked[i] = Chunk(sortedInstances(r.Instances), limit)
	}
	// Walk the product of the chunk lists like an odometer.
	index := make([]int, len(g.resources))
	first := true
	for {
		call := Call{Operation: g.op, Actions: g.actions, ExpiresAt: g.expiresAt, Resources: make([]CallResource, len(g.resources))}
		if first && len(g.riders) > 0 {
			call.Actions = uniqueSorted(slices.Concat(g.actions, g.riders))
		}
		first = false
		for i, r := range g.resources {
			call.Resources[i] = CallResource{System: r.System, Type: r.Type, Instances: chunked[i][index[i]]}
		}
		calls = append(calls, call)

		i := len(index) - 1
		for ; i >= 0; i-- {
			index[i]++
			if index[i] < len(chunked[i]) {
				break
			}
			index[i] = 0
		}
		if i < 0 {
			return calls
		}
	}
}

// verify is the last guard before anything is sent: no entry without
// instances and none over its limit, whatever the inputs.
func verify(calls []Call, limits Limits) error {
	for i, c := range calls {
		limit := limits.Revoke
		if c.Operation == OperationGrant {
			limit = limits.Grant
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

// CallCount is the number of calls one group with entries of the given
// sizes takes: the product of ceil(size / limit), the lower bound.
func CallCount(sizes []int, limit int) int {
	n := 1
	for _, s := range sizes {
		n *= (s + limit - 1) / limit
	}
	return n
}

func sortedIDs(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

func sortedInstances(m map[string]string) []Instance {
	out := make([]Instance, 0, len(m))
	for _, id := range sortedIDs(m) {
		out = append(out, Instance{ID: id, Name: m[id]})
	}
	return out
}

// delta returns, entry by entry, the instances of a not in b; a and b have
// the same shape.
func delta(a, b []Resource) []Resource {
	out := make([]Resource, len(a))
	for i, r := range a {
		d := map[string]string{}
		for id, name := range r.Instances {
			if _, ok := b[i].Instances[id]; !ok {
				d[id] = name
			}
		}
		out[i] = Resource{System: r.System, Type: r.Type, Instances: d}
	}
	return out
}

// shape identifies the resource types of a list of entries, in order.
func shape(resources []Resource) string {
	var b strings.Builder
	for _, r := range resources {
		b.WriteString(r.System + "\x00" + r.Type + "\x01")
	}
	return b.String()
}

func sameInstanceIDs(a, b []Resource) bool {
	if len(a) != len(b) {
		return false
	}
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

func contains(items []string, s string) bool {
	for _, item := range items {
		if item == s {
			return true
		}
	}
	return false
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
