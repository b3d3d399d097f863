package grantplan

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
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

// checkPlan is the property every plan must have: applied to a store that
// holds old, its calls leave exactly new; no call names an empty entry or
// more instances than its limit; and the number of calls is the lower
// bound for the groups that changed.
func checkPlan(t *testing.T, old, next *Grant, limits Limits) {
	t.Helper()
	s := store{}
	if old != nil {
		calls, err := Plan(nil, old, limits)
		if err != nil {
			t.Fatalf("planning the old grant: %v", err)
		}
		for _, c := range calls {
			s.apply(c)
		}
		if got, want := s.holdings(), expected(old); !reflect.DeepEqual(got, want) {
			t.Fatalf("creating old left\n%v\nwant\n%v", got, want)
		}
	}

	calls, err := Plan(old, next, limits)
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
		s.apply(c)
	}
	if got, want := s.holdings(), expected(next); !reflect.DeepEqual(got, want) {
		t.Fatalf("old %+v\nnew %+v\nlimits %+v\ncalls %+v\nleft\n%v\nwant\n%v", old, next, limits, calls, got, want)
	}
	if got, want := len(calls), lowerBound(old, next, limits); got != want {
		t.Fatalf("%d calls, want %d\nold %+v\nnew %+v\ncalls %+v", got, want, old, next, calls)
	}
}

// lowerBound counts the calls a change needs, from the rules: the
// sum over the (actions, instances) groups that must be sent of the
// product of ceil(entry size / limit).
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
	if shape(old.Resources) != shape(next.Resources) || next.ExpiresAt < old.ExpiresAt ||
		(combined && !sameInstanceIDs(old.Resources, next.Resources)) {
		return all(next, l.Grant) + all(old, l.Revoke)
	}
	n := 0
	if next.ExpiresAt > old.ExpiresAt {
		n += all(next, l.Grant)
	} else if len(added) > 0 {
		n += all(next, l.Grant)
	}
	if len(removed) > 0 {
		n += all(old, l.Revoke)
	}
	if len(next.Resources) == 1 && len(kept) > 0 {
		plus, minus := 0, 0
		for id := range next.Resources[0].Instances {
			if _, ok := old.Resources[0].Instances[id]; !ok {
				plus++
			}
		}
		for id := range old.Resources[0].Instances {
			if _, ok := next.Resources[0].Instances[id]; !ok {
				minus++
			}
		}
		if next.ExpiresAt == old.ExpiresAt && plus > 0 {
			n += (plus + l.Grant - 1) / l.Grant
		}
		if minus > 0 {
			n += (minus + l.Revoke - 1) / l.Revoke
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

func FuzzPlan(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{3, 5, 1, 0, 1, 1, 0, 1, 4, 7, 9, 200, 13, 1, 1, 0, 0, 1, 1, 8, 3, 4})
	f.Add([]byte{1, 1, 7, 2, 0, 0, 0, 0, 0, 23, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Fuzz(func(t *testing.T, data []byte) {
		old, next, limits := genCase(&byteSource{data: data})
		checkPlan(t, old, next, limits)
	})
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
		{"raise expiry: grant everything again", &Grant{Actions: []string{"view_host"}, Resources: []Resource{host(1, 2)}, ExpiresAt: 100},
			&Grant{Actions: []string{"view_host"}, Resources: []Resource{host(1, 2)}, ExpiresAt: 200}, []callSummary{
				{OperationGrant, "[view_host]", 2, 200},
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
			calls, err := Plan(tc.old, tc.next, limits)
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
	for _, tc := range []struct{ old, next *Grant }{{nil, empty}, {full, empty}, {empty, full}, {empty, nil}} {
		if _, err := Plan(tc.old, tc.next, Limits{Grant: 200, Revoke: 1000}); !errors.Is(err, ErrEmptyInstances) {
			t.Errorf("Plan(%v, %v) = %v, want ErrEmptyInstances", tc.old, tc.next, err)
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
