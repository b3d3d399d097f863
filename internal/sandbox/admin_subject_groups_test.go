package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// adminModel is the default model on the 2026 gateway generation, its app granted admin (the
// admin allow-list entries) and grants (gateway resources).
func adminModel(t *testing.T, gateway string, admin, grants []string) *sandbox.Model {
	t.Helper()
	m := sandbox.DefaultModel()
	m.Gateway = gateway
	m.Apps[0].Admin = admin
	m.Apps[0].GatewayGrants = grants
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = sandbox.LoadModel(raw); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAdminSubjectGroups: a subject's direct memberships, expired ones included, newest relation
// first, paged by page and page_size (limit and offset ignored); not those through a department
// or a subject template; an unknown subject is the backend's lookup failure in HTTP 200; the
// older gateway has no such resource. Without the route (the placeholder) every step fails.
func TestAdminSubjectGroups(t *testing.T) {
	f := newTemplateFixture(t, withModel(adminModel(t, "2026", []string{"subject_joined_group_list"}, []string{"admin_list_subject_groups"})))
	// dave: in team directly (permanent) and through department 1, in ops and audit through
	// template 1; now also in ops directly, for a minute that is over.
	f.clock.t = fixedNow
	f.add(t, "ops", `{"type":"user","id":"dave"}`, fixedNow.Unix()+60, 200, 0)
	f.clock.t = fixedNow.Add(120e9)
	get := func(path string) response {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/open/admin/subjects/"+path, nil)
		req.Header.Set("X-Bkapi-Authorization", goodAuth)
		rec := httptest.NewRecorder()
		f.s.ServeHTTP(rec, req)
		return response{status: rec.Code, raw: rec.Body.String()}
	}
	row := func(group string, expiredAt int64) string {
		name := map[string]string{f.groups["team"]: "team", f.groups["ops"]: "ops"}[group]
		return fmt.Sprintf(`{"expired_at":%d,"id":%s,"name":"%s"}`, expiredAt, group, name)
	}
	ops, team := row(f.groups["ops"], fixedNow.Unix()+60), row(f.groups["team"], permanent)
	for _, tc := range []struct {
		name, path string
		status     int
		want       string
	}{
		{"direct memberships, the expired one too, newest first", "user/dave/groups/", 200,
			`"data":{"count":2,"results":[` + ops + `,` + team + `]}`},
		{"page_size and page", "user/dave/groups/?page_size=1&page=2", 200, `"data":{"count":2,"results":[` + team + `]}`},
		{"a page past the end is empty", "user/dave/groups/?page_size=1&page=3", 200, `"data":{"count":2,"results":[]}`},
		{"limit and offset are not this view's paging", "user/dave/groups/?limit=1&offset=1", 200,
			`"data":{"count":2,"results":[` + ops + `,` + team + `]}`},
		{"a bad page_size falls back to the default", "user/dave/groups/?page_size=0", 200, `"count":2`},
		{"a bad page is refused, in HTTP 200", "user/dave/groups/?page=0", 200, `"code":1902412,"message":"wrong page 0 (VALIDATE_ERROR)"`},
		{"a department's own memberships", "department/1/groups/", 200, `"data":{"count":1,"results":[` + team + `]}`},
		{"a user in groups only through departments and templates", "user/alice/groups/", 200, `"data":{"count":0,"results":[]}`},
		{"an unknown user", "user/ghost/groups/", 200, `"code":1902000`},
	} {
		r := get(tc.path)
		if r.status != tc.status || !strings.Contains(r.raw, tc.want) {
			t.Errorf("%s: GET %s: HTTP %d %s\nwant HTTP %d and %s", tc.name, tc.path, r.status, r.raw, tc.status, tc.want)
		}
	}
	if r := get("user/ghost/groups/"); !strings.Contains(r.raw, "sql: no rows in result set") {
		t.Errorf("an unknown user: %s", r.raw)
	}
	if n := f.s.Stats().Requests["admin:subject_groups"]; n < 9 {
		t.Errorf("stats: %v", f.s.Stats().Requests)
	}

	// Refusals: the older gateway has no such resource; the 2026 one asks a grant, then IAM its
	// admin allow-list.
	for _, tc := range []struct {
		name, gateway  string
		admin, grants  []string
		status, code   int
		messagePortion string
	}{
		{"older gateway", "", []string{"*"}, []string{"*"}, 404, 1640401, "API not found"},
		{"2026 without the grant", "2026", []string{"*"}, nil, 403, 1640301, "admin_list_subject_groups"},
		{"2026 without the allow-list entry", "2026", []string{"subject_permission_cleanup"}, []string{"*"}, 403, 1902403,
			"do not be allowed to call api(subject_joined_group_list)"},
	} {
		s := newServer(t, withModel(adminModel(t, tc.gateway, tc.admin, tc.grants)))
		r := getRead(t, s, "/api/v1/open/admin/subjects/user/alice/groups/", goodAuth)
		if r.status != tc.status || r.code() != tc.code || !strings.Contains(r.raw, tc.messagePortion) {
			t.Errorf("%s: HTTP %d %s, want HTTP %d code %d and %q", tc.name, r.status, r.raw, tc.status, tc.code, tc.messagePortion)
		}
	}
}
