package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

const cleanupPath = "/api/v1/open/admin/cleanup/users/permission/"

// cleanupModel is the default model on the gateway generation given, with the default app's
// gateway grants and admin allow-list as given.
func cleanupModel(t *testing.T, gateway string, grants, admin []string) *sandbox.Model {
	t.Helper()
	m := sandbox.DefaultModel()
	m.Gateway = gateway
	m.Apps[0].GatewayGrants = grants
	m.Apps[0].Admin = admin
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = sandbox.LoadModel(raw); err != nil {
		t.Fatal(err)
	}
	return m
}

func cleanupCall(s http.Handler, body string) response {
	req := httptest.NewRequest(http.MethodDelete, cleanupPath, strings.NewReader(body))
	req.Header.Set("X-Bkapi-Authorization", goodAuth)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	r := response{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	_ = json.Unmarshal(rec.Body.Bytes(), &r.body)
	return r
}

// memberIDs lists a group's members as type:id.
func memberIDs(s *sandbox.Server, group int64) []string {
	var out []string
	for _, m := range s.Members(group) {
		out = append(out, m.Type+":"+m.ID)
	}
	slices.Sort(out)
	return out
}

// TestAdminCleanup: the leaver cleanup answers {} at once and changes nothing until its delay has
// passed; then alice's custom policies in every system, her direct memberships, her subject
// template membership and her grade-manager role are gone, and her department's membership, bob's
// policy and bob's membership stay.
func TestAdminCleanup(t *testing.T) {
	now := fixedNow
	s := newServer(t, withModel(cleanupModel(t, "2026", []string{"admin_cleanup_users_permission"}, []string{"subject_permission_cleanup"})),
		sandbox.WithNow(func() time.Time { return now }), sandbox.WithCleanupDelay(time.Minute))
	for _, grant := range []struct{ system, action, typ, user string }{
		{"bk_cmdb", "edit_host", "host", "alice"}, {"bk_job", "view", "job", "alice"}, {"bk_cmdb", "edit_host", "host", "bob"},
	} {
		body := fmt.Sprintf(`{"asynchronous":false,"operate":"grant","system":%q,"actions":[{"id":%q}],"subject":{"type":"user","id":%q},`+
			`"resources":[{"system":%q,"type":%q,"instances":[{"id":"1","name":"one"}]}]}`, grant.system, grant.action, grant.user, grant.system, grant.typ)
		wantOK(t, send(t, s, gw, "batch_instance", body))
	}
	wantMgmt := func(method, path, body string) {
		t.Helper()
		if r := mgmtCall(s, method, path, body); r.status != 200 || r.code() != 0 {
			t.Fatalf("%s %s: %d %s", method, path, r.status, r.raw)
		}
	}
	wantMgmt("POST", "bk_cmdb/grade_managers/", gmBody) // grade manager 1, alice a member, sync group 4
	wantMgmt("POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}],"sync_subject_template":true}`)
	wantMgmt("POST", "bk_cmdb/groups/5/members/", `{"members":[{"type":"user","id":"alice"},{"type":"user","id":"bob"},{"type":"department","id":"2"}],"expired_at":4102444800}`)
	r := cleanupCall(s, `[{"type":"user","id":"alice"}]`)
	if r.status != 200 || r.code() != 0 || !strings.Contains(r.raw, `"data":{}`) {
		t.Fatalf("cleanup: %d %s", r.status, r.raw)
	}
	alice := sandbox.PolicyFilter{SubjectType: "user", SubjectID: "alice"}
	if n := len(s.Policies(alice).Policies); n != 2 {
		t.Fatalf("at once: alice holds %d policies, want her 2 still (IAM cleans in a background task)", n)
	}
	if got := memberIDs(s, 5); !slices.Contains(got, "user:alice") {
		t.Fatalf("at once: group 5 holds %v, want alice still", got)
	}
	now = now.Add(time.Minute)
	if n := len(s.Policies(alice).Policies); n != 0 {
		t.Errorf("after the delay: alice holds %d policies, want none in any system", n)
	}
	if n := len(s.Policies(sandbox.PolicyFilter{SubjectType: "user", SubjectID: "bob"}).Policies); n != 1 {
		t.Errorf("bob holds %d policies, want his 1", n)
	}
	if got, want := memberIDs(s, 5), []string{"department:2", "user:bob"}; !slices.Equal(got, want) {
		t.Errorf("group 5: %v, want %v (alice's department stays)", got, want)
	}
	if got := memberIDs(s, 4); slices.Contains(got, "user:alice") {
		t.Errorf("sync group 4 still holds alice: %v", got)
	}
	for _, tpl := range s.SubjectTemplates() {
		for _, m := range tpl.Members {
			if m.ID == "alice" {
				t.Errorf("template %d still holds alice", tpl.ID)
			}
		}
	}
	if gms := s.GradeManagers(); len(gms) != 1 || slices.Contains(gms[0].Members, "alice") {
		t.Errorf("grade managers: %+v, want alice no longer a member", gms)
	}
	// The access check of alice now reaches only her department's group.
	if got := memberIDs(s, 5); !slices.Contains(got, "department:2") {
		t.Errorf("department 2 left group 5")
	}
}

// TestAdminCleanupBeforeAt: with before_at, memberships created after it are kept and policies are
// not; a second call while the first is pending is dropped (its before_at with it).
func TestAdminCleanupBeforeAt(t *testing.T) {
	now := fixedNow
	s := newServer(t, withModel(cleanupModel(t, "2026", []string{"*"}, []string{"*"})),
		sandbox.WithNow(func() time.Time { return now }), sandbox.WithCleanupDelay(time.Minute))
	wantOK(t, send(t, s, gw, "batch_instance", `{"asynchronous":false,"operate":"grant","system":"bk_cmdb","actions":[{"id":"edit_host"}],`+
		`"subject":{"type":"user","id":"carol"},"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":"1","name":"one"}]}]}`))
	mgmtCall(s, "POST", "bk_cmdb/grade_managers/-/groups/", `{"groups":[{"name":"old","description":""},{"name":"new","description":""}]}`)
	mgmtCall(s, "POST", "bk_cmdb/groups/4/members/", `{"members":[{"type":"user","id":"carol"}],"expired_at":4102444800}`)
	cutoff := now.Add(time.Hour)
	now = now.Add(2 * time.Hour)
	mgmtCall(s, "POST", "bk_cmdb/groups/5/members/", `{"members":[{"type":"user","id":"carol"}],"expired_at":4102444800}`)
	if got := memberIDs(s, 4); len(got) == 0 {
		t.Fatalf("setup: groups %+v", s.Management().Groups)
	}
	if r := cleanupCall(s, fmt.Sprintf(`[{"type":"user","id":"carol","before_at":%d}]`, cutoff.Unix())); r.status != 200 || r.code() != 0 {
		t.Fatalf("cleanup: %d %s", r.status, r.raw)
	}
	if r := cleanupCall(s, `[{"type":"user","id":"carol"}]`); r.status != 200 || r.code() != 0 {
		t.Fatalf("second cleanup: %d %s", r.status, r.raw)
	}
	now = now.Add(time.Minute)
	if n := len(s.Policies(sandbox.PolicyFilter{SubjectID: "carol"}).Policies); n != 0 {
		t.Errorf("carol holds %d policies; before_at spares none", n)
	}
	if got := memberIDs(s, 4); len(got) != 0 {
		t.Errorf("group 4 (joined before before_at): %v, want carol gone", got)
	}
	if got := memberIDs(s, 5); !slices.Equal(got, []string{"user:carol"}) {
		t.Errorf("group 5 (joined after before_at): %v, want carol kept (the second call was dropped)", got)
	}
	// Once done, a new call cleans again.
	cleanupCall(s, `[{"type":"user","id":"carol"}]`)
	now = now.Add(time.Minute)
	if got := memberIDs(s, 5); len(got) != 0 {
		t.Errorf("after a second cleanup: group 5 holds %v", got)
	}
}

// TestAdminCleanupRefusals: the body's checks (SubjectSLZ, then the view's empty-array check), in
// HTTP 200 as the v1 open API answers them, and the refusals of the gateway and of IAM's admin
// allow-list; none of them changes anything.
func TestAdminCleanupRefusals(t *testing.T) {
	granted := cleanupModel(t, "2026", []string{"admin_cleanup_users_permission"}, []string{"subject_permission_cleanup"})
	for _, tc := range []struct {
		name   string
		model  *sandbox.Model
		body   string
		status int
		code   int
		want   string
	}{
		{"empty array", granted, `[]`, 200, 1902416, `"message":"参数错误: 至少传递一个用户 (INVALID_ARGS)"`},
		{"not a list", granted, `{"type":"user","id":"alice"}`, 200, 1902412, `{\"non_field_errors\": [\"Expected a list of items but got type \\\"dict\\\".\"]} (VALIDATE_ERROR)`},
		{"fields", granted, `[{"type":"user","id":"alice"},{"type":"department","id":" ","before_at":"soon"}]`, 200, 1902412,
			`[{}, {\"type\": [\"\\\"department\\\" is not a valid choice.\"], \"id\": [\"This field may not be blank.\"], \"before_at\": [\"A valid integer is required.\"]}] (VALIDATE_ERROR)`},
		{"bad JSON", granted, `[`, 200, 1902414, `Json格式错误`},
		{"older gateway", cleanupModel(t, "", nil, []string{"*"}), `[{"type":"user","id":"alice"}]`, 404, 1640401, `API not found`},
		{"no gateway grant", cleanupModel(t, "2026", []string{"open_user_groups"}, []string{"*"}), `[{"type":"user","id":"alice"}]`, 403, 1640301,
			`has no permission to resource admin_cleanup_users_permission`},
		{"not on the admin allow-list", cleanupModel(t, "2026", []string{"*"}, []string{"subject_joined_group_list"}), `[{"type":"user","id":"alice"}]`, 403, 1902403,
			`app_code(bkiam-sandbox) do not be allowed to call api(subject_permission_cleanup)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, withModel(tc.model), sandbox.WithCleanupDelay(0))
			wantOK(t, send(t, s, gw, "batch_instance", `{"asynchronous":false,"operate":"grant","system":"bk_cmdb","actions":[{"id":"edit_host"}],`+
				`"subject":{"type":"user","id":"alice"},"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":"1","name":"one"}]}]}`))
			r := cleanupCall(s, tc.body)
			if r.status != tc.status || r.code() != tc.code || !strings.Contains(r.raw, tc.want) {
				t.Fatalf("HTTP %d code %d, want HTTP %d code %d with %s: %s", r.status, r.code(), tc.status, tc.code, tc.want, r.raw)
			}
			if n := len(s.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies); n != 1 {
				t.Errorf("alice holds %d policies after a refused cleanup, want her 1", n)
			}
			if n := s.Stats().Requests["admin:cleanup"]; n != 1 {
				t.Errorf("stats: %v", s.Stats().Requests)
			}
		})
	}
}
