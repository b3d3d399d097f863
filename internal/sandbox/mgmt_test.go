package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// The management allow-list and the route shapes of the grade-manager routes (package doc of
// internal/bkiam, "The management API").
func TestGradeManagerRoutes(t *testing.T) {
	m := loadModel(t, `{
  "systems": [{"id": "bk_cmdb", "resource_types": [{"id": "host"}], "actions": [{"id": "view_host", "related_types": ["host"]}],
    "allow_list": {"instance_actions": ["*"], "creator_types": ["*"]}}],
  "users": ["alice"], "groups": ["1"],
  "apps": [{"code": "reader", "secret": "s", "client_of": ["bk_cmdb"], "management": {"bk_cmdb": ["v2_grade_manager_detail"]}}]
}`)
	s := newServer(t, withModel(m))
	do := func(method, path, body string) response {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("X-Bkapi-Authorization", `{"bk_app_code":"reader","bk_app_secret":"s"}`)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return response{status: rec.Code, raw: rec.Body.String()}
	}
	const base = "/api/v2/open/management/systems/bk_cmdb/grade_managers/"
	r := do(http.MethodPost, base, `{}`)
	if r.status != 403 || !strings.Contains(r.raw, `system[bk_cmdb] is not allowed to call management api[v2_grade_manager_create], please contact the developer to add a whitelist (FORBIDDEN)`) {
		t.Fatalf("create without the allow-list: %d %s", r.status, r.raw)
	}
	r = do(http.MethodGet, base+"5/", "")
	if r.status != 403 || !strings.Contains(r.raw, `role[5] can not be operated by app_code[reader], since role is not created by system[bk_cmdb])`) {
		t.Fatalf("get of an unknown grade manager: %d %s", r.status, r.raw)
	}
	for _, path := range []string{base + "x/", base + "5"} {
		if r := do(http.MethodGet, path, ""); r.status != 404 {
			t.Errorf("%s: %d, want the gateway's 404 (no such route)", path, r.status)
		}
	}
	if n := s.Stats().Requests["grade_manager:get"]; n != 1 {
		t.Errorf("stats: %v", s.Stats().Requests)
	}
}

