package sandbox_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// scopedGM is a grade manager of bk_cmdb whose groups may be granted view_host and edit_host on
// the hosts of business 2.
const scopedGM = `{"name":"ops","description":"","members":["alice"],
  "authorization_scopes":[{"system":"bk_cmdb","actions":[{"id":"view_host"},{"id":"edit_host"}],
    "resources":[{"system":"bk_cmdb","type":"host","paths":[[{"system":"bk_cmdb","type":"biz","id":"2","name":""},{"system":"bk_cmdb","type":"host","id":"*","name":""}]]}]}],
  "subject_scopes":[{"type":"*","id":"*"}]}`

func hostPolicyBody(actions, bizs, hosts string) string {
	var paths []string
	for i, h := range strings.Split(hosts, ",") {
		paths = append(paths, `[{"system":"bk_cmdb","type":"biz","id":"`+strings.Split(bizs, ",")[i]+`","name":"b"},{"system":"bk_cmdb","type":"host","id":"`+h+`","name":"h"}]`)
	}
	var acts []string
	for _, a := range strings.Split(actions, ",") {
		acts = append(acts, `{"id":"`+a+`"}`)
	}
	return `{"actions":[` + strings.Join(acts, ",") + `],"resources":[{"system":"bk_cmdb","type":"host","paths":[` + strings.Join(paths, ",") + `]}]}`
}

