package sandbox_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// instBody builds a batch_instance body for one resource type of bk_cmdb.
func instBody(op, subjType, subjID string, actions []string, typ string, ids []string, extra string) string {
	acts := make([]string, len(actions))
	for i, a := range actions {
		acts[i] = `{"id":"` + a + `"}`
	}
	res := "[]"
	if typ != "" {
		insts := make([]string, len(ids))
		for i, id := range ids {
			insts[i] = `{"id":"` + id + `","name":"n` + id + `"}`
		}
		res = `[{"system":"bk_cmdb","type":"` + typ + `","instances":[` + strings.Join(insts, ",") + `]}]`
	}
	return `{"system":"bk_cmdb","operate":"` + op + `","asynchronous":false,"subject":{"type":"` + subjType + `","id":"` + subjID +
		`"},"actions":[` + strings.Join(acts, ",") + `],"resources":` + res + extra + `}`
}

func hostGrant(subj string, ids ...string) string {
	return instBody("grant", "user", subj, []string{"edit_host"}, "host", ids, "")
}

func hostRevoke(subj string, ids ...string) string {
	return instBody("revoke", "user", subj, []string{"edit_host"}, "host", ids, "")
}

func policyJSON(id int64, subjType, subj, action string, exp int64, anyInst bool, paths ...string) string {
	if paths == nil {
		paths = []string{}
	}
	b, _ := json.Marshal(sandbox.PolicyView{PolicyID: id, System: "bk_cmdb", Subject: sandbox.Subject{Type: subjType, ID: subj},
		Action: action, ExpiredAt: exp, Any: anyInst, Paths: paths})
	return string(b)
}

const yearLater = 1798761600 // fixedNow + 365 days

func TestGrantMergeKeepsPolicyIDAndIsIdempotent(t *testing.T) {
	bothTransports(t, func(t *testing.T, tr string) {
		s := newServer(t)
		r := send(t, s, tr, "batch_instance", hostGrant("alice", "1"))
		wantOK(t, r)
		e, _ := findEntry(r.entries(t), "edit_host")
		if e.PolicyID != 1 || e.count() != 1 {
			t.Fatalf("first grant: %s", r.raw)
		}
		r = send(t, s, tr, "batch_instance", hostGrant("alice", "2", "1"))
		wantOK(t, r)
		if e, _ := findEntry(r.entries(t), "edit_host"); e.PolicyID != 1 || e.count() != 2 {
			t.Fatalf("merge changed the id or count: %s", r.raw)
		}
		r = send(t, s, tr, "batch_instance", hostGrant("alice", "2"))
		wantOK(t, r)
		if e, _ := findEntry(r.entries(t), "edit_host"); e.PolicyID != 1 || e.count() != 2 {
			t.Fatalf("idempotent grant changed something: %s", r.raw)
		}
		wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "edit_host", yearLater, false, "/bk_cmdb,host,1/", "/bk_cmdb,host,2/")+`]}`)
	})
}

func TestGrantAnswerListsAllPoliciesOfTheSubject(t *testing.T) {
	s := newServer(t)
	wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"view_biz"}, "biz", []string{"9"}, "")))
	wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "user", "bob", []string{"view_host"}, "host", []string{"1"}, "")))
	r := send(t, s, gw, "batch_instance", hostGrant("alice", "1", "2"))
	wantOK(t, r)
	es := r.entries(t)
	// The known server bug: view_biz (not requested) is listed too; bob's policy is not.
	if len(es) != 2 || es[0].Action.ID != "view_biz" || es[0].PolicyID != 1 || es[0].count() != 1 ||
		es[1].Action.ID != "edit_host" || es[1].PolicyID != 3 || es[1].count() != 2 {
		t.Fatalf("grant data: %s", r.raw)
	}
	// A revoke lists only the requested actions.
	r = send(t, s, gw, "batch_instance", hostRevoke("alice", "1"))
	wantOK(t, r)
	if es := r.entries(t); len(es) != 1 || es[0].Action.ID != "edit_host" || es[0].PolicyID != 3 || es[0].count() != 1 {
		t.Fatalf("revoke data: %s", r.raw)
	}
	wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "view_biz", yearLater, false, "/bk_cmdb,biz,9/")+`,`+
		policyJSON(2, "user", "bob", "view_host", yearLater, false, "/bk_cmdb,host,1/")+`,`+
		policyJSON(3, "user", "alice", "edit_host", yearLater, false, "/bk_cmdb,host,2/")+`]}`)
}