// mgmtCall sends one management call through the gateway as the default model's app.
func mgmtCall(s http.Handler, method, path, body string) response {
	req := httptest.NewRequest(method, "/api/v2/open/management/systems/"+path, strings.NewReader(body))
	req.Header.Set("X-Bkapi-Authorization", goodAuth)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	r := response{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	_ = json.Unmarshal(rec.Body.Bytes(), &r.body)
	return r
}

const gmBody = `{"name":"ops","description":"d","members":["alice"],"sync_perm":true,
  "authorization_scopes":[{"system":"bk_cmdb","actions":[{"id":"view_host"}],
    "resources":[{"system":"bk_cmdb","type":"host","paths":[[{"system":"bk_cmdb","type":"host","id":"*","name":""}]]}]}],
  "subject_scopes":[{"type":"*","id":"*"}]}`

// jobGMBody is a grade manager of bk_job named ops, within bk_job's own actions.
const jobGMBody = `{"name":"ops","description":"d","members":["alice"],
  "authorization_scopes":[{"system":"bk_job","actions":[{"id":"view"}],
    "resources":[{"system":"bk_job","type":"job","paths":[[{"system":"bk_job","type":"job","id":"*","name":""}]]}]}],
  "subject_scopes":[{"type":"*","id":"*"}]}`

// The groups and members of the management API, step by step against one sandbox, as the package
// doc of internal/bkiam describes them ("The management API"): ownership 403s, name conflicts,
// the serializers' checks, paging and filters, the member upsert and the limits.
func TestManagementGroupsAndMembers(t *testing.T) {
	s := newServer(t)
	far := fmt.Sprint(fixedNow.Unix() + 3600)
	later := fmt.Sprint(fixedNow.Unix() + 7200)
	steps := []struct {
		name, method, path, body string
		status, code             int
		want                     string // a substring of the raw answer
	}{
		{"grade manager with sync_perm", "POST", "bk_cmdb/grade_managers/", gmBody, 200, 0, `"data":{"id":1}`},
		{"its sync group holds its known members", "GET", "bk_cmdb/grade_managers/1/groups/", "", 200, 0,
			`"results":[{"created_time":"2026-01-01 00:00:00","creator":"bk__anonymous_user","department_count":0,"description":"d","id":4,"name":"ops administrator group","readonly":false,"subject_template_count":0,"user_count":1}]`}, // the grade manager's description, not read-only
		{"grade-manager name taken, any case, any system", "POST", "bk_job/grade_managers/", strings.Replace(jobGMBody, `"ops"`, `"OPS"`, 1), 409, 1902409,
			`"message":"与已有资源冲突(重名等): 名称 [OPS] 已存在，请修改为其他名称 (CONFLICT_ERROR)"`},
		{"another system's actions in a scope, not allowed", "POST", "bk_job/grade_managers/", strings.Replace(gmBody, `"ops"`, `"jobs"`, 1), 403, 1902403,
			`"message":"没有访问权限: system[bk_job] is not allow to operate system[bk_cmdb]'s permission data, please contact the developer to add a whitelist (FORBIDDEN)"`},
		{"scope action unknown", "POST", "bk_cmdb/grade_managers/", strings.Replace(strings.Replace(gmBody, "view_host", "nope", 1), `"ops"`, `"x"`, 1), 400, 1902412,
			`"message":"nope action not exists (VALIDATE_ERROR)"`},
		{"grade-manager fields", "POST", "bk_cmdb/grade_managers/", `{"name":"","members":[],"authorization_scopes":[],"subject_scopes":[{"type":"team","id":"1"}]}`, 400, 1902412,
			`{\"name\": [\"This field may not be blank.\"], \"description\": [\"This field is required.\"], \"authorization_scopes\": [\"This list may not be empty.\"], \"subject_scopes\": [{\"type\": [\"\\\"team\\\" is not a valid choice.\"]}]} (VALIDATE_ERROR)`},
		{"batch create", "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":"developers"},{"name":"qa","description":""}]}`, 200, 0, `"data":[5,6]`},
		{"group name taken under the grade manager", "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"DEV","description":""}]}`, 409, 1902409,
			`"message":"与已有资源冲突(重名等): 存在同名用户组 (CONFLICT_ERROR)"`},
		{"a name twice in one batch", "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"ab","description":""},{"name":"ab","description":""}]}`, 400, 1902412,
			`{\"groups\": [\"\\u7528\\u6237\\u7ec4\\u540d\\u79f0ab\\u4e0d\\u80fd\\u91cd\\u590d\"]} (VALIDATE_ERROR)`}, // 用户组名称ab不能重复, as json.dumps escapes it
		{"group fields", "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"ok","description":""},{"name":"a"}]}`, 400, 1902412,
			`{\"groups\": [{}, {\"name\": [\"Ensure this field has at least 2 characters.\"], \"description\": [\"This field is required.\"]}]} (VALIDATE_ERROR)`},
		{"more than 10 groups", "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[` + strings.Repeat(`{"name":"gg","description":""},`, 10) + `{"name":"gg","description":""}]}`, 400, 1902412,
			`Ensure this field has no more than 10 elements.`},
		{"system manager's group", "POST", "bk_cmdb/grade_managers/-/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0, `"data":[7]`},
		{"no list under -", "GET", "bk_cmdb/grade_managers/-/groups/", "", 403, 1902403, `You do not have permission`},
		{"list: newest first, paged", "GET", "bk_cmdb/grade_managers/1/groups/?page=2&page_size=2", "", 200, 0, `"count":3,"results":[{"created_time"`},
		{"list: name is a case-insensitive substring", "GET", "bk_cmdb/grade_managers/1/groups/?name=DE", "", 200, 0, `"count":1,"results":[{"created_time":"2026-01-01 00:00:00","creator":"bk__anonymous_user","department_count":0,"description":"developers","id":5,"name":"dev"`},
		{"list: by id", "GET", "bk_cmdb/grade_managers/1/groups/?id=6&inherit=false", "", 200, 0, `"count":1,"results":[{"created_time":"2026-01-01 00:00:00","creator":"bk__anonymous_user","department_count":0,"description":"","id":6,"name":"qa"`},
		{"list: description", "GET", "bk_cmdb/grade_managers/1/groups/?description=DEVEL", "", 200, 0, `"count":1`},
		{"list: action_id keeps the groups holding the action (the sync group, granted the scope)", "GET",
			"bk_cmdb/grade_managers/1/groups/?action_id=view_host", "", 200, 0, `"count":1,"results":[{"created_time":"2026-01-01 00:00:00","creator":"bk__anonymous_user","department_count":0,"description":"d","id":4,`},
		{"list: action_id no group holds", "GET", "bk_cmdb/grade_managers/1/groups/?action_id=edit_host", "", 200, 0, `"count":0`},
		{"list: bad page", "GET", "bk_cmdb/grade_managers/1/groups/?page=0", "", 400, 1902412, `greater than or equal to 1`},
		// DRF's page-number paginator (internal/bkiam's package doc, "The management API").
		{"list: a page past the end (and an error's data is null)", "GET", "bk_cmdb/grade_managers/1/groups/?page=2&page_size=10", "", 404, 1902404,
			`"message":"数据不存在 (NOT_FOUND_ERROR)","data":null}`},
		{"through another system the app is a client of: the creator decides", "GET", "bk_job/grade_managers/1/groups/", "", 200, 0, `"count":3,`},
		{"... for groups too", "GET", "bk_job/groups/5/members/", "", 200, 0, `"count":0`},
		{"unknown group", "GET", "bk_cmdb/groups/99/members/", "", 403, 1902403, `group[99] can not operated`},
		{"update: empty keeps", "PUT", "bk_cmdb/groups/5/", `{"name":"devs","description":""}`, 200, 0, `"data":{}`},
		{"update: name taken", "PUT", "bk_cmdb/groups/5/", `{"name":"QA"}`, 409, 1902409, `存在同名用户组`},
		{"update: name too long", "PUT", "bk_cmdb/groups/5/", `{"name":"` + strings.Repeat("n", 129) + `"}`, 400, 1902412, `no more than 128 characters`},
		{"updated", "GET", "bk_cmdb/grade_managers/1/groups/?id=5", "", 200, 0, `"description":"developers","id":5,"name":"devs"`},
		{"add members: admin and unknown dropped", "POST", "bk_cmdb/groups/5/members/",
			`{"members":[{"type":"user","id":"alice"},{"type":"user","id":"admin"},{"type":"user","id":"ghost"},{"type":"department","id":"2"},{"type":"department","id":"77"}],"expired_at":` + far + `}`, 200, 0, `"data":{}`},
		{"add: bob later", "POST", "bk_cmdb/groups/5/members/", `{"members":[{"type":"user","id":"bob"}],"expired_at":` + far + `}`, 200, 0, `"data":{}`},
		{"add: an existing member's expiry only rises", "POST", "bk_cmdb/groups/5/members/", `{"members":[{"type":"user","id":"alice"}],"expired_at":` + fmt.Sprint(fixedNow.Unix()+60) + `}`, 200, 0, `"data":{}`},
		{"add: expiry in the past", "POST", "bk_cmdb/groups/5/members/", `{"members":[{"type":"user","id":"bob"}],"expired_at":1}`, 400, 1902412,
			`{\"expired_at\": [\"expired_at must more then now\"]} (VALIDATE_ERROR)`},
		{"add: expiry after 2100", "POST", "bk_cmdb/groups/5/members/", `{"members":[{"type":"user","id":"bob"}],"expired_at":4102444801}`, 400, 1902412, `less than or equal to 4102444800`},
		{"members: newest relation first, expired included", "GET", "bk_cmdb/groups/5/members/", "", 200, 0,
			`{"count":3,"results":[{"created_at":1767225600,"expired_at":` + far + `,"id":"bob","name":"bob","type":"user"},{"created_at":1767225600,"expired_at":` + far + `,"id":"2","name":"2","type":"department"},{"created_at":1767225600,"expired_at":` + far + `,"id":"alice","name":"alice","type":"user"}]}`},
		{"counts in the list", "GET", "bk_cmdb/grade_managers/1/groups/?id=5", "", 200, 0, `"department_count":1,`},
		{"expiry: raised", "PUT", "bk_cmdb/groups/5/members/-/expired_at/", `{"members":[{"type":"user","id":"alice"},{"type":"user","id":"carol"}],"expired_at":` + later + `}`, 200, 0, `"data":{}`},
		// The backend's serializer takes at most 1000 members (internal/bkiam's package doc, "The management API").
		{"expiry: more than 1000 members", "PUT", "bk_cmdb/groups/5/members/-/expired_at/",
			`{"members":[` + strings.Repeat(`{"type":"user","id":"alice"},`, 1000) + `{"type":"user","id":"carol"}],"expired_at":` + later + `}`, 200, 1902000,
			`Request=[http_put /api/v1/web/group-members/expired_at request_id=`},
		{"expiry: ... as the real IAM answered", "PUT", "bk_cmdb/groups/5/members/-/expired_at/",
			`{"members":[` + strings.Repeat(`{"type":"user","id":"alice"},`, 1000) + `{"type":"user","id":"carol"}],"expired_at":` + later + `}`, 200, 1902000,
			`Response[code=1901400, message=bad request:Members must less or equals to 1000] (REMOTE_REQUEST_ERROR)","data":null}`},
		{"expiry: never lowered", "PUT", "bk_cmdb/groups/5/members/-/expired_at/", `{"members":[{"type":"user","id":"alice"}],"expired_at":` + far + `}`, 200, 0, `"data":{}`},
		{"expiry: no templates", "PUT", "bk_cmdb/groups/5/members/-/expired_at/", `{"members":[{"type":"template","id":"1"}],"expired_at":` + far + `}`, 400, 1902412, `is not a valid choice`},
		{"members after the expiry updates", "GET", "bk_cmdb/groups/5/members/?page_size=1&page=3", "", 200, 0,
			`{"count":3,"results":[{"created_at":1767225600,"expired_at":` + later + `,"id":"alice"`},
		{"delete members: non-members ignored", "DELETE", "bk_cmdb/groups/5/members/?type=user&ids=bob,,carol", "", 200, 0, `"data":{}`},
		{"delete members: an unknown subject is a backend error in HTTP 200", "DELETE", "bk_cmdb/groups/5/members/?type=user&ids=ghost", "", 200, 1902000, `(REMOTE_REQUEST_ERROR)`},
		{"delete members: more than 1000", "DELETE", "bk_cmdb/groups/5/members/?type=user&ids=" + strings.Repeat("alice,", 1001), "", 200, 1902000, `REMOTE_REQUEST_ERROR`},
		{"delete members: no ids", "DELETE", "bk_cmdb/groups/5/members/?type=user&ids=,", "", 400, 1902412, `{\"ids\": [\"This field may not be blank.\"]}`},
		{"delete members: bad type", "DELETE", "bk_cmdb/groups/5/members/?type=team&ids=1", "", 400, 1902412, `is not a valid choice`},
		{"after the delete", "GET", "bk_cmdb/groups/5/members/", "", 200, 0, `"count":2`},
		{"delete group", "DELETE", "bk_cmdb/groups/6/", "", 200, 0, `"data":{}`},
		{"a deleted group is not owned", "DELETE", "bk_cmdb/groups/6/", "", 403, 1902403, `group[6] can not operated`},
		{"the system manager's group is the system's", "GET", "bk_cmdb/groups/7/members/", "", 200, 0, `"count":0`},
		{"... and no other system's", "GET", "bk_job/groups/7/members/", "", 403, 1902403, `group[7] can not operated`},
		{"grade manager update without sync_perm", "PUT", "bk_cmdb/grade_managers/1/", strings.Replace(gmBody, `"sync_perm":true`, `"sync_perm":false`, 1), 200, 0, `"data":{}`},
		{"the sync group is gone", "GET", "bk_cmdb/grade_managers/1/groups/", "", 200, 0, `"count":1,`},
		{"bad JSON after the checks", "POST", "bk_cmdb/groups/5/members/", `{`, 400, 1902414, `JSON_FORMAT_ERROR`},
	}
	for _, st := range steps {
		r := mgmtCall(s, st.method, st.path, st.body)
		if r.status != st.status || r.code() != st.code || !strings.Contains(r.raw, st.want) {
			t.Fatalf("%s: %s %s: HTTP %d code %d, want %d %d with %s\n%s", st.name, st.method, st.path, r.status, r.code(), st.status, st.code, st.want, r.raw)
		}
	}
	stats := s.Stats().Requests
	for _, k := range []string{"grade_manager:create", "grade_manager:update", "group:create", "group:list", "group:update", "group:delete",
		"member:list", "member:add", "member:delete", "member:expiry"} {
		if stats[k] == 0 {
			t.Errorf("stats %s not counted: %v", k, stats)
		}
	}
}