// The group-permission routes of the management API: a grant merges into the one policy per
// (system, group, action) that the authorization API writes too, within the grade manager's
// scope; a revoke subtracts; the list answers the normalised shape; the delete by action deletes
// every custom policy of the group unless the quirk is off; a deleted group takes its policies.
func TestGroupPolicyRoutes(t *testing.T) {
	s := newServer(t)
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", scopedGM, 200, 0)
	r := mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0)
	group := int64(r.body["data"].([]any)[0].(float64))
	gid := itoa(int(group))

	mustMgmt(t, s, "POST", "bk_cmdb/groups/"+gid+"/policies/", hostPolicyBody("view_host,edit_host", "2,2", "5,6"), 200, 0)
	// Outside the scope: another business, an action the scope does not name.
	if r := mustMgmt(t, s, "POST", "bk_cmdb/groups/"+gid+"/policies/", hostPolicyBody("view_host", "3", "5"), 400, 1902412); !strings.Contains(r.message(), "校验错误") {
		t.Fatalf("scope refusal: %s", r.raw)
	}
	mustMgmt(t, s, "POST", "bk_cmdb/groups/"+gid+"/policies/", hostPolicyBody("delete_host", "2", "5"), 400, 1902412)
	// The authorization API's grant to the same group merges into the same policy.
	if r := send(t, s, "gateway", "batch_instance", instBody("grant", "group", gid, []string{"view_host"}, "host", []string{"7"}, "")); r.code() != 0 {
		t.Fatalf("batch_instance to a management group: %s", r.raw)
	}
	held := map[string][]string{}
	for _, p := range s.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: gid}).Policies {
		held[p.Action] = p.Paths
	}
	want := map[string][]string{
		"edit_host": {"/bk_cmdb,biz,2/bk_cmdb,host,5/", "/bk_cmdb,biz,2/bk_cmdb,host,6/"},
		"view_host": {"/bk_cmdb,biz,2/bk_cmdb,host,5/", "/bk_cmdb,biz,2/bk_cmdb,host,6/", "/bk_cmdb,host,7/"},
	}
	if !reflect.DeepEqual(held, want) {
		t.Fatalf("the group holds %v, want %v", held, want)
	}

	// The list: one row per action, paths under resource groups, grouped by the last typed node.
	r = mustMgmt(t, s, "GET", "bk_cmdb/groups/"+gid+"/policies/", "", 200, 0)
	var rows []struct {
		ID             string `json:"id"`
		ExpiredAt      int64  `json:"expired_at"`
		ResourceGroups []struct {
			ID                   string `json:"id"`
			RelatedResourceTypes []struct {
				SystemID  string `json:"system_id"`
				Type      string `json:"type"`
				Condition []struct {
					Instances []struct {
						Type string `json:"type"`
						Path [][]struct {
							SystemID string `json:"system_id"`
							Type     string `json:"type"`
							ID       string `json:"id"`
						} `json:"path"`
					} `json:"instances"`
				} `json:"condition"`
			} `json:"related_resource_types"`
		} `json:"resource_groups"`
	}
	raw, _ := json.Marshal(r.body["data"])
	if err := json.Unmarshal(raw, &rows); err != nil || len(rows) != 2 || rows[1].ID != "view_host" || rows[1].ExpiredAt != 4102444800 {
		t.Fatalf("list: %v\n%s", err, r.raw)
	}
	rrt := rows[1].ResourceGroups[0].RelatedResourceTypes[0]
	if rows[1].ResourceGroups[0].ID == "" || rrt.SystemID != "bk_cmdb" || rrt.Type != "host" || len(rrt.Condition[0].Instances) != 1 ||
		rrt.Condition[0].Instances[0].Type != "host" || len(rrt.Condition[0].Instances[0].Path) != 3 {
		t.Fatalf("view_host's resource group: %+v", rows[1].ResourceGroups)
	}
	r = mustMgmt(t, s, "GET", "bk_cmdb/groups/"+gid+"/policies/-/actions/", "", 200, 0)
	if got, _ := json.Marshal(r.body["data"]); string(got) != `[{"id":"edit_host"},{"id":"view_host"}]` {
		t.Fatalf("actions: %s", got)
	}

	// A revoke subtracts; emptying a policy deletes it.
	mustMgmt(t, s, "DELETE", "bk_cmdb/groups/"+gid+"/policies/", hostPolicyBody("edit_host", "2,2", "5,6"), 200, 0)
	if n := len(s.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: gid, Action: "edit_host"}).Policies); n != 0 {
		t.Fatalf("edit_host left after revoking all of it: %d", n)
	}
	// The delete by action deletes every custom policy of the group in the system.
	mustMgmt(t, s, "POST", "bk_cmdb/groups/"+gid+"/policies/", hostPolicyBody("edit_host", "2", "5"), 200, 0)
	mustMgmt(t, s, "DELETE", "bk_cmdb/groups/"+gid+"/actions/-/policies/", `{"actions":[{"id":"edit_host"}]}`, 200, 0)
	if n := len(s.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: gid}).Policies); n != 0 {
		t.Fatalf("the delete by action left %d policies: the SaaS deletes them all", n)
	}
	// A deleted group takes its policies with it.
	mustMgmt(t, s, "POST", "bk_cmdb/groups/"+gid+"/policies/", hostPolicyBody("view_host", "2", "5"), 200, 0)
	mustMgmt(t, s, "DELETE", "bk_cmdb/groups/"+gid+"/", "", 200, 0)
	if n := len(s.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: gid}).Policies); n != 0 {
		t.Fatalf("the deleted group still holds %d policies", n)
	}
	for _, k := range []string{"group_policy:grant", "group_policy:revoke", "group_policy:list", "group_policy:delete", "group_policy:actions"} {
		if s.Stats().Requests[k] == 0 {
			t.Errorf("stats %s not counted", k)
		}
	}
}

// With the quirk off, the delete by action deletes only the actions it names.
func TestGroupPolicyDeleteQuirkOff(t *testing.T) {
	m := sandbox.DefaultModel()
	off := false
	m.Quirks.GroupPolicyDeleteIgnoresActions = &off
	s := newServer(t, withModel(m))
	for _, c := range []struct{ method, path, body string }{
		{"POST", "bk_cmdb/grade_managers/", scopedGM},
		{"POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`},
		{"POST", "bk_cmdb/groups/4/policies/", hostPolicyBody("view_host,edit_host", "2", "5")},
		{"DELETE", "bk_cmdb/groups/4/actions/-/policies/", `{"actions":[{"id":"edit_host"}]}`},
	} {
		if r := mgmtCall(s, c.method, c.path, c.body); r.status != 200 || r.code() != 0 {
			t.Fatalf("%s %s: %s", c.method, c.path, r.raw)
		}
	}
	var left []string
	for _, p := range s.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: "4"}).Policies {
		left = append(left, p.Action)
	}
	if !reflect.DeepEqual(left, []string{"view_host"}) {
		t.Fatalf("left %v, want [view_host]", left)
	}
}