func TestRevokeSemantics(t *testing.T) {
	bothTransports(t, func(t *testing.T, tr string) {
		s := newServer(t)
		// Revoking what was never granted: no error, action skipped.
		r := send(t, s, tr, "batch_instance", hostRevoke("alice", "1"))
		wantOK(t, r)
		if es := r.entries(t); len(es) != 0 || !strings.Contains(r.raw, `"data":[]`) {
			t.Fatalf("revoke of nothing: %s", r.raw)
		}
		wantOK(t, send(t, s, tr, "batch_instance", hostGrant("alice", "1", "2")))
		// Instances not in the policy leave it unchanged but it is still listed.
		r = send(t, s, tr, "batch_instance", hostRevoke("alice", "3"))
		wantOK(t, r)
		if e, ok := findEntry(r.entries(t), "edit_host"); !ok || e.PolicyID != 1 || e.count() != 2 {
			t.Fatalf("revoke of other instance: %s", r.raw)
		}
		wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "edit_host", yearLater, false, "/bk_cmdb,host,1/", "/bk_cmdb,host,2/")+`]}`)
		r = send(t, s, tr, "batch_instance", hostRevoke("alice", "1"))
		wantOK(t, r)
		wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "edit_host", yearLater, false, "/bk_cmdb,host,2/")+`]}`)
		// Emptying deletes the policy; its old id and old count are returned.
		r = send(t, s, tr, "batch_instance", hostRevoke("alice", "2"))
		wantOK(t, r)
		if e, ok := findEntry(r.entries(t), "edit_host"); !ok || e.PolicyID != 1 || e.count() != 1 {
			t.Fatalf("emptying revoke: %s", r.raw)
		}
		wantPolicies(t, s, all, noPolicies)
		// The next grant creates a new id.
		r = send(t, s, tr, "batch_instance", hostGrant("alice", "2"))
		wantOK(t, r)
		if e, _ := findEntry(r.entries(t), "edit_host"); e.PolicyID != 2 {
			t.Fatalf("grant after delete reused the id: %s", r.raw)
		}
		wantPolicies(t, s, all, `{"policies":[`+policyJSON(2, "user", "alice", "edit_host", yearLater, false, "/bk_cmdb,host,2/")+`]}`)
	})
}

func TestEmptyInstancesMeanAny(t *testing.T) {
	s := newServer(t)
	wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "1")))
	r := send(t, s, gw, "batch_instance", hostGrant("alice"))
	wantOK(t, r)
	if e, _ := findEntry(r.entries(t), "edit_host"); e.PolicyID != 1 || e.count() != 0 {
		t.Fatalf("any grant: %s", r.raw)
	}
	wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "edit_host", yearLater, true)+`]}`)
	// Instances are covered by any; revoking an instance leaves any untouched.
	wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "5")))
	wantOK(t, send(t, s, gw, "batch_instance", hostRevoke("alice", "5")))
	wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "edit_host", yearLater, true)+`]}`)
	// Revoking with empty instances removes nothing from an action with related types (package doc of
	// internal/bkiam, "Writing"); see TestRevokeEmptyInstances.
	wantOK(t, send(t, s, gw, "batch_instance", hostRevoke("alice")))
	wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "edit_host", yearLater, true)+`]}`)
}

func TestAdminIsEchoedWithPolicyIDZero(t *testing.T) {
	for _, id := range []string{"admin", "Admin", "ADMIN"} {
		for _, op := range []string{"grant", "revoke"} {
			t.Run(id+"/"+op, func(t *testing.T) {
				s := newServer(t)
				r := send(t, s, gw, "batch_instance", instBody(op, "user", id, []string{"edit_host", "view_host"}, "host", []string{"1"}, ""))
				wantOK(t, r)
				// statistics is always present: an admin echo counts the requested instances.
				if !strings.Contains(r.raw, `"data":[{"action":{"id":"edit_host"},"policy_id":0,"statistics":{"instance_count":1}},{"action":{"id":"view_host"},"policy_id":0,"statistics":{"instance_count":1}}]`) {
					t.Fatalf("admin echo: %s", r.raw)
				}
				wantPolicies(t, s, all, noPolicies)
			})
		}
	}
	s := newServer(t)
	r := send(t, s, gw, "batch_resource_creator_action", `{"system":"bk_cmdb","type":"biz","creator":"aDmIn","instances":[{"id":"1","name":"b"}]}`)
	wantOK(t, r)
	if !strings.Contains(r.raw, `"data":[{"action":{"id":"view_biz"},"policy_id":0,"statistics":{"instance_count":1}},{"action":{"id":"edit_biz"},"policy_id":0,"statistics":{"instance_count":1}}]`) {
		t.Fatalf("creator admin echo: %s", r.raw)
	}
	wantPolicies(t, s, all, noPolicies)
}

