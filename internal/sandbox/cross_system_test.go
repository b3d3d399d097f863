package sandbox_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// Actions related to another system's resource types (package doc, "Model format" and "Other
// systems' resource types"), as bk_job's relate to CMDB's business and host.

// crossModel is the default model with bk_job holding the shape of the real bk_job model: a
// resource type script under bk_cmdb's biz, access_business related to bk_cmdb's biz,
// view_script to script, execute_script to script and bk_cmdb's host (a combined resource of two
// systems), and a creator config for script; bk_cmdb's callback knows business 1.
func crossModel(t *testing.T) *sandbox.Model {
	t.Helper()
	raw, err := os.ReadFile("default_model.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, s := range m["systems"].([]any) {
		sys := s.(map[string]any)
		switch sys["id"] {
		case "bk_cmdb":
			sys["resource_types"].([]any)[0].(map[string]any)["instances"] = map[string]any{"1": "Biz One"}
		case "bk_job":
			sys["resource_types"] = append(sys["resource_types"].([]any), mustJSON(`{"id":"script","parents":["bk_cmdb:biz"]}`))
			sys["actions"] = append(sys["actions"].([]any),
				mustJSON(`{"id":"access_business","related_types":["bk_cmdb:biz"]}`),
				mustJSON(`{"id":"view_script","related_types":["script"]}`),
				mustJSON(`{"id":"execute_script","related_types":["script","bk_cmdb:host"]}`))
			sys["creator_actions"] = append(sys["creator_actions"].([]any),
				mustJSON(`{"id":"script","actions":[{"id":"view_script","required":false}]}`))
		}
	}
	b, _ := json.Marshal(m)
	return loadModel(t, string(b))
}

// jobCall is a bk_job batch_instance or batch_path body of one action; resources is raw JSON.
func jobCall(op, subjType, subjID, action, resources string) string {
	return `{"system":"bk_job","operate":"` + op + `","subject":{"type":"` + subjType + `","id":"` + subjID +
		`"},"actions":[{"id":"` + action + `"}],"resources":` + resources + `}`
}

// instancesOf is a batch_instance resource of system and type.
func instancesOf(system, typ string, ids ...string) string {
	var is []string
	for _, id := range ids {
		is = append(is, `{"id":"`+id+`","name":"n`+id+`"}`)
	}
	return `{"system":"` + system + `","type":"` + typ + `","instances":[` + strings.Join(is, ",") + `]}`
}

// A related type or a parent is "type" of the system it is written in or "system:type" of another;
// the load checks that the other system holds the type and names the field otherwise.
func TestCrossSystemModelLoad(t *testing.T) {
	sys := func(id, types, actions string) string {
		return `{"id":"` + id + `","resource_types":[` + types + `],"actions":[` + actions + `],"allow_list":{"instance_actions":[],"creator_types":[]}}`
	}
	cmdb := sys("cmdb", `{"id":"biz"},{"id":"host","parents":["biz"]}`, ``)
	model := func(systems ...string) string {
		return `{"systems":[` + strings.Join(systems, ",") + `],` + modelApps + `}`
	}
	for _, tc := range []struct{ name, js, want string }{
		{"another system's type", model(cmdb, sys("job", `{"id":"script","parents":["cmdb:biz"]}`, `{"id":"a","related_types":["cmdb:biz"]},{"id":"b","related_types":["script","cmdb:host"]}`)), ""},
		{"a system given before the one it names", model(sys("job", ``, `{"id":"a","related_types":["cmdb:host"]}`), cmdb), ""},
		{"the own system named", model(sys("job", `{"id":"script"}`, `{"id":"a","related_types":["job:script"]}`)), ""},
		{"an unknown system", model(cmdb, sys("job", ``, `{"id":"a","related_types":["cmbd:biz"]}`)),
			`systems[1].actions[0].related_types[0]: "cmbd:biz" names an unknown system "cmbd"`},
		{"a type the other system lacks", model(cmdb, sys("job", ``, `{"id":"a","related_types":["cmdb:bizz"]}`)),
			`systems[1].actions[0].related_types[0]: "cmdb:bizz": system "cmdb" has no resource type "bizz"`},
		{"no system before the colon", model(cmdb, sys("job", ``, `{"id":"a","related_types":[":biz"]}`)),
			`systems[1].actions[0].related_types[0]: ":biz" is neither "type" nor "system:type"`},
		{"a plain id of another system's type", model(cmdb, sys("job", ``, `{"id":"a","related_types":["biz"]}`)),
			`systems[1].actions[0].related_types[0]: unknown resource type "biz"`},
		{"one type twice, once with its system", model(sys("job", `{"id":"script"}`, `{"id":"a","related_types":["script","job:script"]}`)),
			`systems[0].actions[0].related_types[1]: duplicate resource type "job:script"`},
		{"two types of one id", model(cmdb, sys("job", `{"id":"host"}`, `{"id":"a","related_types":["host","cmdb:host"]}`)),
			`systems[1].actions[0].related_types[1]: "cmdb:host" has the id of the related type job:host; an action's related types need distinct ids`},
		{"a parent of an unknown system", model(cmdb, sys("job", `{"id":"script","parents":["cmbd:biz"]}`, ``)),
			`systems[1].resource_types[0].parents[0]: "cmbd:biz" names an unknown system "cmbd"`},
		{"a parent the other system lacks", model(cmdb, sys("job", `{"id":"script","parents":["cmdb:set"]}`, ``)),
			`systems[1].resource_types[0].parents[0]: "cmdb:set": system "cmdb" has no resource type "set"`},
		{"its own parent, with its system", model(sys("job", `{"id":"script","parents":["job:script"]}`, ``)),
			`systems[0].resource_types[0].parents[0]: resource type "job:script" is its own parent`},
		{"a type id with a colon", model(sys("job", `{"id":"a:b"}`, ``)),
			`systems[0].resource_types[0].id: "a:b" holds a colon, which a type reference uses to name the system`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sandbox.LoadModel([]byte(tc.js))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("does not load: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("got %v, want %s", err, tc.want)
			}
		})
	}
}

