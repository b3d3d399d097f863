package grantplan

import (
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

var sops = CreatorTarget{System: "bk_sops", Type: "mini_app"}

// genCreator draws instances over a small id space, each under one of two
// projects or none, so that old and next overlap and move instances.
func genCreator(src source) map[string]CreatorInstance {
	n := 1 + src.intn(30)
	out := map[string]CreatorInstance{}
	for i := 0; i < n; i++ {
		id := "m" + strconv.Itoa(src.intn(40))
		in := CreatorInstance{ID: id, Name: "app " + id + "-" + strconv.Itoa(src.intn(2))}
		if p := src.intn(3); p > 0 {
			in.Ancestors = []Node{{System: "bk_sops", Type: "project", ID: "project" + strconv.Itoa(p)}}
		}
		out[id] = in
	}
	return out
}

// pathSet is the creator's store: the set of paths it holds.
type pathSet map[string]bool

func (s pathSet) apply(c CreatorCall) {
	for _, in := range c.Instances {
		if c.Operation == OperationGrant {
			s[in.Path(sops.System, sops.Type)] = true
		} else {
			delete(s, in.Path(sops.System, sops.Type))
		}
	}
}

func pathsOf(instances map[string]CreatorInstance) pathSet {
	s := pathSet{}
	for _, in := range instances {
		s[in.Path(sops.System, sops.Type)] = true
	}
	return s
}

// checkCreator: the plan from old to next, and, when it stops after
// stopAfter calls (the next one's answer lost when uncertain > 0: 1, IAM
// applied it; 2, it did not), a second plan from the record that reaches
// next, or old when revert is set (a user taking the change back).
func checkCreator(t *testing.T, old, next map[string]CreatorInstance, limits Limits, stopAfter, uncertain int, revert bool) {
	t.Helper()
	s := pathsOf(old)
	held := CreatorHeld(sops, old)
	calls, err := PlanCreator(sops, held, next, limits)
	if err != nil {
		t.Fatal(err)
	}
	grants, revokes, seenRevoke := 0, 0, false
	if limits.Policy > 0 {
		probe := pathsOf(old)
		for _, c := range calls {
			probe.apply(c)
			if len(probe) > limits.Policy {
				t.Fatalf("a call leaves %d paths in the policy, over the limit %d", len(probe), limits.Policy)
			}
		}
	}
	for _, c := range calls {
		limit := limits.Revoke
		if c.Operation == OperationGrant {
			limit = limits.Grant
			grants += len(c.Instances)
			if seenRevoke && limits.Policy == 0 {
				t.Fatal("a grant after a revoke")
			}
		} else {
			revokes += len(c.Instances)
			seenRevoke = true
		}
		if len(c.Instances) == 0 || len(c.Instances) > limit {
			t.Fatalf("a call of %d instances, limit %d", len(c.Instances), limit)
		}
	}
	wantCalls := (grants+limits.Grant-1)/limits.Grant + (revokes+limits.Revoke-1)/limits.Revoke
	if len(calls) != wantCalls {
		t.Fatalf("%d calls for %d grants and %d revokes, want %d", len(calls), grants, revokes, wantCalls)
	}
	// Only what changed: grants are the wanted paths not held, revokes the
	// held paths not wanted.
	want, have := pathsOf(next), pathsOf(old)
	newPaths, gonePaths := 0, 0
	for p := range want {
		if !have[p] {
			newPaths++
		}
	}
	for p := range have {
		if !want[p] {
			gonePaths++
		}
	}
	if grants != newPaths || revokes != gonePaths {
		t.Fatalf("granted %d and revoked %d paths, want %d and %d", grants, revokes, newPaths, gonePaths)
	}

	// The whole plan, applied, leaves exactly next.
	full := pathsOf(old)
	for _, c := range calls {
		full.apply(c)
	}
	if got, want := sortedKeysOf(full), sortedKeysOf(pathsOf(next)); !reflect.DeepEqual(got, want) {
		t.Fatalf("the plan leaves %v, want %v", got, want)
	}

	if len(calls) > 0 {
		stopAfter %= len(calls)
		for _, c := range calls[:stopAfter] {
			s.apply(c)
			held.Apply(sops, c)
		}
		if uncertain > 0 {
			if uncertain == 1 {
				s.apply(calls[stopAfter])
			}
			held.ApplyUncertain(sops, calls[stopAfter])
		} else if got := sortedKeysOf(s); !reflect.DeepEqual(got, sortedPaths(held)) {
			t.Fatalf("the store holds %v, the record %v", got, sortedPaths(held))
		}
		if old == nil && len(held) > 0 {
			// A stopped create is tainted and destroyed from its public
			// state alone (see checkTaintedReplace): the upper bound it
			// shows must revoke every path it may have registered.
			shown, _ := held.UpperBound()
			tainted := maps.Clone(s)
			revokes, err := PlanCreator(sops, CreatorHeld(sops, shown), nil, limits)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range revokes {
				tainted.apply(c)
			}
			if len(tainted) != 0 {
				t.Fatalf("a create stopped at call %d (uncertain %d) shows %v; destroying that leaves %v", stopAfter, uncertain, shown, sortedKeysOf(tainted))
			}
		}
		view, exact := held.View(sops, next)
		if exact != held.Equal(CreatorHeld(sops, view)) {
			t.Fatalf("View says exact=%v for holdings %v and view %v", exact, held, view)
		}
		if next != nil && held.Equal(CreatorHeld(sops, next)) == pathsDiffer(view, next) {
			t.Fatalf("the view %v must differ from next %v exactly when the holdings %v do", view, next, held)
		}
		then := next
		if revert && old != nil {
			then = old
		}
		again, err := PlanCreator(sops, held, then, limits)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range again {
			s.apply(c)
		}
		if got, want := sortedKeysOf(s), sortedKeysOf(pathsOf(then)); !reflect.DeepEqual(got, want) {
			t.Fatalf("after stopping at call %d (uncertain %d) and planning again, the store holds %v, want %v", stopAfter, uncertain, got, want)
		}
		return
	}
	if got, want := sortedKeysOf(s), sortedKeysOf(pathsOf(next)); !reflect.DeepEqual(got, want) {
		t.Fatalf("the store holds %v, want %v", got, want)
	}
}

func pathsDiffer(view, next map[string]CreatorInstance) bool {
	return !reflect.DeepEqual(sortedKeysOf(pathsOf(view)), sortedKeysOf(pathsOf(next)))
}

func sortedKeysOf(s pathSet) []string { return slices.Sorted(maps.Keys(s)) }

func TestPlanCreatorProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 3000; i++ {
		src := randSource{r}
		limits := Limits{Grant: 1 + r.IntN(7), Revoke: 1 + r.IntN(9)}
		if r.IntN(2) == 0 {
			limits.Policy = 30 // each side fits, their union not always
		}
		var old, next map[string]CreatorInstance
		switch r.IntN(6) {
		case 0:
			next = genCreator(src)
		case 1:
			old = genCreator(src)
		default:
			old, next = genCreator(src), genCreator(src)
		}
		checkCreator(t, old, next, limits, r.IntN(64), r.IntN(3), r.IntN(2) == 0)
	}
}