// A grade manager's scope is checked against the model as a grant is (400 1902417 for resources
// that do not match an action's types), and a sync group holds the scope as its permissions: the
// create grants it; an update deletes the group's policies of actions its scope's systems no longer
// list, merges the new scope in, and leaves the policies of other systems; sync_perm false deletes
// the group with its policies.
func TestSyncGroupHoldsTheScope(t *testing.T) {
	s := newServer(t)
	gm := func(syncPerm bool, scopes string) string {
		return `{"name":"ops","description":"","members":["alice"],"sync_perm":` + map[bool]string{true: "true", false: "false"}[syncPerm] +
			`,"authorization_scopes":[` + scopes + `],"subject_scopes":[{"type":"*","id":"*"}]}`
	}
	hosts := `{"system":"bk_cmdb","actions":[{"id":"view_host"},{"id":"edit_host"}],"resources":[{"system":"bk_cmdb","type":"host","paths":[[{"system":"bk_cmdb","type":"biz","id":"2","name":""},{"system":"bk_cmdb","type":"host","id":"*","name":""}]]}]}`
	viewOnly := `{"system":"bk_cmdb","actions":[{"id":"view_host"}],"resources":[{"system":"bk_cmdb","type":"host","paths":[[{"system":"bk_cmdb","type":"biz","id":"3","name":""},{"system":"bk_cmdb","type":"host","id":"*","name":""}]]}]}`
	createBiz := `{"system":"bk_cmdb","actions":[{"id":"create_biz"}],"resources":[]}`

	r := mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", gm(true, `{"system":"bk_cmdb","actions":[{"id":"view_host"}],"resources":[]}`), 400, 1902417)
	if want := "Action check error: action `view_host` related resource types wrong (ACTION_VALIDATE_ERROR)"; r.message() != want {
		t.Fatalf("scope mismatch: %q, want %q", r.message(), want)
	}
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", gm(true, hosts+","+createBiz), 200, 0)
	var sync string
	for _, g := range s.Management().Groups {
		if g.Sync {
			sync = itoa(int(g.ID))
		}
	}
	held := func() map[string][]string {
		out := map[string][]string{}
		for _, p := range s.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: sync}).Policies {
			out[p.System+"/"+p.Action] = p.Paths
			if p.Any {
				out[p.System+"/"+p.Action] = []string{"any"}
			}
			if p.ExpiredAt != 4102444800 {
				t.Errorf("%s expires at %d, want permanent", p.Action, p.ExpiredAt)
			}
		}
		return out
	}
	star2 := "/bk_cmdb,biz,2/bk_cmdb,host,*/"
	if got, want := held(), map[string][]string{"bk_cmdb/view_host": {star2}, "bk_cmdb/edit_host": {star2}, "bk_cmdb/create_biz": {"any"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the create the sync group holds %v, want the scope %v", got, want)
	}
	// A grant of another system, which the next scope does not name, stays.
	if r := send(t, s, "gateway", "batch_instance", `{"system":"bk_sops","operate":"grant","subject":{"type":"group","id":"`+sync+
		`"},"actions":[{"id":"project_view"}],"resources":[{"system":"bk_sops","type":"project","instances":[{"id":"p1","name":"p1"}]}]}`); r.code() != 0 {
		t.Fatalf("grant of bk_sops to the sync group: %s", r.raw)
	}
	mustMgmt(t, s, "PUT", "bk_cmdb/grade_managers/1/", gm(true, viewOnly), 200, 0)
	want := map[string][]string{"bk_cmdb/view_host": {star2, "/bk_cmdb,biz,3/bk_cmdb,host,*/"}, "bk_sops/project_view": {"/bk_sops,project,p1/"}}
	if got := held(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the update the sync group holds %v, want %v", got, want)
	}
	mustMgmt(t, s, "PUT", "bk_cmdb/grade_managers/1/", gm(false, viewOnly), 200, 0)
	if n := len(s.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: sync}).Policies); n != 0 {
		t.Fatalf("the deleted sync group left %d policies", n)
	}
}

