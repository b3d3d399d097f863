package sandbox_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// The expiry of user policies as the real IAM keeps it (package doc, "Semantics": Expiry, Expired
// user policies): one expired_at per (subject, system, action), raised only; an expired policy
// stays a row that a grant merges into; the housekeeping deletes it a year after it expired.

const (
	day       = 24 * time.Hour
	permanent = 4102444800
	later     = 1800000000 // after yearLater
	muchLater = 1900000000
)

// testClock is a clock a test moves (sandbox.WithNow(c.now)).
type testClock struct{ t time.Time }

func (c *testClock) now() time.Time { return c.t }

func expiredAt(n int64) string { return `,"expired_at":` + itoa(int(n)) }

// grantOn is a grant of bk_cmdb's edit_host on host id through ep (batch_instance or batch_path);
// extra is appended to the body (",\"expired_at\":N").
func grantOn(ep, subj, id, extra string) string {
	if ep == "batch_path" {
		return strings.TrimSuffix(pathCall("grant", subj, []string{id}), "}") + extra + "}"
	}
	return instBody("grant", "user", subj, []string{"edit_host"}, "host", []string{id}, extra)
}

// stored returns the one custom policy of subj and action, failing when there is more than one;
// ok is false when there is none.
func stored(t *testing.T, s *sandbox.Server, subj, action string) (p sandbox.PolicyView, ok bool) {
	t.Helper()
	var found []sandbox.PolicyView
	for _, v := range s.Policies(sandbox.PolicyFilter{SubjectID: subj, Action: action}).Policies {
		if v.TemplateID == 0 {
			found = append(found, v)
		}
	}
	switch len(found) {
	case 0:
		return p, false
	case 1:
		return found[0], true
	}
	t.Fatalf("%d custom policies of %s %s: %+v", len(found), subj, action, found)
	return p, false
}

// wantEntryID asserts the policy_id a grant or revoke answers for action.
func wantEntryID(t *testing.T, r response, action string, id int64) {
	t.Helper()
	e, ok := findEntry(r.entries(t), action)
	if !ok || e.PolicyID != id {
		t.Fatalf("want %s with policy_id %d in the answer, got %s", action, id, r.raw)
	}
}

// Rules 2 and 3: a new user policy takes expired_at, or now+365 days without it; a grant to an
// existing policy raises its expiry only to a greater expired_at (0 or none changes nothing), never
// lowers it, and keeps the policy_id — on both grant routes and both transports.
func TestExpiryRaisedOnlyOnEveryGrantRoute(t *testing.T) {
	cases := []struct {
		name          string
		first, second string // expired_at of the first grant and of the re-grant a month later
		wantFirst     int64
		want          int64
	}{
		{"default for a new policy, kept by a re-grant without expired_at", "", "", yearLater, yearLater},
		{"given for a new policy, kept by a re-grant without expired_at", expiredAt(later), "", later, later},
		{"0 changes nothing", expiredAt(later), expiredAt(0), later, later},
		{"a smaller expired_at does not lower it", expiredAt(muchLater), expiredAt(later), muchLater, muchLater},
		{"an equal expired_at changes nothing", expiredAt(later), expiredAt(later), later, later},
		{"a greater expired_at raises it", expiredAt(later), expiredAt(muchLater), later, muchLater},
		{"a greater expired_at raises the default", "", expiredAt(muchLater), yearLater, muchLater},
	}
	for _, ep := range []string{"batch_instance", "batch_path"} {
		for _, tc := range cases {
			t.Run(ep+"/"+tc.name, func(t *testing.T) {
				bothTransports(t, func(t *testing.T, tr string) {
					c := &testClock{fixedNow}
					s := newServer(t, sandbox.WithNow(c.now))
					wantOK(t, send(t, s, tr, ep, grantOn(ep, "alice", "1", tc.first)))
					if p, _ := stored(t, s, "alice", "edit_host"); p.PolicyID != 1 || p.ExpiredAt != tc.wantFirst {
						t.Fatalf("first grant: policy %d expires at %d, want 1 and %d", p.PolicyID, p.ExpiredAt, tc.wantFirst)
					}
					c.t = c.t.Add(30 * day)
					r := send(t, s, tr, ep, grantOn(ep, "alice", "2", tc.second))
					wantOK(t, r)
					wantEntryID(t, r, "edit_host", 1)
					wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "edit_host", tc.want, false, "/bk_cmdb,host,1/", "/bk_cmdb,host,2/")+`]}`)
				})
			})
		}
	}
}

