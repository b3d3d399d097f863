package sandbox_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// Subject templates (package doc, "Subject templates"): the read-only mirror of a group, bound to
// other groups as a member of type template, and the groups a user reaches through one in the
// access checks.

// templateFixture is a sandbox holding, at fixedNow, then 120 seconds later (the clock moved):
//   - grade manager 1 (scopedGM) and its groups "team" (created with sync_subject_template:
//     template 1 mirrors it), "ops" and "audit";
//   - team's members: dave (in no department) and department 1 (the parent of 2 and 3, so alice,
//     carol and bob are below it), both mirrored on template 1;
//   - template 1 bound to ops (permanent) and to audit (until fixedNow+60, past at the clock);
//   - ops: view_host on host 1; audit: edit_host on host 2.
type templateFixture struct {
	s      *sandbox.Server
	clock  *testClock
	groups map[string]string // name -> id
}

func newTemplateFixture(t *testing.T, opts ...sandbox.Option) *templateFixture {
	t.Helper()
	clock := &testClock{t: fixedNow}
	s := newServer(t, append([]sandbox.Option{sandbox.WithNow(clock.now)}, opts...)...)
	f := &templateFixture{s: s, clock: clock, groups: map[string]string{}}
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", scopedGM, 200, 0)
	r := mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/",
		`{"groups":[{"name":"team","description":"the team"}],"sync_subject_template":true}`, 200, 0)
	f.groups["team"] = fmt.Sprint(r.body["data"].([]any)[0])
	r = mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"ops","description":""},{"name":"audit","description":""}]}`, 200, 0)
	f.groups["ops"], f.groups["audit"] = fmt.Sprint(r.body["data"].([]any)[0]), fmt.Sprint(r.body["data"].([]any)[1])
	f.add(t, "team", `{"type":"user","id":"dave"},{"type":"department","id":"1"}`, permanent, 200, 0)
	f.add(t, "ops", `{"type":"template","id":"1"}`, permanent, 200, 0)
	f.add(t, "audit", `{"type":"template","id":"1"}`, fixedNow.Unix()+60, 200, 0)
	for _, body := range []string{
		instBody("grant", "group", f.groups["ops"], []string{"view_host"}, "host", []string{"1"}, ""),
		instBody("grant", "group", f.groups["audit"], []string{"edit_host"}, "host", []string{"2"}, ""),
	} {
		if r := send(t, s, gw, "batch_instance", body); r.code() != 0 {
			t.Fatalf("grant %s: %s", body, r.raw)
		}
	}
	clock.t = fixedNow.Add(120 * time.Second)
	return f
}

// add posts members (JSON objects, comma-separated) to the named group and wants status and code.
func (f *templateFixture) add(t *testing.T, group, members string, expiry int64, status, code int) response {
	t.Helper()
	return mustMgmt(t, f.s, "POST", "bk_cmdb/groups/"+f.groups[group]+"/members/",
		fmt.Sprintf(`{"members":[%s],"expired_at":%d}`, members, expiry), status, code)
}

// allowed answers auth_by_actions for one action on one host.
func (f *templateFixture) allowed(t *testing.T, user, action, host string) bool {
	t.Helper()
	body := `{` + subj("user", user) + `,"actions":` + actionsJSON(action) + `,"resources":[` + res("host", host) + `]}`
	r := accessPost(t, f.s, byActions, body, "")
	if r.status != 200 || r.code() != 0 {
		t.Fatalf("auth_by_actions: HTTP %d %s", r.status, r.raw)
	}
	got, ok := r.body["data"].(map[string]any)[action].(bool)
	if !ok {
		t.Fatalf("auth_by_actions: no answer for %s: %s", action, r.raw)
	}
	return got
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wantData fails unless a management call answers 200, code 0 and data equal to want (JSON).
func wantData(t *testing.T, s *sandbox.Server, method, path, want string) {
	t.Helper()
	r := mustMgmt(t, s, method, path, "", 200, 0)
	if !reflect.DeepEqual(r.body["data"], mustJSON(want)) {
		t.Fatalf("%s %s:\n got %s\nwant data %s", method, path, r.raw, want)
	}
}

// The access checks count the groups a user reaches through a bound template, directly or through
// a department's ancestor, while the binding is unexpired; the user-groups route does not list
// them.
func TestSubjectTemplateAccess(t *testing.T) {
	f := newTemplateFixture(t)
	for _, tc := range []struct {
		name, user, action, host string
		want                     bool
	}{
		{"a template member, through the bound group", "dave", "view_host", "1", true},
		{"through a parent department the template holds (alice in 2, under 1)", "alice", "view_host", "1", true},
		{"through a parent department the template holds (bob in 3, under 1)", "bob", "view_host", "1", true},
		{"not through an expired binding", "dave", "edit_host", "2", false},
		{"not through an expired binding, by department", "alice", "edit_host", "2", false},
		{"not another host", "dave", "view_host", "9", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := f.allowed(t, tc.user, tc.action, tc.host); got != tc.want {
				t.Errorf("%s may %s host %s: %t, want %t", tc.user, tc.action, tc.host, got, tc.want)
			}
		})
	}
	t.Run("auth", func(t *testing.T) {
		r := accessPost(t, f.s, authPath, authBody("alice", "view_host", res("host", "1")), "")
		if !reflect.DeepEqual(r.body["data"], mustJSON(allowed(true))) {
			t.Fatalf("auth: %s", r.raw)
		}
	})
	t.Run("query_by_actions", func(t *testing.T) {
		body := `{` + subj("user", "alice") + `,"actions":` + actionsJSON("view_host", "edit_host") + `,"resources":[]}`
		r := accessPost(t, f.s, queryPath, body, "")
		want := `[{"action":{"id":"view_host"},"condition":{"field":"host.id","op":"eq","value":"1"}},{"action":{"id":"edit_host"},"condition":{}}]`
		if r.status != 200 || !reflect.DeepEqual(r.body["data"], mustJSON(want)) {
			t.Fatalf("query_by_actions:\n got %s\nwant data %s", r.raw, want)
		}
	})
	t.Run("the user-groups route lists memberships only", func(t *testing.T) {
		for _, user := range []string{"dave", "alice"} {
			r := getRead(t, f.s, "/api/v1/open/users/"+user+"/groups?inherit=true", goodAuth)
			var got []string
			for _, g := range r.body["data"].([]any) {
				got = append(got, g.(map[string]any)["id"].(string))
			}
			if !slices.Equal(got, []string{f.groups["team"]}) {
				t.Errorf("%s's groups: %v, want only team (%s): %s", user, got, f.groups["team"], r.raw)
			}
		}
	})
}

// Binding and unbinding templates through the member routes, the two lists, and the mirror
// following its group, step by step against one sandbox.
func TestSubjectTemplateMembers(t *testing.T) {
	f := newTemplateFixture(t)
	s, g := f.s, f.groups
	far := fixedNow.Unix() + 3600

	// A second grade manager, whose mirror (template 2) no group of grade manager 1 may hold.
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", strings.Replace(scopedGM, `"ops"`, `"other"`, 1), 200, 0)
	r := mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/2/groups/", `{"groups":[{"name":"theirs","description":""}],"sync_subject_template":true}`, 200, 0)
	theirs := int64(r.body["data"].([]any)[0].(float64))
	for _, tc := range []struct {
		name, members, msg string
	}{
		{"a template of another grade manager", `{"type":"template","id":"2"}`, "人员模板不存在：2 (VALIDATE_ERROR)"},
		{"an unknown template", `{"type":"template","id":"99"}`, "人员模板不存在：99 (VALIDATE_ERROR)"},
		{"an id that is not an integer", `{"type":"template","id":"x1"}`, "人员模板 ID 非法 (VALIDATE_ERROR)"},
		{"an id that is not an integer, before the subject checks", `{"type":"user","id":"ghost"},{"type":"template","id":"1.5"}`, "人员模板 ID 非法 (VALIDATE_ERROR)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := f.add(t, "ops", tc.members, far, 400, 1902412); r.message() != tc.msg {
				t.Fatalf("message %q, want %q", r.message(), tc.msg)
			}
		})
	}
	t.Run("re-adding a bound template ignores the new expiry", func(t *testing.T) {
		f.add(t, "audit", `{"type":"template","id":" 1"}`, far, 200, 0)
		wantData(t, s, "GET", "bk_cmdb/groups/"+g["audit"]+"/subject_templates/",
			fmt.Sprintf(`{"count":1,"results":[{"id":"1","name":"team","expired_at":%d}]}`, fixedNow.Unix()+60))
		if f.allowed(t, "dave", "edit_host", "2") {
			t.Fatal("the binding was renewed")
		}
	})
	t.Run("the lists", func(t *testing.T) {
		wantData(t, s, "GET", "bk_cmdb/groups/"+g["ops"]+"/subject_templates/", `{"count":1,"results":[{"id":"1","name":"team","expired_at":4102444800}]}`)
		wantData(t, s, "GET", "bk_cmdb/groups/"+g["ops"]+"/members/", `{"count":0,"results":[]}`) // never a template
		wantData(t, s, "GET", "bk_cmdb/groups/"+g["team"]+"/subject_templates/", `{"count":0,"results":[]}`)
		one := `{"count":1,"results":[{"id":1,"name":"team","description":"the team","readonly":true,"source_group_id":` + g["team"] +
			`,"creator":"bk__anonymous_user","created_time":"2026-01-01 00:00:00"}]}`
		for _, q := range []string{"", "?name=TEA", "?description=THE&creator=bk__anonymous_user", "?page=1&page_size=1"} {
			wantData(t, s, "GET", "bk_cmdb/grade_managers/1/subject_templates/"+q, one)
		}
		for _, q := range []string{"?name=zz", "?creator=alice"} {
			wantData(t, s, "GET", "bk_cmdb/grade_managers/1/subject_templates/"+q, `{"count":0,"results":[]}`)
		}
		mustMgmt(t, s, "GET", "bk_cmdb/grade_managers/1/subject_templates/?page=2", "", 404, 1902404)
		mustMgmt(t, s, "GET", "bk_cmdb/grade_managers/2/subject_templates/?name=theirs", "", 200, 0)
		r := mustMgmt(t, s, "GET", "bk_cmdb/grade_managers/1/groups/?name=ops", "", 200, 0)
		if !strings.Contains(r.raw, `"subject_template_count":1,`) {
			t.Fatalf("the group list's subject_template_count: %s", r.raw)
		}
	})
	t.Run("the mirror follows the group's member routes", func(t *testing.T) {
		f.add(t, "team", `{"type":"user","id":"carol"},{"type":"user","id":"ghost"}`, far, 200, 0)
		mustMgmt(t, s, "DELETE", "bk_cmdb/groups/"+g["team"]+"/members/?type=department&ids=1", "", 200, 0)
		// ghost, whom the SaaS drops as unknown, is not mirrored; department 1 is removed.
		got := s.SubjectTemplates()
		want := []sandbox.SubjectTemplateView{
			{ID: 1, System: "bk_cmdb", GradeManager: 1, Name: "team", Description: "the team", Readonly: true, SourceGroup: int64(atoi(t, g["team"])),
				Members: got[0].Members},
			{ID: 2, System: "bk_cmdb", GradeManager: 2, Name: "theirs", Readonly: true, SourceGroup: theirs, Members: got[1].Members},
		}
		if !reflect.DeepEqual(got, want) || fmt.Sprint(got[0].Members) != "[{user carol} {user dave}]" {
			t.Fatalf("templates:\n got %+v\nwant %+v, template 1 holding carol and dave", got, want)
		}
		if f.allowed(t, "alice", "view_host", "1") || !f.allowed(t, "carol", "view_host", "1") {
			t.Fatal("access does not follow the mirror")
		}
	})
	t.Run("unbinding", func(t *testing.T) {
		if r := mustMgmt(t, s, "DELETE", "bk_cmdb/groups/"+g["ops"]+"/members/?type=template&ids=x", "", 400, 1902412); r.message() != "人员模板 ID 非法 (VALIDATE_ERROR)" {
			t.Fatal(r.raw)
		}
		mustMgmt(t, s, "DELETE", "bk_cmdb/groups/"+g["ops"]+"/members/?type=template&ids=1,99", "", 200, 0)
		wantData(t, s, "GET", "bk_cmdb/groups/"+g["ops"]+"/subject_templates/", `{"count":0,"results":[]}`)
		if f.allowed(t, "dave", "view_host", "1") {
			t.Fatal("dave still reaches ops after the unbinding")
		}
	})
	t.Run("deleting the source group deletes the template and its bindings", func(t *testing.T) {
		f.add(t, "ops", `{"type":"template","id":"1"}`, far, 200, 0)
		mustMgmt(t, s, "DELETE", "bk_cmdb/groups/"+g["team"]+"/", "", 200, 0)
		wantData(t, s, "GET", "bk_cmdb/grade_managers/1/subject_templates/", `{"count":0,"results":[]}`)
		wantData(t, s, "GET", "bk_cmdb/groups/"+g["ops"]+"/subject_templates/", `{"count":0,"results":[]}`)
		if f.allowed(t, "dave", "view_host", "1") {
			t.Fatal("dave still reaches ops through a deleted template")
		}
		if r := f.add(t, "ops", `{"type":"template","id":"1"}`, far, 400, 1902412); r.message() != "人员模板不存在：1 (VALIDATE_ERROR)" {
			t.Fatal(r.raw)
		}
	})
	stats := s.Stats().Requests
	for _, k := range []string{"subject_template:list", "group_subject_template:list"} {
		if stats[k] == 0 {
			t.Errorf("stats %s not counted: %v", k, stats)
		}
	}
}

// A grade manager's create with sync_perm and sync_subject_template mirrors its sync group; a
// grade manager's member resync is not mirrored; the template goes with the sync group, and with
// the grade manager.
func TestSubjectTemplateOfSyncGroup(t *testing.T) {
	clock := &testClock{t: fixedNow}
	s := newServer(t, sandbox.WithNow(clock.now), sandbox.WithGradeManagerDeleteDelay(0))
	withTemplate := strings.Replace(gmBody, `"sync_perm":true`, `"sync_perm":true,"sync_subject_template":true`, 1)
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", withTemplate, 200, 0)
	wantData(t, s, "GET", "bk_cmdb/grade_managers/1/subject_templates/", `{"count":1,"results":[{"id":1,"name":"ops administrator group",`+
		`"description":"d","readonly":true,"source_group_id":4,"creator":"bk__anonymous_user","created_time":"2026-01-01 00:00:00"}]}`)
	members := func() string { return fmt.Sprint(s.SubjectTemplates()[0].Members) }
	if got := members(); got != "[{user alice}]" {
		t.Fatalf("the sync group's template holds %s", got)
	}
	// The member routes on the sync group are mirrored; a grade manager's update is not.
	mustMgmt(t, s, "POST", "bk_cmdb/groups/4/members/", `{"members":[{"type":"user","id":"bob"}],"expired_at":4102444800}`, 200, 0)
	mustMgmt(t, s, "PUT", "bk_cmdb/grade_managers/1/", strings.Replace(withTemplate, `"members":["alice"]`, `"members":["carol"]`, 1), 200, 0)
	if got := members(); got != "[{user alice} {user bob}]" {
		t.Fatalf("after the resync the template holds %s", got)
	}
	// The template may be bound to another group of the grade manager.
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0)
	mustMgmt(t, s, "POST", "bk_cmdb/groups/5/members/", `{"members":[{"type":"template","id":"1"}],"expired_at":4102444800}`, 200, 0)
	// An update without sync_perm deletes the sync group, and its template with its bindings.
	mustMgmt(t, s, "PUT", "bk_cmdb/grade_managers/1/", strings.Replace(withTemplate, `"sync_perm":true`, `"sync_perm":false`, 1), 200, 0)
	if n := len(s.SubjectTemplates()); n != 0 {
		t.Fatalf("%d templates left", n)
	}
	wantData(t, s, "GET", "bk_cmdb/groups/5/subject_templates/", `{"count":0,"results":[]}`)
	// An update that creates the sync group again passes no sync_subject_template on.
	mustMgmt(t, s, "PUT", "bk_cmdb/grade_managers/1/", withTemplate, 200, 0)
	if n := len(s.SubjectTemplates()); n != 0 {
		t.Fatalf("an update made %d templates", n)
	}
	// A group batch of the grade manager, mirrored; the grade manager's delete takes them.
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"a1","description":""},{"name":"a2","description":""}],"sync_subject_template":true}`, 200, 0)
	var got []int64
	for _, tv := range s.SubjectTemplates() {
		got = append(got, tv.ID)
	}
	if !slices.Equal(got, []int64{2, 3}) {
		t.Fatalf("templates %v, want [2 3] (their own sequence)", got)
	}
	mustMgmt(t, s, "DELETE", "bk_cmdb/grade_managers/1/", "", 200, 0)
	if n := len(s.SubjectTemplates()); n != 0 {
		t.Fatalf("%d templates left after the grade manager's delete", n)
	}
}