// Another system's actions: a system may put them in its grade managers' scopes only as the model's
// allow_auth_systems lets it (bk_cmdb → bk_job in the default model; else 403), and may then grant
// them to the groups, in the body's system, through its own path; the list of the group's
// permissions answers the path system's only.
func TestGroupPolicyOfAnotherSystem(t *testing.T) {
	s := newServer(t)
	jobScope := `{"system":"bk_job","actions":[{"id":"view"}],"resources":[{"system":"bk_job","type":"job","paths":[[{"system":"bk_job","type":"job","id":"*","name":""}]]}]}`
	cmdbScope := `{"system":"bk_cmdb","actions":[{"id":"create_biz"}],"resources":[]}`
	body := func(name, scopes string) string {
		return `{"name":"` + name + `","description":"","members":["alice"],"authorization_scopes":[` + scopes + `],"subject_scopes":[{"type":"*","id":"*"}]}`
	}
	if r := mustMgmt(t, s, "POST", "bk_sops/grade_managers/", body("sops", jobScope), 403, 1902403); !strings.Contains(r.message(), "system[bk_sops] is not allow to operate system[bk_job]'s permission data") {
		t.Fatalf("bk_sops may not use bk_job: %s", r.raw)
	}
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", body("ops", cmdbScope+","+jobScope), 200, 0)
	gid := itoa(int(mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0).body["data"].([]any)[0].(float64)))
	job := func(action, id string) string {
		return `{"system":"bk_job","actions":[{"id":"` + action + `"}],"resources":[{"system":"bk_job","type":"job","paths":[[{"system":"bk_job","type":"job","id":"` + id + `","name":"j"}]]}]}`
	}
	mustMgmt(t, s, "POST", "bk_cmdb/groups/"+gid+"/policies/", job("view", "j1"), 200, 0)
	mustMgmt(t, s, "POST", "bk_cmdb/groups/"+gid+"/policies/", job("edit", "j1"), 400, 1902412) // outside the scope
	mustMgmt(t, s, "POST", "bk_cmdb/groups/"+gid+"/policies/", `{"actions":[{"id":"create_biz"}],"resources":[]}`, 200, 0)
	if got := s.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: gid, System: "bk_job"}).Policies; len(got) != 1 || got[0].Action != "view" {
		t.Fatalf("the group's bk_job policies: %+v", got)
	}
	if r := mustMgmt(t, s, "GET", "bk_cmdb/groups/"+gid+"/policies/-/actions/", "", 200, 0); !reflect.DeepEqual(r.body["data"], []any{map[string]any{"id": "create_biz"}}) {
		t.Fatalf("the path system's list: %s", r.raw)
	}
	// The app is a client of both: bk_job's path reads the group's bk_job permissions, which bk_cmdb's does not list.
	if r := mustMgmt(t, s, "GET", "bk_job/groups/"+gid+"/policies/", "", 200, 0); len(r.body["data"].([]any)) != 1 || !strings.Contains(r.raw, `"id":"view"`) ||
		!strings.Contains(r.raw, `"sensitivity_level":"L1"`) { // IAM's default, as the real server answered
		t.Fatalf("bk_job's path lists: %s", r.raw)
	}
	mustMgmt(t, s, "DELETE", "bk_cmdb/groups/"+gid+"/policies/", job("view", "j1"), 200, 0)
	if got := s.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: gid, System: "bk_job"}).Policies; len(got) != 0 {
		t.Fatalf("after the revoke the group holds %+v in bk_job", got)
	}
}

// mustMgmt sends a management call and fails the test unless it answers status and code.
func mustMgmt(t *testing.T, s http.Handler, method, path, body string, status, code int) response {
	t.Helper()
	r := mgmtCall(s, method, path, body)
	if r.status != status || r.code() != code {
		t.Fatalf("%s %s: %d %d, want %d %d\n%s", method, path, r.status, r.code(), status, code, r.raw)
	}
	return r
}