// One expiry per policy, for everything it holds: a grant of what the policy already holds, with a
// later expired_at, adds nothing and raises the whole policy's expiry, keeping its policy_id, on
// both grant routes; so does a combination that a stored group contains (package doc of
// internal/bkiam, "Writing": expiry on re-grant). A renewal of a grant of many instances sends one.
func TestGrantOfHeldInstancesRaisesTheWholePolicy(t *testing.T) {
	for _, ep := range []string{"batch_instance", "batch_path"} {
		t.Run(ep, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				c := &testClock{fixedNow}
				s := newServer(t, sandbox.WithNow(c.now))
				first := instBody("grant", "user", "alice", []string{"edit_host"}, "host", []string{"1", "2", "3"}, expiredAt(later))
				if ep == "batch_path" {
					first = strings.TrimSuffix(pathCall("grant", "alice", []string{"1", "2", "3"}), "}") + expiredAt(later) + "}"
				}
				wantOK(t, send(t, s, tr, ep, first))
				c.t = c.t.Add(30 * day)
				r := send(t, s, tr, ep, grantOn(ep, "alice", "2", expiredAt(muchLater)))
				wantOK(t, r)
				wantEntryID(t, r, "edit_host", 1)
				wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "edit_host", muchLater, false,
					"/bk_cmdb,host,1/", "/bk_cmdb,host,2/", "/bk_cmdb,host,3/")+`]}`)
			})
		})
	}
	t.Run("combined", func(t *testing.T) {
		s := newServer(t)
		withExpiry := func(body string, exp int64) string { return strings.TrimSuffix(body, "}") + expiredAt(exp) + "}" }
		wantOK(t, send(t, s, gw, "batch_instance", withExpiry(combinedBody("grant", "alice", []string{"1", "3"}, []string{"7", "8"}), later)))
		r := send(t, s, gw, "batch_instance", withExpiry(combinedBody("grant", "alice", []string{"1"}, []string{"7"}), muchLater))
		wantOK(t, r)
		wantEntryID(t, r, "edit_biz_host", 1)
		wantPolicies(t, s, all, `{"policies":[{"policy_id":1,"system":"bk_cmdb","subject":{"type":"user","id":"alice"},"action":"edit_biz_host",`+
			`"expired_at":`+itoa(muchLater)+`,"any":false,"groups":[{"biz":["/bk_cmdb,biz,1/","/bk_cmdb,biz,3/"],"host":["/bk_cmdb,host,7/","/bk_cmdb,host,8/"]}]}]}`)
	})
}

