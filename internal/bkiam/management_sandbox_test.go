package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestGradeManagersSandbox drives the grade-manager calls against the sandbox as the real server
// behaves (package doc, "The management API"): ownership by the creating system, a name taken
// (409), the full-replace update, the 403 of a gone grade manager, a delete carried out later.
func TestGradeManagersSandbox(t *testing.T) {
	m := sandbox.DefaultModel()
	m.Limits.GradeManagerDeleteDelayMS = 300
	sb := sandboxtest.Start(t, sandbox.WithModel(m))
	c := sandboxClient(t, sb.URL)
	ctx := context.Background()
	spec := GradeManagerSpec{Name: "ops", Members: []string{"alice"},
		AuthorizationScopes: []AuthorizationScope{{System: "bk_cmdb", Actions: []Action{{ID: "create_biz"}}, Resources: []PathResource{}}},
		SubjectScopes:       []SubjectScope{{Type: "*", ID: "*"}}, SyncPerm: true}

	id, err := c.CreateGradeManager(ctx, "bk_cmdb", spec)
	if err != nil || id <= 0 {
		t.Fatalf("create: %d %v", id, err)
	}
	gm, err := c.GradeManager(ctx, "bk_cmdb", id)
	if err != nil || gm.Name != "ops" || !gm.SyncPerm || len(gm.Members) != 1 {
		t.Fatalf("get: %+v %v", gm, err)
	}
	jobScope := []AuthorizationScope{{System: "bk_job", Actions: []Action{{ID: "view"}},
		Resources: []PathResource{{System: "bk_job", Type: "job", Paths: [][]PathNode{{{System: "bk_job", Type: "job", ID: "*"}}}}}}}
	if _, err := c.CreateGradeManager(ctx, "bk_job", GradeManagerSpec{Name: "OPS", Members: []string{}, Description: "",
		AuthorizationScopes: jobScope, SubjectScopes: spec.SubjectScopes}); !errors.Is(err, ErrConflict) {
		t.Fatalf("a name taken, in any case and any system: %v", err)
	}
	// IAM checks the creator, which the app is a client of, not the path's system.
	if gm, err := c.GradeManager(ctx, "bk_job", id); err != nil || gm.Name != "ops" {
		t.Fatalf("bk_cmdb's grade manager through bk_job's path: %+v %v", gm, err)
	}
	if _, err := c.GradeManager(ctx, "bk_cmdb", id+100); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("a grade manager that does not exist: %v", err)
	}
	spec.Description, spec.SyncPerm = "the ops team", false
	if err := c.UpdateGradeManager(ctx, "bk_cmdb", id, spec); err != nil {
		t.Fatal(err)
	}
	if gm, _ := c.GradeManager(ctx, "bk_cmdb", id); gm.Description != "the ops team" || gm.SyncPerm {
		t.Fatalf("after the update: %+v", gm)
	}
	bad := spec
	bad.SubjectScopes = nil
	if err := c.UpdateGradeManager(ctx, "bk_cmdb", id, bad); !errors.Is(err, ErrValidation) || !strings.Contains(err.Error(), "subject_scopes") {
		t.Fatalf("an update without subject_scopes: %v", err)
	}

	if err := c.DeleteGradeManager(ctx, "bk_cmdb", id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GradeManager(ctx, "bk_cmdb", id); err != nil {
		t.Fatalf("IAM deletes later: right after the delete the grade manager is still there: %v", err)
	}
	if err := c.DeleteGradeManager(ctx, "bk_cmdb", id); err != nil {
		t.Fatalf("a repeat delete before it is carried out: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.GradeManager(ctx, "bk_cmdb", id)
		if errors.Is(err, ErrNotOwned) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the grade manager was never deleted: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	outsider := mustClient(t, Config{APIGatewayURL: sb.URL, AppCode: "outsider", AppSecret: "outsider-secret", MaxRetries: 0})
	if _, err := outsider.CreateGradeManager(ctx, "bk_cmdb", spec); !errors.Is(err, ErrForbidden) || errors.Is(err, ErrNotOwned) {
		t.Fatalf("an app that is not a client: %v", err)
	}
}

// TestGroupsAndMembersSandbox drives the group and member calls against the sandbox (package doc,
// "The management API"): batch create, the name conflict, the list with its case-insensitive name
// filter, the update that keeps empty fields, members added (admin and unknown users dropped),
// expiry only raised, members deleted, the group delete and its 403 afterwards.
func TestGroupsAndMembersSandbox(t *testing.T) {
	sb := sandboxtest.Start(t, sandbox.WithGradeManagerDeleteDelay(0))
	c := sandboxClient(t, sb.URL)
	ctx := context.Background()
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", GradeManagerSpec{Name: "team", Members: []string{},
		AuthorizationScopes: []AuthorizationScope{{System: "bk_cmdb", Actions: []Action{{ID: "create_biz"}}, Resources: []PathResource{}}},
		SubjectScopes:       []SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.CreateGroups(ctx, "bk_cmdb", idString(gm), []GroupSpec{{Name: "Dev", Description: "developers"}, {Name: "ops", Description: "o"}})
	if err != nil || len(ids) != 2 || ids[1] <= ids[0] {
		t.Fatalf("create groups: %v %v", ids, err)
	}
	if _, err := c.CreateGroups(ctx, "bk_cmdb", idString(gm), []GroupSpec{{Name: "dev"}}); !errors.Is(err, ErrConflict) {
		t.Fatalf("a group name taken: %v", err)
	}
	if _, err := c.CreateGroups(ctx, "bk_cmdb", SystemManager, []GroupSpec{{Name: "dev"}}); err != nil {
		t.Fatalf("the system manager's groups are another owner: %v", err)
	}
	groups, err := c.ListGroups(ctx, "bk_cmdb", gm, GroupFilter{})
	if err != nil || len(groups) != 2 || groups[0].ID != ids[1] {
		t.Fatalf("list, newest first: %+v %v", groups, err)
	}
	if g, err := c.GroupByName(ctx, "bk_cmdb", gm, "dev"); err != nil || g != nil {
		t.Fatalf("the name filter is a substring, the exact match is the client's: %+v %v", g, err)
	}
	if err := c.UpdateGroup(ctx, "bk_cmdb", ids[0], "dev", ""); err != nil {
		t.Fatal(err)
	}
	if g, err := c.GroupByName(ctx, "bk_cmdb", gm, "dev"); err != nil || g == nil || g.Description != "developers" {
		t.Fatalf("renamed, description kept: %+v %v", g, err)
	}
	if err := c.UpdateGroup(ctx, "bk_job", ids[0], "dev", ""); err != nil {
		t.Fatalf("bk_cmdb's group through bk_job's path: %v", err)
	}
	if err := c.UpdateGroup(ctx, "bk_cmdb", ids[0]+100, "x1", ""); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("a group that does not exist: %v", err)
	}

	far, later := time.Now().Unix()+3600, time.Now().Unix()+7200
	if err := c.AddMembers(ctx, "bk_cmdb", ids[0], []MemberRef{{"user", "alice"}, {"user", "admin"}, {"user", "ghost"}, {"department", "1"}}, far); err != nil {
		t.Fatal(err)
	}
	if err := c.AddMembers(ctx, "bk_cmdb", ids[0], []MemberRef{{"user", "bob"}, {"user", "alice"}}, later); err != nil {
		t.Fatal(err)
	}
	if err := c.AddMembers(ctx, "bk_cmdb", ids[0], []MemberRef{{"user", "alice"}}, far); err != nil {
		t.Fatal(err)
	}
	members, err := c.GroupMembers(ctx, "bk_cmdb", ids[0])
	if err != nil || len(members) != 3 || members[0].ID != "bob" || members[2].ID != "alice" || members[2].ExpiredAt != later {
		t.Fatalf("members (admin and ghost dropped, newest first, alice's expiry raised, never lowered): %+v %v", members, err)
	}
	if err := c.AddMembers(ctx, "bk_cmdb", ids[0], []MemberRef{{"user", "bob"}}, 1); !errors.Is(err, ErrValidation) {
		t.Fatalf("an expiry in the past: %v", err)
	}
	if groups, _ := c.ListGroups(ctx, "bk_cmdb", gm, GroupFilter{ID: ids[0]}); len(groups) != 1 || groups[0].UserCount != 2 || groups[0].DepartmentCount != 1 {
		t.Fatalf("counts: %+v", groups)
	}
	if err := c.DeleteMembers(ctx, "bk_cmdb", ids[0], "user", []string{"bob", "carol"}); err != nil {
		t.Fatal(err)
	}
	if members, _ := c.GroupMembers(ctx, "bk_cmdb", ids[0]); len(members) != 2 {
		t.Fatalf("after the delete: %+v", members)
	}
	if err := c.DeleteMembers(ctx, "bk_cmdb", ids[0], "user", []string{"ghost"}); err == nil || !strings.Contains(err.Error(), "1902000") {
		t.Fatalf("an unknown subject, a backend error: %v", err)
	}

	if err := c.DeleteGroup(ctx, "bk_cmdb", ids[1]); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteGroup(ctx, "bk_cmdb", ids[1]); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("a deleted group: %v", err)
	}
	if err := c.DeleteGradeManager(ctx, "bk_cmdb", gm); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GroupMembers(ctx, "bk_cmdb", ids[0]); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("the groups go with their grade manager: %v", err)
	}
	outsider := mustClient(t, Config{APIGatewayURL: sb.URL, AppCode: "outsider", AppSecret: "outsider-secret", MaxRetries: 0})
	if _, err := outsider.ListGroups(ctx, "bk_cmdb", gm, GroupFilter{}); !errors.Is(err, ErrForbidden) || errors.Is(err, ErrNotOwned) {
		t.Fatalf("an app that is not a client: %v", err)
	}
}

