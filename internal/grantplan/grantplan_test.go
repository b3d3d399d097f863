package grantplan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// shapes are the resource-type combinations the generators draw from. An
// action relates to one fixed shape (as in IAM), so actions are named after
// their shape and a kept action never changes shape.
var shapes = [][][2]string{
	{},                    // an action related to no type
	{{"bk_cmdb", "host"}}, // the common case
	{{"bk_job", "job"}},   // another single type
	{{"bk_cmdb", "biz"}, {"bk_cmdb", "host"}}, // a combined resource
}

// source yields the choices a generator makes: random in property tests,
// the fuzzer's bytes in FuzzPlan.
type source interface{ intn(n int) int }

type randSource struct{ r *rand.Rand }

func (s randSource) intn(n int) int { return s.r.IntN(n) }

type byteSource struct{ data []byte }

func (s *byteSource) intn(n int) int {
	if len(s.data) == 0 {
		return 0
	}
	b := int(s.data[0])
	s.data = s.data[1:]
	return b % n
}

// genGrant draws a grant of the given shape over a small id space, so that
// old and new overlap often.
func genGrant(src source, shape int) *Grant {
	g := &Grant{ExpiresAt: int64(100 * (1 + src.intn(3)))}
	for a := 0; a < 5; a++ {
		if src.intn(2) == 0 {
			g.Actions = append(g.Actions, fmt.Sprintf("s%d_action%d", shape, a))
		}
	}
	if len(g.Actions) == 0 {
		g.Actions = []string{fmt.Sprintf("s%d_action0", shape)}
	}
	// Combined entries stay small: their groups multiply.
	most := 24
	if len(shapes[shape]) > 1 {
		most = 8
	}
	for _, t := range shapes[shape] {
		r := Resource{System: t[0], Type: t[1], Instances: map[string]string{}}
		n := 1 + src.intn(most)
		for i := 0; i < n; i++ {
			id := strconv.Itoa(src.intn(32))
			r.Instances[id] = "name-" + id + "-" + strconv.Itoa(src.intn(2))
		}
		g.Resources = append(g.Resources, r)
	}
	return g
}

// genCase draws an (old, next, limits) case: mostly a change within one
// shape, sometimes a create, a delete or a change of shape.
func genCase(src source) (old, next *Grant, limits Limits) {
	limits = Limits{Grant: 1 + src.intn(7), Revoke: 1 + src.intn(9)}
	if src.intn(2) == 0 {
		// A policy bound that old and next each fit in, but not always
		// their union: the revokes must then go first.
		limits.Policy = 24
	}
	shape := src.intn(len(shapes))
	switch src.intn(8) {
	case 0:
		return nil, genGrant(src, shape), limits
	case 1:
		return genGrant(src, shape), nil, limits
	case 2:
		return genGrant(src, shape), genGrant(src, src.intn(len(shapes))), limits
	}
	return genGrant(src, shape), genGrant(src, shape), limits
}

// runPlan plans from held to next, checks every call against the limits
// and the empty-instances rule, and returns the calls.
func runPlan(t *testing.T, held Holdings, next *Grant, limits Limits) []Call {
	t.Helper()
	calls, err := Plan(held, next, limits)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	for i, c := range calls {
		limit := limits.Revoke
		if c.Operation == OperationGrant {
			limit = limits.Grant
		}
		if len(c.Actions) == 0 {
			t.Fatalf("call %d has no action", i)
		}
		for _, r := range c.Resources {
			if len(r.Instances) == 0 {
				t.Fatalf("call %d (%s) has an empty instance list", i, c.Operation)
			}
			if len(r.Instances) > limit {
				t.Fatalf("call %d (%s) has %d instances, limit %d", i, c.Operation, len(r.Instances), limit)
			}
		}
	}
	return calls
}