// Rule 4: an expired user policy is still a row (listed with its past expired_at, readable by id).
// A grant without expired_at merges into it and leaves it expired; a later expired_at, or a
// creator grant, revives it; either way it keeps its policy_id. A partial revoke keeps it expired;
// a revoke that empties it deletes it.
func TestExpiredUserPolicyStaysARow(t *testing.T) {
	expired := fixedNow.Add(day).Unix()
	view := func(op string, ids ...string) string {
		return instBody(op, "user", "alice", []string{"view_biz"}, "biz", ids, "")
	}
	cases := []struct {
		name, ep, body string
		want           int64    // view_biz's expiry afterwards
		paths          []string // view_biz's paths afterwards; nil: the policy is gone
	}{
		{"a grant without expired_at leaves it expired", "batch_instance", view("grant", "2"),
			expired, []string{"/bk_cmdb,biz,1/", "/bk_cmdb,biz,2/", "/bk_cmdb,biz,3/"}},
		{"expired_at 0 leaves it expired", "batch_instance", instBody("grant", "user", "alice", []string{"view_biz"}, "biz", []string{"2"}, expiredAt(0)),
			expired, []string{"/bk_cmdb,biz,1/", "/bk_cmdb,biz,2/", "/bk_cmdb,biz,3/"}},
		{"a batch_path grant without expired_at leaves it expired", "batch_path",
			`{"system":"bk_cmdb","operate":"grant","subject":{"type":"user","id":"alice"},"actions":[{"id":"view_biz"}],"resources":[{"system":"bk_cmdb","type":"biz","paths":[[{"type":"biz","id":"2","name":"b"}]]}]}`,
			expired, []string{"/bk_cmdb,biz,1/", "/bk_cmdb,biz,2/", "/bk_cmdb,biz,3/"}},
		{"a grant of what it holds leaves it expired", "batch_instance", view("grant", "1"),
			expired, []string{"/bk_cmdb,biz,1/", "/bk_cmdb,biz,3/"}},
		{"a later expired_at revives it", "batch_instance", instBody("grant", "user", "alice", []string{"view_biz"}, "biz", []string{"2"}, expiredAt(later)),
			later, []string{"/bk_cmdb,biz,1/", "/bk_cmdb,biz,2/", "/bk_cmdb,biz,3/"}},
		{"a creator grant revives it, permanent", "batch_resource_creator_action", `{"system":"bk_cmdb","type":"biz","creator":"alice","instances":[{"id":"2","name":"b2"}]}`,
			permanent, []string{"/bk_cmdb,biz,1/", "/bk_cmdb,biz,2/", "/bk_cmdb,biz,3/"}},
		{"a partial revoke keeps it expired", "batch_instance", view("revoke", "3"), expired, []string{"/bk_cmdb,biz,1/"}},
		{"a revoke that empties it deletes it", "batch_instance", view("revoke", "1", "3"), 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				c := &testClock{fixedNow}
				s := newServer(t, sandbox.WithNow(c.now))
				wantOK(t, send(t, s, tr, "batch_instance", instBody("grant", "user", "alice", []string{"view_biz"}, "biz", []string{"1", "3"}, expiredAt(expired))))
				backendID := listRows(t, s, "bk_cmdb", "view_biz", "").Data.Results[0].ID
				c.t = c.t.Add(30 * day) // expired 29 days ago
				if p, ok := stored(t, s, "alice", "view_biz"); !ok || p.PolicyID != 1 || p.ExpiredAt != expired {
					t.Fatalf("the expired policy is not listed as it was: %+v %v", p, ok)
				}
				if r := getRead(t, s, "/api/v1/systems/bk_cmdb/policies/"+itoa(int(backendID)), goodAuth); r.code() != 0 ||
					!strings.Contains(r.raw, `"expired_at":`+itoa(int(expired))) {
					t.Fatalf("the expired policy does not read by id: %s", r.raw)
				}
				r := send(t, s, tr, tc.ep, tc.body)
				wantOK(t, r)
				wantEntryID(t, r, "view_biz", 1)
				p, ok := stored(t, s, "alice", "view_biz")
				switch {
				case tc.paths == nil && ok:
					t.Fatalf("want the policy deleted, got %+v", p)
				case tc.paths != nil && (!ok || p.PolicyID != 1 || p.ExpiredAt != tc.want || strings.Join(p.Paths, " ") != strings.Join(tc.paths, " ")):
					t.Fatalf("got %+v (found %v), want policy 1 expiring at %d with %v", p, ok, tc.want, tc.paths)
				}
			})
		})
	}
}

