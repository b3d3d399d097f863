package sandbox_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// Rows with attribute conditions, as the web UI grants them (package doc, "Inspection and
// control", POST /_sandbox/expression_policies).

// exprPolicy is the route's body for alice's delete_host holding cond (raw JSON).
func exprPolicy(cond string) string {
	return `{"system":"bk_cmdb","subject":{"type":"user","id":"alice"},"action":"delete_host","expression":` + cond + `}`
}

// addExpr adds a row through the route and returns its backend id.
func addExpr(t *testing.T, s *sandbox.Server, body string) int64 {
	t.Helper()
	r := control(t, s, "POST", "/_sandbox/expression_policies", body)
	id, _ := r.body["backend_id"].(float64)
	if r.status != 200 || id <= 0 {
		t.Fatalf("add %s: HTTP %d %s", body, r.status, r.raw)
	}
	return int64(id)
}

func TestExpressionPolicyRoute(t *testing.T) {
	s := newServer(t)
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", scopedGM, 200, 0)
	r := mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0)
	mgmtGroup := fmt.Sprint(r.body["data"].([]any)[0])
	osLinux := `{"field":"host.os","op":"eq","value":"linux"}`
	body := func(system, subjType, subjID, action, cond, extra string) string {
		return `{"system":"` + system + `","subject":{"type":"` + subjType + `","id":"` + subjID + `"},"action":"` + action +
			`","expression":` + cond + extra + `}`
	}
	for _, tc := range []struct {
		name, body, err string // err: "" for success, else what the 400's error must start with
	}{
		{"a user of the model", body("bk_cmdb", "user", "alice", "delete_host", osLinux, ""), ""},
		{"a group of the model, until a time", body("bk_cmdb", "group", "1", "delete_host", osLinux, `,"expired_at":1800000000`), ""},
		{"a group of the management API", body("bk_cmdb", "group", mgmtGroup, "view_host", osLinux, ""), ""},
		{"a combined resource, both types named", body("bk_cmdb", "user", "bob", "edit_biz_host",
			`{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.os","op":"eq","value":"linux"}]}`, ""), ""},
		{"unknown system", body("bk_nope", "user", "alice", "delete_host", osLinux, ""), "expression policy: system: "},
		{"a department", body("bk_cmdb", "department", "1", "delete_host", osLinux, ""), "expression policy: subject.type: "},
		{"unknown user", body("bk_cmdb", "user", "ghost", "delete_host", osLinux, ""), "expression policy: subject.id: "},
		{"unknown group", body("bk_cmdb", "group", "999", "delete_host", osLinux, ""), "expression policy: subject.id: "},
		{"unknown action", body("bk_cmdb", "user", "alice", "fly", osLinux, ""), "expression policy: action: "},
		{"an action related to no type", body("bk_cmdb", "user", "alice", "create_biz", osLinux, ""), "expression policy: action: "},
		{"no expression", `{"system":"bk_cmdb","subject":{"type":"user","id":"alice"},"action":"delete_host"}`, "expression policy: expression: required"},
		{"not an object", body("bk_cmdb", "user", "alice", "delete_host", `"linux"`, ""), "expression policy: expression: not an object"},
		{"another type's field", body("bk_cmdb", "user", "alice", "delete_host", `{"field":"biz.id","op":"eq","value":"1"}`, ""),
			"expression policy: expression.field: resource type \"biz\""},
		{"a field without an attribute", body("bk_cmdb", "user", "alice", "delete_host", `{"field":"host","op":"eq","value":"1"}`, ""),
			"expression policy: expression.field: "},
		{"deep in the tree", body("bk_cmdb", "user", "alice", "delete_host",
			`{"op":"AND","content":[`+osLinux+`,{"op":"OR","content":[{"field":"job.id","op":"eq","value":"1"}]}]}`, ""),
			"expression policy: expression.content[1].content[0].field: "},
		{"an operator the backend does not hold", body("bk_cmdb", "user", "alice", "delete_host", `{"field":"host.os","op":"not_eq","value":"x"}`, ""),
			"expression policy: expression.op: "},
		{"AND without content", body("bk_cmdb", "user", "alice", "delete_host", `{"op":"AND","content":[]}`, ""),
			"expression policy: expression.content: "},
		{"in of two kinds", body("bk_cmdb", "user", "alice", "delete_host", `{"field":"host.cpu","op":"in","value":[8,"16"]}`, ""),
			"expression policy: expression.value: "},
		{"starts_with a number", body("bk_cmdb", "user", "alice", "delete_host", `{"field":"host.os","op":"starts_with","value":1}`, ""),
			"expression policy: expression.value: "},
		{"an unknown key in a node", body("bk_cmdb", "user", "alice", "delete_host", `{"field":"host.os","op":"eq","value":"x","values":[]}`, ""),
			"expression policy: expression: unknown key"},
		{"expired_at out of range", body("bk_cmdb", "user", "alice", "delete_host", osLinux, `,"expired_at":-1`), "expression policy: expired_at: "},
		{"an unknown key in the body", body("bk_cmdb", "user", "alice", "delete_host", osLinux, `,"paths":[]`), "expression policy: json: unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := control(t, s, "POST", "/_sandbox/expression_policies", tc.body)
			if tc.err == "" {
				if r.status != 200 || r.body["ok"] != true || r.body["backend_id"] == nil {
					t.Fatalf("HTTP %d %s", r.status, r.raw)
				}
				return
			}
			if msg, _ := r.body["error"].(string); r.status != 400 || !strings.HasPrefix(msg, tc.err) {
				t.Fatalf("HTTP %d %s, want 400 with an error starting %q", r.status, r.raw, tc.err)
			}
		})
	}
}

