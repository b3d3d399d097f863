package management

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestSyncGroupIs: where IAM's mark was read, the sync group is the
// marked group whatever its name (renamed in the web UI), and a group
// bearing IAM's default name without the mark is an ordinary group; where
// it could not be read, the sync group is told by either of IAM's default
// names, the English one the management API gives it and the Chinese one
// the web UI gives it; a grade manager without sync_perm has none.
func TestSyncGroupIs(t *testing.T) {
	ops := bkiam.GradeManager{ID: 1, Name: "ops", SyncPerm: true}
	marked := syncGroup{gradeManager: ops, marked: map[int64]bool{7: true}}
	markedNone := syncGroup{gradeManager: ops, marked: map[int64]bool{}}
	byName := syncGroup{gradeManager: ops, names: syncGroupNames("ops"), unmarked: bkiam.ErrNoGroupAttributes}
	for _, tc := range []struct {
		what string
		s    syncGroup
		g    bkiam.Group
		want bool
	}{
		{"marked, renamed", marked, bkiam.Group{ID: 7, Name: "platform admins"}, true},
		{"marked, default name", marked, bkiam.Group{ID: 7, Name: "ops administrator group"}, true},
		{"unmarked, default name", marked, bkiam.Group{ID: 8, Name: "ops administrator group"}, false},
		{"none marked (IAM failed to build it)", markedNone, bkiam.Group{ID: 7, Name: "ops administrator group"}, false},
		{"by name, English", byName, bkiam.Group{ID: 7, Name: "ops administrator group"}, true},
		{"by name, Chinese", byName, bkiam.Group{ID: 7, Name: "ops-管理员组"}, true},
		{"by name, another name", byName, bkiam.Group{ID: 7, Name: "ops administrator group 2"}, false},
		{"by name, renamed (what it cannot tell)", byName, bkiam.Group{ID: 7, Name: "platform admins"}, false},
		{"no sync_perm", syncGroup{gradeManager: bkiam.GradeManager{Name: "ops"}}, bkiam.Group{ID: 7, Name: "ops administrator group"}, false},
	} {
		if got := tc.s.is(tc.g); got != tc.want {
			t.Errorf("%s: group %d %q is the sync group = %v, want %v", tc.what, tc.g.ID, tc.g.Name, got, tc.want)
		}
	}
}

// TestSyncGroupOf reads the recogniser from IAM (the sandbox, which
// answers what the real SaaS does): the mark tells a sync group renamed in
// the web UI and not a group named as IAM names sync groups; an app not
// allowed IAM's group_list falls back to the default names and says so,
// naming what to allow; a grade manager without sync_perm costs no read of
// the marks; another failure of the marks' read is an error, not a guess.
func TestSyncGroupOf(t *testing.T) {
	m := sandbox.DefaultModel()
	m.Apps = append(m.Apps, sandbox.App{Code: "nolist", Secret: "nolist-secret", ClientOf: []string{"bk_cmdb"},
		Management: map[string][]string{"bk_cmdb": {"v2_grade_manager_detail", "v2_group_list"}}})
	raw, _ := json.Marshal(m)
	model, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	sb := sandboxtest.Start(t, sandbox.WithModel(model))
	client := func(app, secret string) *bkiam.Client {
		c, err := bkiam.New(bkiam.Config{APIGatewayURL: sb.URL, AppCode: app, AppSecret: secret, Timeout: 10 * time.Second,
			MaxRetries: 1, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c, ctx := client(sandboxtest.AppCode, sandboxtest.AppSecret), context.Background()
	spec := bkiam.GradeManagerSpec{Name: "ops", Members: []string{"alice"}, SyncPerm: true,
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "create_biz"}}, Resources: []bkiam.PathResource{}}},
		SubjectScopes:       []bkiam.SubjectScope{{Type: "*", ID: "*"}}}
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", spec)
	if err != nil {
		t.Fatal(err)
	}
	sync, err := c.GroupByName(ctx, "bk_cmdb", gm, "ops administrator group")
	if err != nil || sync == nil {
		t.Fatalf("no sync group: %v", err)
	}
	if err := sb.RenameGroup(sync.ID, "platform admins"); err != nil {
		t.Fatal(err)
	}
	ids, err := c.CreateGroups(ctx, "bk_cmdb", strconv.FormatInt(gm, 10), []bkiam.GroupSpec{{Name: "ops administrator group"}})
	if err != nil {
		t.Fatal(err)
	}
	renamed, impostor := bkiam.Group{ID: sync.ID, Name: "platform admins"}, bkiam.Group{ID: ids[0], Name: "ops administrator group"}

	s, err := syncGroupOf(ctx, c, "bk_cmdb", gm)
	if err != nil || s.unmarked != nil || !s.is(renamed) || s.is(impostor) {
		t.Fatalf("with the marks: %+v, %v; want the renamed group %d told, group %d not", s, err, sync.ID, ids[0])
	}

	s, err = syncGroupOf(ctx, client("nolist", "nolist-secret"), "bk_cmdb", gm)
	if err != nil || s.unmarked == nil || s.is(renamed) || !s.is(impostor) {
		t.Fatalf("without group_list: %+v, %v; want the fallback to IAM's default names", s, err)
	}
	warning := s.byName("groups")
	if d := warning.Diagnostics; len(d) != 1 || d[0].Summary() != "Sync group told by its default name only" ||
		!strings.Contains(d[0].Detail(), "management api[group_list]") || !strings.Contains(d[0].Detail(), "Allow the app IAM's management API group_list") ||
		!strings.Contains(d[0].Detail(), `"ops administrator group" and "ops-管理员组"`) {
		t.Fatalf("the fallback's warning: %+v", d)
	}

	spec.Name, spec.SyncPerm = "dev", false
	plain, err := c.CreateGradeManager(ctx, "bk_cmdb", spec)
	if err != nil {
		t.Fatal(err)
	}
	before := sb.Stats().Requests["group:list_v1"]
	if s, err := syncGroupOf(ctx, c, "bk_cmdb", plain); err != nil || s.is(impostor) || s.unmarked != nil {
		t.Fatalf("without sync_perm: %+v, %v", s, err)
	}
	if n := sb.Stats().Requests["group:list_v1"]; n != before {
		t.Errorf("a grade manager without sync_perm read the marks (%d calls)", n-before)
	}

	if err := sb.SetFaults(sandbox.Faults{Fail: &sandbox.FailFault{After: 1, Count: 10, Status: 500, Code: 1902500}}); err != nil {
		t.Fatal(err)
	}
	if _, err := syncGroupOf(ctx, c, "bk_cmdb", gm); err == nil || !strings.Contains(err.Error(), "reading the marks of its groups") {
		t.Fatalf("a failed read of the marks: %v, want an error", err)
	}
}
