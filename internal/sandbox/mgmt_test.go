package sandbox_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