// Unknown subjects (package doc of internal/bkiam, "Writing"): an unknown user is 1902412
// "user[x] not exists" for grant and revoke alike. Group ids are not checked by the serializer; a
// grant to an unknown group (a non-numeric id is just as unknown) fails with an unhandled error,
// 1902500 and HTTP 500 (HTTP 200 on ESB, which passes SaaS bodies inside a 200), and a revoke
// answers OK with data [].
func TestUnknownSubjects(t *testing.T) {
	groupErr := func(id string) string {
		return "unhandled error while granting to group[" + id + "]: the group does not exist (SYSTEM_ERROR)"
	}
	cases := []struct {
		name, ep, body string
		status, code   int
		msg            string
	}{
		{"user", "batch_instance", instBody("grant", "user", "zed", []string{"edit_host"}, "host", []string{"1"}, ""), 200, 1902412, "Parameter verification failed: user[zed] not exists (VALIDATE_ERROR)"},
		{"user revoke", "batch_instance", instBody("revoke", "user", "zed", []string{"edit_host"}, "host", []string{"1"}, ""), 200, 1902412, "Parameter verification failed: user[zed] not exists (VALIDATE_ERROR)"},
		{"group", "batch_instance", instBody("grant", "group", "42", []string{"edit_host"}, "host", []string{"1"}, ""), 500, 1902500, groupErr("42")},
		{"non-numeric group", "batch_instance", instBody("grant", "group", "devs", []string{"edit_host"}, "host", []string{"1"}, ""), 500, 1902500, groupErr("devs")},
		{"group by path", "batch_path", `{"system":"bk_sops","operate":"grant","subject":{"type":"group","id":"42"},"actions":[{"id":"project_view"}],"resources":[{"system":"bk_sops","type":"project","paths":[[` + sopsNode("project", "p") + `]]}]}`, 500, 1902500, groupErr("42")},
		{"creator", "batch_resource_creator_action", `{"system":"bk_job","type":"job","creator":"zed","instances":[{"id":"j","name":"j"}]}`, 200, 1902412, "Parameter verification failed: user[zed] not exists (VALIDATE_ERROR)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				s := newServer(t)
				wantSaaSError(t, tr, send(t, s, tr, tc.ep, tc.body), tc.status, tc.code, tc.msg)
				wantPolicies(t, s, all, noPolicies)
			})
		})
	}
	for _, id := range []string{"42", "devs"} {
		t.Run("group revoke "+id, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				s := newServer(t)
				r := send(t, s, tr, "batch_instance", instBody("revoke", "group", id, []string{"edit_host"}, "host", []string{"1"}, ""))
				wantOK(t, r)
				if !strings.Contains(r.raw, `"data":[]`) {
					t.Fatalf("want data [], got %s", r.raw)
				}
			})
		})
	}
}