// checkPlan is the property every plan must have: applied to a store that
// holds old, its calls leave exactly next; no call names an empty entry or
// more instances than its limit; and the number of calls is the lower
// bound for the groups that changed.
func checkPlan(t *testing.T, old, next *Grant, limits Limits) {
	t.Helper()
	policyLimit = limits.Policy
	defer func() { policyLimit = 0 }()
	s := store{}
	for _, c := range runPlan(t, nil, old, limits) {
		s.apply(c)
	}
	if got, want := s.holdings(), expected(old); !reflect.DeepEqual(got, want) {
		t.Fatalf("creating old left\n%v\nwant\n%v", got, want)
	}

	calls := runPlan(t, Held(old), next, limits)
	for _, c := range calls {
		s.apply(c)
	}
	if got, want := s.holdings(), expected(next); !reflect.DeepEqual(got, want) {
		t.Fatalf("old %+v\nnext %+v\nlimits %+v\ncalls %+v\nleft\n%v\nwant\n%v", old, next, limits, calls, got, want)
	}
	if got, want := len(calls), lowerBound(old, next, limits); got != want {
		t.Fatalf("%d calls, want %d\nold %+v\nnext %+v\ncalls %+v", got, want, old, next, calls)
	}
}

// checkInterrupted is the partial-failure property: when a run stops after
// any prefix of its calls, the holdings recorded call by call describe the
// server (exactly for single-type grants, as an upper bound for combined
// ones); the state view of them differs from next whenever they do, so the
// next plan is not empty; and that next plan, from the recorded holdings,
// converges on next, or on old when revert is set: a user who takes the
// change back (granting again what the run was revoking) must get it.
//
// uncertain makes the call after the prefix one whose answer was lost:
// 1, IAM applied it; 2, it did not. The bookkeeping cannot know which.
func checkInterrupted(t *testing.T, old, next *Grant, limits Limits, stopAfter, uncertain int, revert bool) {
	t.Helper()
	policyLimit = limits.Policy
	defer func() { policyLimit = 0 }()
	s := store{}
	for _, c := range runPlan(t, nil, old, limits) {
		s.apply(c)
	}
	held := Held(old)
	calls := runPlan(t, held, next, limits)
	if len(calls) == 0 {
		return
	}
	stopAfter %= len(calls)
	for _, c := range calls[:stopAfter] {
		s.apply(c)
		held.Apply(c)
	}
	if uncertain > 0 {
		if uncertain == 1 {
			s.apply(calls[stopAfter])
		}
		held.ApplyUncertain(calls[stopAfter])
	}
	if got, want := s.holdings(), heldTuples(held); uncertain == 0 && !combinedAny(held) && !reflect.DeepEqual(got, want) {
		t.Fatalf("after %d of %d calls the store holds\n%v\nbut the bookkeeping says\n%v", stopAfter, len(calls), got, want)
	}
	shapeOf := old
	if shapeOf == nil {
		shapeOf = next
	}
	var shapeResources []Resource
	if shapeOf != nil {
		shapeResources = shapeOf.Resources
	}
	view := held.View(next, shapeResources)
	if next != nil && held.Equal(Held(next)) != !differs(view, next) {
		t.Fatalf("holdings %+v\nnext %+v\nview %+v: the view must differ from next exactly when the holdings do", held, next, view)
	}

	if old == nil {
		checkTaintedReplace(t, next, limits, stopAfter, uncertain, held)
	}
	then := next
	if revert {
		then = old
	}
	for _, c := range runPlan(t, held, then, limits) {
		s.apply(c)
	}
	if got, want := s.holdings(), expected(then); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the interrupted run (stopped after %d calls, uncertain %d) and a second one towards %s, the store holds\n%v\nwant\n%v\nold %+v\nnext %+v",
			stopAfter, uncertain, map[bool]string{false: "next", true: "old"}[revert], got, want, old, next)
	}
}

// checkTaintedReplace: a create that stopped is tainted, and Terraform
// destroys it knowing only its public state (its private state does not
// reach the destroy): the upper bound the state shows must make that
// destroy revoke everything the create may have granted.
func checkTaintedReplace(t *testing.T, next *Grant, limits Limits, stopAfter, uncertain int, held Holdings) {
	t.Helper()
	s := store{}
	calls := runPlan(t, Holdings{}, next, limits)
	for _, c := range calls[:stopAfter] {
		s.apply(c)
	}
	if uncertain == 1 {
		s.apply(calls[stopAfter])
	}
	if len(held) == 0 {
		return // nothing recorded: the resource leaves no state, and nothing was granted
	}
	shown := held.UpperBound(next.Resources)
	for _, c := range runPlan(t, Held(&shown), nil, limits) {
		s.apply(c)
	}
	if got := s.holdings(); len(got) != 0 {
		t.Fatalf("a create stopped after %d calls (uncertain %d) shows %+v; destroying that leaves\n%v", stopAfter, uncertain, shown, got)
	}
}