// FuzzPlanCreator checks the creator planner's properties (see
// checkCreator) on cases drawn from the fuzzer's bytes, limits as small as
// 1, with and without a per-policy bound.
func FuzzPlanCreator(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 7, 9, 1, 4, 3, 8, 2, 2, 5, 30, 1, 1, 17, 0, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		src := &byteSource{data: data}
		limits := Limits{Grant: 1 + src.intn(7), Revoke: 1 + src.intn(9)}
		if src.intn(2) == 1 {
			limits.Policy = 30 // each side fits, their union not always
		}
		var old, next map[string]CreatorInstance
		if src.intn(4) > 0 {
			old = genCreator(src)
		}
		if src.intn(4) > 0 {
			next = genCreator(src)
		}
		checkCreator(t, old, next, limits, src.intn(64), src.intn(3), src.intn(2) == 0)
	})
}

// TestPlanCreatorExamples pins the numbers: 450 instances create
// in 3 creator calls and destroy in 1 path revoke; a moved instance is
// granted at its new path before the old one is revoked; a new name alone
// sends nothing.
func TestPlanCreatorExamples(t *testing.T) {
	limits := Limits{Grant: 200, Revoke: 1000}
	many := map[string]CreatorInstance{}
	for i := 0; i < 450; i++ {
		id := "job" + strconv.Itoa(i)
		many[id] = CreatorInstance{ID: id, Name: id}
	}
	jobs := CreatorTarget{System: "bk_job", Type: "job"}
	create, _ := PlanCreator(jobs, nil, many, limits)
	destroy, _ := PlanCreator(jobs, CreatorHeld(jobs, many), nil, limits)
	if len(create) != 3 || len(destroy) != 1 || destroy[0].Operation != OperationRevoke || len(destroy[0].Instances) != 450 {
		t.Fatalf("create %d calls, destroy %d calls", len(create), len(destroy))
	}

	p1 := []Node{{System: "bk_sops", Type: "project", ID: "project1"}}
	p2 := []Node{{System: "bk_sops", Type: "project", ID: "project2"}}
	old := map[string]CreatorInstance{"m1": {ID: "m1", Name: "one", Ancestors: p1}}
	moved := map[string]CreatorInstance{"m1": {ID: "m1", Name: "one", Ancestors: p2}}
	calls, _ := PlanCreator(sops, CreatorHeld(sops, old), moved, limits)
	if len(calls) != 2 || calls[0].Operation != OperationGrant || calls[0].Instances[0].Ancestors[0].ID != "project2" ||
		calls[1].Operation != OperationRevoke || calls[1].Instances[0].Ancestors[0].ID != "project1" {
		t.Fatalf("move: %+v", calls)
	}
	renamed := map[string]CreatorInstance{"m1": {ID: "m1", Name: "new name", Ancestors: p1}}
	if calls, _ := PlanCreator(sops, CreatorHeld(sops, old), renamed, limits); len(calls) != 0 {
		t.Fatalf("rename sent %+v", calls)
	}
	if _, err := PlanCreator(sops, nil, map[string]CreatorInstance{}, limits); err == nil {
		t.Fatal("an empty creator grant was planned")
	}
}