func TestExpiry(t *testing.T) {
	now := fixedNow
	clock := func() time.Time { return now }
	s := newServer(t, sandbox.WithNow(clock))
	exp := func(body string) {
		t.Helper()
		wantOK(t, send(t, s, gw, "batch_instance", body))
	}
	// User default: 365 days. Group: never.
	exp(hostGrant("alice", "1"))
	exp(instBody("grant", "group", "1", []string{"edit_host"}, "host", []string{"1"}, ""))
	// An explicit later expiry raises; an earlier one does not lower.
	exp(instBody("grant", "user", "bob", []string{"edit_host"}, "host", []string{"1"}, `,"expired_at":1800000000`))
	exp(instBody("grant", "user", "bob", []string{"edit_host"}, "host", []string{"2"}, `,"expired_at":1790000000`))
	// A grant without expired_at a month later changes nothing: the 365-day default is for new
	// policies only (package doc of internal/bkiam, "Writing": expiry on re-grant).
	now = now.Add(30 * 24 * time.Hour)
	exp(hostGrant("alice", "2"))
	wantPolicies(t, s, all, `{"policies":[`+
		policyJSON(1, "user", "alice", "edit_host", yearLater, false, "/bk_cmdb,host,1/", "/bk_cmdb,host,2/")+`,`+
		policyJSON(2, "group", "1", "edit_host", 4102444800, false, "/bk_cmdb,host,1/")+`,`+
		policyJSON(3, "user", "bob", "edit_host", 1800000000, false, "/bk_cmdb,host,1/", "/bk_cmdb,host,2/")+`]}`)
	// Creator grants are permanent and upgrade an existing policy.
	exp(instBody("grant", "user", "carol", []string{"view_biz"}, "biz", []string{"1"}, ""))
	wantOK(t, send(t, s, gw, "batch_resource_creator_action", `{"system":"bk_cmdb","type":"biz","creator":"carol","instances":[{"id":"2","name":"b2"}]}`))
	wantPolicies(t, s, sandbox.PolicyFilter{SubjectID: "carol"}, `{"policies":[`+
		policyJSON(4, "user", "carol", "view_biz", 4102444800, false, "/bk_cmdb,biz,1/", "/bk_cmdb,biz,2/")+`,`+
		policyJSON(5, "user", "carol", "edit_biz", 4102444800, false, "/bk_cmdb,biz,2/")+`]}`)
}

func TestExpiredAtValidation(t *testing.T) {
	cases := []struct{ extra, msg string }{
		{`,"expired_at":1700000000`, `{"expired_at": ["greater than now timestamp"]}`},
		{`,"expired_at":4102444801`, `{"expired_at": ["Ensure this value is less than or equal to 4102444800."]}`},
		{`,"expired_at":-1`, `{"expired_at": ["Ensure this value is greater than or equal to 0."]}`},
		{`,"expired_at":"soon"`, `{"expired_at": ["A valid integer is required."]}`},
	}
	for _, tc := range cases {
		s := newServer(t)
		wantSaaSError(t, gw, send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"edit_host"}, "host", []string{"1"}, tc.extra)), 200, 1902412, tc.msg)
		wantPolicies(t, s, all, noPolicies)
	}
	// 0 means "not given": the default applies.
	s := newServer(t)
	wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"edit_host"}, "host", []string{"1"}, `,"expired_at":0`)))
	wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "edit_host", yearLater, false, "/bk_cmdb,host,1/")+`]}`)
}

func pathBody(op, subj string, action string, typ string, paths ...string) string {
	return `{"system":"bk_sops","operate":"` + op + `","subject":{"type":"user","id":"` + subj + `"},"actions":[{"id":"` + action +
		`"}],"resources":[{"system":"bk_sops","type":"` + typ + `","paths":[` + strings.Join(paths, ",") + `]}]}`
}

func sopsNode(typ, id string) string {
	return `{"system":"bk_sops","type":"` + typ + `","id":"` + id + `","name":"` + id + `"}`
}