// A row of its own: listed and read by id with its expression as given, shown by inspection beside
// the custom policy, untouched by grants and revokes, gone with a reset or its group.
func TestExpressionPolicyRows(t *testing.T) {
	s := newServer(t)
	cond := `{"op":"AND","content":[{"field":"host.id","op":"in","value":["1","2"]},{"field":"host.cpu","op":"gte","value":8}]}`
	wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"delete_host"}, "host", []string{"3"}, "")))
	id := addExpr(t, s, exprPolicy(cond))
	groupID := addExpr(t, s, `{"system":"bk_cmdb","subject":{"type":"group","id":"2"},"action":"delete_host","expression":`+cond+`}`)

	rows := listRows(t, s, "bk_cmdb", "delete_host", "").Data.Results
	var listed []string
	for _, row := range rows {
		e, _ := json.Marshal(row.Expr)
		listed = append(listed, fmt.Sprintf("%d %s %s", row.ID, row.Subject["id"], e))
	}
	want := fmt.Sprintf(`%d alice {"field":"host.id","op":"eq","value":"3"}`, id-1)
	canon, _ := json.Marshal(mustJSON(cond)) // as given, compared as JSON
	if len(rows) != 3 || listed[0] != want || listed[1] != fmt.Sprintf("%d alice %s", id, canon) {
		t.Fatalf("the list: %q", listed)
	}
	r := getRead(t, s, fmt.Sprintf("/api/v1/systems/bk_cmdb/policies/%d", id), goodAuth)
	if got, _ := json.Marshal(r.body["data"].(map[string]any)["expression"]); string(got) != string(canon) {
		t.Fatalf("by id: %s", r.raw)
	}
	view := func() []sandbox.PolicyView {
		return s.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies
	}
	if v := view(); len(v) != 2 || v[1].Expression == nil || v[1].Paths != nil || !reflect.DeepEqual(v[1].Expression, mustJSON(cond)) {
		t.Fatalf("inspection: %+v", v)
	}
	if r := control(t, s, "GET", "/_sandbox/policies?subject_id=alice", ""); !strings.Contains(r.raw, `"expression":`+string(canon)) {
		t.Fatalf("inspection route: %s", r.raw)
	}

	// A grant's answer lists the custom policy only; a revoke that empties it leaves the row.
	g := send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"delete_host"}, "host", []string{"4"}, ""))
	if es := g.entries(t); len(es) != 1 || es[0].PolicyID != 1 {
		t.Fatalf("grant answer: %s", g.raw)
	}
	wantOK(t, send(t, s, gw, "batch_instance", instBody("revoke", "user", "alice", []string{"delete_host"}, "host", []string{"3", "4"}, "")))
	if v := view(); len(v) != 1 || v[0].Expression == nil {
		t.Fatalf("after the revoke: %+v", v)
	}

	if err := s.DeleteGroup("2"); err != nil {
		t.Fatal(err)
	}
	r = getRead(t, s, fmt.Sprintf("/api/v1/systems/bk_cmdb/policies/%d", groupID), goodAuth)
	if r.code() != 1901404 {
		t.Fatalf("the deleted group's row: %s", r.raw)
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if v := view(); len(v) != 0 {
		t.Fatalf("after a reset: %+v", v)
	}
}