// The model route names each related type and parent with its own system, and a related type of
// another system with that system's instance selection.
func TestCrossSystemModelRoute(t *testing.T) {
	s := newServer(t, withModel(crossModel(t)))
	r := getRead(t, s, "/api/v1/model/systems/bk_job/query", goodAuth)
	if r.code() != 0 {
		t.Fatal(r.raw)
	}
	var got struct {
		Data struct {
			Actions []struct {
				ID    string
				Types []struct {
					System     string `json:"system_id"`
					ID         string
					Selections []struct {
						System string `json:"system_id"`
						ID     string
					} `json:"instance_selections"`
				} `json:"related_resource_types"`
			}
			ResourceTypes []struct {
				ID      string
				Parents []struct {
					System string `json:"system_id"`
					ID     string
				}
			} `json:"resource_types"`
			Selections []struct {
				ID    string
				Chain []struct {
					System string `json:"system_id"`
					ID     string
				} `json:"resource_type_chain"`
			} `json:"instance_selections"`
		}
	}
	if err := json.Unmarshal([]byte(r.raw), &got); err != nil {
		t.Fatal(err)
	}
	related := map[string]string{}
	for _, a := range got.Data.Actions {
		var parts []string
		for _, t := range a.Types {
			parts = append(parts, t.System+":"+t.ID+"@"+t.Selections[0].System+":"+t.Selections[0].ID)
		}
		related[a.ID] = strings.Join(parts, " ")
	}
	for action, want := range map[string]string{
		"view":            "bk_job:job@bk_job:job_list",
		"access_business": "bk_cmdb:biz@bk_cmdb:biz_list",
		"execute_script":  "bk_job:script@bk_job:script_list bk_cmdb:host@bk_cmdb:host_list",
	} {
		if related[action] != want {
			t.Errorf("%s relates to %q, want %q", action, related[action], want)
		}
	}
	rt := got.Data.ResourceTypes
	if len(rt) != 2 || rt[1].ID != "script" || len(rt[1].Parents) != 1 || rt[1].Parents[0].System != "bk_cmdb" || rt[1].Parents[0].ID != "biz" {
		t.Errorf("resource types: %+v", rt)
	}
	sel := got.Data.Selections
	if len(sel) != 2 || sel[1].ID != "script_list" || len(sel[1].Chain) != 2 ||
		sel[1].Chain[0].System != "bk_cmdb" || sel[1].Chain[0].ID != "biz" || sel[1].Chain[1].System != "bk_job" {
		t.Errorf("instance selections: %+v", sel)
	}
}