func TestPathsWithAncestors(t *testing.T) {
	bothTransports(t, func(t *testing.T, tr string) {
		s := newServer(t)
		p1 := "[" + sopsNode("project", "project1") + "," + sopsNode("mini_app", "m1") + "]"
		r := send(t, s, tr, "batch_path", pathBody("grant", "alice", "mini_app_edit", "mini_app", p1))
		wantOK(t, r)
		if e, _ := findEntry(r.entries(t), "mini_app_edit"); e.PolicyID != 1 || e.count() != 1 {
			t.Fatalf("path grant: %s", r.raw)
		}
		want := `{"policies":[{"policy_id":1,"system":"bk_sops","subject":{"type":"user","id":"alice"},"action":"mini_app_edit","expired_at":1798761600,"any":false,"paths":["/bk_sops,project,project1/bk_sops,mini_app,m1/"]}]}`
		wantPolicies(t, s, all, want)
		// batch_instance revoke of m1 removes paths by string equality: the ancestor path stays.
		r = send(t, s, tr, "batch_instance", `{"system":"bk_sops","operate":"revoke","subject":{"type":"user","id":"alice"},"actions":[{"id":"mini_app_edit"}],"resources":[{"system":"bk_sops","type":"mini_app","instances":[{"id":"m1","name":"m1"}]}]}`)
		wantOK(t, r)
		wantPolicies(t, s, all, want)
		// A wildcard node's name may be "" (it must still be present: TestBatchPathNodes); paths ending
		// at an ancestor are stored as given.
		star := `[` + sopsNode("project", "project2") + `,{"system":"bk_sops","type":"mini_app","id":"*","name":""}]`
		wantOK(t, send(t, s, tr, "batch_path", pathBody("grant", "alice", "mini_app_edit", "mini_app", star)))
		// batch_path revoke with the full path removes it.
		wantOK(t, send(t, s, tr, "batch_path", pathBody("revoke", "alice", "mini_app_edit", "mini_app", p1)))
		wantPolicies(t, s, all, `{"policies":[{"policy_id":1,"system":"bk_sops","subject":{"type":"user","id":"alice"},"action":"mini_app_edit","expired_at":1798761600,"any":false,"paths":["/bk_sops,project,project2/bk_sops,mini_app,*/"]}]}`)
		// A node without name (not "*") is a field error.
		noName := `[{"system":"bk_sops","type":"project","id":"p"}]`
		wantSaaSError(t, tr, send(t, s, tr, "batch_path", pathBody("grant", "alice", "project_view", "project", noName)), 200, 1902412,
			`{"resources": [{"paths": [[{"name": ["This field is required."]}]]}]}`)
		// A node above the instance that repeats another's type and id is refused, as the SaaS's
		// translation for the backend does; one id under two types is no repeat.
		twice := "[" + sopsNode("project", "p") + "," + sopsNode("project", "p") + "," + sopsNode("mini_app", "m1") + "]"
		wantSaaSError(t, tr, send(t, s, tr, "batch_path", pathBody("grant", "alice", "mini_app_edit", "mini_app", twice)), 200, 1902416,
			"path: /project,p/project,p/ nodes must not repeat (INVALID_ARGS)")
		wantOK(t, send(t, s, tr, "batch_path", pathBody("grant", "alice", "mini_app_edit", "mini_app", "["+sopsNode("project", "x")+","+sopsNode("mini_app", "x")+"]")))
	})
}