// The access checks evaluate a row's condition as the backend's conditions do.
func TestExpressionPolicyEvaluation(t *testing.T) {
	hostWith := func(id, attrs string) string {
		return `{"system":"bk_cmdb","type":"host","id":"` + id + `","attribute":` + attrs + `}`
	}
	for _, tc := range []struct {
		name, cond, resource string
		want                 bool
	}{
		{"eq: the attribute sent", `{"field":"host.os","op":"eq","value":"linux"}`, hostWith("1", `{"os":"linux"}`), true},
		{"eq: case matters", `{"field":"host.os","op":"eq","value":"linux"}`, hostWith("1", `{"os":"Linux"}`), false},
		{"eq: an attribute not sent is false", `{"field":"host.os","op":"eq","value":"linux"}`, hostWith("1", `{}`), false},
		{"eq: a list attribute, one element matching", `{"field":"host.os","op":"eq","value":"linux"}`, hostWith("1", `{"os":["windows","linux"]}`), true},
		{"eq: a number", `{"field":"host.cpu","op":"eq","value":8}`, hostWith("1", `{"cpu":8}`), true},
		{"eq: the string 8 is not the number 8", `{"field":"host.cpu","op":"eq","value":8}`, hostWith("1", `{"cpu":"8"}`), false},
		{"eq: the number 8 is not the string 8", `{"field":"host.cpu","op":"eq","value":"8"}`, hostWith("1", `{"cpu":8}`), false},
		{"in: the resource's id, whatever its attribute says", `{"field":"host.id","op":"in","value":["1","2"]}`, hostWith("2", `{"id":"9"}`), true},
		{"AND: instances and an attribute", `{"op":"AND","content":[{"field":"host.id","op":"in","value":["1","2"]},` +
			`{"field":"host.os","op":"eq","value":"linux"}]}`, hostWith("2", `{"os":"windows"}`), false},
		{"OR: either", `{"op":"OR","content":[{"field":"host.id","op":"eq","value":"5"},{"field":"host.os","op":"eq","value":"linux"}]}`,
			hostWith("2", `{"os":"linux"}`), true},
		{"starts_with: a path ending at ,*/", `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/set,*/"}`,
			hostWith("7", `{"_bk_iam_path_":"/bk_cmdb,biz,1/bk_cmdb,set,3/"}`), true},
		{"starts_with: not another type under the parent", `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/set,*/"}`,
			hostWith("7", `{"_bk_iam_path_":["/biz,1/module,2/"]}`), false},
		{"starts_with: any attribute", `{"field":"host.name","op":"starts_with","value":"web-"}`, hostWith("7", `{"name":"web-01"}`), true},
		{"string_contains", `{"field":"host.name","op":"string_contains","value":"eb-0"}`, hostWith("7", `{"name":"web-01"}`), true},
		{"gt: greater", `{"field":"host.cpu","op":"gt","value":4}`, hostWith("1", `{"cpu":8}`), true},
		{"gt: equal is not greater", `{"field":"host.cpu","op":"gt","value":4}`, hostWith("1", `{"cpu":4}`), false},
		{"gte: equal", `{"field":"host.cpu","op":"gte","value":4}`, hostWith("1", `{"cpu":4}`), true},
		{"lt: a string does not compare with a number", `{"field":"host.cpu","op":"lt","value":16}`, hostWith("1", `{"cpu":"8"}`), false},
		{"lte: a list attribute, one element matching", `{"field":"host.cpu","op":"lte","value":4}`, hostWith("1", `{"cpu":[16,2]}`), true},
		{"a boolean", `{"field":"host.public","op":"eq","value":true}`, hostWith("1", `{"public":true}`), true},
		{"a boolean: not the string true", `{"field":"host.public","op":"eq","value":true}`, hostWith("1", `{"public":"true"}`), false},
		{"a boolean: never a list", `{"field":"host.public","op":"eq","value":true}`, hostWith("1", `{"public":[true]}`), false},
		{"any", `{"field":"host.id","op":"any","value":[]}`, hostWith("1", `{}`), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			addExpr(t, s, exprPolicy(tc.cond))
			auth := accessPost(t, s, "/api/v2/policy/systems/bk_cmdb/auth/", authBody("alice", "delete_host", tc.resource), "")
			byRes := accessPost(t, s, byResources, `{"system":"bk_cmdb",`+subj("user", "alice")+
				`,"action":{"id":"delete_host"},"resources_list":[[`+tc.resource+`]]}`, "")
			query := accessPost(t, s, queryPath, `{`+subj("user", "alice")+`,"actions":`+actionsJSON("delete_host")+`,"resources":[`+tc.resource+`]}`, "")
			gotQuery := !strings.Contains(query.raw, `"condition":{}`)
			if got := auth.body["data"].(map[string]any)["allowed"]; got != tc.want || strings.Contains(byRes.raw, fmt.Sprint(!tc.want)) || gotQuery != tc.want {
				t.Fatalf("want %t:\nauth %s\nauth_by_resources %s\nquery %s", tc.want, auth.raw, byRes.raw, query.raw)
			}
		})
	}
}