// A grade manager's delete is carried out after the delay, on the injected clock, with its groups
// and their members; the 1000-member group limit; the faults apply to management calls.
func TestManagementDeleteLimitsFaults(t *testing.T) {
	now := fixedNow
	users := make([]string, 1001)
	for i := range users {
		users[i] = fmt.Sprintf(`"u%d"`, i)
	}
	m := loadModel(t, `{"systems": [{"id": "bk_cmdb", "resource_types": [{"id": "host"}], "actions": [{"id": "view_host", "related_types": ["host"]}],
  "allow_list": {"instance_actions": ["*"], "creator_types": ["*"]}}], "users": [`+strings.Join(users, ",")+`, "alice"], "groups": ["1"],
  "apps": [{"code": "bkiam-sandbox", "secret": "sandbox-secret", "client_of": ["*"], "management": {"bk_cmdb": ["*"]}}],
  "limits": {"grade_manager_delete_delay_ms": 5000}}`)
	s := newServer(t, withModel(m), sandbox.WithNow(func() time.Time { return now }))
	must := func(method, path, body string, status, code int) response {
		t.Helper()
		r := mgmtCall(s, method, path, body)
		if r.status != status || r.code() != code {
			t.Fatalf("%s %s: %d %d, want %d %d\n%s", method, path, r.status, r.code(), status, code, r.raw)
		}
		return r
	}
	must("POST", "bk_cmdb/grade_managers/", gmBody, 200, 0)
	must("POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0) // group 3 (after the model's 1 and the sync group 2)
	var refs []string
	for i := range 1001 {
		refs = append(refs, fmt.Sprintf(`{"type":"user","id":"u%d"}`, i))
	}
	exp := fmt.Sprint(now.Unix() + 60)
	r := must("POST", "bk_cmdb/groups/3/members/", `{"members":[`+strings.Join(refs, ",")+`],"expired_at":`+exp+`}`, 400, 1902412)
	if r.message() != "超过用户组最大可添加成员数1000 (VALIDATE_ERROR)" {
		t.Fatalf("group limit: %s", r.raw)
	}
	must("POST", "bk_cmdb/groups/3/members/", `{"members":[`+strings.Join(refs[:999], ",")+`],"expired_at":`+exp+`}`, 200, 0)
	// Members already in the group count again.
	must("POST", "bk_cmdb/groups/3/members/", `{"members":[`+strings.Join(refs[:2], ",")+`],"expired_at":`+exp+`}`, 400, 1902412)
	must("POST", "bk_cmdb/groups/3/members/", `{"members":[`+strings.Join(refs[:1], ",")+`],"expired_at":`+exp+`}`, 200, 0)

	// Faults: a fail fault answers its status and code, and the call changes nothing.
	if err := s.SetFaults(sandbox.Faults{Fail: &sandbox.FailFault{Count: 1, Status: 500, Code: 1902500}}); err != nil {
		t.Fatal(err)
	}
	must("DELETE", "bk_cmdb/groups/3/", "", 500, 1902500)
	must("GET", "bk_cmdb/groups/3/members/?page_size=1", "", 200, 0)

	must("DELETE", "bk_cmdb/grade_managers/1/", "", 200, 0)
	now = now.Add(4 * time.Second)
	must("GET", "bk_cmdb/grade_managers/1/", "", 200, 0)
	must("DELETE", "bk_cmdb/grade_managers/1/", "", 200, 0) // a repeat delete does not move the time
	must("GET", "bk_cmdb/groups/3/members/?page_size=1", "", 200, 0)
	now = now.Add(time.Second)
	for _, p := range []string{"bk_cmdb/grade_managers/1/", "bk_cmdb/grade_managers/1/groups/"} {
		if r := must("GET", p, "", 403, 1902403); !strings.Contains(r.message(), "role[1] can not be operated") {
			t.Fatal(r.raw)
		}
	}
	must("GET", "bk_cmdb/groups/3/members/", "", 403, 1902403)
	if n := len(s.Groups(1)); n != 0 {
		t.Fatalf("groups left: %d", n)
	}
}

// The allow-list names each route checks, and an app that is not a client.
func TestManagementAllowList(t *testing.T) {
	cases := []struct{ method, path, api string }{
		{"POST", "grade_managers/", "v2_grade_manager_create"},
		{"GET", "grade_managers/1/", "v2_grade_manager_detail"},
		{"PUT", "grade_managers/1/", "v2_grade_manager_update"},
		{"DELETE", "grade_managers/1/", "v2_grade_manager_delete"},
		{"POST", "grade_managers/-/groups/", "v2_group_batch_create"},
		{"GET", "grade_managers/1/groups/", "v2_group_list"},
		{"PUT", "groups/1/", "v2_group_update"},
		{"DELETE", "groups/1/", "v2_group_delete"},
		{"GET", "groups/1/members/", "v2_group_member_list"},
		{"POST", "groups/1/members/", "v2_group_member_add"},
		{"DELETE", "groups/1/members/", "v2_group_member_delete"},
		{"PUT", "groups/1/members/-/expired_at/", "v2_group_member_expired_at_update"},
		{"GET", "grade_managers/1/subject_templates/", "v2_subject_template_list"},
		{"GET", "groups/1/subject_templates/", "v2_group_subject_template_list"},
	}
	m := loadModel(t, `{"systems": [{"id": "bk_cmdb", "resource_types": [{"id": "host"}], "actions": [{"id": "view_host", "related_types": ["host"]}],
  "allow_list": {"instance_actions": ["*"], "creator_types": ["*"]}}], "users": ["alice"], "groups": ["1"],
  "apps": [{"code": "bkiam-sandbox", "secret": "sandbox-secret", "client_of": ["bk_cmdb"], "management": {"bk_cmdb": ["v2_grade_manager_detail"]}}]}`)
	s := newServer(t, withModel(m))
	for _, tc := range cases {
		r := mgmtCall(s, tc.method, "bk_cmdb/"+tc.path, "{}")
		want := "没有访问权限: system[bk_cmdb] is not allowed to call management api[" + tc.api + "], please contact the developer to add a whitelist (FORBIDDEN)"
		if tc.api == "v2_grade_manager_detail" {
			want = "没有访问权限: role[1] can not be operated by app_code[bkiam-sandbox], since role is not created by system[bk_cmdb]) (FORBIDDEN)"
		}
		if r.status != 403 || r.message() != want {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, r.status, r.raw)
		}
	}
	r := mgmtCall(s, "GET", "bk_job/groups/1/members/", "")
	if r.status != 403 || r.message() != "没有访问权限: app_code bkiam-sandbox can not access system bk_job (FORBIDDEN)" {
		t.Errorf("not a client: %d %s", r.status, r.raw)
	}
}

