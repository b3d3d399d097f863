package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// The backend's access checks (package doc, "Access checks"): what counts for a subject, the
// managers, and the backend's answers for what it refuses.

// accessModel is the default model with two more users: frank, a manager of bk_cmdb, and grace, a
// super manager; dave manages bk_job only.
func accessModel(t *testing.T) *sandbox.Model {
	t.Helper()
	raw, err := os.ReadFile("default_model.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["users"] = append(m["users"].([]any), "frank", "grace")
	m["system_managers"] = map[string]any{"bk_cmdb": []string{"frank"}, "bk_job": []string{"dave"}}
	m["super_managers"] = []string{"grace"}
	b, _ := json.Marshal(m)
	return loadModel(t, string(b))
}

// accessFixture is a sandbox holding, at fixedNow, then 120 seconds later (the clock moved):
//   - alice's own view_host on host 10 (first created, so first in backend-id order) and
//     edit_biz_host on (biz 1, host 7);
//   - group "direct" (bob, permanent): view_host on host 1, delete_host on everything under any
//     biz (/biz,*/);
//   - group "dept" (department 2: alice, carol): edit_host on host 2, view_host on host 20;
//   - group "ancestor" (department 1, parent of 2 and 3): delete_host on host 3, view_host on
//     /biz,5/host,21/;
//   - group "lapsed" (dave until fixedNow+60): delete_host on host 4;
//   - group "tmpl" (dave, permanent): through template 7, view_biz on biz 9; through template 9,
//     view_host on any host;
//   - dave's own view_host on host 30; bob's template row (template 8) of edit_biz on biz 8;
//   - bob's own view_host on /biz,1/host,7/ and edit_host on everything under /biz,2/;
//   - carol's own edit_host on host 5, until fixedNow+60.
type accessFixture struct {
	s      *sandbox.Server
	clock  *testClock
	groups map[string]string // name -> id
}

func newAccessFixture(t *testing.T) *accessFixture {
	t.Helper()
	clock := &testClock{t: fixedNow}
	s := newServer(t, withModel(accessModel(t)), sandbox.WithNow(clock.now))
	f := &accessFixture{s: s, clock: clock, groups: map[string]string{}}
	grantOn := func(ep, body string) {
		t.Helper()
		if r := send(t, s, gw, ep, body); r.code() != 0 {
			t.Fatalf("grant %s: %s", body, r.raw)
		}
	}
	grant := func(body string) { grantOn("batch_instance", body) }
	grant(instBody("grant", "user", "alice", []string{"view_host"}, "host", []string{"10"}, ""))
	grant(combinedBody("grant", "alice", []string{"1"}, []string{"7"}))

	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", scopedGM, 200, 0)
	names := []string{"direct", "dept", "ancestor", "lapsed", "tmpl"}
	var specs []string
	for _, n := range names {
		specs = append(specs, `{"name":"`+n+`","description":""}`)
	}
	r := mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[`+strings.Join(specs, ",")+`]}`, 200, 0)
	for i, id := range r.body["data"].([]any) {
		f.groups[names[i]] = fmt.Sprint(id)
	}
	member := func(group, typ, id string, expiry int64) {
		t.Helper()
		mustMgmt(t, s, "POST", "bk_cmdb/groups/"+f.groups[group]+"/members/",
			fmt.Sprintf(`{"members":[{"type":%q,"id":%q}],"expired_at":%d}`, typ, id, expiry), 200, 0)
	}
	member("direct", "user", "bob", permanent)
	member("dept", "department", "2", permanent)
	member("ancestor", "department", "1", permanent)
	member("lapsed", "user", "dave", fixedNow.Unix()+60)
	member("tmpl", "user", "dave", permanent)

	groupGrant := func(group, action string, hosts ...string) {
		grant(instBody("grant", "group", f.groups[group], []string{action}, "host", hosts, ""))
	}
	groupGrant("direct", "view_host", "1")
	groupGrant("dept", "edit_host", "2")
	groupGrant("dept", "view_host", "20")
	groupGrant("ancestor", "delete_host", "3")
	grantOn("batch_path", hostPathGrant("group", f.groups["ancestor"], "view_host", "biz,5", "host,21"))
	groupGrant("lapsed", "delete_host", "4")
	grant(instBody("grant", "user", "dave", []string{"view_host"}, "host", []string{"30"}, ""))
	grantOn("batch_path", hostPathGrant("user", "bob", "view_host", "biz,1", "host,7"))
	grantOn("batch_path", hostPathGrant("user", "bob", "edit_host", "biz,2"))
	grantOn("batch_path", hostPathGrant("group", f.groups["direct"], "delete_host", "biz,*"))
	grant(instBody("grant", "user", "carol", []string{"edit_host"}, "host", []string{"5"}, expiredAt(fixedNow.Unix()+60)))
	for _, tp := range []sandbox.TemplatePolicy{
		{TemplateID: 7, Group: f.groups["tmpl"], Action: "view_biz", Paths: []string{"/bk_cmdb,biz,9/"}},
		{TemplateID: 9, Group: f.groups["tmpl"], Action: "view_host"},
		{TemplateID: 8, User: "bob", Action: "edit_biz", Paths: []string{"/bk_cmdb,biz,8/"}},
	} {
		if err := s.AddTemplatePolicy("bk_cmdb", tp); err != nil {
			t.Fatal(err)
		}
	}
	clock.t = fixedNow.Add(120 * time.Second)
	return f
}

// hostPathGrant is a batch_path grant of one bk_cmdb path, nodes "type,id".
func hostPathGrant(subjType, subj, action string, nodes ...string) string {
	var ns []string
	for _, n := range nodes {
		typ, id, _ := strings.Cut(n, ",")
		ns = append(ns, `{"system":"bk_cmdb","type":"`+typ+`","id":"`+id+`","name":"x"}`)
	}
	return `{"system":"bk_cmdb","operate":"grant","subject":{"type":"` + subjType + `","id":"` + subj + `"},"actions":[{"id":"` + action +
		`"}],"resources":[{"system":"bk_cmdb","type":"host","paths":[[` + strings.Join(ns, ",") + `]]}]}`
}

// res is a bk_cmdb resource with attribute {}; resAt one with an _bk_iam_path_ attribute (raw JSON).
func res(typ, id string) string {
	return `{"system":"bk_cmdb","type":"` + typ + `","id":"` + id + `","attribute":{}}`
}

func resAt(typ, id, path string) string {
	return `{"system":"bk_cmdb","type":"` + typ + `","id":"` + id + `","attribute":{"_bk_iam_path_":` + path + `}}`
}

func subj(typ, id string) string { return `"subject":{"type":"` + typ + `","id":"` + id + `"}` }

func authBody(user, action string, resources ...string) string {
	return `{` + subj("user", user) + `,"action":{"id":"` + action + `"},"resources":[` + strings.Join(resources, ",") + `]}`
}

func actionsJSON(actions ...string) string {
	var as []string
	for _, a := range actions {
		as = append(as, `{"id":"`+a+`"}`)
	}
	return `[` + strings.Join(as, ",") + `]`
}

// accessPost posts body to an access route through the gateway, as app (goodAuth when "").
func accessPost(t *testing.T, h http.Handler, path, body, auth string) response {
	t.Helper()
	if auth == "" {
		auth = goodAuth
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("X-Bkapi-Authorization", auth)
	return serve(t, h, req)
}

const (
	authPath    = "/api/v2/policy/systems/bk_cmdb/auth/"
	byActions   = "/api/v2/policy/systems/bk_cmdb/auth_by_actions/"
	queryPath   = "/api/v2/policy/systems/bk_cmdb/query_by_actions/"
	byResources = "/api/v1/policy/auth_by_resources"
	outsider    = `{"bk_app_code":"outsider","bk_app_secret":"outsider-secret"}`
	managerMsg  = "ok, as super_manager or system_manager"
)

// accessCase is one call and the answer it must get: HTTP status, code, message (a prefix when
// it ends in "…") and data (JSON; "" for the error's {}).
type accessCase struct {
	name, path, body, auth string
	status, code           int
	msg, data              string
}

func runAccessCases(t *testing.T, s http.Handler, cases []accessCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := accessPost(t, s, tc.path, tc.body, tc.auth)
			msgOK := r.message() == tc.msg
			if prefix, ok := strings.CutSuffix(tc.msg, "…"); ok {
				msgOK = strings.HasPrefix(r.message(), prefix)
			}
			data := tc.data
			if data == "" {
				data = "{}"
			}
			if r.status != tc.status || r.code() != tc.code || !msgOK || !reflect.DeepEqual(r.body["data"], mustJSON(data)) {
				t.Fatalf("want HTTP %d code %d %q data %s,\n got HTTP %d %s", tc.status, tc.code, tc.msg, data, r.status, r.raw)
			}
		})
	}
}

func allowed(b bool) string { return fmt.Sprintf(`{"allowed":%t}`, b) }

// What counts for a subject, and what the auth route answers for what it refuses.
func TestAccessAuth(t *testing.T) {
	f := newAccessFixture(t)
	g := f.groups
	ok := func(name, body string, want bool) accessCase {
		return accessCase{name: name, path: authPath, body: body, status: 200, msg: "ok", data: allowed(want)}
	}
	manager := func(name, body string) accessCase {
		return accessCase{name: name, path: authPath, body: body, status: 200, msg: managerMsg, data: allowed(true)}
	}
	runAccessCases(t, f.s, []accessCase{
		ok("own grant", authBody("alice", "view_host", res("host", "10")), true),
		ok("nothing grants it", authBody("alice", "view_host", res("host", "11")), false),
		ok("through a group joined directly", authBody("bob", "view_host", res("host", "1")), true),
		ok("through the user's department", authBody("carol", "edit_host", res("host", "2")), true),
		ok("not through another department", authBody("bob", "edit_host", res("host", "2")), false),
		ok("through an ancestor department (alice in 2, under 1)", authBody("alice", "delete_host", res("host", "3")), true),
		ok("through an ancestor department (bob in 3, under 1)", authBody("bob", "delete_host", res("host", "3")), true),
		ok("not through an expired membership", authBody("dave", "delete_host", res("host", "4")), false),
		ok("not through an expired policy", authBody("carol", "edit_host", res("host", "5")), false),
		ok("a group's template row", authBody("dave", "view_biz", res("biz", "9")), true),
		ok("a user's template row", authBody("bob", "edit_biz", res("biz", "8")), true),
		ok("a group subject: its own rows", `{`+subj("group", g["direct"])+`,"action":{"id":"view_host"},"resources":[`+res("host", "1")+`]}`, true),
		ok("a group subject: not another group's", `{`+subj("group", g["dept"])+`,"action":{"id":"view_host"},"resources":[`+res("host", "1")+`]}`, false),
		ok("a path through ancestors, with the caller's path", authBody("bob", "view_host", resAt("host", "7", `"/biz,1/"`)), true),
		ok("a path through ancestors, the path in system form, in a list", authBody("bob", "view_host", resAt("host", "7", `["/bk_cmdb,biz,9/","/bk_cmdb,biz,1/"]`)), true),
		ok("a path through ancestors, without the caller's path", authBody("bob", "view_host", res("host", "7")), false),
		ok("a path ending at an ancestor", authBody("bob", "edit_host", resAt("host", "99", `"/bk_cmdb,biz,2/"`)), true),
		ok("a path ending at an ancestor, another parent", authBody("bob", "edit_host", resAt("host", "99", `"/biz,3/"`)), false),
		ok("a path ending at an ancestor *: any parent of the type", authBody("bob", "delete_host", resAt("host", "50", `"/biz,77/"`)), true),
		ok("a path ending at an ancestor *: a path is needed", authBody("bob", "delete_host", res("host", "50")), false),
		ok("a combined resource, in the action's order", authBody("alice", "edit_biz_host", res("biz", "1"), res("host", "7")), true),
		ok("a combined resource in the other order (the backend compares sets)", authBody("alice", "edit_biz_host", res("host", "7"), res("biz", "1")), true),
		ok("a combined resource, one type off", authBody("alice", "edit_biz_host", res("biz", "2"), res("host", "7")), false),
		manager("admin, any case", authBody("Admin", "delete_host", res("host", "1"))),
		manager("admin before the action is looked at", authBody("admin", "fly", res("host", "1"))),
		manager("a system manager", authBody("frank", "delete_host", res("host", "1"))),
		manager("a super manager", authBody("grace", "edit_biz_host", res("biz", "1"), res("host", "1"))),
		ok("another system's manager is not", authBody("dave", "delete_host", res("host", "1")), false),
		ok("an unknown user is denied, not an error", authBody("ghost", "view_host", res("host", "10")), false),
		ok("an unknown group is denied", `{`+subj("group", "99")+`,"action":{"id":"view_host"},"resources":[`+res("host", "1")+`]}`, false),
		{name: "unknown action", path: authPath, body: authBody("alice", "fly", res("host", "1")), status: 400, code: 1901400, msg: "bad request:action.id invalid"},
		{name: "unknown action, even for an unknown user", path: authPath, body: authBody("ghost", "fly"), status: 400, code: 1901400, msg: "bad request:action.id invalid"},
		{name: "resources that do not match: one too many", path: authPath, body: authBody("alice", "view_host", res("biz", "1"), res("host", "1")),
			status: 500, code: 1901500, msg: "system error[request_id=…"},
		{name: "resources that do not match: another type", path: authPath, body: authBody("ghost", "view_host", res("biz", "1")),
			status: 500, code: 1901500, msg: "system error[request_id=…"},
		{name: "resources that do not match: none", path: authPath, body: authBody("alice", "view_host"), status: 500, code: 1901500, msg: "system error[request_id=…"},
		{name: "attribute is required", path: authPath, body: authBody("alice", "view_host", `{"system":"bk_cmdb","type":"host","id":"1"}`),
			status: 400, code: 1901400, msg: "bad request:Attribute is required"},
		{name: "resources are required", path: authPath, body: `{` + subj("user", "alice") + `,"action":{"id":"view_host"}}`,
			status: 400, code: 1901400, msg: "bad request:Resources is required"},
		{name: "subject is required", path: authPath, body: `{"action":{"id":"view_host"},"resources":[]}`, status: 400, code: 1901400, msg: "bad request:Type is required"},
		{name: "empty body", path: authPath, body: ``, status: 400, code: 1901400, msg: "bad request:EOF, json decode fail"},
		{name: "an id must be a string", path: authPath, body: authBody("alice", "view_host", `{"system":"bk_cmdb","type":"host","id":1,"attribute":{}}`),
			status: 400, code: 1901400, msg: "bad request:json decode or validate fail, err=…"},
		{name: "unknown system", path: "/api/v2/policy/systems/nope/auth/", body: authBody("alice", "view_host", res("host", "1")),
			status: 404, code: 1901404, msg: "not found:system(nope) not exists"},
		{name: "not a client", path: authPath, body: authBody("admin", "view_host", res("host", "1")), auth: outsider,
			status: 401, code: 1901401, msg: "unauthorized:app(outsider) is not allowed to call system (bk_cmdb) api"},
	})
}

func TestAccessAuthByActions(t *testing.T) {
	f := newAccessFixture(t)
	body := func(user, actions string, resources ...string) string {
		return `{` + subj("user", user) + `,"actions":` + actions + `,"resources":[` + strings.Join(resources, ",") + `]}`
	}
	eleven := make([]string, 11)
	for i := range eleven {
		eleven[i] = "view_host"
	}
	runAccessCases(t, f.s, []accessCase{
		{name: "each action", path: byActions, body: body("alice", actionsJSON("view_host", "edit_host", "delete_host"), res("host", "2")),
			status: 200, msg: "ok", data: `{"view_host":false,"edit_host":true,"delete_host":false}`},
		{name: "a manager: all true", path: byActions, body: body("frank", actionsJSON("view_host", "edit_host"), res("host", "2")),
			status: 200, msg: managerMsg, data: `{"view_host":true,"edit_host":true}`},
		{name: "an unknown user: all false", path: byActions, body: body("ghost", actionsJSON("view_host", "edit_host"), res("host", "2")),
			status: 200, msg: "ok", data: `{"view_host":false,"edit_host":false}`},
		{name: "at most 10 actions", path: byActions, body: body("alice", actionsJSON(eleven...), res("host", "2")),
			status: 400, code: 1901400, msg: "bad request:Actions cannot be longer than 10"},
		{name: "10 actions pass", path: byActions, body: body("alice", actionsJSON(eleven[:10]...), res("host", "10")),
			status: 200, msg: "ok", data: `{"view_host":true}`},
		{name: "an unknown action among them", path: byActions, body: body("alice", actionsJSON("view_host", "fly"), res("host", "2")),
			status: 400, code: 1901400, msg: "bad request:action.id invalid"},
		{name: "resources that do not match one of them", path: byActions, body: body("alice", actionsJSON("view_host", "view_biz"), res("host", "2")),
			status: 500, code: 1901500, msg: "system error[request_id=…"},
	})
}

func TestAccessAuthByResources(t *testing.T) {
	f := newAccessFixture(t)
	body := func(user, action, sets string) string {
		return `{"system":"bk_cmdb",` + subj("user", user) + `,"action":{"id":"` + action + `"},"resources_list":` + sets + `}`
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = "[" + res("host", fmt.Sprint(i)) + "]"
	}
	runAccessCases(t, f.s, []accessCase{
		{name: "one key per set", path: byResources, body: body("alice", "view_host", `[[`+res("host", "10")+`],[`+res("host", "11")+`],[`+res("host", "20")+`]]`),
			status: 200, msg: "ok", data: `{"bk_cmdb,host,10":true,"bk_cmdb,host,11":false,"bk_cmdb,host,20":true}`},
		{name: "a combined set's key joins its resources", path: byResources, body: body("alice", "edit_biz_host", `[[`+res("biz", "1")+`,`+res("host", "7")+`]]`),
			status: 200, msg: "ok", data: `{"bk_cmdb,biz,1/bk_cmdb,host,7":true}`},
		{name: "a set that does not match the action is false, not an error", path: byResources, body: body("alice", "view_host", `[[`+res("biz", "10")+`],[]]`),
			status: 200, msg: "ok", data: `{"bk_cmdb,biz,10":false,"":false}`},
		{name: "a manager: all true", path: byResources, body: body("admin", "view_host", `[[`+res("host", "1")+`]]`),
			status: 200, msg: managerMsg, data: `{"bk_cmdb,host,1":true}`},
		{name: "an unknown user: all false", path: byResources, body: body("ghost", "view_host", `[[`+res("host", "10")+`]]`),
			status: 200, msg: "ok", data: `{"bk_cmdb,host,10":false}`},
		{name: "at most 100 sets, in HTTP 200", path: byResources, body: body("alice", "view_host", "["+strings.Join(many, ",")+"]"),
			status: 200, code: 1901400, msg: "bad request:ResourcesList cannot be longer than 100"},
		{name: "unknown action, in HTTP 200", path: byResources, body: body("alice", "fly", `[]`),
			status: 200, code: 1901400, msg: "bad request:action.id invalid"},
		{name: "the v1 client check", path: byResources, body: body("alice", "view_host", `[]`), auth: outsider,
			status: 200, code: 1901400, msg: "bad request:client(outsider) can not request system(bk_cmdb)"},
		{name: "attribute is required", path: byResources, body: body("alice", "view_host", `[[{"system":"bk_cmdb","type":"host","id":"1"}]]`),
			status: 200, code: 1901400, msg: "bad request:Attribute is required"},
	})
}

func TestAccessQueryByActions(t *testing.T) {
	f := newAccessFixture(t)
	body := func(user, actions string, resources ...string) string {
		return `{` + subj("user", user) + `,"actions":` + actions + `,"resources":[` + strings.Join(resources, ",") + `]}`
	}
	row := func(action, cond string) string { return `{"action":{"id":"` + action + `"},"condition":` + cond + `}` }
	anyOf := `{"field":"","op":"any","value":[]}`
	runAccessCases(t, f.s, []accessCase{
		{name: "each action's rows merged", path: queryPath,
			body:   body("alice", actionsJSON("view_host", "edit_host", "delete_host", "view_biz", "create_biz", "edit_biz_host")),
			status: 200, msg: "ok", data: `[` + strings.Join([]string{
				// alice's own eq 10 and her department's eq 20 merge into one in, after the ancestor
				// department's path condition.
				row("view_host", `{"op":"OR","content":[{"op":"AND","content":[{"field":"host.id","op":"eq","value":"21"},`+
					`{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,5/"}]},{"field":"host.id","op":"in","value":["10","20"]}]}`),
				row("edit_host", `{"field":"host.id","op":"eq","value":"2"}`),
				row("delete_host", `{"field":"host.id","op":"eq","value":"3"}`),
				row("view_biz", `{}`),
				row("create_biz", `{}`),
				row("edit_biz_host", `{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"eq","value":"7"}]}`),
			}, ",") + `]`},
		{name: "an any row is the answer, whole", path: queryPath, body: body("dave", actionsJSON("view_host")),
			status: 200, msg: "ok", data: `[` + row("view_host", `{"field":"host.id","op":"any","value":[]}`) + `]`},
		{name: "an unknown user: {} for each", path: queryPath, body: body("ghost", actionsJSON("view_host", "edit_host")),
			status: 200, msg: "ok", data: `[` + row("view_host", `{}`) + `,` + row("edit_host", `{}`) + `]`},
		{name: "a manager: any for each", path: queryPath, body: body("grace", actionsJSON("view_host", "fly")),
			status: 200, msg: managerMsg, data: `[` + row("view_host", anyOf) + `,` + row("fly", anyOf) + `]`},
		{name: "with a resource a row allows", path: queryPath, body: body("alice", actionsJSON("view_host"), res("host", "10")),
			status: 200, msg: "ok", data: `[` + row("view_host", anyOf) + `]`},
		{name: "with a resource no row allows", path: queryPath, body: body("alice", actionsJSON("view_host"), res("host", "99")),
			status: 200, msg: "ok", data: `[` + row("view_host", `{}`) + `]`},
		{name: "with a part of a combined resource: what is left", path: queryPath, body: body("alice", actionsJSON("edit_biz_host"), res("biz", "1")),
			status: 200, msg: "ok", data: `[` + row("edit_biz_host", `{"field":"host.id","op":"eq","value":"7"}`) + `]`},
		{name: "an unknown action is a system error here", path: queryPath, body: body("alice", actionsJSON("view_host", "fly")),
			status: 500, code: 1901500, msg: "system error[request_id=…"},
		{name: "a resource of another type", path: queryPath, body: body("alice", actionsJSON("view_host"), res("biz", "1")),
			status: 500, code: 1901500, msg: "system error[request_id=…"},
		{name: "actions are required", path: queryPath, body: `{` + subj("user", "alice") + `}`,
			status: 400, code: 1901400, msg: "bad request:Actions is required"},
	})
}

// The access checks are reads: spare_reads keeps the faults off them, the others hit them as they
// hit the policy reads, and each route counts under its own key.
func TestAccessFaultsAndStats(t *testing.T) {
	s := newServer(t)
	check := authBody("admin", "view_host", res("host", "1"))
	fail := &sandbox.FailFault{Count: 1, Status: 500, Code: 1902500}
	if err := s.SetFaults(sandbox.Faults{Fail: fail, SpareReads: true}); err != nil {
		t.Fatal(err)
	}
	if r := accessPost(t, s, authPath, check, ""); r.status != 200 || r.code() != 0 {
		t.Fatalf("spare_reads: the check failed: %s", r.raw)
	}
	if r := send(t, s, gw, "batch_instance", hostGrant("alice", "1")); r.status != 500 {
		t.Fatalf("spare_reads: the write after the check was not the one to fail: %s", r.raw)
	}
	_ = s.SetFaults(sandbox.Faults{Fail: fail})
	if r := accessPost(t, s, authPath, check, ""); r.status != 500 || r.code() != 1902500 {
		t.Fatalf("without spare_reads the check is not failed: %s", r.raw)
	}
	// A slow fault delays a read, which then answers (the policy list too).
	_ = s.SetFaults(sandbox.Faults{Slow: &sandbox.SlowFault{Count: 2, DelayMS: 1}})
	if r := accessPost(t, s, queryPath, `{`+subj("user", "alice")+`,"actions":[]}`, ""); r.status != 200 || r.raw != `{"code":0,"message":"ok","data":[]}`+"\n" {
		t.Fatalf("slow query: %s", r.raw)
	}
	if r := getRead(t, s, "/api/v1/systems/bk_cmdb/policies?action_id=view_host", goodAuth); r.status != 200 || r.code() != 0 {
		t.Fatalf("slow policy list: %s", r.raw)
	}
	_ = s.SetFaults(sandbox.Faults{})
	accessPost(t, s, byActions, `{`+subj("user", "alice")+`,"actions":[],"resources":[]}`, "")
	accessPost(t, s, byResources, `{}`, "")
	st := s.Stats().Requests
	want := map[string]int{"policy_auth": 2, "policy_query_by_actions": 1, "policy_auth_by_actions": 1, "policy_auth_by_resources": 1}
	for k, n := range want {
		if st[k] != n {
			t.Errorf("stats %s = %d, want %d (%v)", k, st[k], n, st)
		}
	}
}

// TestUserGroups: the open route that lists a user's groups. With
// inherit=true it adds the groups of the user's departments and their
// ancestors; expired memberships are left out (dave's of "lapsed", past
// at the fixture's clock); a user IAM does not know
// is 1901404 in HTTP 200, which tells a typo from a user without
// permissions.
func TestUserGroups(t *testing.T) {
	f := newAccessFixture(t)
	ids := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, f.groups[n])
		}
		sort.Strings(out)
		return out
	}
	list := func(user, query string) ([]string, int) {
		t.Helper()
		r := getRead(t, f.s, "/api/v1/open/users/"+user+"/groups"+query, goodAuth)
		if r.status != 200 {
			t.Fatalf("HTTP %d: %s", r.status, r.raw)
		}
		var got []string
		if data, ok := r.body["data"].([]any); ok {
			for _, g := range data {
				got = append(got, g.(map[string]any)["id"].(string))
			}
		}
		sort.Strings(got)
		return got, r.code()
	}
	for _, tc := range []struct {
		name, user, query string
		want              []string
		code              int
	}{
		{"departments and their ancestors", "alice", "?inherit=true", ids("dept", "ancestor"), 0},
		{"direct only without inherit", "alice", "", nil, 0},
		{"a direct member", "bob", "?inherit=true", ids("direct", "ancestor"), 0},
		{"an expired membership left out", "dave", "?inherit=true", ids("tmpl"), 0},
		{"a user IAM does not know", "zed", "?inherit=true", nil, 1901404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, code := list(tc.user, tc.query)
			if code != tc.code || !slices.Equal(got, tc.want) {
				t.Errorf("%s's groups: %v (code %d), want %v (code %d)", tc.user, got, code, tc.want, tc.code)
			}
		})
	}
}
