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