// heldTuples renders bookkeeping holdings like store.holdings.
func heldTuples(h Holdings) map[string]string {
	s := store{}
	for action, held := range h {
		p := &policy{expiresAt: held.ExpiresAt, any: len(held.Resources) == 0}
		if len(held.Resources) > 0 {
			group := map[string]map[string]string{}
			for _, r := range held.Resources {
				group[typeKey(r.System, r.Type)] = r.Instances
			}
			p.groups = append(p.groups, group)
		}
		s[action] = p
	}
	return s.holdings()
}

func combinedAny(h Holdings) bool {
	for _, held := range h {
		if len(held.Resources) > 1 {
			return true
		}
	}
	return false
}

// lowerBound counts the calls a change needs: for each distinct
// (operation, instances) group of actions that must be sent, the product
// of ceil(entry size / limit). From a complete old grant, the groups are
// the issue's: added actions over all new instances, kept actions over the
// added instances, removed actions over all old instances, kept actions
// over the removed instances; groups that name the same instances merge.
func lowerBound(old, next *Grant, l Limits) int {
	sizes := func(rs []Resource) []int {
		out := make([]int, len(rs))
		for i, r := range rs {
			out[i] = len(r.Instances)
		}
		return out
	}
	all := func(g *Grant, limit int) int { return CallCount(sizes(g.Resources), limit) }
	switch {
	case old == nil && next == nil:
		return 0
	case old == nil:
		return all(next, l.Grant)
	case next == nil:
		return all(old, l.Revoke)
	}
	kept, added, removed := diffStrings(old.Actions, next.Actions)
	combined := len(old.Resources) > 1 || len(next.Resources) > 1
	sameShape := shape(old.Resources) == shape(next.Resources)
	if !sameShape {
		return all(next, l.Grant) + all(old, l.Revoke)
	}
	if next.ExpiresAt < old.ExpiresAt || (combined && !sameInstanceIDs(old.Resources, next.Resources)) {
		// Kept actions are revoked and granted again, with the removed
		// ones in the revoke and the added ones in the grant.
		n := all(next, l.Grant)
		if len(kept)+len(removed) > 0 {
			n += all(old, l.Revoke)
		}
		return n
	}
	raised := next.ExpiresAt > old.ExpiresAt
	if len(next.Resources) != 1 {
		// Added actions over everything; a raised expiry of kept ones
		// joins them, or is one call: a combination of one instance per
		// entry, or the one grant of actions without a resource type.
		n := 0
		switch {
		case len(added) > 0:
			n += all(next, l.Grant)
		case raised && len(kept) > 0:
			n++
		}
		if len(removed) > 0 {
			n += all(old, l.Revoke)
		}
		return n
	}
	oldIDs, nextIDs := old.Resources[0].Instances, next.Resources[0].Instances
	plus, minus := 0, 0
	for id := range nextIDs {
		if _, ok := oldIDs[id]; !ok {
			plus++
		}
	}
	for id := range oldIDs {
		if _, ok := nextIDs[id]; !ok {
			minus++
		}
	}
	ceil := func(n, limit int) int { return (n + limit - 1) / limit }
	n := 0
	// Grants: added actions over everything; kept ones over the added
	// instances, one group when those are everything. A raised expiry
	// rides along the grant of everything when there is one, else along
	// the grant of the added instances, else is one call of one instance.
	switch {
	case raised && len(added) > 0:
		n += ceil(len(nextIDs), l.Grant)
	case raised && len(kept) > 0:
		n += max(ceil(plus, l.Grant), 1)
	case len(added) > 0 && len(kept) > 0 && plus > 0 && plus == len(nextIDs):
		n += ceil(len(nextIDs), l.Grant)
	default:
		if len(added) > 0 {
			n += ceil(len(nextIDs), l.Grant)
		}
		if len(kept) > 0 && plus > 0 {
			n += ceil(plus, l.Grant)
		}
	}
	// Revokes: removed actions over everything old; kept ones over the
	// removed instances, one group when those are everything old.
	switch {
	case len(removed) > 0 && len(kept) > 0 && minus > 0 && minus == len(oldIDs):
		n += ceil(len(oldIDs), l.Revoke)
	default:
		if len(removed) > 0 {
			n += ceil(len(oldIDs), l.Revoke)
		}
		if len(kept) > 0 && minus > 0 {
			n += ceil(minus, l.Revoke)
		}
	}
	return n
}

func TestPlanProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 4000; i++ {
		old, next, limits := genCase(randSource{r})
		checkPlan(t, old, next, limits)
	}
}

func TestInterruptedPlanProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 4000; i++ {
		old, next, limits := genCase(randSource{r})
		checkInterrupted(t, old, next, limits, r.IntN(64), r.IntN(3), r.IntN(2) == 0)
	}
}

// FuzzPlan draws (old, next, limits) from the fuzzer's bytes, limits as
// small as 1, and checks every plan property: no call with an empty
// instance list or over a limit, the store left holding exactly next, the
// fewest calls, an interrupted run that the next plan completes, and no
// empty or oversized call whatever a hand-edited state holds.
func FuzzPlan(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 5, 1, 0, 1, 1, 0, 1, 4, 7, 9, 200, 13, 1, 1, 0, 0, 1, 1, 8, 3, 4})
	f.Add([]byte{1, 1, 7, 2, 0, 0, 0, 0, 0, 23, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	// Limits of 1 on a combined resource: every call is one instance per entry.
	f.Add([]byte{0, 0, 1, 3, 7, 1, 1, 1, 1, 1, 7, 0, 1, 2, 3, 4, 5, 6, 7, 7, 0, 1, 2, 3, 4, 5, 6, 1, 1, 0, 1, 0, 3, 0, 3, 4, 5, 0, 4, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		src := &byteSource{data: data}
		old, next, limits := genCase(src)
		checkPlan(t, old, next, limits)
		checkInterrupted(t, old, next, limits, src.intn(64), src.intn(3), src.intn(2) == 0)
		checkHandEdited(t, Held(old), next, limits, src)
	})
}

// checkHandEdited: whatever the holdings say, as a state edited by hand
// may (an entry emptied, an action in doubt, another expiry, other
// resource types, no resources at all), the plan to next sends no empty
// instance list and nothing over a limit.
func checkHandEdited(t *testing.T, held Holdings, next *Grant, limits Limits, src source) {
	t.Helper()
	for _, action := range held.actions() {
		h := held[action]
		switch src.intn(6) {
		case 0:
			if len(h.Resources) > 0 {
				h.Resources[src.intn(len(h.Resources))].Instances = map[string]string{}
			}
		case 1:
			h.Partial = true
		case 2:
			h.ExpiresAt = int64(100 * src.intn(4))
		case 3:
			h.Resources = genGrant(src, src.intn(len(shapes))).Resources
		case 4:
			h.Resources = nil
		}
		held[action] = h
	}
	runPlan(t, held, next, limits)
}

func host(ids ...int) Resource {
	r := Resource{System: "bk_cmdb", Type: "host", Instances: map[string]string{}}
	for _, id := range ids {
		r.Instances[strconv.Itoa(id)] = "host" + strconv.Itoa(id)
	}
	return r
}

func hostRange(from, to int) Resource {
	var ids []int
	for i := from; i < to; i++ {
		ids = append(ids, i)
	}
	return host(ids...)
}

type callSummary struct {
	op        Operation
	actions   string
	instances int
	expiresAt int64
}

func summarize(calls []Call) []callSummary {
	out := make([]callSummary, len(calls))
	for i, c := range calls {
		out[i] = callSummary{c.Operation, fmt.Sprint(c.Actions), c.InstanceCount(), c.ExpiresAt}
	}
	return out
}

// TestPlanExamples pins the worked examples call by call.
func TestPlanExamples(t *testing.T) {
	limits := Limits{Grant: 200, Revoke: 1000}
	base := &Grant{Actions: []string{"edit_host", "view_host"}, Resources: []Resource{hostRange(0, 450)}, ExpiresAt: 4102444800}
	with := func(mod func(g *Grant)) *Grant {
		g := &Grant{Actions: append([]string(nil), base.Actions...), ExpiresAt: base.ExpiresAt,
			Resources: []Resource{{System: "bk_cmdb", Type: "host", Instances: map[string]string{}}}}
		for k, v := range base.Resources[0].Instances {
			g.Resources[0].Instances[k] = v
		}
		mod(g)
		return g
	}
	cases := []struct {
		name      string
		old, next *Grant
		want      []callSummary
	}{
		{"create 450 instances in 3 grants", nil, base, []callSummary{
			{OperationGrant, "[edit_host view_host]", 200, 4102444800},
			{OperationGrant, "[edit_host view_host]", 200, 4102444800},
			{OperationGrant, "[edit_host view_host]", 50, 4102444800},
		}},
		{"no change", base, base, []callSummary{}},
		{"add 10 and remove 5: one grant, one revoke", base, with(func(g *Grant) {
			for i := 450; i < 460; i++ {
				g.Resources[0].Instances[strconv.Itoa(i)] = "new"
			}
			for i := 0; i < 5; i++ {
				delete(g.Resources[0].Instances, strconv.Itoa(i))
			}
		}), []callSummary{
			{OperationGrant, "[edit_host view_host]", 10, 4102444800},
			{OperationRevoke, "[edit_host view_host]", 5, 0},
		}},
		{"rename only: no call", base, with(func(g *Grant) { g.Resources[0].Instances["7"] = "renamed" }), []callSummary{}},
		{"add an action: grant it over everything", base, with(func(g *Grant) { g.Actions = append(g.Actions, "delete_host") }), []callSummary{
			{OperationGrant, "[delete_host]", 200, 4102444800},
			{OperationGrant, "[delete_host]", 200, 4102444800},
			{OperationGrant, "[delete_host]", 50, 4102444800},
		}},
		{"remove an action: one revoke", base, with(func(g *Grant) { g.Actions = []string{"view_host"} }), []callSummary{
			{OperationRevoke, "[edit_host]", 450, 0},
		}},
		{"raise expiry: grant one instance, which raises the whole policy", &Grant{Actions: []string{"view_host"}, Resources: []Resource{host(1, 2)}, ExpiresAt: 100},
			&Grant{Actions: []string{"view_host"}, Resources: []Resource{host(1, 2)}, ExpiresAt: 200}, []callSummary{
				{OperationGrant, "[view_host]", 1, 200},
			}},
		{"lower expiry: revoke, then grant", &Grant{Actions: []string{"view_host"}, Resources: []Resource{host(1, 2)}, ExpiresAt: 200},
			&Grant{Actions: []string{"view_host"}, Resources: []Resource{host(1, 2)}, ExpiresAt: 100}, []callSummary{
				{OperationRevoke, "[view_host]", 2, 0},
				{OperationGrant, "[view_host]", 2, 100},
			}},
		{"delete", base, nil, []callSummary{
			{OperationRevoke, "[edit_host view_host]", 450, 0},
		}},
		{"actions with no resource type", nil, &Grant{Actions: []string{"create_biz"}, ExpiresAt: 5}, []callSummary{
			{OperationGrant, "[create_biz]", 0, 5},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := Plan(Held(tc.old), tc.next, limits)
			if err != nil {
				t.Fatal(err)
			}
			if got := summarize(calls); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestPlanRefusesEmptyInstances: the planner's own guard against the one
// request that would grant everything.
func TestPlanRefusesEmptyInstances(t *testing.T) {
	empty := &Grant{Actions: []string{"view_host"}, Resources: []Resource{{System: "bk_cmdb", Type: "host", Instances: map[string]string{}}}}
	full := &Grant{Actions: []string{"view_host"}, Resources: []Resource{host(1)}}
	for _, held := range []Holdings{nil, Held(full)} {
		if _, err := Plan(held, empty, Limits{Grant: 200, Revoke: 1000}); !errors.Is(err, ErrEmptyInstances) {
			t.Errorf("Plan(%v, empty) = %v, want ErrEmptyInstances", held, err)
		}
	}
	// Holdings with an empty entry (a state edited by hand) never turn
	// into a call with an empty entry, on any path.
	for _, next := range []*Grant{full, nil} {
		calls, err := Plan(Held(empty), next, Limits{Grant: 200, Revoke: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			for _, r := range c.Resources {
				if len(r.Instances) == 0 {
					t.Fatalf("call %+v has an empty entry", c)
				}
			}
		}
	}
}

func TestPlanRejectsBadInput(t *testing.T) {
	g := &Grant{Actions: []string{"view_host"}, Resources: []Resource{host(1)}}
	if _, err := Plan(nil, g, Limits{Grant: 0, Revoke: 1}); err == nil {
		t.Error("zero grant limit accepted")
	}
	if _, err := Plan(nil, &Grant{Resources: []Resource{host(1)}}, Limits{Grant: 1, Revoke: 1}); err == nil {
		t.Error("grant without actions accepted")
	}
}

func TestChunk(t *testing.T) {
	for _, tc := range []struct{ n, size, want int }{{0, 3, 0}, {1, 3, 1}, {3, 3, 1}, {4, 3, 2}, {450, 200, 3}} {
		items := make([]int, tc.n)
		chunks := Chunk(items, tc.size)
		total := 0
		for _, c := range chunks {
			if len(c) == 0 || len(c) > tc.size {
				t.Errorf("Chunk(%d, %d): a chunk of %d", tc.n, tc.size, len(c))
			}
			total += len(c)
		}
		if len(chunks) != tc.want || total != tc.n {
			t.Errorf("Chunk(%d, %d) = %d chunks of %d items, want %d", tc.n, tc.size, len(chunks), total, tc.want)
		}
	}
}

// diffStrings returns the strings in both, only in b, and only in a.
func diffStrings(a, b []string) (both, added, removed []string) {
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, s := range a {
		inA[s] = true
	}
	for _, s := range uniqueSorted(b) {
		inB[s] = true
		if inA[s] {
			both = append(both, s)
		} else {
			added = append(added, s)
		}
	}
	for _, s := range uniqueSorted(a) {
		if !inB[s] {
			removed = append(removed, s)
		}
	}
	return both, added, removed
}

// TestUncertainGrantIsSentAgain: a grant whose answer was lost counts as
// held (a destroy revokes it) and in doubt (the next plan grants it again,
// whether or not IAM applied it).
func TestUncertainGrantIsSentAgain(t *testing.T) {
	limits := Limits{Grant: 2, Revoke: 10}
	next := &Grant{Actions: []string{"view_host"}, Resources: []Resource{host(1, 2, 3)}, ExpiresAt: 9}
	calls, err := Plan(nil, next, limits)
	if err != nil || len(calls) != 2 {
		t.Fatalf("Plan: %v %v", calls, err)
	}
	for _, applied := range []bool{true, false} {
		s, held := store{}, Holdings{}
		s.apply(calls[0])
		held.Apply(calls[0])
		if applied {
			s.apply(calls[1])
		}
		held.ApplyUncertain(calls[1])
		if !held["view_host"].Partial {
			t.Fatal("an unanswered grant is not marked partial")
		}
		if !differs(held.View(next, next.Resources), next) {
			t.Fatal("the view of a holding in doubt does not differ from next: the next plan would be empty")
		}
		// Destroy revokes everything that may be held.
		destroy, err := Plan(held, nil, limits)
		if err != nil || len(destroy) != 1 || destroy[0].InstanceCount() != 3 {
			t.Fatalf("destroy plan %+v %v", destroy, err)
		}
		again, err := Plan(held, next, limits)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range again {
			s.apply(c)
		}
		if got, want := s.holdings(), expected(next); !reflect.DeepEqual(got, want) {
			t.Fatalf("applied=%v: after the second run the store holds %v, want %v", applied, got, want)
		}
	}
}

// TestIDsWithCommasKeepTheirCalls: actions share a call only over the same
// instances, told apart even when an id holds a comma (a valid IAM id): the
// one id "a,b" is not the two ids "a" and "b".
func TestIDsWithCommasKeepTheirCalls(t *testing.T) {
	res := func(ids ...string) []Resource {
		r := Resource{System: "bk_cmdb", Type: "host", Instances: map[string]string{}}
		for _, id := range ids {
			r.Instances[id] = id
		}
		return []Resource{r}
	}
	held := Holdings{"edit_host": {Resources: res("a", "b"), ExpiresAt: 100}, "view_host": {Resources: res("a,b"), ExpiresAt: 100}}
	calls, err := Plan(held, &Grant{Actions: []string{"edit_host", "view_host"}, Resources: res("a", "b", "a,b"), ExpiresAt: 100},
		Limits{Grant: 200, Revoke: 1000})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, c := range calls {
		for _, a := range c.Actions {
			for _, in := range c.Resources[0].Instances {
				got[a] = append(got[a], in.ID)
			}
		}
	}
	if want := map[string][]string{"edit_host": {"a,b"}, "view_host": {"a", "b"}}; len(calls) != 2 || !reflect.DeepEqual(got, want) {
		t.Fatalf("%d calls granting %v, want 2 granting %v", len(calls), got, want)
	}
}

// renderCalls renders calls as a user reads them in the log: the
// operation, the actions, each entry's instances (listed when few,
// counted from the first otherwise) and the expiry of a grant.
func renderCalls(calls []Call) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		var entries []string
		for _, r := range c.Resources {
			ids := make([]string, len(r.Instances))
			for j, in := range r.Instances {
				ids[j] = in.ID
			}
			if len(ids) > 3 {
				entries = append(entries, fmt.Sprintf("%s %d from %s", r.Type, len(ids), ids[0]))
			} else {
				entries = append(entries, r.Type+" "+strings.Join(ids, ","))
			}
		}
		line := fmt.Sprintf("%s %s: %s", c.Operation, strings.Join(c.Actions, ","), strings.Join(entries, " x "))
		if len(c.Resources) == 0 {
			line += "no resource type"
		}
		if c.Operation == OperationGrant {
			line += fmt.Sprintf(" @%d", c.ExpiresAt)
		}
		out[i] = line
	}
	return out
}

// TestRenewalCalls: a later expiry of a grant IAM holds exactly (a
// renewal) is one grant per action group: IAM raises the whole policy's
// expiry on any grant into it, so the planner sends what the actions lack
// with the new expiry, and when they lack nothing one instance they hold
// (the smallest id), or rides along a grant sent anyway. A holding in
// doubt is granted whole. Each case's calls, applied to IAM's model
// holding the old grant, leave exactly the new one.
func TestRenewalCalls(t *testing.T) {
	limits := Limits{Grant: 200, Revoke: 1000, Policy: 10000}
	both := []string{"edit_host", "view_host"}
	grant := func(actions []string, exp int64, resources ...Resource) *Grant {
		return &Grant{Actions: actions, Resources: resources, ExpiresAt: exp}
	}
	biz := func(ids ...int) Resource {
		r := host(ids...)
		r.Type = "biz"
		for id := range r.Instances {
			r.Instances[id] = "biz" + id
		}
		return r
	}
	exact := func(g *Grant) Holdings { return Held(g) }
	cases := []struct {
		name string
		held Holdings
		// old is what IAM holds (the model), when held does not say it.
		old  *Grant
		next *Grant
		want []string
	}{
		{
			name: "1 000 instances, two actions: one call",
			held: exact(grant(both, 100, hostRange(0, 1000))),
			next: grant(both, 200, hostRange(0, 1000)),
			want: []string{"grant edit_host,view_host: host 0 @200"},
		},
		{
			name: "10 000 instances, two actions: one call",
			held: exact(grant(both, 100, hostRange(0, 10000))),
			next: grant(both, 200, hostRange(0, 10000)),
			want: []string{"grant edit_host,view_host: host 0 @200"},
		},
		{
			name: "to permanent: one call naming the smallest id",
			held: exact(grant([]string{"view_host"}, 100, host(7, 3, 12))),
			next: grant([]string{"view_host"}, 4102444800, host(7, 3, 12)),
			want: []string{"grant view_host: host 12 @4102444800"}, // "12" < "3" < "7"
		},
		{
			name: "added instances carry the new expiry: no call more",
			held: exact(grant(both, 100, hostRange(0, 1000))),
			next: grant(both, 200, hostRange(0, 1010)),
			want: []string{"grant edit_host,view_host: host 10 from 1000 @200"},
		},
		{
			name: "removed instances: the raise, then the revoke",
			held: exact(grant(both, 100, hostRange(0, 1000))),
			next: grant(both, 200, hostRange(10, 1000)),
			want: []string{"grant edit_host,view_host: host 10 @200", "revoke edit_host,view_host: host 10 from 0"},
		},
		{
			name: "one action lacks an instance: the other rides along its grant",
			held: Holdings{
				"edit_host": {Resources: []Resource{hostRange(0, 999)}, ExpiresAt: 100},
				"view_host": {Resources: []Resource{hostRange(0, 1000)}, ExpiresAt: 100},
			},
			next: grant(both, 200, hostRange(0, 1000)),
			want: []string{"grant edit_host,view_host: host 999 @200"},
		},
		{
			name: "an added action is granted everything; the kept one rides along the first call",
			held: exact(grant([]string{"view_host"}, 100, hostRange(0, 450))),
			next: grant(both, 200, hostRange(0, 450)),
			want: []string{
				"grant edit_host,view_host: host 200 from 0 @200",
				"grant edit_host: host 200 from 279 @200",
				"grant edit_host: host 50 from 54 @200",
			},
		},
		{
			name: "an added action and added instances: the kept action joins the grant of everything",
			held: exact(grant([]string{"view_host"}, 100, hostRange(0, 440))),
			next: grant(both, 200, hostRange(0, 450)),
			want: []string{
				"grant edit_host,view_host: host 200 from 0 @200",
				"grant edit_host,view_host: host 200 from 279 @200",
				"grant edit_host,view_host: host 50 from 54 @200",
			},
		},
		{
			name: "only the action whose expiry is lower",
			held: Holdings{
				"edit_host": {Resources: []Resource{hostRange(0, 1000)}, ExpiresAt: 100},
				"view_host": {Resources: []Resource{hostRange(0, 1000)}, ExpiresAt: 200},
			},
			next: grant(both, 200, hostRange(0, 1000)),
			want: []string{"grant edit_host: host 0 @200"},
		},
		{
			name: "a holding in doubt is granted whole",
			held: Holdings{
				"edit_host": {Resources: []Resource{hostRange(0, 450)}, ExpiresAt: 100, Partial: true},
				"view_host": {Resources: []Resource{hostRange(0, 450)}, ExpiresAt: 100},
			},
			old:  grant(both, 100, hostRange(0, 450)),
			next: grant(both, 200, hostRange(0, 450)),
			want: []string{
				"grant edit_host,view_host: host 200 from 0 @200",
				"grant edit_host: host 200 from 279 @200",
				"grant edit_host: host 50 from 54 @200",
			},
		},
		{
			name: "a combined resource: one combination",
			held: exact(grant([]string{"edit_biz_host"}, 100, biz(1, 2, 3), hostRange(0, 450))),
			next: grant([]string{"edit_biz_host"}, 200, biz(1, 2, 3), hostRange(0, 450)),
			want: []string{"grant edit_biz_host: biz 1 x host 0 @200"},
		},
		{
			name: "no resource type: one call, as before",
			held: exact(grant([]string{"create_biz", "create_set"}, 100)),
			next: grant([]string{"create_biz", "create_set"}, 200),
			want: []string{"grant create_biz,create_set: no resource type @200"},
		},
		{
			name: "at IAM's per-policy limit: the revokes first, the added instances carry the expiry",
			held: exact(grant(both, 100, hostRange(0, 10000))),
			next: grant(both, 200, hostRange(100, 10100)),
			want: []string{"revoke edit_host,view_host: host 100 from 0", "grant edit_host,view_host: host 100 from 10000 @200"},
		},
		{
			name: "a lower expiry still revokes and grants everything",
			held: exact(grant(both, 200, hostRange(0, 450))),
			next: grant(both, 100, hostRange(0, 450)),
			want: []string{
				"revoke edit_host,view_host: host 450 from 0",
				"grant edit_host,view_host: host 200 from 0 @100",
				"grant edit_host,view_host: host 200 from 279 @100",
				"grant edit_host,view_host: host 50 from 54 @100",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := Plan(tc.held, tc.next, limits)
			if err != nil {
				t.Fatal(err)
			}
			if got := renderCalls(calls); !slices.Equal(got, tc.want) {
				t.Fatalf("calls:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			// IAM's model, holding what held says (or old), holds exactly
			// next after the calls, every instance at the new expiry.
			policyLimit = limits.Policy
			defer func() { policyLimit = 0 }()
			s := store{}
			if tc.old != nil {
				for _, c := range runPlan(t, nil, tc.old, limits) {
					s.apply(c)
				}
			} else {
				for _, action := range tc.held.actions() {
					h := tc.held[action]
					for _, c := range runPlan(t, nil, &Grant{Actions: []string{action}, Resources: h.Resources, ExpiresAt: h.ExpiresAt}, limits) {
						s.apply(c)
					}
				}
			}
			for _, c := range calls {
				s.apply(c)
			}
			if got, want := s.holdings(), expected(tc.next); !reflect.DeepEqual(got, want) {
				t.Fatalf("after the calls IAM holds\n%v\nwant\n%v", got, want)
			}
		})
	}
}
