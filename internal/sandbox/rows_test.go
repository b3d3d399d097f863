package sandbox_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// The read-side behaviours of the real server that a first reading missed (the package doc of
// internal/bkiam, "Where the real server differs from a first reading"): several rows per subject
// and action, RBAC-stored group grants, the list's timestamp and check order.

// listRows lists an action's rows (kind "" for the default ABAC list) and fails on an error answer.
func listRows(t *testing.T, h http.Handler, system, action, query string) listData {
	t.Helper()
	r := getRead(t, h, "/api/v1/systems/"+system+"/policies?action_id="+action+query, goodAuth)
	var ld listData
	if err := json.Unmarshal([]byte(r.raw), &ld); err != nil || ld.Code != 0 {
		t.Fatalf("list %s%s: %v %s", action, query, err, r.raw)
	}
	return ld
}

// rowSummary renders rows as "subject:expression" lines in list order.
func rowSummary(ld listData) string {
	var parts []string
	for _, r := range ld.Data.Results {
		e, _ := json.Marshal(r.Expr)
		parts = append(parts, r.Subject["type"].(string)+"/"+r.Subject["id"].(string)+":"+string(e))
	}
	return strings.Join(parts, " | ")
}

const templateModel = `{
  "systems": [{"id": "bk_cmdb", "resource_types": [{"id": "biz"}, {"id": "host"}],
    "actions": [{"id": "edit_host", "related_types": ["host"]}, {"id": "create_biz", "related_types": []}],
    "template_policies": [
      {"template_id": 7, "group": "1", "action": "edit_host", "paths": ["/bk_cmdb,host,9/"]},
      {"template_id": 8, "group": "1", "action": "edit_host", "paths": ["/bk_cmdb,biz,2/"]}
    ],
    "allow_list": {"instance_actions": ["*"], "creator_types": ["*"]}}],
  "users": ["admin", "alice"], "groups": ["1", "2"],
  "apps": [{"code": "bkiam-sandbox", "secret": "sandbox-secret", "client_of": ["*"]}]
}`

// A group's custom policy and each permission template's policy for one action are separate rows,
// all listed; a grant or revoke touches only the custom one and its answer lists only custom ones.
func TestTemplateRowsBesideTheCustomPolicy(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.json")
	s := newServer(t, withModel(loadModel(t, templateModel)), sandbox.WithStateFile(state))
	groupGrant := instBody("grant", "group", "1", []string{"edit_host"}, "host", []string{"1"}, "")
	r := send(t, s, gw, "batch_instance", groupGrant)
	wantOK(t, r)
	if es := r.entries(t); len(es) != 1 || es[0].count() != 1 {
		t.Fatalf("a grant answer lists the custom policies only: %s", r.raw)
	}
	want := `group/1:{"field":"host.id","op":"eq","value":"9"} | ` +
		`group/1:{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,2/"} | ` +
		`group/1:{"field":"host.id","op":"eq","value":"1"}`
	if got := rowSummary(listRows(t, s, "bk_cmdb", "edit_host", "")); got != want {
		t.Fatalf("rows:\n got %s\nwant %s", got, want)
	}
	// Revoking the custom grant leaves the template rows; revoking a template's instance through
	// batch_instance changes nothing (the SaaS writes the custom policy only).
	wantOK(t, send(t, s, gw, "batch_instance", instBody("revoke", "group", "1", []string{"edit_host"}, "host", []string{"1", "9"}, "")))
	want = `group/1:{"field":"host.id","op":"eq","value":"9"} | group/1:{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,2/"}`
	if got := rowSummary(listRows(t, s, "bk_cmdb", "edit_host", "")); got != want {
		t.Fatalf("after the revoke:\n got %s\nwant %s", got, want)
	}
	if got := policies(t, s, sandbox.PolicyFilter{SubjectID: "1"}); !strings.Contains(got, `"template_id":7`) || !strings.Contains(got, `"template_id":8`) {
		t.Fatalf("inspection shows template rows with their template: %s", got)
	}

	// The rows survive a restart from the state file and are seeded again after a reset.
	s2 := newServer(t, withModel(loadModel(t, templateModel)), sandbox.WithStateFile(state))
	if got := rowSummary(listRows(t, s2, "bk_cmdb", "edit_host", "")); got != want {
		t.Fatalf("after a restart:\n got %s\nwant %s", got, want)
	}
	if err := s2.Reset(); err != nil {
		t.Fatal(err)
	}
	if ld := listRows(t, s2, "bk_cmdb", "edit_host", ""); ld.Data.Count != 2 {
		t.Fatalf("after a reset the model's template rows are back: %s", rowSummary(ld))
	}
}

