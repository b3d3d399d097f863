package ledger

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var alice = Scope{System: "bk_cmdb", SubjectType: "user", SubjectID: "alice"}

func claims(action string, exp int64, paths ...string) Claims {
	return Claims{Scope: alice, Actions: map[string]Action{action: {Paths: paths, ExpiresAt: exp}}}
}

func TestPlanReportsByOrder(t *testing.T) {
	for _, tc := range []struct {
		name                            string
		first, second                   func(l *Ledger, h *Holder) Report
		overlaps, spare, reassert, exps int
	}{
		{"claim then claim", claimPlan("/h,1/", "/h,2/"), claimPlan("/h,2/"), 1, 0, 0, 0},
		{"claim then revoke", claimPlan("/h,2/"), revokePlan("/h,2/", "/h,3/"), 0, 1, 0, 0},
		{"revoke then claim", revokePlan("/h,2/", "/h,3/"), claimPlan("/h,2/"), 0, 0, 1, 0},
		{"other expiry", claimPlanExp(5, "/h,1/"), claimPlanExp(9, "/h,2/"), 0, 0, 0, 1},
		{"disjoint", claimPlan("/h,1/"), revokePlan("/h,2/"), 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New()
			tc.first(l, NewHolder("first"))
			r := tc.second(l, NewHolder("second"))
			if len(r.Overlaps) != tc.overlaps || len(r.Spare) != tc.spare || len(r.Reassert) != tc.reassert || len(r.Expiries) != tc.exps {
				t.Errorf("report %+v, want %d overlaps, %d spare, %d reassert, %d expiries", r, tc.overlaps, tc.spare, tc.reassert, tc.exps)
			}
			for _, sh := range append(append(r.Overlaps, r.Spare...), r.Reassert...) {
				if sh.Other.Label != "first" {
					t.Errorf("%+v names %q, want the first holder", sh, sh.Other.Label)
				}
			}
		})
	}
}

func claimPlan(paths ...string) func(*Ledger, *Holder) Report { return claimPlanExp(1, paths...) }

func claimPlanExp(exp int64, paths ...string) func(*Ledger, *Holder) Report {
	return func(l *Ledger, h *Holder) Report { return l.Plan(h, claims("view", exp, paths...), Claims{}) }
}

func revokePlan(paths ...string) func(*Ledger, *Holder) Report {
	return func(l *Ledger, h *Holder) Report { return l.Plan(h, Claims{}, claims("view", 0, paths...)) }
}