// The SaaS's writes take another system's type named with that system (its action check compares
// system and type in order), paths whose nodes are of another system, and creator grants under an
// ancestor of another system.
func TestCrossSystemGrants(t *testing.T) {
	s := newServer(t, withModel(crossModel(t)))
	biz := func(ids ...string) string { return `[` + instancesOf("bk_cmdb", "biz", ids...) + `]` }
	mustOK := func(body string, ep string) {
		t.Helper()
		wantOK(t, send(t, s, gw, ep, body))
	}
	mustOK(jobCall("grant", "user", "alice", "access_business", biz("1", "2")), "batch_instance")
	mustOK(jobCall("grant", "user", "alice", "execute_script",
		`[`+instancesOf("bk_job", "script", "s1")+`,`+instancesOf("bk_cmdb", "host", "7")+`]`), "batch_instance")
	// Path nodes with their systems, and without: the SaaS fills a node's system from the
	// instance selection (biz above a script is bk_cmdb's).
	node := func(system, typ, id string) string {
		if system == "" {
			return `{"type":"` + typ + `","id":"` + id + `","name":"n"}`
		}
		return `{"system":"` + system + `","type":"` + typ + `","id":"` + id + `","name":"n"}`
	}
	scriptPaths := func(paths ...string) string {
		return `[{"system":"bk_job","type":"script","paths":[` + strings.Join(paths, ",") + `]}]`
	}
	mustOK(jobCall("grant", "user", "bob", "view_script", scriptPaths(`[`+node("bk_cmdb", "biz", "1")+`,`+node("bk_job", "script", "s2")+`]`)), "batch_path")
	mustOK(jobCall("grant", "user", "bob", "view_script", scriptPaths(`[`+node("", "biz", "3")+`,`+node("", "script", "s3")+`]`, `[`+node("", "biz", "4")+`]`)), "batch_path")
	mustOK(`{"system":"bk_job","type":"script","creator":"carol","instances":[{"id":"s9","name":"n",
		"ancestors":[{"system":"bk_cmdb","type":"biz","id":"1"}]}]}`, "batch_resource_creator_action")
	job := func(id int64, subjType, subj, action string, exp int64, paths ...string) string {
		return strings.Replace(policyJSON(id, subjType, subj, action, exp, false, paths...), `"bk_cmdb"`, `"bk_job"`, 1)
	}
	wantPolicies(t, s, sandbox.PolicyFilter{System: "bk_job"}, `{"policies":[`+strings.Join([]string{
		job(1, "user", "alice", "access_business", yearLater, "/bk_cmdb,biz,1/", "/bk_cmdb,biz,2/"),
		`{"policy_id":2,"system":"bk_job","subject":{"type":"user","id":"alice"},"action":"execute_script","expired_at":` + itoa(int(yearLater)) +
			`,"any":false,"groups":[{"script":["/bk_job,script,s1/"],"host":["/bk_cmdb,host,7/"]}]}`,
		job(3, "user", "bob", "view_script", yearLater, "/bk_cmdb,biz,1/bk_job,script,s2/", "/bk_cmdb,biz,3/bk_job,script,s3/", "/bk_cmdb,biz,4/"),
		job(4, "user", "carol", "view_script", permanent, "/bk_cmdb,biz,1/bk_job,script,s9/"),
	}, ",")+`]}`)

	// The read route's expression names the types without their systems, as the backend does.
	r := getRead(t, s, "/api/v1/systems/bk_job/policies?action_id=view_script", goodAuth)
	if !strings.Contains(r.raw, `{"field":"script._bk_iam_path_","op":"starts_with","value":"/biz,4/"}`) ||
		!strings.Contains(r.raw, `{"field":"script._bk_iam_path_","op":"starts_with","value":"/biz,1/"}`) {
		t.Errorf("view_script's expressions: %s", r.raw)
	}

	for _, tc := range []struct{ name, ep, body, code, msg string }{
		{"the type under the action's system", "batch_instance", jobCall("grant", "user", "alice", "access_business", `[`+instancesOf("bk_job", "biz", "1")+`]`),
			"1902417", "Action check error: action `access_business` related resource types `biz` wrong (ACTION_VALIDATE_ERROR)"},
		{"a combined resource of two systems out of order", "batch_instance", jobCall("grant", "user", "alice", "execute_script",
			`[`+instancesOf("bk_cmdb", "host", "7")+`,`+instancesOf("bk_job", "script", "s1")+`]`),
			"1902417", "Action check error: action `execute_script` related resource types `host` wrong (ACTION_VALIDATE_ERROR)"},
		{"paths of the type under the action's system", "batch_path", jobCall("grant", "user", "alice", "access_business",
			`[{"system":"bk_job","type":"biz","paths":[[`+node("", "biz", "1")+`]]}]`),
			"1902412", "Parameter verification failed: action(access_business) not support to grant instance (VALIDATE_ERROR)"},
		{"a creator's ancestor the other system's callback does not know", "batch_resource_creator_action",
			`{"system":"bk_job","type":"script","creator":"carol","instances":[{"id":"s8","name":"n","ancestors":[{"system":"bk_cmdb","type":"biz","id":"5"}]}]}`,
			"1902416", "query instance name of system[bk_cmdb] resource type[biz] id[5] by callback failed: not found (INVALID_ARGS)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := send(t, s, gw, tc.ep, tc.body)
			if fmt.Sprint(r.code()) != tc.code || r.message() != tc.msg {
				t.Fatalf("want %s %q, got %s", tc.code, tc.msg, r.raw)
			}
		})
	}

	// Revokes name the types as grants do.
	wantOK(t, send(t, s, gw, "batch_instance", jobCall("revoke", "user", "alice", "access_business", biz("1", "2"))))
	wantOK(t, send(t, s, gw, "batch_instance", jobCall("revoke", "user", "alice", "execute_script",
		`[`+instancesOf("bk_job", "script", "s1")+`,`+instancesOf("bk_cmdb", "host", "7")+`]`)))
	wantOK(t, send(t, s, gw, "batch_path", jobCall("revoke", "user", "bob", "view_script", scriptPaths(`[`+node("", "biz", "4")+`]`))))
	if got := policies(t, s, sandbox.PolicyFilter{System: "bk_job", SubjectID: "alice"}); got != noPolicies {
		t.Errorf("alice after the revokes: %s", got)
	}
	if got := policies(t, s, sandbox.PolicyFilter{System: "bk_job", SubjectID: "bob"}); strings.Contains(got, "/bk_cmdb,biz,4/") {
		t.Errorf("bob after the revoke of /biz,4/: %s", got)
	}
}