func TestCreatorSubResourceTypeAndAncestors(t *testing.T) {
	s := newServer(t)
	// mini_app is a sub resource type of project in the creator tree.
	body := `{"system":"bk_sops","type":"mini_app","creator":"bob","instances":[{"id":"m9","name":"m9","ancestors":[{"system":"bk_sops","type":"project","id":"project9"}]}]}`
	bothTransports(t, func(t *testing.T, tr string) {
		wantSaaSError(t, tr, send(t, s, tr, "batch_resource_creator_action", body), 200, 1902416,
			"query instance name of system[bk_sops] resource type[project] id[project9] by callback failed: not found (INVALID_ARGS)")
	})
	wantPolicies(t, s, all, noPolicies)
	r := send(t, s, gw, "batch_resource_creator_action", `{"system":"bk_sops","type":"project","creator":"bob","instances":[{"id":"project1","name":"p"}]}`)
	wantOK(t, r)
	if es := r.entries(t); len(es) != 2 || es[0].Action.ID != "project_view" || es[1].Action.ID != "project_edit" {
		t.Fatalf("project creator: %s", r.raw)
	}
	errs := []struct{ body, msg string }{
		{`{"system":"bk_cmdb","type":"host","creator":"bob","instances":[{"id":"1","name":"h"}]}`,
			"Parameter verification failed: system[bk_cmdb]-action[host] do not register actions for authorization of creator (VALIDATE_ERROR)"},
		{`{"system":"bk_job","type":"job","creator":"bob","instances":[]}`, `{"instances": ["This list may not be empty."]}`},
	}
	before := policies(t, s, all)
	for _, e := range errs {
		wantSaaSError(t, gw, send(t, s, gw, "batch_resource_creator_action", e.body), 200, 1902412, e.msg)
	}
	if after := policies(t, s, all); after != before || !strings.Contains(after, `"/bk_sops,project,project1/"`) {
		t.Fatalf("store after creator errors: %s", after)
	}
	m, err := sandbox.LoadModel([]byte(`{"systems":[{"id":"s","resource_types":[{"id":"t"}],"actions":[{"id":"a","related_types":["t"]}],"allow_list":{"instance_actions":["*"],"creator_types":["*"]}}],
		"users":["bob"],"apps":[{"code":"bkiam-sandbox","secret":"sandbox-secret","client_of":["*"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s2 := newServer(t, sandbox.WithModel(m))
	wantSaaSError(t, gw, send(t, s2, gw, "batch_resource_creator_action", `{"system":"s","type":"t","creator":"bob","instances":[{"id":"1","name":"x"}]}`),
		200, 1902412, "Parameter verification failed: system[s] do not register resource_creator_actions config (VALIDATE_ERROR)")
}

func combinedBody(op, subj string, bizIDs, hostIDs []string) string {
	inst := func(ids []string) string {
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = `{"id":"` + id + `","name":"x"}`
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return `{"system":"bk_cmdb","operate":"` + op + `","subject":{"type":"user","id":"` + subj + `"},"actions":[{"id":"edit_biz_host"}],` +
		`"resources":[{"system":"bk_cmdb","type":"biz","instances":` + inst(bizIDs) + `},{"system":"bk_cmdb","type":"host","instances":` + inst(hostIDs) + `}]}`
}

// Combined resources follow the real server (package doc of internal/bkiam, "Writing"): a grant
// appends a resource group unless an existing group already contains it (contained groups are
// dropped); a revoke removes only the groups fully contained in the revoked one, and a partial
// overlap is a silent no-op that still answers OK.
func TestCombinedResources(t *testing.T) {
	head := `{"policies":[{"policy_id":1,"system":"bk_cmdb","subject":{"type":"user","id":"alice"},"action":"edit_biz_host","expired_at":1798761600,"any":false,"groups":`
	g13x78 := `{"biz":["/bk_cmdb,biz,1/","/bk_cmdb,biz,3/"],"host":["/bk_cmdb,host,7/","/bk_cmdb,host,8/"]}`
	g2x9 := `{"biz":["/bk_cmdb,biz,2/"],"host":["/bk_cmdb,host,9/"]}`
	g1x7 := `{"biz":["/bk_cmdb,biz,1/"],"host":["/bk_cmdb,host,7/"]}`
	g1x79 := `{"biz":["/bk_cmdb,biz,1/"],"host":["/bk_cmdb,host,7/","/bk_cmdb,host,9/"]}`
	type call struct {
		op        string
		biz, host []string
		count     int // statistics of the answer's entry; -2: do not check
	}
	cases := []struct {
		name   string
		calls  []call
		groups string // "" = no policy left
	}{
		{"identical group is not added twice",
			[]call{{"grant", []string{"1", "3"}, []string{"7", "8"}, 4}, {"grant", []string{"3", "1"}, []string{"8", "7"}, 4}},
			g13x78},
		{"a contained group adds nothing",
			[]call{{"grant", []string{"1", "3"}, []string{"7", "8"}, 4}, {"grant", []string{"1"}, []string{"7"}, 4}},
			g13x78},
		{"a disjoint group is appended",
			[]call{{"grant", []string{"1", "3"}, []string{"7", "8"}, 4}, {"grant", []string{"2"}, []string{"9"}, 6}},
			g13x78 + `,` + g2x9},
		{"a partly overlapping group is appended",
			[]call{{"grant", []string{"1"}, []string{"7"}, 2}, {"grant", []string{"1"}, []string{"9"}, 4}},
			g1x7 + `,{"biz":["/bk_cmdb,biz,1/"],"host":["/bk_cmdb,host,9/"]}`},
		{"a wider group drops the groups it contains",
			[]call{{"grant", []string{"1"}, []string{"7"}, 2}, {"grant", []string{"2"}, []string{"9"}, 4}, {"grant", []string{"1"}, []string{"7", "9"}, 5}},
			g2x9 + `,` + g1x79},
		{"revoke of a partial overlap is a no-op",
			[]call{{"grant", []string{"1", "3"}, []string{"7", "8"}, 4}, {"revoke", []string{"1"}, []string{"7"}, 4}},
			g13x78},
		{"revoke of biz and host crossing groups is a no-op",
			[]call{{"grant", []string{"1", "3"}, []string{"7", "8"}, 4}, {"grant", []string{"2"}, []string{"9"}, 6}, {"revoke", []string{"1"}, []string{"9"}, 6}},
			g13x78 + `,` + g2x9},
		{"revoke removes only the groups it fully contains",
			[]call{{"grant", []string{"1", "3"}, []string{"7", "8"}, 4}, {"grant", []string{"2"}, []string{"9"}, 6}, {"revoke", []string{"2", "4"}, []string{"9", "10"}, 4}},
			g13x78},
		{"revoking the last group deletes the policy and reports the old count",
			[]call{{"grant", []string{"1", "3"}, []string{"7", "8"}, 4}, {"revoke", []string{"1", "3"}, []string{"7", "8"}, 4}},
			""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			for i, c := range tc.calls {
				r := send(t, s, gw, "batch_instance", combinedBody(c.op, "alice", c.biz, c.host))
				wantOK(t, r)
				if e, ok := findEntry(r.entries(t), "edit_biz_host"); !ok || e.PolicyID != 1 || e.count() != c.count {
					t.Fatalf("call %d (%s): want policy 1 with %d instances, got %s", i, c.op, c.count, r.raw)
				}
			}
			if tc.groups == "" {
				wantPolicies(t, s, all, noPolicies)
				return
			}
			wantPolicies(t, s, all, head+`[`+tc.groups+`]}]}`)
		})
	}
}

func TestActionsWithoutResourceTypes(t *testing.T) {
	s := newServer(t)
	r := send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"create_biz"}, "", nil, ""))
	wantOK(t, r)
	wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "create_biz", yearLater, true)+`]}`)
	wantOK(t, send(t, s, gw, "batch_instance", instBody("revoke", "user", "alice", []string{"create_biz"}, "", nil, "")))
	wantPolicies(t, s, all, noPolicies)
}

func TestResourceMismatch(t *testing.T) {
	cases := []struct{ name, body, msg string }{
		{"mixed with related", instBody("grant", "user", "alice", []string{"create_biz", "edit_host"}, "host", []string{"1"}, ""),
			"Action check error: action `create_biz` related resource types wrong (ACTION_VALIDATE_ERROR)"},
		{"mixed without resources", instBody("grant", "user", "alice", []string{"create_biz", "edit_host"}, "", nil, ""),
			"Action check error: action `edit_host` related resource types wrong (ACTION_VALIDATE_ERROR)"},
		{"wrong type", instBody("grant", "user", "alice", []string{"edit_host"}, "biz", []string{"1"}, ""),
			"Action check error: action `edit_host` related resource types `biz` wrong (ACTION_VALIDATE_ERROR)"},
		{"wrong order", strings.Replace(strings.Replace(combinedBody("grant", "alice", []string{"1"}, []string{"2"}), `"type":"biz"`, `"type":"TMP"`, 1), `"type":"host"`, `"type":"biz"`, 1),
			""},
		{"missing one of a combined", instBody("grant", "user", "alice", []string{"edit_biz_host"}, "host", []string{"1"}, ""),
			"Action check error: action `edit_biz_host` related resource types wrong (ACTION_VALIDATE_ERROR)"},
	}
	cases[3].body = strings.Replace(cases[3].body, `"type":"TMP"`, `"type":"host"`, 1)
	cases[3].msg = "Action check error: action `edit_biz_host` related resource types `host` wrong (ACTION_VALIDATE_ERROR)"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				s := newServer(t)
				wantSaaSError(t, tr, send(t, s, tr, "batch_instance", tc.body), http.StatusOK, 1902417, tc.msg)
				wantPolicies(t, s, all, noPolicies)
			})
		})
	}
}

func TestFieldValidation(t *testing.T) {
	cases := []struct{ name, body, msg string }{
		{"not an object", `[1]`, `{"non_field_errors": ["Invalid data. Expected a dictionary, but got list."]}`},
		{"empty", `{}`, `{"operate": ["This field is required."], "system": ["This field is required."], "actions": ["This field is required."], "subject": ["This field is required."], "resources": ["This field is required."]}`},
		{"bad operate and blank actions", `{"operate":"give","system":"bk_cmdb","actions":[],"subject":{"type":"robot","id":" "},"resources":"x"}`,
			`{"operate": ["\"give\" is not a valid choice."], "actions": ["This list may not be empty."], "subject": {"type": ["\"robot\" is not a valid choice."], "id": ["This field may not be blank."]}, "resources": ["Expected a list of items but got type \"str\"."]}`},
		{"instance fields", `{"operate":"grant","system":"bk_cmdb","actions":[{"id":"edit_host"}],"subject":{"type":"user","id":"alice"},"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":"1","name":"a"},{"id":"","name":null}]}]}`,
			`{"resources": [{"instances": [{}, {"id": ["This field may not be blank."], "name": ["This field may not be null."]}]}]}`},
		{"unicode in message", `{"operate":"毁","system":"bk_cmdb","actions":[{"id":"edit_host"}],"subject":{"type":"user","id":"alice"},"resources":[]}`,
			`{"operate": ["\"\u6bc1\" is not a valid choice."]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				s := newServer(t)
				body := tc.body
				hdr := []string{}
				if tr == esb && !strings.HasPrefix(body, "{") {
					hdr = []string{"X-Bkapi-Authorization", `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret","bk_username":"admin"}`}
				}
				wantSaaSError(t, tr, send(t, s, tr, "batch_instance", body, hdr...), 200, 1902412, tc.msg)
			})
		})
	}
	// Numbers are accepted as strings, like DRF's CharField.
	s := newServer(t)
	wantOK(t, send(t, s, gw, "batch_instance", `{"operate":"grant","system":"bk_cmdb","actions":[{"id":"edit_host"}],"subject":{"type":"user","id":"alice"},"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":12,"name":"h"}]}]}`))
	if got := policies(t, s, all); !strings.Contains(got, `"/bk_cmdb,host,12/"`) {
		t.Fatalf("numeric id: %s", got)
	}
}