// Rule 5: a creator grant makes every policy it touches permanent — new ones, ones with the
// default or a given expiry, expired ones (same policy_id) — and a later grant with a smaller
// expired_at does not lower them. A policy it does not touch keeps its expiry.
func TestCreatorGrantIsPermanent(t *testing.T) {
	cases := []struct {
		name   string
		before string // expired_at of alice's view_biz before the creator grant; "-" for none
		age    time.Duration
	}{
		{"no policy yet", "-", 0},
		{"the default expiry", "", 0},
		{"a given expiry", expiredAt(later), 0},
		{"permanent already", expiredAt(permanent), 0},
		{"expired", expiredAt(fixedNow.Add(day).Unix()), 30 * day},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				c := &testClock{fixedNow}
				s := newServer(t, sandbox.WithNow(c.now))
				wantOK(t, send(t, s, tr, "batch_instance", hostGrant("alice", "1"))) // untouched by the creator grant
				if tc.before != "-" {
					wantOK(t, send(t, s, tr, "batch_instance", instBody("grant", "user", "alice", []string{"view_biz"}, "biz", []string{"1"}, tc.before)))
				}
				c.t = c.t.Add(tc.age)
				wantOK(t, send(t, s, tr, "batch_resource_creator_action", `{"system":"bk_cmdb","type":"biz","creator":"alice","instances":[{"id":"2","name":"b2"}]}`))
				wantOK(t, send(t, s, tr, "batch_instance", instBody("grant", "user", "alice", []string{"view_biz", "edit_biz"}, "biz", []string{"3"}, expiredAt(later))))
				for _, a := range []string{"view_biz", "edit_biz"} {
					if p, ok := stored(t, s, "alice", a); !ok || p.ExpiredAt != permanent {
						t.Errorf("%s: %+v (found %v), want it permanent", a, p, ok)
					}
				}
				if p, _ := stored(t, s, "alice", "view_biz"); tc.before != "-" && p.PolicyID != 2 {
					t.Errorf("view_biz changed its policy_id: %+v", p)
				}
				if p, _ := stored(t, s, "alice", "edit_host"); p.ExpiredAt != yearLater {
					t.Errorf("edit_host, not the creator grant's, expires at %d, want %d", p.ExpiredAt, yearLater)
				}
			})
		})
	}
}