// The management API: a grade manager's scope and a group's permissions name another system's
// type with its system, the list answers it so, and a grant through the authorization API widens
// the scope with the types' own systems.
func TestCrossSystemManagement(t *testing.T) {
	s := newServer(t, withModel(crossModel(t)))
	gm := func(resources string) string {
		return `{"name":"ops","description":"","members":["alice"],"authorization_scopes":[{"system":"bk_job",
		  "actions":[{"id":"access_business"}],"resources":` + resources + `}],"subject_scopes":[{"type":"*","id":"*"}]}`
	}
	bizScope := func(system string) string {
		return `[{"system":"` + system + `","type":"biz","paths":[[{"system":"bk_cmdb","type":"biz","id":"*","name":""}]]}]`
	}
	r := mgmtCall(s, "POST", "bk_job/grade_managers/", gm(bizScope("bk_job")))
	if r.code() != 1902417 || !strings.Contains(r.message(), "action `access_business` related resource types `biz` wrong") {
		t.Fatalf("a scope naming bk_cmdb's biz under bk_job: %d %s", r.status, r.raw)
	}
	mustMgmt(t, s, "POST", "bk_job/grade_managers/", gm(bizScope("bk_cmdb")), 200, 0)
	r = mustMgmt(t, s, "POST", "bk_job/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0)
	gid := itoa(int(r.body["data"].([]any)[0].(float64)))
	grant := `{"actions":[{"id":"access_business"}],"resources":[{"system":"bk_cmdb","type":"biz","paths":[[{"system":"bk_cmdb","type":"biz","id":"1","name":"b"}]]}]}`
	mustMgmt(t, s, "POST", "bk_job/groups/"+gid+"/policies/", grant, 200, 0)
	r = mustMgmt(t, s, "GET", "bk_job/groups/"+gid+"/policies/", "", 200, 0)
	if !strings.Contains(r.raw, `"related_resource_types":[{"condition":[{"attributes":[],"id":`) ||
		!strings.Contains(r.raw, `"system_id":"bk_cmdb","type":"biz"}]`) ||
		!strings.Contains(r.raw, `"path":[[{"id":"1","name":"","system_id":"bk_cmdb","type":"biz","type_name":"biz"}]]`) {
		t.Errorf("the group's list: %s", r.raw)
	}
	mustMgmt(t, s, "DELETE", "bk_job/groups/"+gid+"/policies/", grant, 200, 0)
	if got := policies(t, s, sandbox.PolicyFilter{System: "bk_job", SubjectType: "group", SubjectID: gid}); got != noPolicies {
		t.Errorf("after the revoke: %s", got)
	}

	wantOK(t, send(t, s, gw, "batch_instance", jobCall("grant", "group", gid, "execute_script",
		`[`+instancesOf("bk_job", "script", "s1")+`,`+instancesOf("bk_cmdb", "host", "7")+`]`)))
	b, _ := json.Marshal(s.GradeManagers()[0].AuthorizationScopes)
	want := `{"system":"bk_job","actions":["execute_script"],"resources":[` +
		`{"system":"bk_job","type":"script","paths":[[{"system":"bk_job","type":"script","id":"s1"}]]},` +
		`{"system":"bk_cmdb","type":"host","paths":[[{"system":"bk_cmdb","type":"host","id":"7"}]]}]}`
	if !strings.Contains(string(b), want) {
		t.Errorf("the widened scope: %s", b)
	}
	// The widened scope admits the same grant through the management API.
	mustMgmt(t, s, "POST", "bk_job/groups/"+gid+"/policies/", `{"actions":[{"id":"execute_script"}],"resources":[`+
		`{"system":"bk_job","type":"script","paths":[[{"system":"bk_job","type":"script","id":"s1","name":"s"}]]},`+
		`{"system":"bk_cmdb","type":"host","paths":[[{"system":"bk_cmdb","type":"host","id":"7","name":"h"}]]}]}`, 200, 0)
}

// crossAccessFixture: alice holds access_business on biz 1 and execute_script on (script s1,
// host 7), and bob view_script on the path /bk_cmdb,biz,1/bk_job,script,s2/ and view on job j1.
func crossAccessFixture(t *testing.T) *sandbox.Server {
	t.Helper()
	s := newServer(t, withModel(crossModel(t)))
	for ep, bodies := range map[string][]string{
		"batch_instance": {
			jobCall("grant", "user", "alice", "access_business", `[`+instancesOf("bk_cmdb", "biz", "1")+`]`),
			jobCall("grant", "user", "alice", "execute_script", `[`+instancesOf("bk_job", "script", "s1")+`,`+instancesOf("bk_cmdb", "host", "7")+`]`),
			jobCall("grant", "user", "bob", "view", `[`+instancesOf("bk_job", "job", "j1")+`]`),
		},
		"batch_path": {jobCall("grant", "user", "bob", "view_script", `[{"system":"bk_job","type":"script","paths":[[`+
			`{"system":"bk_cmdb","type":"biz","id":"1","name":"b"},{"system":"bk_job","type":"script","id":"s2","name":"s"}]]}]`)},
	} {
		for _, body := range bodies {
			wantOK(t, send(t, s, gw, ep, body))
		}
	}
	return s
}

// jobRes is a resource of an access check, attribute {} unless attr (raw JSON) is given.
func jobRes(system, typ, id string, attr ...string) string {
	a := `{}`
	if len(attr) > 0 {
		a = attr[0]
	}
	return `{"system":"` + system + `","type":"` + typ + `","id":"` + id + `","attribute":` + a + `}`
}

const (
	jobAuth      = "/api/v2/policy/systems/bk_job/auth/"
	jobByActions = "/api/v2/policy/systems/bk_job/auth_by_actions/"
	jobQueryBy   = "/api/v2/policy/systems/bk_job/query_by_actions/"
	jobQuery     = "/api/v2/policy/systems/bk_job/query/"
)

// The backend's access routes with another system's types: auth and auth_by_actions take exactly
// the action's related types, systems included (ValidateActionResource); the queries ask for every
// related type of another system (ValidateActionRemoteResource), the batch query always, the single
// query only when resources are given; auth_by_resources checks nothing and evaluates a resource
// of another system than its type's as no resource.
func TestCrossSystemAccess(t *testing.T) {
	s := crossAccessFixture(t)
	biz1, host7, script1 := jobRes("bk_cmdb", "biz", "1"), jobRes("bk_cmdb", "host", "7"), jobRes("bk_job", "script", "s1")
	auth := func(user, action string, rs ...string) string { return authBody(user, action, rs...) }
	byActionsBody := func(user, actions string, rs ...string) string {
		return `{` + subj("user", user) + `,"actions":` + actions + `,"resources":[` + strings.Join(rs, ",") + `]}`
	}
	query := func(user, action string, rs ...string) string {
		return `{` + subj("user", user) + `,"action":{"id":"` + action + `"},"resources":[` + strings.Join(rs, ",") + `]}`
	}
	row := func(action, cond string) string { return `{"action":{"id":"` + action + `"},"condition":` + cond + `}` }
	anyOf := `{"field":"","op":"any","value":[]}`
	bizEq1 := `{"field":"biz.id","op":"eq","value":"1"}`
	scriptEq := `{"field":"script.id","op":"eq","value":"s1"}`
	mismatch := "system error[request_id=…"
	ok := func(name, path, body, data string) accessCase {
		return accessCase{name: name, path: path, body: body, status: 200, msg: "ok", data: data}
	}
	fails := func(name, path, body string) accessCase {
		return accessCase{name: name, path: path, body: body, status: 500, code: 1901500, msg: mismatch}
	}
	runAccessCases(t, s, []accessCase{
		ok("auth: another system's type", jobAuth, auth("alice", "access_business", biz1), allowed(true)),
		ok("auth: another instance", jobAuth, auth("alice", "access_business", jobRes("bk_cmdb", "biz", "2")), allowed(false)),
		fails("auth: the type under the action's system", jobAuth, auth("alice", "access_business", jobRes("bk_job", "biz", "1"))),
		ok("auth: a combined resource of two systems, in any order", jobAuth, auth("alice", "execute_script", host7, script1), allowed(true)),
		fails("auth: the local part of it alone", jobAuth, auth("alice", "execute_script", script1)),
		ok("auth: a path through another system's ancestor", jobAuth, auth("bob", "view_script", jobRes("bk_job", "script", "s2", `{"_bk_iam_path_":"/bk_cmdb,biz,1/"}`)), allowed(true)),
		ok("auth_by_actions", jobByActions, byActionsBody("alice", actionsJSON("access_business"), biz1), `{"access_business":true}`),
		fails("auth_by_actions: a local action beside it", jobByActions, byActionsBody("alice", actionsJSON("view", "access_business"), biz1)),
		ok("auth_by_resources: the system compared", byResources, `{"system":"bk_job",`+subj("user", "alice")+`,"action":{"id":"access_business"},"resources_list":[[`+
			biz1+`],[`+jobRes("bk_job", "biz", "1")+`]]}`, `{"bk_cmdb,biz,1":true,"bk_job,biz,1":false}`),

		fails("query_by_actions: no resources", jobQueryBy, byActionsBody("alice", actionsJSON("access_business"))),
		fails("query_by_actions: without the resources key", jobQueryBy, `{`+subj("user", "alice")+`,"actions":`+actionsJSON("access_business")+`}`),
		fails("query_by_actions: a local action beside it gets no answer", jobQueryBy, byActionsBody("alice", actionsJSON("view", "access_business"))),
		ok("query_by_actions: the local action alone", jobQueryBy, byActionsBody("bob", actionsJSON("view")), `[`+row("view", `{"field":"job.id","op":"eq","value":"j1"}`)+`]`),
		ok("query_by_actions: the remote resource given", jobQueryBy, byActionsBody("alice", actionsJSON("access_business"), biz1), `[`+row("access_business", anyOf)+`]`),
		ok("query_by_actions: another remote instance", jobQueryBy, byActionsBody("alice", actionsJSON("access_business"), jobRes("bk_cmdb", "biz", "2")), `[`+row("access_business", `{}`)+`]`),
		ok("query_by_actions: the local type may be left out", jobQueryBy, byActionsBody("alice", actionsJSON("execute_script"), host7), `[`+row("execute_script", scriptEq)+`]`),
		fails("query_by_actions: the remote type may not", jobQueryBy, byActionsBody("alice", actionsJSON("execute_script"), script1)),
		fails("query_by_actions: a remote type given twice", jobQueryBy, byActionsBody("alice", actionsJSON("access_business"), biz1, jobRes("bk_cmdb", "biz", "2"))),
		ok("query_by_actions: a remote resource of a third system passes by its type id and counts for nothing", jobQueryBy,
			byActionsBody("alice", actionsJSON("access_business"), jobRes("bk_sops", "biz", "1")), `[`+row("access_business", bizEq1)+`]`),
		{name: "query_by_actions: a manager", path: jobQueryBy, body: byActionsBody("admin", actionsJSON("access_business")), status: 200, msg: managerMsg,
			data: `[` + row("access_business", anyOf) + `]`},

		ok("query: no resources, the whole expression", jobQuery, query("alice", "access_business"), bizEq1),
		ok("query: without the resources key", jobQuery, `{`+subj("user", "alice")+`,"action":{"id":"access_business"}}`, bizEq1),
		ok("query: a combined resource, no resources", jobQuery, query("alice", "execute_script"),
			`{"op":"AND","content":[`+scriptEq+`,{"field":"host.id","op":"eq","value":"7"}]}`),
		fails("query: a partial remote resource", jobQuery, query("alice", "execute_script", script1)),
		ok("query: the remote resource given", jobQuery, query("alice", "execute_script", host7), scriptEq),
		ok("query: both given", jobQuery, query("alice", "execute_script", script1, host7), anyOf),
		ok("query: a local action", jobQuery, query("bob", "view", jobRes("bk_job", "job", "j1")), anyOf),
		ok("query: nothing held", jobQuery, query("carol", "access_business"), `{}`),
		ok("query: an unknown user", jobQuery, query("ghost", "access_business"), `{}`),
		{name: "query: a manager", path: jobQuery, body: query("admin", "fly"), status: 200, msg: managerMsg, data: anyOf},
		{name: "query: an unknown action is a bad request", path: jobQuery, body: query("alice", "fly"), status: 400, code: 1901400,
			msg: "bad request:[PDP:Query] queryAndPartialEvalConditions fail => action.id invalid"},
		{name: "query: the action is required", path: jobQuery, body: `{` + subj("user", "alice") + `}`, status: 400, code: 1901400, msg: "bad request:ID is required"},
		{name: "query: attribute is required", path: jobQuery, body: query("alice", "access_business", `{"system":"bk_cmdb","type":"biz","id":"1"}`),
			status: 400, code: 1901400, msg: "bad request:Attribute is required"},
		{name: "query: an unknown system", path: "/api/v2/policy/systems/nope/query/", body: query("alice", "access_business"),
			status: 404, code: 1901404, msg: "not found:system(nope) not exists"},
		{name: "query: not a client", path: jobQuery, body: query("alice", "access_business"), auth: outsider,
			status: 401, code: 1901401, msg: "unauthorized:app(outsider) is not allowed to call system (bk_job) api"},
	})
	if n := s.Stats().Requests["policy_query"]; n != 15 {
		t.Errorf("policy_query counted %d calls, want 15", n)
	}
}

// The debug output with another system's types: the batch query's failure carries the failing
// action's entry in HTTP 200; the single query's tree is the action's entry, with the rows.
func TestCrossSystemQueryDebug(t *testing.T) {
	s := crossAccessFixture(t)
	r, tree := debugPost(t, s, jobQueryBy, "&force=1", queryBody("user", "alice", "view", "access_business"))
	if r.status != 200 || r.code() != 1901500 || !strings.Contains(r.message(), "request resources not match action") || r.raw == "" ||
		!jsonEqual(r.body["data"], `{}`) {
		t.Fatalf("query_by_actions with debug: HTTP %d %s", r.status, r.raw)
	}
	if id := actionOf(tree); id != "access_business" || !strings.Contains(fmt.Sprint(tree["error"]), "request resources not match action") ||
		strings.Join(stepNames(tree), ",") != "Fetch action details,Validate action remote resource" {
		t.Errorf("the failing action's entry: %v", tree)
	}

	var list listData
	_ = json.Unmarshal([]byte(getRead(t, s, "/api/v1/systems/bk_job/policies?action_id=access_business", goodAuth).raw), &list)
	if len(list.Data.Results) != 1 {
		t.Fatalf("the policy list: %+v", list)
	}
	r, tree = debugPost(t, s, jobQuery, "", `{`+subj("user", "alice")+`,"action":{"id":"access_business"}}`)
	if r.status != 200 || r.code() != 0 || !jsonEqual(r.body["data"], `{"field":"biz.id","op":"eq","value":"1"}`) {
		t.Fatalf("query with debug: HTTP %d %s", r.status, r.raw)
	}
	steps := strings.Join(stepNames(tree), ",")
	if actionOf(tree) != "access_business" || strings.Contains(steps, "Validate action") || !strings.Contains(steps, "Filter policies by eval resources") {
		t.Errorf("the action's entry: steps %s, %v", steps, tree)
	}
	rows := effectRows(t, tree)
	if len(rows) != 1 || rows[0].PK != list.Data.Results[0].ID || float64(rows[0].SubjectPK) != subjectAttribute(t, tree)["pk"] {
		t.Errorf("effectPolicies %+v, want the listed row %d of alice", rows, list.Data.Results[0].ID)
	}
	action, _ := entryContext(tree)["action"].(map[string]any)
	if b, _ := json.Marshal(action["Attribute"]); !strings.Contains(string(b), `"resource_type":[{"System":"bk_cmdb","Type":"biz"}]`) {
		t.Errorf("the action's related types: %s", b)
	}
	// The rows' stored form names the field with its type's system.
	if !strings.Contains(r.raw, `bk_cmdb.biz.id`) || strings.Contains(r.raw, `bk_job.biz.id`) {
		t.Errorf("internal expressions: %s", r.raw)
	}

	r, tree = debugPost(t, s, jobQuery, "", `{`+subj("user", "alice")+`,"action":{"id":"execute_script"},"resources":[`+jobRes("bk_job", "script", "s1")+`]}`)
	if r.status != 200 || r.code() != 1901500 || actionOf(tree) != "execute_script" ||
		strings.Join(stepNames(tree), ",") != "Fetch action details,Validate action remote resource" {
		t.Errorf("a partial remote resource with debug: HTTP %d %s", r.status, r.raw)
	}
	r, tree = debugPost(t, s, jobQuery, "", `{`+subj("user", "alice")+`,"action":{"id":"fly"}}`)
	if _, has := r.body["debug"]; r.status != 400 || r.code() != 1901400 || has || tree != nil {
		t.Errorf("an unknown action with debug: HTTP %d %s", r.status, r.raw)
	}
}

// actionOf is the action id of an action's debug entry.
func actionOf(e map[string]any) string {
	a, _ := entryContext(e)["action"].(map[string]any)
	id, _ := a["ID"].(string)
	return id
}

func jsonEqual(v any, want string) bool {
	b, _ := json.Marshal(v)
	w, _ := json.Marshal(mustJSON(want))
	return string(b) == string(w)
}

// Rows the control routes seed (a template row, a row with an attribute condition) work with
// another system's type: paths of its system, fields by its id, evaluated with its system.
func TestCrossSystemSeededRows(t *testing.T) {
	s := newServer(t, withModel(crossModel(t)))
	if err := s.AddTemplatePolicy("bk_job", sandbox.TemplatePolicy{TemplateID: 7, User: "dave", Action: "access_business",
		Paths: []string{"/bk_cmdb,biz,5/"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddExpressionPolicy("bk_job", sandbox.ExpressionPolicy{Subject: sandbox.Subject{Type: "user", ID: "carol"},
		Action: "access_business", Expression: json.RawMessage(`{"field":"biz.level","op":"eq","value":"gold"}`)}); err != nil {
		t.Fatal(err)
	}
	_, err := s.AddExpressionPolicy("bk_job", sandbox.ExpressionPolicy{Subject: sandbox.Subject{Type: "user", ID: "carol"},
		Action: "access_business", Expression: json.RawMessage(`{"field":"script.id","op":"eq","value":"s1"}`)})
	if err == nil || !strings.Contains(err.Error(), `resource type "script" is not one action access_business relates to (biz)`) {
		t.Errorf("a field of a type the action does not relate to: %v", err)
	}
	gold := func(system string) string { return jobRes(system, "biz", "3", `{"level":"gold"}`) }
	runAccessCases(t, s, []accessCase{
		{name: "a template row", path: jobAuth, body: authBody("dave", "access_business", jobRes("bk_cmdb", "biz", "5")), status: 200, msg: "ok", data: allowed(true)},
		{name: "an attribute condition", path: jobAuth, body: authBody("carol", "access_business", gold("bk_cmdb")), status: 200, msg: "ok", data: allowed(true)},
		{name: "an attribute condition, the resource of another system", path: byResources,
			body:   `{"system":"bk_job",` + subj("user", "carol") + `,"action":{"id":"access_business"},"resources_list":[[` + gold("bk_job") + `]]}`,
			status: 200, msg: "ok", data: `{"bk_job,biz,3":false}`},
		{name: "query: the attribute condition", path: jobQuery, body: `{` + subj("user", "carol") + `,"action":{"id":"access_business"}}`,
			status: 200, msg: "ok", data: `{"field":"biz.level","op":"eq","value":"gold"}`},
	})
}