// query_by_actions merges the rows' conditions as the backend does: eq and in of one field into
// one in, numbers kept numbers.
func TestExpressionPolicyQueryMerge(t *testing.T) {
	s := newServer(t)
	wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"delete_host"}, "host", []string{"3"}, "")))
	addExpr(t, s, exprPolicy(`{"field":"host.cpu","op":"eq","value":8}`))
	addExpr(t, s, exprPolicy(`{"field":"host.cpu","op":"in","value":[16,32]}`))
	addExpr(t, s, exprPolicy(`{"field":"host.name","op":"starts_with","value":"web-"}`))
	r := accessPost(t, s, queryPath, queryBody("user", "alice", "delete_host"), "")
	want := `[{"action":{"id":"delete_host"},"condition":{"content":[{"field":"host.name","op":"starts_with","value":"web-"},` +
		`{"field":"host.cpu","op":"in","value":[8,16,32]},{"field":"host.id","op":"eq","value":"3"}],"op":"OR"}}]`
	if got, _ := json.Marshal(r.body["data"]); string(got) != want {
		t.Fatalf("condition\n %s\nwant\n %s", got, want)
	}
}

// Expiry as for any row, the debug tree's rows, and the state file.
func TestExpressionPolicyExpiryDebugAndState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	clock := &testClock{t: fixedNow}
	s := newServer(t, sandbox.WithNow(clock.now), sandbox.WithStateFile(path))
	cond := `{"field":"host.os","op":"eq","value":"linux"}`
	until := fixedNow.Unix() + 60
	id := addExpr(t, s, `{"system":"bk_cmdb","subject":{"type":"user","id":"alice"},"action":"delete_host","expression":`+cond+
		fmt.Sprintf(`,"expired_at":%d}`, until))
	linux := `{"system":"bk_cmdb","type":"host","id":"1","attribute":{"os":"linux"}}`
	check := func(s *sandbox.Server, query string) (bool, []debugRow) {
		r, tree := debugPost(t, s, "/api/v2/policy/systems/bk_cmdb/auth/", query, authBody("alice", "delete_host", linux))
		return r.body["data"].(map[string]any)["allowed"] == true, effectRows(t, tree)
	}
	ok, rows := check(s, "")
	alice := subjectPK(t, s, "user", "alice")
	if !ok || len(rows) != 1 || rows[0].PK != id || rows[0].SubjectPK != alice || rows[0].ExpiredAt != until {
		t.Fatalf("before expiry: %t %v", ok, rows)
	}

	s2 := newServer(t, sandbox.WithNow(clock.now), sandbox.WithStateFile(path))
	if got, want := policies(t, s2, all), policies(t, s, all); got != want || !strings.Contains(got, `"expression":`+cond) {
		t.Fatalf("after a restart:\n%s\nwant\n%s", got, want)
	}
	if ok, rows := check(s2, ""); !ok || len(rows) != 1 || rows[0].PK != id {
		t.Fatalf("after a restart: %t %v", ok, rows)
	}

	clock.t = time.Unix(until, 0)
	if ok, rows := check(s2, ""); ok || len(rows) != 0 {
		t.Fatalf("at its expiry, through the caches: %t %v", ok, rows)
	}
	if ok, rows := check(s2, "&force=1"); !ok || len(rows) != 1 {
		t.Fatalf("at its expiry, with force: %t %v", ok, rows)
	}
}