// TestGradeManagersNamedSandbox: the v1 list finds a system's grade
// managers by exact name (IAM's filter is a substring), only the system's
// own, and is refused without the allow-list entry.
func TestGradeManagersNamedSandbox(t *testing.T) {
	sb := sandboxtest.Start(t)
	c := sandboxClient(t, sb.URL)
	ctx := context.Background()
	spec := func(name string) GradeManagerSpec {
		return GradeManagerSpec{Name: name, Members: []string{"alice"}, SubjectScopes: []SubjectScope{{Type: "*", ID: "*"}},
			AuthorizationScopes: []AuthorizationScope{{System: "bk_cmdb", Actions: []Action{{ID: "create_biz"}}}}}
	}
	var ops int64
	for _, name := range []string{"ops", "devops", "ops-2"} {
		id, err := c.CreateGradeManager(ctx, "bk_cmdb", spec(name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "ops" {
			ops = id
		}
	}
	got, err := c.GradeManagersNamed(ctx, "bk_cmdb", "ops")
	if err != nil || len(got) != 1 || got[0].ID != ops || got[0].Name != "ops" {
		t.Fatalf("GradeManagersNamed(ops) = %+v, %v; want grade manager %d alone", got, err, ops)
	}
	if got, err := c.GradeManagersNamed(ctx, "bk_job", "ops"); err != nil || len(got) != 0 {
		t.Fatalf("another system's list: %+v, %v", got, err)
	}
	if n := sb.Stats().Requests["grade_manager:list"]; n != 2 {
		t.Fatalf("grade_manager:list counted %d, want 2", n)
	}
	outsider, err := New(Config{APIGatewayURL: sb.URL, AppCode: "outsider", AppSecret: "outsider-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := outsider.GradeManagersNamed(ctx, "bk_cmdb", "ops"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("the outsider's list: %v, want forbidden", err)
	}
}

// TestGroupPoliciesSandbox drives the group-permission calls against the sandbox: a grant inside
// the grade manager's scope, one outside it refused, the list read back by meaning, a revoke, and
// a request that would mean every instance refused before any I/O.
func TestGroupPoliciesSandbox(t *testing.T) {
	sb := sandboxtest.Start(t)
	c := sandboxClient(t, sb.URL)
	ctx := context.Background()
	hosts := func(biz string, ids ...string) []PathResource {
		r := PathResource{System: "bk_cmdb", Type: "host"}
		for _, id := range ids {
			r.Paths = append(r.Paths, []PathNode{{System: "bk_cmdb", Type: "biz", ID: biz}, {System: "bk_cmdb", Type: "host", ID: id}})
		}
		return []PathResource{r}
	}
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", GradeManagerSpec{Name: "ops", Members: []string{"alice"},
		SubjectScopes: []SubjectScope{{Type: "*", ID: "*"}},
		AuthorizationScopes: []AuthorizationScope{{System: "bk_cmdb", Actions: []Action{{ID: "view_host"}, {ID: "edit_host"}},
			Resources: hosts("2", "*")}}})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.CreateGroups(ctx, "bk_cmdb", idString(gm), []GroupSpec{{Name: "dev"}})
	if err != nil {
		t.Fatal(err)
	}
	group := ids[0]
	grant := GroupPolicyRequest{Actions: []Action{{ID: "view_host"}, {ID: "edit_host"}}, Resources: hosts("2", "5", "6")}
	if err := c.GrantGroupPolicies(ctx, "bk_cmdb", group, grant); err != nil {
		t.Fatal(err)
	}
	var e *Error
	if err := c.GrantGroupPolicies(ctx, "bk_cmdb", group, GroupPolicyRequest{Actions: []Action{{ID: "view_host"}}, Resources: hosts("3", "5")}); !errors.As(err, &e) || e.Code != 1902412 {
		t.Fatalf("a grant outside the scope: %v, want 1902412", err)
	}
	if err := c.RevokeGroupPolicies(ctx, "bk_cmdb", group, GroupPolicyRequest{Actions: []Action{{ID: "edit_host"}}, Resources: hosts("2", "6")}); err != nil {
		t.Fatal(err)
	}
	policies, err := c.GroupPolicies(ctx, "bk_cmdb", group)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, p := range policies {
		for _, rg := range p.ResourceGroups {
			for _, path := range rg[0].Paths {
				got[p.Action] = append(got[p.Action], pathString(path))
			}
		}
	}
	want := map[string][]string{"edit_host": {"biz 2/host 5"}, "view_host": {"biz 2/host 5", "biz 2/host 6"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	if err := c.GrantGroupPolicies(ctx, "bk_cmdb", group, GroupPolicyRequest{Actions: []Action{{ID: "view_host"}},
		Resources: []PathResource{{System: "bk_cmdb", Type: "host"}}}); err == nil || !strings.Contains(err.Error(), "every instance") {
		t.Fatalf("a grant without paths: %v", err)
	}
}

func pathString(p []PathNode) string {
	parts := make([]string, len(p))
	for i, n := range p {
		parts[i] = n.Type + " " + n.ID
	}
	return strings.Join(parts, "/")
}

// TestSyncGroupIDsSandbox: the v1 group list tells the sync group by its mark, under IAM's
// default name and after a rename in the web UI; a grade manager without sync_perm has none, and
// an app not allowed the v1 list (allow-list group_list) gets a permission error.
func TestSyncGroupIDsSandbox(t *testing.T) {
	m := sandbox.DefaultModel()
	m.Apps = append(m.Apps, sandbox.App{Code: "nolist", Secret: "nolist-secret", ClientOf: []string{"bk_cmdb"},
		Management: map[string][]string{"bk_cmdb": {"v2_grade_manager_create", "v2_group_list"}}})
	raw, _ := json.Marshal(m)
	model, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	sb := sandboxtest.Start(t, sandbox.WithModel(model))
	c := sandboxClient(t, sb.URL)
	ctx := context.Background()
	spec := GradeManagerSpec{Name: "ops", Members: []string{"alice"},
		AuthorizationScopes: []AuthorizationScope{{System: "bk_cmdb", Actions: []Action{{ID: "create_biz"}}, Resources: []PathResource{}}},
		SubjectScopes:       []SubjectScope{{Type: "*", ID: "*"}}, SyncPerm: true}
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", spec)
	if err != nil {
		t.Fatal(err)
	}
	sync, err := c.GroupByName(ctx, "bk_cmdb", gm, "ops administrator group")
	if err != nil || sync == nil {
		t.Fatalf("no sync group: %v", err)
	}
	if _, err := c.CreateGroups(ctx, "bk_cmdb", idString(gm), []GroupSpec{{Name: "ops administrator group 2"}}); err != nil {
		t.Fatal(err)
	}
	if ids, err := c.SyncGroupIDs(ctx, gm); err != nil || !reflect.DeepEqual(ids, map[int64]bool{sync.ID: true}) {
		t.Fatalf("SyncGroupIDs = %v, %v; want the sync group %d alone", ids, err, sync.ID)
	}
	if err := sb.RenameGroup(sync.ID, "platform admins"); err != nil {
		t.Fatal(err)
	}
	if ids, err := c.SyncGroupIDs(ctx, gm); err != nil || !reflect.DeepEqual(ids, map[int64]bool{sync.ID: true}) {
		t.Fatalf("after a rename in the web UI SyncGroupIDs = %v, %v; want the sync group %d", ids, err, sync.ID)
	}
	spec.Name, spec.SyncPerm = "dev", false
	plain, err := c.CreateGradeManager(ctx, "bk_cmdb", spec)
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := c.SyncGroupIDs(ctx, plain); err != nil || len(ids) != 0 {
		t.Fatalf("a grade manager without sync_perm: %v, %v", ids, err)
	}
	nolist := mustClient(t, Config{APIGatewayURL: sb.URL, AppCode: "nolist", AppSecret: "nolist-secret", Timeout: 10 * time.Second})
	if _, err := nolist.SyncGroupIDs(ctx, gm); !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "management api[group_list]") {
		t.Fatalf("an app not allowed group_list: %v", err)
	}
}
