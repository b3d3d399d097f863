package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// releaseModel is the default model playing the SaaS release saas, with an app "jobonly" that is
// a client of bk_job alone, holding objects of the object allow-list.
func releaseModel(t *testing.T, saas string, objects ...sandbox.ManagementObject) *sandbox.Model {
	t.Helper()
	m := sandbox.DefaultModel()
	m.SaaS = saas
	m.Apps = append(m.Apps, sandbox.App{Code: "jobonly", Secret: "s", ClientOf: []string{"bk_job"},
		Management: map[string][]string{"*": {"*"}}, ManagementObjects: objects})
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	model, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	return model
}

// The 2026 SaaS caps a membership's expiry at two years from now on the member add and the expiry
// update, permanent aside; the SaaS before it (the default) takes any expiry up to permanent.
func TestSaaS2026MemberExpiryCap(t *testing.T) {
	twoYears := fixedNow.Unix() + 730*24*3600
	for _, tc := range []struct {
		name, saas string
		expiredAt  int64
		refused    bool
	}{
		{"2025: three years", "", fixedNow.Unix() + 3*365*24*3600, false},
		{"2026: at the cap", "2026", twoYears, false},
		{"2026: a second past it", "2026", twoYears + 1, true},
		{"2026: permanent", "2026", 4102444800, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, sandbox.WithModel(releaseModel(t, tc.saas)))
			mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", strings.Replace(gmBody, `"sync_perm":true`, `"sync_perm":false`, 1), 200, 0)
			gid := itoa(int(mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0).body["data"].([]any)[0].(float64)))
			mustMgmt(t, s, "POST", "bk_cmdb/groups/"+gid+"/members/", `{"members":[{"type":"user","id":"bob"}],"expired_at":`+fmt.Sprint(fixedNow.Unix()+60)+`}`, 200, 0)
			body := `{"members":[{"type":"user","id":"bob"}],"expired_at":` + fmt.Sprint(tc.expiredAt) + `}`
			for _, call := range []struct{ method, path string }{
				{"POST", "bk_cmdb/groups/" + gid + "/members/"},
				{"PUT", "bk_cmdb/groups/" + gid + "/members/-/expired_at/"},
			} {
				r := mgmtCall(s, call.method, call.path, body)
				switch {
				case tc.refused && (r.status != 400 || r.code() != 1902412 ||
					!strings.Contains(r.raw, `{\"expired_at\": [\"expired_at must be at most 730 days from now, or permanent\"]} (VALIDATE_ERROR)`)):
					t.Errorf("%s %s: %d %s, want the cap's 400", call.method, call.path, r.status, r.raw)
				case !tc.refused && (r.status != 200 || r.code() != 0):
					t.Errorf("%s %s: %d %s, want it taken", call.method, call.path, r.status, r.raw)
				}
			}
			want := fixedNow.Unix() + 60
			if !tc.refused {
				want = tc.expiredAt
			}
			if got := mgmtCall(s, "GET", "bk_cmdb/groups/"+gid+"/members/", ""); !strings.Contains(got.raw, fmt.Sprintf(`"expired_at":%d`, want)) {
				t.Errorf("bob's expiry: %s, want %d", got.raw, want)
			}
		})
	}
	// The cap's length is the model's.
	m := releaseModel(t, "2026")
	m.Limits.MemberExpiryMaxDays = 1
	raw, _ := json.Marshal(m)
	model, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, sandbox.WithModel(model))
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", strings.Replace(gmBody, `"sync_perm":true`, `"sync_perm":false`, 1), 200, 0)
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0) // 4
	if r := mgmtCall(s, "POST", "bk_cmdb/groups/4/members/", `{"members":[{"type":"user","id":"bob"}],"expired_at":`+fmt.Sprint(fixedNow.Unix()+2*24*3600)+`}`); r.status != 400 ||
		!strings.Contains(r.raw, "at most 1 days from now") {
		t.Errorf("a one-day cap: %d %s", r.status, r.raw)
	}
}