// TestExpressionPolicyExpiryRaisedByGrants: in IAM a user's attribute
// condition from the web UI and the API's grants of the action are one
// policy, whose one expiry every grant raises: a grant of the action to
// the user raises the row's expiry (reviving it once expired), never
// lowers it, and leaves another action's and another user's rows alone.
func TestExpressionPolicyExpiryRaisedByGrants(t *testing.T) {
	clock := &testClock{t: fixedNow}
	s := newServer(t, sandbox.WithNow(clock.now))
	cond := `{"field":"host.os","op":"eq","value":"linux"}`
	until := fixedNow.Unix() + 60
	row := func(user string) string {
		return fmt.Sprintf(`{"system":"bk_cmdb","subject":{"type":"user","id":%q},"action":"delete_host","expression":%s,"expired_at":%d}`, user, cond, until)
	}
	addExpr(t, s, row("alice"))
	addExpr(t, s, row("bob"))
	expiries := func() map[string]int64 {
		out := map[string]int64{}
		for _, p := range s.Policies(sandbox.PolicyFilter{Action: "delete_host"}).Policies {
			if p.Expression != nil {
				out[p.Subject.ID] = p.ExpiredAt
			}
		}
		return out
	}
	grant := func(user string, at int64) {
		t.Helper()
		wantOK(t, send(t, s, "gateway", "batch_instance", fmt.Sprintf(`{"system":"bk_cmdb","operate":"grant","subject":{"type":"user","id":%q},`+
			`"actions":[{"id":"delete_host"}],"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":"5","name":"h5"}]}],"expired_at":%d}`, user, at)))
	}
	clock.t = time.Unix(until+10, 0) // both rows have expired
	grant("alice", until+3600)
	if got := expiries(); got["alice"] != until+3600 || got["bob"] != until {
		t.Fatalf("after a grant to alice: %v, want alice's row raised to %d (revived), bob's left", got, until+3600)
	}
	grant("alice", until+1800)
	if got := expiries()["alice"]; got != until+3600 {
		t.Fatalf("after a grant with an earlier expiry: %d, want %d (never lowered)", got, until+3600)
	}
}