// GET /_sandbox/grade_managers shows the management state; a reset clears it.
func TestManagementInspection(t *testing.T) {
	s := newServer(t, sandbox.WithGradeManagerDeleteDelay(time.Hour))
	mgmtCall(s, "POST", "bk_cmdb/grade_managers/", gmBody)
	mgmtCall(s, "POST", "bk_cmdb/grade_managers/-/groups/", `{"groups":[{"name":"sys","description":"s","readonly":true}]}`)
	mgmtCall(s, "POST", "bk_cmdb/groups/5/members/", `{"members":[{"type":"department","id":"1"}],"expired_at":4102444800}`)
	mgmtCall(s, "DELETE", "bk_cmdb/grade_managers/1/", "")
	r := control(t, s, "GET", "/_sandbox/grade_managers", "")
	want := `{"grade_managers":[{"id":1,"system":"bk_cmdb","name":"ops","description":"d","members":["alice"],"sync_perm":true,` +
		`"authorization_scopes":[{"system":"bk_cmdb","actions":["view_host"],"resources":[{"system":"bk_cmdb","type":"host","paths":[[{"system":"bk_cmdb","type":"host","id":"*"}]]}]}],` +
		`"subject_scopes":[{"type":"*","id":"*"}],"delete_at":1767229200}],` +
		`"groups":[{"id":4,"system":"bk_cmdb","grade_manager":1,"name":"ops administrator group","description":"d","readonly":false,"sync":true,"members":[{"type":"user","id":"alice","expired_at":4102444800,"created_at":1767225600}]},` +
		`{"id":5,"system":"bk_cmdb","grade_manager":0,"name":"sys","description":"s","readonly":true,"members":[{"type":"department","id":"1","expired_at":4102444800,"created_at":1767225600}]}]}`
	if strings.TrimSpace(r.raw) != want {
		t.Fatalf("inspection:\n got %s\nwant %s", r.raw, want)
	}
	if len(s.GradeManagers()) != 1 || len(s.Groups(0)) != 1 || len(s.Members(5)) != 1 || s.Members(99) != nil {
		t.Fatalf("accessors: %+v", s.Management())
	}
	if err := s.Reset(); err != nil {
		t.Fatal(err)
	}
	if v := s.Management(); len(v.GradeManagers)+len(v.Groups) != 0 {
		t.Fatalf("after a reset: %+v", v)
	}
	if r := mgmtCall(s, "POST", "bk_cmdb/grade_managers/", gmBody); !strings.Contains(r.raw, `"id":1`) {
		t.Fatalf("ids start again after a reset: %s", r.raw)
	}
}

