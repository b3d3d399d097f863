package sandbox_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// v1Row is a row of the v1 group list.
type v1Row struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Attributes  struct {
		SourceType     string `json:"source_type"`
		SourceFromRole bool   `json:"source_from_role"`
	} `json:"attributes"`
}

// v1Groups sends GET /api/v1/open/management/grade_managers/{gm}/groups/?query as app (with
// secret "s", or the default app's when app is "").
func v1Groups(t *testing.T, s http.Handler, app, gm, query string) (response, []v1Row) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/api/v1/open/management/grade_managers/"+gm+"/groups/"+query, nil)
	auth := goodAuth
	if app != "" {
		auth = `{"bk_app_code":"` + app + `","bk_app_secret":"s"}`
	}
	req.Header.Set("X-Bkapi-Authorization", auth)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	r := response{status: rec.Code, raw: rec.Body.String()}
	_ = json.Unmarshal(rec.Body.Bytes(), &r.body)
	var env struct {
		Data struct {
			Count   int     `json:"count"`
			Results []v1Row `json:"results"`
		} `json:"data"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &env)
	return r, env.Data.Results
}

// The v1 group list answers the SaaS's group attributes (internal/bkiam's package doc, "The
// management API"): source_from_role marks the grade manager's sync group, and only it, through a
// rename in the web UI (POST /_sandbox/groups/{id}/rename); source_type is openapi for the groups
// the API made, but for the sync group a grade-manager update builds. Its checks go by the grade
// manager's creator, with v1's own texts; a page past the end is empty.
func TestV1GroupListAttributes(t *testing.T) {
	m := sandbox.DefaultModel()
	m.Apps = append(m.Apps, sandbox.App{Code: "nolist", Secret: "s", ClientOf: []string{"bk_cmdb"},
		Management: map[string][]string{"bk_cmdb": {"v2_group_list"}}},
		sandbox.App{Code: "jobonly", Secret: "s", ClientOf: []string{"bk_job"}, Management: map[string][]string{"*": {"*"}}})
	raw, _ := json.Marshal(m)
	model, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, sandbox.WithModel(model))
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", gmBody, 200, 0) // 1, with its sync group
	var sync int64
	for _, g := range s.Groups(1) {
		if g.Sync {
			sync = g.ID
		}
	}
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":"d"}]}`, 200, 0)
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"bare","description":""}],"create_attributes":false}`, 200, 0)
	type attrs struct {
		name, sourceType string
		fromRole         bool
	}
	rowsOf := func(rows []v1Row) (got []attrs) {
		for _, r := range rows {
			got = append(got, attrs{r.Name, r.Attributes.SourceType, r.Attributes.SourceFromRole})
		}
		return got
	}
	r, rows := v1Groups(t, s, "", "1", "")
	want := []attrs{{"bare", "", false}, {"dev", "openapi", false}, {"ops administrator group", "openapi", true}}
	if r.status != 200 || !reflect.DeepEqual(rowsOf(rows), want) || rows[2].ID != sync {
		t.Fatalf("the v1 list: %d %+v, want %+v with the sync group %d last\n%s", r.status, rowsOf(rows), want, sync, r.raw)
	}

	if c := control(t, s, "POST", "/_sandbox/groups/"+itoa(int(sync))+"/rename", `{"name":" platform admins "}`); c.status != 200 {
		t.Fatalf("rename: %d %s", c.status, c.raw)
	}
	if _, rows = v1Groups(t, s, "", "1", ""); rows[2].Name != "platform admins" || !rows[2].Attributes.SourceFromRole {
		t.Fatalf("after a rename in the web UI the v1 list answers %+v, want the sync group renamed and still marked", rows[2])
	}
	if v := mustMgmt(t, s, "GET", "bk_cmdb/grade_managers/1/groups/?id="+itoa(int(sync)), "", 200, 0); !strings.Contains(v.raw, `"name":"platform admins"`) {
		t.Fatalf("the v2 list after the rename: %s", v.raw)
	}
	if g := s.Groups(1); !g[0].Sync || g[0].Name != "platform admins" {
		t.Fatalf("the inspection after the rename: %+v", g[0])
	}
	for _, tc := range []struct{ body, want string }{
		{`{"name":"DEV"}`, "存在同名用户组"},
		{`{"name":"x"}`, "a name of 1 characters, want 2 to 128"},
		{`{"name":"ok","extra":1}`, "unknown field"},
	} {
		if c := control(t, s, "POST", "/_sandbox/groups/"+itoa(int(sync))+"/rename", tc.body); c.status != 400 || !strings.Contains(c.raw, tc.want) {
			t.Errorf("rename %s: %d %s, want 400 with %q", tc.body, c.status, c.raw, tc.want)
		}
	}
	if c := control(t, s, "POST", "/_sandbox/groups/999/rename", `{"name":"ok"}`); c.status != 400 || !strings.Contains(c.raw, "no management group 999") {
		t.Errorf("rename of an unknown group: %d %s", c.status, c.raw)
	}

	// sync_perm off deletes the sync group; on again, an update builds one marked
	// source_from_role only.
	mustMgmt(t, s, "PUT", "bk_cmdb/grade_managers/1/", strings.Replace(gmBody, `"sync_perm":true`, `"sync_perm":false`, 1), 200, 0)
	mustMgmt(t, s, "PUT", "bk_cmdb/grade_managers/1/", gmBody, 200, 0)
	_, rows = v1Groups(t, s, "", "1", "?page=1&page_size=1")
	if want := []attrs{{"ops administrator group", "", true}}; !reflect.DeepEqual(rowsOf(rows), want) {
		t.Fatalf("after sync_perm off and on the v1 list's first page is %+v, want %+v", rowsOf(rows), want)
	}
	if r, rows := v1Groups(t, s, "", "1", "?page=9&page_size=1"); r.status != 200 || len(rows) != 0 || !strings.Contains(r.raw, `"count":3`) {
		t.Fatalf("a page past the end: %d %s", r.status, r.raw)
	}

	for _, tc := range []struct{ name, app, gm, want string }{
		{"not allowed group_list", "nolist", "1", "system[bk_cmdb] is not allowed to call management api[group_list]"},
		{"not a client of the creator", "jobonly", "1", "app_code jobonly can not access system bk_cmdb"},
		{"an unknown grade manager", "", "7", "role[7] can not be operated by app_code[bkiam-sandbox], since role is not created by app_code[bkiam-sandbox]."},
	} {
		if r, _ := v1Groups(t, s, tc.app, tc.gm, ""); r.status != 403 || r.code() != 1902403 || !strings.Contains(r.raw, tc.want) {
			t.Errorf("%s: %d %s, want 403 1902403 with %q", tc.name, r.status, r.raw, tc.want)
		}
	}
	if err := s.ForgetCreator(1); err != nil {
		t.Fatal(err)
	}
	if r, _ := v1Groups(t, s, "", "1", ""); r.status != 403 || !strings.Contains(r.raw, "since role is not created by app_code[bkiam-sandbox].") {
		t.Errorf("a grade manager made in the web UI: %d %s", r.status, r.raw)
	}
	if n := s.Stats().Requests["group:list_v1"]; n != 8 {
		t.Errorf("the v1 group list counted %d times, want 8", n)
	}
}

// A read-only group cannot be renamed in the web UI.
func TestRenameReadonlyGroup(t *testing.T) {
	s := newServer(t)
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", strings.Replace(gmBody, `"sync_perm":true`, `"sync_perm":false`, 1), 200, 0)
	r := mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"frozen","description":"","readonly":true}]}`, 200, 0)
	id := itoa(int(r.body["data"].([]any)[0].(float64)))
	if c := control(t, s, "POST", "/_sandbox/groups/"+id+"/rename", `{"name":"thawed"}`); c.status != 400 || !strings.Contains(c.raw, "只读用户组") {
		t.Fatalf("rename of a read-only group: %d %s", c.status, c.raw)
	}
}

// The groups' attributes and a web UI rename outlive a restart on the state file.
func TestV1GroupListAttributesPersist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := newServer(t, sandbox.WithStateFile(path))
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", gmBody, 200, 0)
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0)
	_, rows := v1Groups(t, s, "", "1", "")
	if c := control(t, s, "POST", "/_sandbox/groups/"+itoa(int(rows[1].ID))+"/rename", `{"name":"admins"}`); c.status != 200 {
		t.Fatalf("rename: %s", c.raw)
	}
	_, before := v1Groups(t, s, "", "1", "")
	_, after := v1Groups(t, newServer(t, sandbox.WithStateFile(path)), "", "1", "")
	if !reflect.DeepEqual(after, before) || before[1].Name != "admins" || !before[1].Attributes.SourceFromRole || before[0].Attributes.SourceType != "openapi" {
		t.Fatalf("after a restart the v1 list answers %+v, want %+v", after, before)
	}
}