// Rule 6: the housekeeping deletes a user's custom policy expired for more than 365 days (expired_at
// < now - 365 days), lazily, whichever call comes first: each route below sees it gone. A policy
// expired for exactly 365 days, or less, stays. A re-grant after the purge creates a new policy
// with the 365-day default. A group policy, another user's later one and a user's template row
// (not the housekeeping's) stay.
func TestExpiredPolicyPurge(t *testing.T) {
	expiry := time.Unix(yearLater, 0) // alice's edit_host, granted at fixedNow with the default
	const newID = 5                   // after alice's (1), group 1's (2), bob's (3) and the template row (4)
	type trigger struct {
		name string
		// see runs a call at the test's time and reports whether its answer (or, for the read
		// list, which never shows an expired row, the state file) shows the policy gone.
		see func(t *testing.T, s *sandbox.Server, backendID int64, state string) bool
	}
	triggers := []trigger{
		{"inspection", func(t *testing.T, s *sandbox.Server, _ int64, _ string) bool {
			_, ok := stored(t, s, "alice", "edit_host")
			return !ok
		}},
		{"read by id", func(t *testing.T, s *sandbox.Server, id int64, _ string) bool {
			r := getRead(t, s, "/api/v1/systems/bk_cmdb/policies/"+itoa(int(id)), goodAuth)
			if c := r.code(); c != 0 && c != 1901404 {
				t.Fatalf("read by id: %s", r.raw)
			}
			return r.code() == 1901404
		}},
		{"read list", func(t *testing.T, s *sandbox.Server, _ int64, state string) bool {
			listRows(t, s, "bk_cmdb", "edit_host", "")
			return !savedPolicy(t, state, 1)
		}},
		{"grant of another action", func(t *testing.T, s *sandbox.Server, _ int64, _ string) bool {
			r := send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"view_host"}, "host", []string{"1"}, ""))
			wantOK(t, r)
			_, listed := findEntry(r.entries(t), "edit_host")
			return !listed
		}},
		{"revoke", func(t *testing.T, s *sandbox.Server, _ int64, _ string) bool {
			r := send(t, s, esb, "batch_instance", hostRevoke("alice", "2"))
			wantOK(t, r)
			return len(r.entries(t)) == 0
		}},
		{"creator grant", func(t *testing.T, s *sandbox.Server, _ int64, _ string) bool {
			r := send(t, s, gw, "batch_resource_creator_action", `{"system":"bk_cmdb","type":"biz","creator":"alice","instances":[{"id":"2","name":"b2"}]}`)
			wantOK(t, r)
			_, listed := findEntry(r.entries(t), "edit_host")
			return !listed
		}},
		{"re-grant", func(t *testing.T, s *sandbox.Server, _ int64, _ string) bool {
			r := send(t, s, gw, "batch_path", pathCall("grant", "alice", []string{"2"}))
			wantOK(t, r)
			e, _ := findEntry(r.entries(t), "edit_host")
			if e.PolicyID != 1 && e.PolicyID != newID {
				t.Fatalf("re-grant: %s", r.raw)
			}
			return e.PolicyID == newID
		}},
	}
	cases := []struct {
		name string
		at   time.Time
		gone bool
	}{
		{"expired for a month", expiry.Add(30 * day), false},
		{"expired for exactly 365 days", expiry.Add(365 * day), false},
		{"expired for 365 days and a second", expiry.Add(365*day + time.Second), true},
		{"expired for two years", expiry.Add(730 * day), true},
	}
	for _, tc := range cases {
		for _, tr := range triggers {
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				c := &testClock{fixedNow}
				state := filepath.Join(t.TempDir(), "state.json")
				s := newServer(t, sandbox.WithNow(c.now), sandbox.WithStateFile(state))
				wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "1", "2")))
				wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "group", "1", []string{"edit_host"}, "host", []string{"1"}, "")))
				wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "user", "bob", []string{"edit_host"}, "host", []string{"1"}, expiredAt(permanent-1))))
				if err := s.AddTemplatePolicy("bk_cmdb", sandbox.TemplatePolicy{TemplateID: 7, User: "alice", Action: "edit_host",
					Paths: []string{"/bk_cmdb,host,9/"}, ExpiredAt: yearLater}); err != nil {
					t.Fatal(err)
				}
				backendID := listRows(t, s, "bk_cmdb", "edit_host", "").Data.Results[0].ID
				c.t = tc.at
				if got := tr.see(t, s, backendID, state); got != tc.gone {
					t.Fatalf("%s sees the policy gone: %v, want %v", tr.name, got, tc.gone)
				}
				p, ok := stored(t, s, "alice", "edit_host")
				switch {
				case !tc.gone && (!ok || p.PolicyID != 1 || p.ExpiredAt != yearLater):
					t.Fatalf("want alice's policy 1 kept, expiring at %d: %+v (found %v)", int64(yearLater), p, ok)
				case tc.gone && tr.name == "re-grant" && (!ok || p.PolicyID != newID || p.ExpiredAt != tc.at.Unix()+365*24*3600 ||
					strings.Join(p.Paths, " ") != "/bk_cmdb,host,2/"):
					t.Fatalf("want a new policy %d with the default expiry and host 2 alone, got %+v (found %v)", newID, p, ok)
				case tc.gone && tr.name != "re-grant" && ok:
					t.Fatalf("want alice's policy purged, got %+v", p)
				}
				for _, subj := range []string{"1", "bob"} {
					if _, ok := stored(t, s, subj, "edit_host"); !ok {
						t.Errorf("%s's policy was purged", subj)
					}
				}
				var template bool
				for _, v := range s.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies {
					template = template || v.TemplateID == 7
				}
				if !template {
					t.Errorf("alice's template row was purged")
				}
			})
		}
	}
}

// savedPolicy reports whether the state file at path holds the policy with the policy_id id.
func savedPolicy(t *testing.T, path string, id int64) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sf struct {
		Policies []struct {
			PolicyID int64 `json:"policy_id"`
		} `json:"policies"`
	}
	if err := json.Unmarshal(b, &sf); err != nil {
		t.Fatalf("state file: %v", err)
	}
	for _, p := range sf.Policies {
		if p.PolicyID == id {
			return true
		}
	}
	return false
}