// Grade managers, groups and members persist in the state file; a state file without them (older
// sandboxes) still loads; a failed save rolls the call back.
func TestManagementState(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "state.json")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, sandbox.WithStateFile(path))
	mgmtCall(s, "POST", "bk_cmdb/grade_managers/", gmBody)
	mgmtCall(s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`)
	mgmtCall(s, "POST", "bk_cmdb/groups/5/members/", `{"members":[{"type":"user","id":"bob"}],"expired_at":4102444800}`)
	mgmtCall(s, "DELETE", "bk_cmdb/grade_managers/1/", "")
	before := s.Management()
	again := newServer(t, sandbox.WithStateFile(path))
	if got := again.Management(); !reflect.DeepEqual(got, before) {
		t.Fatalf("after a restart:\n got %+v\nwant %+v", got, before)
	}
	if r := mgmtCall(again, "POST", "bk_cmdb/grade_managers/-/groups/", `{"groups":[{"name":"sys","description":""}]}`); !strings.Contains(r.raw, `"data":[6]`) {
		t.Fatalf("the sequences go on after a restart: %s", r.raw)
	}

	if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	mid := again.Management()
	r := mgmtCall(again, "POST", "bk_cmdb/groups/5/members/", `{"members":[{"type":"user","id":"carol"}],"expired_at":4102444800}`)
	if r.status != 500 || r.code() != 1902500 || !reflect.DeepEqual(again.Management(), mid) {
		t.Fatalf("a failed save: %s\n%+v", r.raw, again.Management())
	}

	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte(`{"version":1,"next_policy_id":1,"next_backend_id":1001,"policies":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := newServer(t, sandbox.WithStateFile(old)).Management(); len(v.GradeManagers)+len(v.Groups) != 0 {
		t.Fatalf("an older state file: %+v", v)
	}
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"version":1,"next_policy_id":1,"next_backend_id":1001,"policies":[],
	  "management":{"groups":[{"id":9,"system":"bk_cmdb","grade_manager":3,"name":"x","members":[]}]}}`), 0o600)
	if _, err := sandbox.New(sandbox.WithStateFile(bad)); err == nil || !strings.Contains(err.Error(), "unknown grade manager 3") {
		t.Fatalf("an inconsistent management state: %v", err)
	}
}

// A site may raise the SaaS's group member limit (limits.group_member_limit); the backend's 1000
// members per call stays.
func TestGroupMemberLimitRaised(t *testing.T) {
	users := make([]string, 1500)
	refs := make([]string, len(users))
	for i := range users {
		users[i] = fmt.Sprintf(`"u%d"`, i)
		refs[i] = fmt.Sprintf(`{"type":"user","id":"u%d"}`, i)
	}
	m := loadModel(t, `{"systems": [{"id": "bk_cmdb", "resource_types": [{"id": "host"}], "actions": [{"id": "view_host", "related_types": ["host"]}],
  "allow_list": {"instance_actions": ["*"], "creator_types": ["*"]}}], "users": [`+strings.Join(users, ",")+`, "alice"], "groups": ["1"],
  "apps": [{"code": "bkiam-sandbox", "secret": "sandbox-secret", "client_of": ["*"], "management": {"bk_cmdb": ["*"]}}],
  "limits": {"group_member_limit": 1500}}`)
	s := newServer(t, withModel(m), sandbox.WithNow(func() time.Time { return fixedNow }))
	exp := fmt.Sprint(fixedNow.Unix() + 60)
	for _, c := range []struct {
		path, body   string
		status, code int
	}{
		{"bk_cmdb/grade_managers/", gmBody, 200, 0},
		{"bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0},
		{"bk_cmdb/groups/3/members/", `{"members":[` + strings.Join(refs[:1001], ",") + `],"expired_at":` + exp + `}`, 200, 1902000},
		{"bk_cmdb/groups/3/members/", `{"members":[` + strings.Join(refs[:1000], ",") + `],"expired_at":` + exp + `}`, 200, 0},
		{"bk_cmdb/groups/3/members/", `{"members":[` + strings.Join(refs[1000:], ",") + `],"expired_at":` + exp + `}`, 200, 0},
		{"bk_cmdb/groups/3/members/", `{"members":[` + refs[0] + `],"expired_at":` + exp + `}`, 400, 1902412},
	} {
		if r := mgmtCall(s, "POST", c.path, c.body); r.status != c.status || r.code() != c.code {
			t.Fatalf("POST %s: %d %d, want %d %d\n%.300s", c.path, r.status, r.code(), c.status, c.code, r.raw)
		}
	}
	if n := len(s.Members(3)); n != 1500 {
		t.Fatalf("members: %d, want 1500", n)
	}
}

// A member must be within the grade manager's subject scopes (the SaaS's RoleSubjectScopeChecker):
// everyone, the member named, or a department the member is in, directly or under it. In the
// default model departments 2 and 3 are under 1, alice and carol are in 2, bob in 3.
func TestMembersWithinSubjectScope(t *testing.T) {
	s := newServer(t)
	gm := func(name, subjects string) {
		t.Helper()
		body := `{"name":"` + name + `","description":"","members":["alice"],"subject_scopes":[` + subjects + `],
  "authorization_scopes":[{"system":"bk_cmdb","actions":[{"id":"create_biz"}],"resources":[]}]}`
		if r := mgmtCall(s, "POST", "bk_cmdb/grade_managers/", body); r.code() != 0 {
			t.Fatalf("grade manager %s: %s", name, r.raw)
		}
	}
	gm("team", `{"type":"department","id":"2"},{"type":"user","id":"dave"}`)
	gm("org", `{"type":"department","id":"1"}`)
	group := func(gm string) string {
		r := mgmtCall(s, "POST", "bk_cmdb/grade_managers/"+gm+"/groups/", `{"groups":[{"name":"g`+gm+`","description":""}]}`)
		return itoa(int(r.body["data"].([]any)[0].(float64)))
	}
	team, org := group("1"), group("2")
	for _, c := range []struct {
		group, typ, id string
		code           int
		message        string
	}{
		{team, "user", "alice", 0, ""},
		{team, "user", "dave", 0, ""},
		{team, "department", "2", 0, ""},
		{team, "user", "bob", 1902403, "用户 (bob) 在分级管理员的授权范围内，请编辑分级管理员授权范围 (FORBIDDEN)"},
		{team, "department", "1", 1902403, "部门 (1) 在分级管理员的授权范围内，请编辑分级管理员授权范围 (FORBIDDEN)"},
		{org, "user", "bob", 0, ""},
		{org, "department", "3", 0, ""},
		{org, "user", "dave", 1902403, "用户 (dave) 在分级管理员的授权范围内，请编辑分级管理员授权范围 (FORBIDDEN)"},
	} {
		r := mgmtCall(s, "POST", "bk_cmdb/groups/"+c.group+"/members/", `{"members":[{"type":"`+c.typ+`","id":"`+c.id+`"}],"expired_at":4102444800}`)
		if r.code() != c.code || c.code != 0 && (r.status != 403 || r.message() != c.message) {
			t.Errorf("add %s %s to group %s: %d %s, want %d %q", c.typ, c.id, c.group, r.status, r.raw, c.code, c.message)
		}
	}
}

// The backend's per-subject quota: in each system where a group holds permissions, a member joining
// it may be in at most limits.subject_max_groups groups holding permissions there (1902000, as the
// SaaS passes the backend's 409 on); a member already in the group, and a group without
// permissions, are not checked.
func TestSubjectGroupsQuota(t *testing.T) {
	m := sandbox.DefaultModel()
	m.Limits.SubjectMaxGroups = 2
	raw, _ := json.Marshal(m)
	model, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, sandbox.WithModel(model))
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", `{"name":"ops","description":"","members":["alice"],"subject_scopes":[{"type":"*","id":"*"}],
  "authorization_scopes":[{"system":"bk_cmdb","actions":[{"id":"create_biz"}],"resources":[]}]}`, 200, 0)
	var groups []string
	for _, d := range mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/",
		`{"groups":[{"name":"g1","description":""},{"name":"g2","description":""},{"name":"g3","description":""},{"name":"g4","description":""}]}`, 200, 0).body["data"].([]any) {
		groups = append(groups, itoa(int(d.(float64))))
	}
	for _, g := range groups[:3] { // g4 holds no permission
		mustMgmt(t, s, "POST", "bk_cmdb/groups/"+g+"/policies/", `{"actions":[{"id":"create_biz"}],"resources":[]}`, 200, 0)
	}
	add := func(g, user string, status, code int) response {
		t.Helper()
		return mustMgmt(t, s, "POST", "bk_cmdb/groups/"+g+"/members/", `{"members":[{"type":"user","id":"`+user+`"}],"expired_at":4102444800}`, status, code)
	}
	add(groups[0], "alice", 200, 0)
	add(groups[1], "alice", 200, 0)
	if r := add(groups[2], "alice", 200, 1902000); !strings.Contains(r.message(), "subject {user alice} can only have 2 groups in system bk_cmdb.[current 2]") {
		t.Fatalf("over the quota: %s", r.raw)
	}
	add(groups[1], "alice", 200, 0) // already a member: its expiry only
	add(groups[3], "alice", 200, 0) // no permissions: not counted
	add(groups[2], "bob", 200, 0)
}

// The user directory: a user it knows but IAM has not synced is dropped silently by the management
// API's member add (which does not sync), and synced by the authorization API's first use, after
// which the member add takes them. The sync survives a restart with a state file.
func TestDirectoryUsersSyncOnFirstAuthorization(t *testing.T) {
	m := sandbox.DefaultModel()
	m.DirectoryUsers = []string{"erin"}
	raw, _ := json.Marshal(m)
	model, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "state.json")
	s := newServer(t, sandbox.WithModel(model), sandbox.WithStateFile(state))
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", `{"name":"ops","description":"","members":["alice"],"subject_scopes":[{"type":"*","id":"*"}],
  "authorization_scopes":[{"system":"bk_cmdb","actions":[{"id":"create_biz"}],"resources":[]}]}`, 200, 0)
	group := itoa(int(mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"gg","description":""}]}`, 200, 0).body["data"].([]any)[0].(float64)))
	members := func(s http.Handler) string {
		t.Helper()
		var ids []string
		for _, m := range mustMgmt(t, s, "GET", "bk_cmdb/groups/"+group+"/members/?page=1&page_size=100", "", 200, 0).body["data"].(map[string]any)["results"].([]any) {
			ids = append(ids, m.(map[string]any)["id"].(string))
		}
		slices.Sort(ids)
		return strings.Join(ids, ",")
	}
	add := `{"members":[{"type":"user","id":"erin"},{"type":"user","id":"bob"}],"expired_at":4102444800}`
	mustMgmt(t, s, "POST", "bk_cmdb/groups/"+group+"/members/", add, 200, 0)
	if got := members(s); got != "bob" {
		t.Fatalf("members before erin's sync: %s, want bob (erin dropped silently)", got)
	}
	wantOK(t, send(t, s, "gateway", "batch_instance", hostGrant("erin", "1")))
	s2 := newServer(t, sandbox.WithModel(model), sandbox.WithStateFile(state))
	mustMgmt(t, s2, "POST", "bk_cmdb/groups/"+group+"/members/", add, 200, 0)
	if got := members(s2); got != "bob,erin" {
		t.Fatalf("members after erin's sync and a restart: %s, want bob,erin", got)
	}
	wantSaaSError(t, "gateway", send(t, s2, "gateway", "batch_instance", hostGrant("frank", "1")), 200, 1902412,
		"Parameter verification failed: user[frank] not exists (VALIDATE_ERROR)")
}