// The system manager's groups ("-") mirror into templates of the system manager, which its other
// groups may hold and a grade manager's may not.
func TestSubjectTemplateOfSystemManager(t *testing.T) {
	s := newServer(t)
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/-/groups/", `{"groups":[{"name":"sys","description":""},{"name":"sys2","description":""}],"sync_subject_template":true}`, 200, 0)
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", scopedGM, 200, 0)
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0)
	mustMgmt(t, s, "POST", "bk_cmdb/groups/5/members/", `{"members":[{"type":"template","id":"1"}],"expired_at":4102444800}`, 200, 0)
	mustMgmt(t, s, "POST", "bk_cmdb/groups/6/members/", `{"members":[{"type":"template","id":"1"}],"expired_at":4102444800}`, 400, 1902412)
	mustMgmt(t, s, "POST", "bk_job/grade_managers/-/groups/", `{"groups":[{"name":"jobs","description":""}]}`, 200, 0)
	mustMgmt(t, s, "POST", "bk_job/groups/7/members/", `{"members":[{"type":"template","id":"1"}],"expired_at":4102444800}`, 400, 1902412)
}

// Templates and bindings persist in the state file, the access they give with them, and the
// template sequence goes on after a restart.
func TestSubjectTemplateState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	f := newTemplateFixture(t, sandbox.WithStateFile(path))
	before := f.s.Management()
	if len(before.SubjectTemplates) != 1 {
		t.Fatalf("templates before: %+v", before.SubjectTemplates)
	}
	again := newServer(t, sandbox.WithStateFile(path), sandbox.WithNow(f.clock.now))
	if got := again.Management(); !reflect.DeepEqual(got, before) {
		t.Fatalf("after a restart:\n got %+v\nwant %+v", got, before)
	}
	g := &templateFixture{s: again, clock: f.clock, groups: f.groups}
	if !g.allowed(t, "alice", "view_host", "1") {
		t.Fatal("alice lost her access through the template")
	}
	mustMgmt(t, again, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"new","description":""}],"sync_subject_template":true}`, 200, 0)
	var ids []int64
	for _, tv := range again.SubjectTemplates() {
		ids = append(ids, tv.ID)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if !slices.Equal(ids, []int64{1, 2}) {
		t.Fatalf("template ids after a restart: %v", ids)
	}
}