// TestRevokeLeavesClaims: a revoke sends only what no other holder
// claims, for exact actions and AnyAction claims alike, and not what the
// holder itself claims elsewhere; a released holder spares nothing.
func TestRevokeLeavesClaims(t *testing.T) {
	l := New()
	keeper, revoker := NewHolder("keeper"), NewHolder("revoker")
	l.Claim(keeper, claims("view", 1, "/h,1/"))
	send, done, err := l.Revoke(context.Background(), revoker, alice, []string{"view", "edit"}, []string{"/h,1/", "/h,2/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	done()
	if fmt.Sprint(send) != "map[edit:[/h,1/ /h,2/] view:[/h,2/]]" {
		t.Errorf("send %v", send)
	}
	if got := l.Taken(keeper); len(got) != 0 {
		t.Errorf("keeper's path was spared, yet taken: %v", got)
	}
	l.Release(keeper)
	send, done, _ = l.Revoke(context.Background(), revoker, alice, []string{"view"}, []string{"/h,1/"}, nil)
	done()
	if fmt.Sprint(send) != "map[view:[/h,1/]]" {
		t.Errorf("after release, send %v", send)
	}
	// A claim made after the revoke was sent finds it taken.
	late := NewHolder("late")
	l.Claim(late, claims("view", 1, "/h,1/"))
	if got := l.Taken(late); fmt.Sprint(got) != "map[view:[/h,1/]]" {
		t.Errorf("taken %v", got)
	}
}

// TestRevokeHandsOverWhatItLeaves: the paths a revoke leaves, because
// another holder claims them or the caller asks to keep them, are handed
// to every holder that claims them, and only those; what it sends is not.
func TestRevokeHandsOverWhatItLeaves(t *testing.T) {
	l := New()
	claimant, revoker, other := NewHolder("claimant"), NewHolder("revoker"), NewHolder("other")
	l.Claim(claimant, claims("view", 1, "/h,1/", "/h,2/", "/h,3/"))
	l.Claim(other, claims("view", 1, "/h,9/"))
	keep := func(action, path string) bool { return action == "view" && path == "/h,2/" }
	send, done, err := l.Revoke(context.Background(), revoker, alice, []string{"view"}, []string{"/h,1/", "/h,2/", "/h,4/"}, keep)
	if err != nil {
		t.Fatal(err)
	}
	done()
	if fmt.Sprint(send) != "map[view:[/h,4/]]" {
		t.Errorf("send %v, want only the path nobody keeps", send)
	}
	if got := l.Handed(claimant); fmt.Sprint(got) != "map[view:[/h,1/ /h,2/]]" {
		t.Errorf("handed to the claimant %v, want the paths the revoke left", got)
	}
	if got := l.Handed(other); len(got) != 0 {
		t.Errorf("handed to a holder claiming none of them: %v", got)
	}
	if got := l.Handed(revoker); len(got) != 0 {
		t.Errorf("handed to the revoker itself: %v", got)
	}
	// An AnyAction claim is handed a path left for any action.
	anyone := NewHolder("any")
	l.Claim(anyone, claims(AnyAction, 1, "/h,2/"))
	if got := l.Handed(anyone); fmt.Sprint(got) != "map[view:[/h,2/]]" {
		t.Errorf("handed to an AnyAction claim %v", got)
	}
}

// TestGrantWaitsForRevokeInFlight and AnyAction claims hold revokes back.
func TestGrantWaitsForRevokeInFlight(t *testing.T) {
	l := New()
	revoker, granter := NewHolder("revoker"), NewHolder("granter")
	_, done, _ := l.Revoke(context.Background(), revoker, alice, []string{"view"}, []string{"/h,1/"}, nil)
	l.Claim(granter, claims("view", 1, "/h,1/"))
	var granted atomic.Bool
	go func() {
		_ = l.Grant(context.Background(), alice, []string{"/h,1/"})
		granted.Store(true)
	}()
	time.Sleep(20 * time.Millisecond)
	if granted.Load() {
		t.Fatal("the grant went out while a revoke of its path was in flight")
	}
	done()
	for !granted.Load() {
		time.Sleep(time.Millisecond)
	}

	creator := NewHolder("creator")
	l.Claim(creator, claims(AnyAction, 1, "/h,2/"))
	var revoked atomic.Bool
	go func() {
		_, done, _ := l.Revoke(context.Background(), revoker, alice, []string{"edit"}, []string{"/h,2/"}, nil)
		done()
		revoked.Store(true)
	}()
	time.Sleep(20 * time.Millisecond)
	if revoked.Load() {
		t.Fatal("a revoke went out while the path's actions were unknown")
	}
	l.Claim(creator, claims("view", 1, "/h,2/"))
	for !revoked.Load() {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, done, _ = l.Revoke(context.Background(), revoker, alice, []string{"edit"}, []string{"/h,3/"}, nil)
	cancel()
	if err := l.Grant(ctx, alice, []string{"/h,3/"}); err == nil {
		t.Error("a cancelled wait returned no error")
	}
	done()
}

// TestConcurrentRenames runs many rename pairs at once, in random order,
// under -race: each new holder claims and grants what an old one revokes.
// Whatever the order, each path ends granted after its last revoke.
func TestConcurrentRenames(t *testing.T) {
	l := New()
	type event struct {
		op   string
		path string
	}
	var mu sync.Mutex
	var log []event
	var wg sync.WaitGroup
	for i := range 50 {
		path := fmt.Sprintf("/h,%d/", i%5)
		wg.Add(2)
		go func() { // the old resource's destroy
			defer wg.Done()
			h := NewHolder("old")
			send, done, err := l.Revoke(context.Background(), h, alice, []string{"view"}, []string{path}, nil)
			if err == nil && len(send["view"]) > 0 {
				mu.Lock()
				log = append(log, event{"revoke", path})
				mu.Unlock()
			}
			done()
		}()
		go func() { // the new resource's create
			defer wg.Done()
			h := NewHolder("new")
			l.Claim(h, claims("view", 1, path))
			if err := l.Grant(context.Background(), alice, []string{path}); err != nil {
				t.Error(err)
			}
			mu.Lock()
			log = append(log, event{"grant", path})
			mu.Unlock()
		}()
	}
	wg.Wait()
	last := map[string]string{}
	for _, e := range log {
		last[e.path] = e.op
	}
	for path, op := range last {
		if op != "grant" {
			t.Errorf("%s: the last call was a %s", path, op)
		}
	}
}

// TestPendMeetsClaimsEitherWay: a holder whose paths are not known yet
// meets the holders of its scope that claim one of its actions, whichever
// registered first; nil actions meet every action; another action, or
// another scope, meets nothing.
func TestPendMeetsClaimsEitherWay(t *testing.T) {
	bob := Scope{System: "bk_cmdb", SubjectType: "user", SubjectID: "bob"}
	for _, tc := range []struct {
		name    string
		scope   Scope
		actions []string
		want    bool
	}{
		{"same action", alice, []string{"view_host"}, true},
		{"actions not known", alice, nil, true},
		{"another action", alice, []string{"edit_host"}, false},
		{"another subject", bob, []string{"view_host"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The claim first: Pend returns it.
			l := New()
			claimer := NewHolder("claimer")
			l.Plan(claimer, claims("view_host", 0, "/h,1/"), Claims{})
			if got := l.Pend(NewHolder("pending"), tc.scope, tc.actions); (len(got) == 1 && got[0] == claimer) != tc.want {
				t.Errorf("Pend after the claim returned %v, want the claimer: %v", got, tc.want)
			}
			// The pending holder first: the claim's report names it.
			l = New()
			pending := NewHolder("pending")
			l.Pend(pending, tc.scope, tc.actions)
			r := l.Plan(NewHolder("claimer"), claims("view_host", 0, "/h,1/"), Claims{})
			if (len(r.Pending) == 1 && r.Pending[0] == pending) != tc.want {
				t.Errorf("the claim's report names %v pending, want the pending holder: %v", r.Pending, tc.want)
			}
		})
	}
}

// TestEveryActionMeetsEachAction: a holder that grants every action of the
// scope with one expiry (a creator grant: IAM makes each action of the
// type's creator configuration permanent, named or not) meets another
// holder's expiry for any action, planned before or after it, except one
// it names itself (compared as that action); equal expiries meet nothing.
func TestEveryActionMeetsEachAction(t *testing.T) {
	creator := func(named string) Claims {
		c := claims(named, 9, "/job,1/")
		c.EveryAction = 9
		return c
	}
	for _, tc := range []struct {
		name        string
		first, then func(l *Ledger, h *Holder) Report
		want        []string // the second's report: action mine theirs
	}{
		{"creator first", func(l *Ledger, h *Holder) Report { return l.Plan(h, creator("view"), Claims{}) },
			func(l *Ledger, h *Holder) Report { return l.Plan(h, claims("edit", 5, "/job,5/"), Claims{}) }, []string{"edit 5 9"}},
		{"creator second", func(l *Ledger, h *Holder) Report { return l.Plan(h, claims("edit", 5, "/job,5/"), Claims{}) },
			func(l *Ledger, h *Holder) Report { return l.Plan(h, creator("view"), Claims{}) }, []string{"edit 9 5"}},
		{"a named action", func(l *Ledger, h *Holder) Report { return l.Plan(h, creator("edit"), Claims{}) },
			func(l *Ledger, h *Holder) Report { return l.Plan(h, claims("edit", 5, "/job,5/"), Claims{}) }, []string{"edit 5 9"}},
		{"the same expiry", func(l *Ledger, h *Holder) Report { return l.Plan(h, creator("view"), Claims{}) },
			func(l *Ledger, h *Holder) Report { return l.Plan(h, claims("edit", 9, "/job,5/"), Claims{}) }, nil},
		{"two creators", func(l *Ledger, h *Holder) Report { return l.Plan(h, creator("view"), Claims{}) },
			func(l *Ledger, h *Holder) Report { return l.Plan(h, creator("edit"), Claims{}) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New()
			tc.first(l, NewHolder("first"))
			var got []string
			for _, e := range tc.then(l, NewHolder("second")).Expiries {
				got = append(got, fmt.Sprintf("%s %d %d", e.Action, e.Mine, e.Theirs))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("expiries %q, want %q", got, tc.want)
			}
		})
	}
}