// sync_perm with a member IAM's backend does not know (internal/bkiam's package doc, "The management
// API"): the SaaS commits the grade manager, then the backend refuses the sync group's member, so
// the create answers 1902000 quoting the backend, the grade manager exists with sync_perm true, and
// it has no sync group. An update fails the same way, after committing.
func TestGradeManagerSyncGroupRefused(t *testing.T) {
	s := newServer(t)
	body := strings.Replace(gmBody, `"members":["alice"]`, `"members":["alice","nobody"]`, 1)
	r := mgmtCall(s, "POST", "bk_cmdb/grade_managers/", body)
	if r.code() != 1902000 || !strings.Contains(r.raw, "Response[code=1901500") || !strings.Contains(r.raw, "id=`nobody`") ||
		!strings.Contains(r.raw, "sql: no rows in result set") {
		t.Fatalf("create: %s", r.raw)
	}
	gms := s.GradeManagers()
	if len(gms) != 1 || !gms[0].SyncPerm {
		t.Fatalf("grade managers after the refused sync group: %+v", gms)
	}
	if r := mgmtCall(s, "GET", "bk_cmdb/grade_managers/"+fmt.Sprint(gms[0].ID)+"/groups/", ""); !strings.Contains(r.raw, `"count":0`) {
		t.Fatalf("groups: %s, want none (no sync group)", r.raw)
	}
	r = mgmtCall(s, "PUT", "bk_cmdb/grade_managers/"+fmt.Sprint(gms[0].ID)+"/", strings.Replace(body, `"d"`, `"d2"`, 1))
	if r.code() != 1902000 || s.GradeManagers()[0].Description != "d2" {
		t.Fatalf("update: %s; description %q, want d2 committed", r.raw, s.GradeManagers()[0].Description)
	}
}

