package policyexpr

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// sbPost sends a grant through the gateway route and fails the test unless it was accepted.
func sbPost(t *testing.T, sb *sandboxtest.Sandbox, ep, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, sb.URL+"/api/v1/open/authorization/"+ep+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Bkapi-Authorization", sandboxtest.AuthHeader())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Code int `json:"code"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil || out.Code != 0 {
		t.Fatalf("%s %s: %d %s", ep, body, resp.StatusCode, raw)
	}
}

// sbExprs lists one action's policies and returns each subject's parsed expression ("user:alice").
func sbExprs(t *testing.T, sb *sandboxtest.Sandbox, system, action string) map[string]*Expr {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, sb.URL+"/api/v1/systems/"+system+"/policies?action_id="+action, nil)
	req.Header.Set("X-Bkapi-Authorization", sandboxtest.AuthHeader())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Code int `json:"code"`
		Data struct {
			Results []struct {
				Subject    struct{ Type, ID string } `json:"subject"`
				Expression json.RawMessage           `json:"expression"`
			} `json:"results"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Code != 0 {
		t.Fatalf("list %s: %v %s", action, err, raw)
	}
	got := map[string]*Expr{}
	for _, r := range out.Data.Results {
		e, err := Parse(r.Expression)
		if err != nil {
			t.Fatalf("list %s: %s: %v", action, r.Expression, err)
		}
		got[r.Subject.Type+":"+r.Subject.ID] = e
	}
	return got
}

func pathNode(system, typ, id string) string {
	return `{"system":"` + system + `","type":"` + typ + `","id":"` + id + `","name":"n"}`
}

func instances(ids ...string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = `{"id":"` + id + `","name":"n"}`
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// TestSandboxEndToEnd grants every shape through the sandbox's HTTP API, reads the policy list back and
// asks the parsed expressions about the grants, including after a partial revoke.
func TestSandboxEndToEnd(t *testing.T) {
	sb := sandboxtest.Start(t)
	user := func(id string) string { return `"subject":{"type":"user","id":"` + id + `"}` }

	// edit_host for alice: instances 1, 2; a path biz 1 → host 3; a path ending at biz 2.
	sbPost(t, sb, "batch_instance", `{"system":"bk_cmdb","operate":"grant",`+user("alice")+`,"actions":[{"id":"edit_host"}],`+
		`"resources":[{"system":"bk_cmdb","type":"host","instances":`+instances("1", "2")+`}]}`)
	sbPost(t, sb, "batch_path", `{"system":"bk_cmdb","operate":"grant",`+user("alice")+`,"actions":[{"id":"edit_host"}],`+
		`"resources":[{"system":"bk_cmdb","type":"host","paths":[[`+pathNode("bk_cmdb", "biz", "1")+`,`+pathNode("bk_cmdb", "host", "3")+`],[`+pathNode("bk_cmdb", "biz", "2")+`]]}]}`)
	// A creator grant with an ancestor: mini_app_edit keeps the path, mini_app_view (ignore_iam_path)
	// collapses it for a user.
	sbPost(t, sb, "batch_resource_creator_action", `{"system":"bk_sops","type":"mini_app","creator":"bob",`+
		`"instances":[{"id":"m1","name":"n","ancestors":[{"system":"bk_sops","type":"project","id":"project1"}]}]}`)
	// Combined resource, two grants; any; an action with no resource type.
	for _, g := range [][2]string{{instances("1"), instances("7")}, {instances("2"), instances("8", "9")}} {
		sbPost(t, sb, "batch_instance", `{"system":"bk_cmdb","operate":"grant",`+user("carol")+`,"actions":[{"id":"edit_biz_host"}],`+
			`"resources":[{"system":"bk_cmdb","type":"biz","instances":`+g[0]+`},{"system":"bk_cmdb","type":"host","instances":`+g[1]+`}]}`)
	}
	sbPost(t, sb, "batch_instance", `{"system":"bk_cmdb","operate":"grant",`+user("dave")+`,"actions":[{"id":"view_biz"}],`+
		`"resources":[{"system":"bk_cmdb","type":"biz","instances":[]}]}`)
	sbPost(t, sb, "batch_instance", `{"system":"bk_cmdb","operate":"grant",`+user("dave")+`,"actions":[{"id":"create_biz"}],"resources":[]}`)

	edit := sbExprs(t, sb, "bk_cmdb", "edit_host")["user:alice"]
	checks := []struct {
		name      string
		got, want bool
	}{
		{"instance 1", edit.HoldsInstance("host", "1"), true},
		{"instance 2", edit.HoldsInstance("host", "2"), true},
		{"path host 3 is no instance grant", edit.HoldsInstance("host", "3"), false},
		{"path biz 1 → host 3", edit.HoldsPath("host", "3", anc("biz", "1")), true},
		{"path biz 9 → host 3", edit.HoldsPath("host", "3", anc("biz", "9")), false},
		{"under biz 2", edit.HoldsPath("host", "44", anc("biz", "2")), true},
		{"under biz 3", edit.HoldsPath("host", "44", anc("biz", "3")), false},
	}
	ids, anyInst := edit.Instances("host")
	checks = append(checks, struct {
		name      string
		got, want bool
	}{"Instances", strings.Join(ids, ",") == "1,2" && !anyInst, true})

	sopsEdit := sbExprs(t, sb, "bk_sops", "mini_app_edit")["user:bob"]
	sopsView := sbExprs(t, sb, "bk_sops", "mini_app_view")["user:bob"]
	combo := sbExprs(t, sb, "bk_cmdb", "edit_biz_host")["user:carol"]
	viewBiz := sbExprs(t, sb, "bk_cmdb", "view_biz")["user:dave"]
	createBiz := sbExprs(t, sb, "bk_cmdb", "create_biz")["user:dave"]
	p1 := anc("project", "project1")
	for name, e := range map[string]*Expr{"edit_host": edit, "mini_app_edit": sopsEdit, "mini_app_view": sopsView, "edit_biz_host": combo, "view_biz": viewBiz, "create_biz": createBiz} {
		t.Logf("%s: %s", name, mustMarshal(t, e))
	}
	checks = append(checks, []struct {
		name      string
		got, want bool
	}{
		{"creator path edit", sopsEdit.HoldsPath("mini_app", "m1", p1), true},
		{"creator path edit is no instance grant", sopsEdit.HoldsInstance("mini_app", "m1"), false},
		{"creator path edit, other project", sopsEdit.HoldsPath("mini_app", "m1", anc("project", "project2")), false},
		{"creator path view (collapsed)", sopsView.HoldsPath("mini_app", "m1", p1), true},
		{"collapsed is an instance grant", sopsView.HoldsInstance("mini_app", "m1"), true},
		{"combined first", combo.HoldsCombination(map[string][]string{"biz": {"1"}, "host": {"7"}}), true},
		{"combined second", combo.HoldsCombination(map[string][]string{"biz": {"2"}, "host": {"8", "9"}}), true},
		{"combined across groups", combo.HoldsCombination(map[string][]string{"biz": {"1"}, "host": {"7", "8"}}), false},
		{"combined is no instance grant", combo.HoldsInstance("host", "7"), false},
		{"any", viewBiz.HoldsInstance("biz", "123"), true},
		{"no resource type", createBiz.HoldsInstance("", ""), true},
	}...)
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}

	// A revoke of host 1 leaves host 2; a partial revoke of the combination drops that group only.
	sbPost(t, sb, "batch_instance", `{"system":"bk_cmdb","operate":"revoke",`+user("alice")+`,"actions":[{"id":"edit_host"}],`+
		`"resources":[{"system":"bk_cmdb","type":"host","instances":`+instances("1")+`}]}`)
	sbPost(t, sb, "batch_instance", `{"system":"bk_cmdb","operate":"revoke",`+user("carol")+`,"actions":[{"id":"edit_biz_host"}],`+
		`"resources":[{"system":"bk_cmdb","type":"biz","instances":`+instances("1")+`},{"system":"bk_cmdb","type":"host","instances":`+instances("7")+`}]}`)
	edit = sbExprs(t, sb, "bk_cmdb", "edit_host")["user:alice"]
	combo = sbExprs(t, sb, "bk_cmdb", "edit_biz_host")["user:carol"]
	if edit.HoldsInstance("host", "1") || !edit.HoldsInstance("host", "2") || !edit.HoldsPath("host", "3", anc("biz", "1")) {
		t.Errorf("after revoking host 1: %s", mustMarshal(t, edit))
	}
	if combo.HoldsCombination(map[string][]string{"biz": {"1"}, "host": {"7"}}) || !combo.HoldsCombination(map[string][]string{"biz": {"2"}, "host": {"8", "9"}}) {
		t.Errorf("after revoking biz 1 × host 7: %s", mustMarshal(t, combo))
	}
}

func mustMarshal(t *testing.T, e *Expr) string {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