// The 2026 SaaS's object allow-list lets an app call one management API on one group or grade
// manager it could not otherwise manage (another system created it, or the web UI), after the
// path system's checks, which still apply; the SaaS before it reads no such entries. The default
// model's groups are 1 to 3: the groups made here are 4 and 5.
func TestSaaS2026ObjectAllowList(t *testing.T) {
	objects := []sandbox.ManagementObject{
		{ObjectType: "group", ObjectID: 4, API: "v2_group_member_add"},
		{ObjectType: "group", ObjectID: 4, API: "v2_group_member_list"},
		{ObjectType: "role", ObjectID: 1, API: "*"},
	}
	s := newServer(t, sandbox.WithModel(releaseModel(t, "2026", objects...)))
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", strings.Replace(gmBody, `"sync_perm":true`, `"sync_perm":false`, 1), 200, 0)                    // 1
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""},{"name":"qa","description":""}]}`, 200, 0) // 4, 5
	as := func(app, method, path, body string) response {
		req := httptest.NewRequest(method, "/api/v2/open/management/systems/"+path, strings.NewReader(body))
		req.Header.Set("X-Bkapi-Authorization", `{"bk_app_code":"`+app+`","bk_app_secret":"s"}`)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return response{status: rec.Code, raw: rec.Body.String()}
	}
	add := `{"members":[{"type":"user","id":"bob"}],"expired_at":4102444800}`
	for _, st := range []struct {
		name, method, path, body, want string
		status                         int
	}{
		{"an entry for the group and the API", "POST", "bk_job/groups/4/members/", add, `"data":{}`, 200},
		{"... read back through it", "GET", "bk_job/groups/4/members/", "", `"id":"bob"`, 200},
		{"another API on the group", "DELETE", "bk_job/groups/4/members/?type=user&ids=bob", "", "app_code jobonly can not access system bk_cmdb", 403},
		{"another group", "POST", "bk_job/groups/5/members/", add, "app_code jobonly can not access system bk_cmdb", 403},
		{"the path system's checks still apply", "POST", "bk_cmdb/groups/4/members/", add, "app_code jobonly can not access system bk_cmdb", 403},
		{"an entry for the grade manager, any API", "GET", "bk_job/grade_managers/1/", "", `"id":1`, 200},
		{"... does not cover its groups", "GET", "bk_job/groups/5/members/", "", "app_code jobonly can not access system bk_cmdb", 403},
	} {
		if r := as("jobonly", st.method, st.path, st.body); r.status != st.status || !strings.Contains(r.raw, st.want) {
			t.Errorf("%s: %s %s: %d %s, want %d with %s", st.name, st.method, st.path, r.status, r.raw, st.status, st.want)
		}
	}
	// A grade manager made in the web UI has no creator: only an entry lets an app manage it.
	if err := s.ForgetCreator(1); err != nil {
		t.Fatal(err)
	}
	if r := as("jobonly", "POST", "bk_job/groups/4/members/", add); r.status != 200 {
		t.Errorf("a web-UI group with an entry: %d %s", r.status, r.raw)
	}
	if r := mgmtCall(s, "POST", "bk_cmdb/groups/4/members/", add); r.status != 403 || !strings.Contains(r.raw, "since role is not created by system[bk_cmdb])") {
		t.Errorf("a web-UI group without an entry: %d %s", r.status, r.raw)
	}

	// The SaaS before 2026 has no object allow-list: a model that names entries for it is refused.
	m := sandbox.DefaultModel()
	m.Apps[0].ManagementObjects = objects
	raw, _ := json.Marshal(m)
	if _, err := sandbox.LoadModel(raw); err == nil || !strings.Contains(err.Error(), `apps[0].management_objects[0]: only the "2026" SaaS has the object allow-list`) {
		t.Errorf("entries for the 2025 SaaS: %v", err)
	}
	m.SaaS = "2027"
	raw, _ = json.Marshal(m)
	if _, err := sandbox.LoadModel(raw); err == nil || !strings.Contains(err.Error(), `saas: "2027" is not a SaaS release`) {
		t.Errorf("an unknown release: %v", err)
	}
}