// Ownership goes by the system that created the grade manager, not by the path's system
// (internal/bkiam's package doc, "The management API"): an app that is a client of both manages a
// grade manager and its groups through either path; one that is not a client of the creator gets
// "can not access system" (a permission error); a grade manager without a creator record (made in
// the web UI) is "not created by system" to every system and listed by none; a system manager's group
// is only its system's.
func TestManagementOwnership(t *testing.T) {
	m := sandbox.DefaultModel()
	m.Apps = append(m.Apps, sandbox.App{Code: "jobonly", Secret: "s", ClientOf: []string{"bk_job"}, Management: map[string][]string{"*": {"*"}}},
		sandbox.App{Code: "nolist", Secret: "s", ClientOf: []string{"bk_cmdb", "bk_job"},
			Management: map[string][]string{"bk_job": {"*"}, "bk_cmdb": {"v2_grade_manager_create", "v2_group_batch_create"}}})
	raw, _ := json.Marshal(m)
	model, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, sandbox.WithModel(model))
	as := func(app, method, path, body string) response {
		req := httptest.NewRequest(method, "/api/v2/open/management/systems/"+path, strings.NewReader(body))
		req.Header.Set("X-Bkapi-Authorization", `{"bk_app_code":"`+app+`","bk_app_secret":"s"}`)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		r := response{status: rec.Code, raw: rec.Body.String()}
		_ = json.Unmarshal(rec.Body.Bytes(), &r.body)
		return r
	}
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", strings.Replace(gmBody, `"sync_perm":true`, `"sync_perm":false`, 1), 200, 0) // 1
	gid := itoa(int(mustMgmt(t, s, "POST", "bk_job/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0).body["data"].([]any)[0].(float64)))
	if g := s.Groups(1); len(g) != 1 || g[0].System != "bk_cmdb" {
		t.Fatalf("a group made through bk_job's path under bk_cmdb's grade manager: %+v", g)
	}
	mustMgmt(t, s, "POST", "bk_job/groups/"+gid+"/members/", `{"members":[{"type":"user","id":"bob"}],"expired_at":4102444800}`, 200, 0)
	mustMgmt(t, s, "GET", "bk_job/grade_managers/1/", "", 200, 0)
	steps := []struct {
		name, app, method, path, want string
		status, code                  int
	}{
		{"not a client of the creator: a permission error", "jobonly", "GET", "bk_job/groups/" + gid + "/members/", "app_code jobonly can not access system bk_cmdb (FORBIDDEN)", 403, 1902403},
		{"... for the grade manager too", "jobonly", "GET", "bk_job/grade_managers/1/", "app_code jobonly can not access system bk_cmdb", 403, 1902403},
		{"the creator's allow-list is checked too", "nolist", "GET", "bk_job/groups/" + gid + "/members/",
			"system[bk_cmdb] is not allowed to call management api[v2_group_member_list]", 403, 1902403},
		{"... and the path's", "nolist", "GET", "bk_cmdb/groups/" + gid + "/members/", "system[bk_cmdb] is not allowed to call management api[v2_group_member_list]", 403, 1902403},
	}
	for _, st := range steps {
		if r := as(st.app, st.method, st.path, ""); r.status != st.status || r.code() != st.code || !strings.Contains(r.raw, st.want) {
			t.Fatalf("%s: %d %d, want %d %d with %s\n%s", st.name, r.status, r.code(), st.status, st.code, st.want, r.raw)
		}
	}
	if err := s.ForgetCreator(1); err != nil {
		t.Fatal(err)
	}
	for _, sys := range []string{"bk_cmdb", "bk_job"} {
		if r := mustMgmt(t, s, "GET", sys+"/grade_managers/1/", "", 403, 1902403); !strings.Contains(r.raw, "role[1] can not be operated by app_code[bkiam-sandbox], since role is not created by system["+sys+"])") {
			t.Fatalf("a grade manager made in the web UI, through %s: %s", sys, r.raw)
		}
		if r := mustMgmt(t, s, "GET", sys+"/groups/"+gid+"/members/", "", 403, 1902403); !strings.Contains(r.raw, "since role is not created by system") {
			t.Fatalf("its group, through %s: %s", sys, r.raw)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/open/management/grade_managers/?system=bk_cmdb", nil)
	req.Header.Set("X-Bkapi-Authorization", goodAuth)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if r := (response{status: rec.Code, raw: rec.Body.String()}); r.status != 200 || !strings.Contains(r.raw, `"count":0`) {
		t.Fatalf("the v1 list shows a grade manager made in the web UI: %s", r.raw)
	}
	sm := itoa(int(mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/-/groups/", `{"groups":[{"name":"sm","description":""}]}`, 200, 0).body["data"].([]any)[0].(float64)))
	mustMgmt(t, s, "GET", "bk_cmdb/groups/"+sm+"/members/", "", 200, 0)
	mustMgmt(t, s, "GET", "bk_job/groups/"+sm+"/members/", "", 403, 1902403)
}

// A system creates at most limits.grade_managers_per_system grade managers through the API (500 by
// default): past it the create is 400 1902412 with the SaaS's JSON-list message (internal/bkiam's
// package doc, "The management API"); a grade manager made in the web UI does not count.
func TestGradeManagersPerSystemQuota(t *testing.T) {
	m := sandbox.DefaultModel()
	m.Limits.GradeManagersPerSystem = 2
	s := newServer(t, sandbox.WithModel(m))
	body := func(name string) string { return strings.Replace(jobGMBody, `"name":"ops"`, `"name":"`+name+`"`, 1) }
	mustMgmt(t, s, "POST", "bk_job/grade_managers/", body("a"), 200, 0)
	mustMgmt(t, s, "POST", "bk_job/grade_managers/", body("b"), 200, 0)
	r := mustMgmt(t, s, "POST", "bk_job/grade_managers/", body("c"), 400, 1902412)
	if want := `["\u7cfb\u7edf (bk_job): \u53ef\u521b\u5efa\u7684\u5206\u7ea7\u7ba1\u7406\u5458\u6570\u91cf\u5df2\u8d85\u8fc7\u6700\u5927\u503c 2"] (VALIDATE_ERROR)`; r.message() != want {
		t.Fatalf("past the quota: %q, want %q", r.message(), want)
	}
	if err := s.ForgetCreator(1); err != nil {
		t.Fatal(err)
	}
	mustMgmt(t, s, "POST", "bk_job/grade_managers/", body("c"), 200, 0)
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", strings.Replace(gmBody, `"name":"ops"`, `"name":"d"`, 1), 200, 0) // bk_cmdb's own count
}

// Every grade-manager update makes the sync group's members exactly the grade manager's users
// (internal/bkiam's package doc, "The management API"): a department added to the sync group goes,
// a user no longer a member goes, a present user keeps its expiry, a new one is permanent.
func TestSyncGroupResync(t *testing.T) {
	s := newServer(t)
	body := func(members string) string {
		return strings.Replace(gmBody, `"members":["alice"]`, `"members":[`+members+`]`, 1)
	}
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", body(`"alice","bob"`), 200, 0)
	var sync int64
	for _, g := range s.Groups(1) {
		if g.Sync {
			sync = g.ID
		}
	}
	soon := fmt.Sprint(fixedNow.Unix() + 3600)
	mustMgmt(t, s, "PUT", "bk_cmdb/groups/"+itoa(int(sync))+"/members/-/expired_at/", `{"members":[{"type":"user","id":"alice"}],"expired_at":`+soon+`}`, 200, 0)
	mustMgmt(t, s, "DELETE", "bk_cmdb/groups/"+itoa(int(sync))+"/members/?type=user&ids=alice", "", 200, 0)
	mustMgmt(t, s, "POST", "bk_cmdb/groups/"+itoa(int(sync))+"/members/", `{"members":[{"type":"user","id":"alice"},{"type":"department","id":"2"}],"expired_at":`+soon+`}`, 200, 0)
	mustMgmt(t, s, "PUT", "bk_cmdb/grade_managers/1/", body(`"alice","carol"`), 200, 0)
	got := map[string]int64{}
	for _, m := range s.Members(sync) {
		got[m.Type+":"+m.ID] = m.ExpiredAt
	}
	want := map[string]int64{"user:alice": fixedNow.Unix() + 3600, "user:carol": 4102444800}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the sync group after the update: %v, want %v", got, want)
	}
}