// An action related to no resource type is granted and revoked with "resources": [], and null is
// refused as IAM's serializer refuses it, apart from a missing field (internal/bkiam's package doc,
// "The management API").
func TestGroupPolicyWithoutResourceTypes(t *testing.T) {
	s := newServer(t)
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", `{"name":"ops","description":"","members":["alice"],
  "authorization_scopes":[{"system":"bk_cmdb","actions":[{"id":"create_biz"}],"resources":[]}],"subject_scopes":[{"type":"*","id":"*"}]}`, 200, 0)
	r := mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0)
	gid := itoa(int(r.body["data"].([]any)[0].(float64)))
	for body, want := range map[string]string{
		`{"actions":[{"id":"create_biz"}],"resources":null}`: "This field may not be null.",
		`{"actions":[{"id":"create_biz"}]}`:                  "This field is required.",
	} {
		if r := mustMgmt(t, s, "POST", "bk_cmdb/groups/"+gid+"/policies/", body, 400, 1902412); !strings.Contains(r.message(), want) {
			t.Errorf("%s: %s, want %q", body, r.raw, want)
		}
	}
	mustMgmt(t, s, "POST", "bk_cmdb/groups/"+gid+"/policies/", `{"actions":[{"id":"create_biz"}],"resources":[]}`, 200, 0)
	if n := len(s.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: gid, Action: "create_biz"}).Policies); n != 1 {
		t.Fatalf("create_biz granted with resources [] gives %d policies, want 1", n)
	}
	mustMgmt(t, s, "DELETE", "bk_cmdb/groups/"+gid+"/policies/", `{"actions":[{"id":"create_biz"}],"resources":[]}`, 200, 0)
	if n := len(s.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: gid, Action: "create_biz"}).Policies); n != 0 {
		t.Fatalf("create_biz left after its revoke: %d policies", n)
	}
}

// A grade manager's scope covers a group's grant by string prefix, as IAM's SaaS checks it
// (internal/bkiam's package doc, "The management API"): a one-node "*" admits one-node grants only,
// a trailing "*" under a parent admits what is under it, and a "*" above the last node is no
// wildcard.
func TestGroupPolicyScopeIsAPrefix(t *testing.T) {
	node := func(typ, id string) string {
		return `{"system":"bk_cmdb","type":"` + typ + `","id":"` + id + `","name":""}`
	}
	scope := func(paths ...string) string {
		return `{"name":"ops","description":"","members":["alice"],"authorization_scopes":[{"system":"bk_cmdb","actions":[{"id":"view_host"}],` +
			`"resources":[{"system":"bk_cmdb","type":"host","paths":[` + strings.Join(paths, ",") + `]}]}],"subject_scopes":[{"type":"*","id":"*"}]}`
	}
	grant := func(path string) string {
		return `{"actions":[{"id":"view_host"}],"resources":[{"system":"bk_cmdb","type":"host","paths":[` + path + `]}]}`
	}
	for _, tc := range []struct {
		name, scope, grant string
		ok                 bool
	}{
		{"one-node * admits one node", "[" + node("host", "*") + "]", "[" + node("host", "5") + "]", true},
		{"one-node * refuses a path under a business", "[" + node("host", "*") + "]", "[" + node("biz", "2") + "," + node("host", "5") + "]", false},
		{"a business's * admits its hosts", "[" + node("biz", "2") + "," + node("host", "*") + "]", "[" + node("biz", "2") + "," + node("host", "5") + "]", true},
		{"a business's * refuses another business", "[" + node("biz", "2") + "," + node("host", "*") + "]", "[" + node("biz", "3") + "," + node("host", "5") + "]", false},
		{"* above the last node is no wildcard", "[" + node("biz", "*") + "," + node("host", "*") + "]", "[" + node("biz", "2") + "," + node("host", "5") + "]", false},
		{"an instance admits itself", "[" + node("host", "7") + "]", "[" + node("host", "7") + "]", true},
		{"no paths, the unlimited scope, admits anything", "", "[" + node("biz", "2") + "," + node("host", "5") + "]", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			paths := []string{}
			if tc.scope != "" {
				paths = append(paths, tc.scope)
			}
			mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", scope(paths...), 200, 0)
			r := mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0)
			gid := itoa(int(r.body["data"].([]any)[0].(float64)))
			status, code := 400, 1902412
			if tc.ok {
				status, code = 200, 0
			}
			mustMgmt(t, s, "POST", "bk_cmdb/groups/"+gid+"/policies/", grant(tc.grant), status, code)
		})
	}
}