func TestUnknownActionAndSystem(t *testing.T) {
	// The real server (package doc of internal/bkiam, "Writing"): an unknown action is 1902412
	// "x action not exists", checked after the app allow-list; see also TestUnknownActionOrder.
	s := newServer(t)
	wantSaaSError(t, gw, send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"fly"}, "host", []string{"1"}, "")), 200, 1902412,
		"Parameter verification failed: fly action not exists (VALIDATE_ERROR)")
	m, _ := sandbox.LoadModel([]byte(`{"systems":[{"id":"s","resource_types":[],"actions":[],"allow_list":{"instance_actions":[],"creator_types":[]}}],
		"apps":[{"code":"bkiam-sandbox","secret":"sandbox-secret","client_of":["*"]}]}`))
	s2 := newServer(t, sandbox.WithModel(m))
	wantSaaSError(t, gw, send(t, s2, gw, "batch_instance", hostGrant("alice", "1")), 200, 1902416, "system[bk_cmdb] not exists (INVALID_ARGS)")
	wantPolicies(t, s, all, noPolicies)
	wantPolicies(t, s2, all, noPolicies)
}

// batch_path checks each action's instance selections before its action check, in the request's
// order, as the real SaaS does (OpenPolicy.fill_instance_system): a resource type the action does not
// relate to is 1902412 "action(x) not support to grant instance", grant and revoke alike, where
// batch_instance answers 1902417; an unknown action fails in the SaaS's call to the backend (1902000).
// Nothing is changed.
func TestBatchPathInstanceSelections(t *testing.T) {
	path := func(op, actions string) string {
		return `{"system":"bk_cmdb","operate":"` + op + `","subject":{"type":"user","id":"alice"},"actions":` + actions +
			`,"resources":[{"system":"bk_cmdb","type":"host","paths":[[{"type":"biz","id":"1","name":"b"},{"type":"host","id":"1","name":"h"}]]}],"expired_at":4102444800}`
	}
	bothTransports(t, func(t *testing.T, tr string) {
		s := newServer(t)
		for _, op := range []string{"grant", "revoke"} {
			wantSaaSError(t, tr, send(t, s, tr, "batch_path", path(op, `[{"id":"view_biz"}]`)), 200, 1902412,
				"Parameter verification failed: action(view_biz) not support to grant instance (VALIDATE_ERROR)")
			wantSaaSError(t, tr, send(t, s, tr, "batch_path", path(op, `[{"id":"view_host"},{"id":"create_biz"},{"id":"view_biz"}]`)), 200, 1902412,
				"Parameter verification failed: action(create_biz) not support to grant instance (VALIDATE_ERROR)")
			r := send(t, s, tr, "batch_path", path(op, `[{"id":"fly"}]`))
			if r.code() != 1902000 || !strings.Contains(r.message(), "actionID=`fly`") {
				t.Fatalf("batch_path %s of an unknown action: %s", op, r.raw)
			}
		}
		wantSaaSError(t, tr, send(t, s, tr, "batch_instance",
			`{"system":"bk_cmdb","operate":"grant","subject":{"type":"user","id":"alice"},"actions":[{"id":"view_biz"}],"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":"1","name":"h"}]}],"expired_at":4102444800}`),
			200, 1902417, "Action check error: action `view_biz` related resource types `host` wrong (ACTION_VALIDATE_ERROR)")
		wantPolicies(t, s, all, noPolicies)
	})
}