func TestAddTemplatePolicy(t *testing.T) {
	s := newServer(t)
	post := func(body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/_sandbox/template_policies", strings.NewReader(body)))
		return rec
	}
	if rec := post(`{"system":"bk_cmdb","template_id":3,"group":"2","action":"view_host","paths":["/bk_cmdb,host,5/"]}`); rec.Code != 200 {
		t.Fatalf("add: %d %s", rec.Code, rec.Body)
	}
	if got := rowSummary(listRows(t, s, "bk_cmdb", "view_host", "")); got != `group/2:{"field":"host.id","op":"eq","value":"5"}` {
		t.Fatalf("rows %s", got)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"system":"bk_cmdb","template_id":3,"group":"9","action":"view_host"}`, "group: unknown group"},
		{`{"system":"bk_cmdb","template_id":0,"group":"2","action":"view_host"}`, "template_id: must be a positive template id"},
		{`{"system":"bk_cmdb","template_id":3,"group":"2","action":"fly"}`, "action: unknown action"},
		{`{"system":"bk_cmdb","template_id":3,"group":"2","action":"edit_biz_host"}`, "combined-resource actions"},
		{`{"system":"bk_cmdb","template_id":3,"group":"2","action":"view_host","paths":["/bk_cmdb,set,1/"]}`, "unknown resource type bk_cmdb,set"},
		{`{"system":"bk_cmdb","template_id":3,"group":"2","action":"view_host","paths":["bk_cmdb,host,1"]}`, "is not a path of the form"},
		{`{"system":"nope","template_id":3,"group":"2","action":"view_host"}`, "system: unknown system"},
	} {
		if rec := post(tc.body); rec.Code != 400 || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s: %d %s, want 400 with %q", tc.body, rec.Code, rec.Body, tc.want)
		}
	}
	if _, err := sandbox.LoadModel([]byte(strings.Replace(templateModel, `"group": "1"`, `"group": "5"`, 1))); err == nil ||
		!strings.Contains(err.Error(), `systems[0].template_policies[0]: group: unknown group "5"`) {
		t.Fatalf("a bad template policy in a model names it: %v", err)
	}
}

// A group's single-type instance grant of an RBAC action is stored as RBAC relations: missing from
// the default list, listed with ?type=rbac under an id offset by 500000000. A user's grant, and a
// group's any-policy, stay ABAC.
func TestRBACGroupGrants(t *testing.T) {
	s := newServer(t)
	wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "group", "1", []string{"manage_host"}, "host", []string{"4"}, "")))
	wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"manage_host"}, "host", []string{"5"}, "")))
	wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "group", "2", []string{"manage_host"}, "host", nil, "")))

	abac := listRows(t, s, "bk_cmdb", "manage_host", "")
	if got := rowSummary(abac); got != `user/alice:{"field":"host.id","op":"eq","value":"5"} | group/2:{"field":"host.id","op":"any","value":[]}` {
		t.Fatalf("default list: %s", got)
	}
	rbac := listRows(t, s, "bk_cmdb", "manage_host", "&type=rbac")
	if got := rowSummary(rbac); got != `group/1:{"field":"host.id","op":"eq","value":"4"}` {
		t.Fatalf("rbac list: %s", got)
	}
	if id := rbac.Data.Results[0].ID; id < 500000000 {
		t.Fatalf("an RBAC row's id is offset by 500000000: %d", id)
	}
	if got := rowSummary(listRows(t, s, "bk_cmdb", "manage_host", "&type=abac")); got != rowSummary(abac) {
		t.Fatalf("type=abac is the default list: %s", got)
	}
	if got := policies(t, s, sandbox.PolicyFilter{SubjectType: "group", SubjectID: "1"}); !strings.Contains(got, `"rbac":true`) {
		t.Fatalf("inspection marks the RBAC policy: %s", got)
	}
	if got := policies(t, s, sandbox.PolicyFilter{SubjectType: "user"}); strings.Contains(got, `"rbac"`) {
		t.Fatalf("a user's policy is ABAC: %s", got)
	}
	// An ABAC action's group grant is in the default list, not the RBAC one.
	wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "group", "1", []string{"edit_host"}, "host", []string{"4"}, "")))
	if ld := listRows(t, s, "bk_cmdb", "edit_host", "&type=rbac"); ld.Data.Count != 0 {
		t.Fatalf("rbac list of an abac action: %s", rowSummary(ld))
	}
	r := getRead(t, s, "/api/v1/systems/bk_cmdb/policies?action_id=manage_host&type=xacml", goodAuth)
	if r.code() != 1901400 {
		t.Fatalf("unknown type: %s", r.raw)
	}
	if _, err := sandbox.LoadModel([]byte(strings.Replace(templateModel, `"related_types": []}`, `"related_types": [], "auth_type": "pbac"}`, 1))); err == nil ||
		!strings.Contains(err.Error(), `systems[0].actions[1].auth_type: "pbac" is not one of abac, rbac, all`) {
		t.Fatalf("bad auth_type: %v", err)
	}
}

// The list keeps expired_at > timestamp (strictly), takes 0 as today 00:00, and refuses a timestamp
// more than one day before today 00:00 (1901400).
func TestPolicyListTimestamp(t *testing.T) {
	s := newServer(t) // today 00:00 is fixedNow
	today := fixedNow.Unix()
	exp := today + 3600
	wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"edit_host"}, "host", []string{"1"}, `,"expired_at":`+itoa(int(exp)))))
	for _, tc := range []struct {
		ts        int64
		wantCount int
		wantCode  int
	}{
		{0, 1, 0},
		{exp - 1, 1, 0},
		{exp, 0, 0}, // expiring at the timestamp: gone
		{today - 24*3600, 1, 0},
		{today - 24*3600 - 1, 0, 1901400},
	} {
		r := getRead(t, s, "/api/v1/systems/bk_cmdb/policies?action_id=edit_host&timestamp="+itoa(int(tc.ts)), goodAuth)
		var ld listData
		_ = json.Unmarshal([]byte(r.raw), &ld)
		if ld.Code != tc.wantCode || tc.wantCode == 0 && ld.Data.Count != tc.wantCount {
			t.Errorf("timestamp %d: %s, want code %d count %d", tc.ts, r.raw, tc.wantCode, tc.wantCount)
		}
		if tc.ts == 0 && ld.Data.Metadata.Timestamp != today {
			t.Errorf("timestamp 0 lists as of today 00:00: %d", ld.Data.Metadata.Timestamp)
		}
	}
}

// The backend checks the system before the client, and a policy of another system asked for by id
// answers 1901403 with HTTP 200.
func TestReadCheckOrder(t *testing.T) {
	s := newServer(t)
	outsider := `{"bk_app_code":"outsider","bk_app_secret":"outsider-secret"}`
	r := getRead(t, s, "/api/v1/systems/bk_nope/policies?action_id=x", outsider)
	if r.code() != 1901404 || r.message() != "not found:system(bk_nope) not exists" {
		t.Fatalf("unknown system before client: %s", r.raw)
	}
	wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "1")))
	id := listRows(t, s, "bk_cmdb", "edit_host", "").Data.Results[0].ID
	r = getRead(t, s, "/api/v1/systems/bk_job/policies/"+itoa(int(id)), goodAuth)
	if r.status != 200 || r.code() != 1901403 || r.message() != "no permission:system(bk_job) can't access system(bk_cmdb)'s policy" {
		t.Fatalf("another system's policy: %d %s", r.status, r.raw)
	}
	if r = getRead(t, s, "/api/v1/systems/bk_cmdb/policies/"+itoa(int(id)), goodAuth); r.code() != 0 {
		t.Fatalf("own policy: %s", r.raw)
	}
}

// A "*" leaf of the action's own type is dropped from the prefix; a "*" ancestor stays, giving a
// ",*/" prefix that means every instance under any ancestor of that type.
func TestAncestorStarPrefix(t *testing.T) {
	s := newServer(t)
	node := func(typ, id string) string {
		return `{"system":"bk_cmdb","type":"` + typ + `","id":"` + id + `","name":"n"}`
	}
	body := func(subjType, subj, action, path string) string {
		return `{"system":"bk_cmdb","operate":"grant","subject":{"type":"` + subjType + `","id":"` + subj + `"},"actions":[{"id":"` + action +
			`"}],"resources":[{"system":"bk_cmdb","type":"host","paths":[` + path + `]}]}`
	}
	wantOK(t, send(t, s, gw, "batch_path", body("user", "alice", "view_host", "["+node("biz", "1")+","+node("host", "*")+"]")))
	// A path of the lone "*" is a group's only: a user's grant of it fails (TestUserGrantOfTheLoneStar).
	wantOK(t, send(t, s, gw, "batch_path", body("group", "1", "delete_host", "["+node("biz", "*")+"]")))
	if got := rowSummary(listRows(t, s, "bk_cmdb", "view_host", "")); got != `user/alice:{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}` {
		t.Fatalf("own-type * leaf: %s", got)
	}
	if got := rowSummary(listRows(t, s, "bk_cmdb", "delete_host", "")); got != `group/1:{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,*/"}` {
		t.Fatalf("ancestor * leaf: %s", got)
	}
}

// A deleted group takes its policies with it and becomes a group IAM does not know: a grant fails
// with 1902500 (HTTP 500 on the gateway), a revoke answers OK with data [] (package doc of
// internal/bkiam, "Group subjects"). A reset brings it back.
func TestDeleteGroup(t *testing.T) {
	s := newServer(t)
	grant := instBody("grant", "group", "2", []string{"edit_host"}, "host", []string{"1"}, "")
	wantOK(t, send(t, s, gw, "batch_instance", grant))
	if err := s.AddTemplatePolicy("bk_cmdb", sandbox.TemplatePolicy{TemplateID: 4, Group: "2", Action: "view_host"}); err != nil {
		t.Fatal(err)
	}
	if r := control(t, s, "DELETE", "/_sandbox/groups/2", ""); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	wantPolicies(t, s, sandbox.PolicyFilter{SubjectType: "group"}, noPolicies)
	if r := send(t, s, gw, "batch_instance", grant); r.status != 500 || r.code() != 1902500 {
		t.Fatalf("grant to a deleted group: %d %s", r.status, r.raw)
	}
	r := send(t, s, gw, "batch_instance", instBody("revoke", "group", "2", []string{"edit_host"}, "host", []string{"1"}, ""))
	wantOK(t, r)
	if es := r.entries(t); len(es) != 0 {
		t.Fatalf("revoke for a deleted group: %s", r.raw)
	}
	if r := control(t, s, "DELETE", "/_sandbox/groups/9", ""); r.status != 404 || !strings.Contains(r.raw, "not a group of the model") {
		t.Fatalf("delete an unknown group: %d %s", r.status, r.raw)
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	wantOK(t, send(t, s, gw, "batch_instance", grant))
}

// TestUserGrantOfTheLoneStar: the SaaS strips a user's paths of their last "*" node before it
// stores a policy, asserting that a path of one node is not "*", so a user's grant of the lone id
// "*" (by instance or by a one-node path) fails unhandled, 1902500 in HTTP 500, and writes
// nothing; a path that ends in "*" under a parent is granted (seen on the real IAM).
func TestUserGrantOfTheLoneStar(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct{ ep, body string }{
		{"batch_instance", instBody("grant", "user", "alice", []string{"view_host"}, "host", []string{"1", "*"}, "")},
		{"batch_path", `{"system":"bk_cmdb","operate":"grant","subject":{"type":"user","id":"alice"},"actions":[{"id":"view_host"}],` +
			`"resources":[{"system":"bk_cmdb","type":"host","paths":[[{"system":"bk_cmdb","type":"host","id":"*","name":"n"}]]}]}`},
	} {
		r := send(t, s, gw, tc.ep, tc.body)
		if r.status != 500 || r.code() != 1902500 {
			t.Fatalf("%s of the lone *: %d %s, want 1902500 in HTTP 500", tc.ep, r.status, r.raw)
		}
	}
	if got := rowSummary(listRows(t, s, "bk_cmdb", "view_host", "")); got != "" {
		t.Fatalf("a failed grant wrote %s", got)
	}
}
