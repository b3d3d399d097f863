package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// The shapes of a real site that a query must adopt without a change to
// IAM, each filled through IAM's APIs (never the provider): a group's
// permission-template rows beside its custom policy, a grade manager's
// sync group, and policies that the provider would refuse at plan.

// shapesWorkspace is a sandbox (started with opts) with a grade manager of
// bk_cmdb (sync_perm as given, its scope the host scope, by id, for
// view_host and edit_host, everyone as subjects) and a workspace whose CLI
// runs terraform query.
func shapesWorkspace(t *testing.T, syncPerm bool, scope string, opts ...sandbox.Option) (*sandboxtest.Sandbox, *bkiam.Client, *acctest.CLIWorkspace, int64) {
	t.Helper()
	acctest.NeedsSandbox(t)
	querier := queryCLI(t)
	sb := sandboxtest.Start(t, opts...)
	c := acctest.OutsideClient(t, sb)
	gm, err := c.CreateGradeManager(context.Background(), "bk_cmdb", bkiam.GradeManagerSpec{Name: "platform", Members: []string{"alice"},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "view_host"}, {ID: "edit_host"}},
			Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: scope}}}}}}},
		SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}}, SyncPerm: syncPerm})
	if err != nil {
		t.Fatal(err)
	}
	server, err := provider.NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	w := acctest.NewAttachedWorkspace(t, server)
	w.Configure(acctest.DriftProvider(sb, ""), "")
	w.Terraform = querier
	return sb, c, w, gm
}

// generate runs terraform query -generate-config-out on query and
// answers the generated configuration and the CLI's output, each with
// white space collapsed (Terraform aligns = and wraps diagnostics).
func generate(t *testing.T, w *acctest.CLIWorkspace, query string) (generated, out string) {
	t.Helper()
	w.Write("site.tfquery.hcl", query)
	out = w.MustRun("query", "-generate-config-out=generated.tf")
	raw, err := os.ReadFile(filepath.Join(w.Dir, "generated.tf"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	w.Remove("site.tfquery.hcl")
	return strings.Join(strings.Fields(string(raw)), " "), strings.Join(strings.Fields(out), " ")
}

// wantIn fails the test for each of wants that text (what it is) lacks.
func wantIn(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s has no %q:\n%s", what, want, text)
		}
	}
}

// importGenerated applies, with the CLI under test, what a query
// generated in w, once the checks of the query passed: n imports and
// nothing else (applyImportsOnly).
func importGenerated(t *testing.T, w *acctest.CLIWorkspace, sb *sandboxtest.Sandbox, before iamSnapshot, n int) {
	t.Helper()
	if t.Failed() {
		t.FailNow()
	}
	w.Terraform = testutil.Terraform(t)
	applyImportsOnly(t, w, sb, before, n)
}

func grantHosts(t *testing.T, c *bkiam.Client, subject bkiam.Subject, action string, ids ...string) {
	t.Helper()
	var instances []bkiam.Instance
	for _, id := range ids {
		instances = append(instances, bkiam.Instance{ID: id, Name: "host " + id})
	}
	if _, err := c.BatchInstance(context.Background(), bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant,
		Subject: subject, Actions: []bkiam.Action{{ID: action}}, ExpiredAt: bkiam.PermanentExpiry,
		Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: instances}}}); err != nil {
		t.Fatal(err)
	}
}

// TestAccQueryTemplateRows: group "web" holds view_host on hosts 4 and 5
// as its custom policy (granted through the authorization API) and on
// host 9 through permission template 7. Listed with both kinds that could
// hold it, the custom policy is generated once, by bkiam_group_permission,
// with hosts 4 and 5 only: bkiam_instance_grant leaves the group out with
// a warning naming the kind that adopts it. carol, who holds view_host as
// her own grant and through a template an older IAM granted to users, is
// left out too (IAM's policy list cannot tell the rows apart). The apply only imports: IAM,
// the template's row included, is as it was, and the next plan is empty.
// (Before, the instance-grant list generated host 9 alone, and the apply
// revoked hosts 4 and 5.)
func TestAccQueryTemplateRows(t *testing.T) {
	acctest.Parallel(t)
	sb, c, w, gm := shapesWorkspace(t, false, "*")
	groups, err := c.CreateGroups(context.Background(), "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "web"}})
	if err != nil {
		t.Fatal(err)
	}
	web := groups[0]
	if err := sb.AddTemplatePolicy("bk_cmdb", sandbox.TemplatePolicy{TemplateID: 7, Group: fmt.Sprint(web), Action: "view_host",
		Paths: []string{"/bk_cmdb,host,9/"}}); err != nil {
		t.Fatal(err)
	}
	grantHosts(t, c, bkiam.Subject{Type: "group", ID: fmt.Sprint(web)}, "view_host", "4", "5")
	grantHosts(t, c, bkiam.Subject{Type: "user", ID: "bob"}, "view_host", "1")
	// carol holds view_host on host 6 as her own grant and on host 11
	// through a template an older IAM granted to her.
	grantHosts(t, c, bkiam.Subject{Type: "user", ID: "carol"}, "view_host", "6")
	if err := sb.AddTemplatePolicy("bk_cmdb", sandbox.TemplatePolicy{TemplateID: 8, User: "carol", Action: "view_host",
		Paths: []string{"/bk_cmdb,host,11/"}}); err != nil {
		t.Fatal(err)
	}
	before := snapshotIAM(sb)

	generated, out := generate(t, w, listBlock("bkiam_instance_grant", "view_host", "system", "bk_cmdb", "action", "view_host")+
		listBlock("bkiam_group_permission", "platform", "system", "bk_cmdb", "grade_manager_id", fmt.Sprint(gm)))
	wantIn(t, "the generated configuration", generated,
		`resource "bkiam_group_permission" "platform_0"`, fmt.Sprintf(`group_id = "%d"`, web), `"4" = "4"`, `"5" = "5"`,
		`resource "bkiam_instance_grant" "view_host_0"`, `id = "bob"`)
	for _, unwanted := range []string{`"9"`, `type = "group"`, `"view_host_1"`, `"platform_1"`, "carol", `"11"`} {
		if strings.Contains(generated, unwanted) {
			t.Errorf("the generated configuration has %s: the group's policy generated twice, or its template's row claimed:\n%s", unwanted, generated)
		}
	}
	wantIn(t, "terraform query's output", out,
		fmt.Sprintf("group %d's grant of view_host is left out. bkiam_instance_grant lists users' grants. A group's custom policy is adopted by bkiam_group_permission", web),
		"Grant of user carol left out: several policies")
	importGenerated(t, w, sb, before, 2)
}

// TestAccQuerySyncGroup: a grade manager with sync_perm has a sync group
// ("platform administrator group") holding its scope (host 8) and its members. Every
// list that would adopt it leaves it out with a warning naming it and its
// grade manager: bkiam_group, bkiam_group_members and
// bkiam_group_permission by grade manager, and bkiam_group_permission by
// the sync group's id. The other group is adopted, and the apply only
// imports.
func TestAccQuerySyncGroup(t *testing.T) {
	acctest.Parallel(t)
	sb, c, w, gm := shapesWorkspace(t, true, "8")
	sync, err := c.GroupByName(context.Background(), "bk_cmdb", gm, "platform administrator group")
	if err != nil || sync == nil {
		t.Fatalf("the sandbox built no sync group: %v", err)
	}
	groups, err := c.CreateGroups(context.Background(), "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "ops"}})
	if err != nil {
		t.Fatal(err)
	}
	ops := groups[0]
	if err := c.AddMembers(context.Background(), "bk_cmdb", ops, []bkiam.MemberRef{{Type: "user", ID: "carol"}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	grantHosts(t, c, bkiam.Subject{Type: "group", ID: fmt.Sprint(ops)}, "edit_host", "3")
	before := snapshotIAM(sb)
	leftOut := func(kind string) string {
		return fmt.Sprintf(`Group "platform administrator group" (id %d), the sync group of grade manager "platform" (id %d), is left out of this list of %s.`, sync.ID, gm, kind)
	}

	// By its id: IAM has no route from a group to its grade manager.
	w.Write("sync.tfquery.hcl", listBlock("bkiam_group_permission", "sync", "system", "bk_cmdb", "group_id", fmt.Sprint(sync.ID)))
	out := strings.Join(strings.Fields(w.MustRun("query")), " ")
	if !strings.Contains(out, leftOut("permissions")) || strings.Contains(out, "list.bkiam_group_permission.sync ") {
		t.Errorf("terraform query listed the sync group's permissions by its id:\n%s", out)
	}
	w.Remove("sync.tfquery.hcl")

	generated, out := generate(t, w, gradeManagerLists("bk_cmdb", gm, "platform", "platform", "platform"))
	if strings.Contains(generated, fmt.Sprintf(`"%d"`, sync.ID)) || strings.Contains(generated, "administrator group") || strings.Contains(generated, `"8"`) {
		t.Errorf("the generated configuration adopts the sync group:\n%s", generated)
	}
	wantIn(t, "the generated configuration", generated, `name = "ops"`, `carol = "permanent"`, `"3" = "3"`)
	wantIn(t, "terraform query's output", out, leftOut("groups"), leftOut("members"), leftOut("permissions"))
	importGenerated(t, w, sb, before, 3)
}

// TestAccQueryRenamedSyncGroup: a sync group renamed in the IAM web UI
// ("platform admins") is still left out of every list that would adopt
// it, with the warning naming it under its new name: IAM's mark, which the
// v1 group list answers, tells it. A group that bears IAM's default name
// of the sync group without being it ("platform administrator group",
// made through the API after the rename) is adopted, with its member and
// permission, and the apply only imports. (Told by name, the lists
// adopted the renamed sync group, whose blocks would have fought IAM's
// rewrite of it, and left the other group out.)
func TestAccQueryRenamedSyncGroup(t *testing.T) {
	acctest.Parallel(t)
	sb, c, w, gm := shapesWorkspace(t, true, "8")
	ctx := context.Background()
	sync, err := c.GroupByName(ctx, "bk_cmdb", gm, "platform administrator group")
	if err != nil || sync == nil {
		t.Fatalf("the sandbox built no sync group: %v", err)
	}
	if err := sb.RenameGroup(sync.ID, "platform admins"); err != nil {
		t.Fatal(err)
	}
	groups, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "platform administrator group"}})
	if err != nil {
		t.Fatal(err)
	}
	namesake := groups[0]
	if err := c.AddMembers(ctx, "bk_cmdb", namesake, []bkiam.MemberRef{{Type: "user", ID: "carol"}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	grantHosts(t, c, bkiam.Subject{Type: "group", ID: fmt.Sprint(namesake)}, "edit_host", "3")
	before := snapshotIAM(sb)
	leftOut := func(kind string) string {
		return fmt.Sprintf(`Group "platform admins" (id %d), the sync group of grade manager "platform" (id %d), is left out of this list of %s.`, sync.ID, gm, kind)
	}

	w.Write("sync.tfquery.hcl", listBlock("bkiam_group_permission", "sync", "system", "bk_cmdb", "group_id", fmt.Sprint(sync.ID)))
	out := strings.Join(strings.Fields(w.MustRun("query")), " ")
	if !strings.Contains(out, leftOut("permissions")) || strings.Contains(out, "list.bkiam_group_permission.sync ") {
		t.Errorf("terraform query listed the renamed sync group's permissions by its id:\n%s", out)
	}
	w.Remove("sync.tfquery.hcl")

	generated, out := generate(t, w, gradeManagerLists("bk_cmdb", gm, "platform", "platform", "platform"))
	if strings.Contains(generated, fmt.Sprintf(`"%d"`, sync.ID)) || strings.Contains(generated, "platform admins") || strings.Contains(generated, `"8"`) ||
		strings.Contains(generated, "alice") {
		t.Errorf("the generated configuration adopts the renamed sync group:\n%s", generated)
	}
	wantIn(t, "the generated configuration", generated, `name = "platform administrator group"`, fmt.Sprintf(`group_id = "%d"`, namesake),
		`carol = "permanent"`, `"3" = "3"`)
	wantIn(t, "terraform query's output", out, leftOut("groups"), leftOut("members"), leftOut("permissions"))
	if strings.Contains(out, "told by its default name") {
		t.Errorf("terraform query fell back to the sync group's default name:\n%s", out)
	}
	importGenerated(t, w, sb, before, 3)
}

// TestAccQuerySyncGroupByName: an app that IAM does not allow the v1
// group list (the management API group_list), where IAM answers the sync
// group's mark, tells the sync group by IAM's default name only, and
// each group list says so in a warning that names what to allow; the
// group bearing the default name is then left out as the sync group.
func TestAccQuerySyncGroupByName(t *testing.T) {
	acctest.Parallel(t)
	m := sandbox.DefaultModel()
	for i := range m.Apps {
		if m.Apps[i].Code == sandboxtest.AppCode {
			m.Apps[i].Management = map[string][]string{"bk_cmdb": {"v2_grade_manager_create", "v2_grade_manager_detail", "v2_group_list",
				"v2_group_member_list", "group_policy_list", "grade_manager_list"}}
		}
	}
	raw, _ := json.Marshal(m)
	model, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	_, _, w, gm := shapesWorkspace(t, true, "8", sandbox.WithModel(model))
	w.Write("site.tfquery.hcl", gradeManagerLists("bk_cmdb", gm, "platform", "platform", "platform"))
	// -json, as Terraform folds warnings of one summary into the first.
	var warnings []string
	for _, line := range strings.Split(w.MustRun("query", "-json"), "\n") {
		var msg struct {
			Type       string `json:"type"`
			Diagnostic struct {
				Summary, Detail, Address string
			} `json:"diagnostic"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.Type == "diagnostic" {
			d := msg.Diagnostic
			warnings = append(warnings, d.Address+": "+d.Summary+": "+d.Detail)
		}
	}
	all := strings.Join(warnings, "\n")
	for _, kind := range []struct{ list, what string }{{"bkiam_group", "groups"}, {"bkiam_group_members", "members"}, {"bkiam_group_permission", "permissions"}} {
		wantIn(t, "terraform query's warnings", all,
			fmt.Sprintf(`list.%s.platform: Sync group told by its default name only: IAM marks the sync group of grade manager "platform" (id %d) only in its v1 group list, which could not be read:`, kind.list, gm),
			fmt.Sprintf(`This list of %s tells the sync group by IAM's default names instead, "platform administrator group" and "platform-管理员组"`, kind.what),
			fmt.Sprintf(`list.%s.platform: Sync group "platform administrator group" left out of the %s`, kind.list, kind.what))
	}
	wantIn(t, "terraform query's warnings", all, "management api[group_list]", "Allow the app IAM's management API group_list")
}

// TestAccQueryRefusedBlocks: no list generates a block the provider
// refuses at plan. A user granted the id "/srv" (through the
// authorization API, as a script might: IAM takes any id, the provider
// reads a key beginning with "/" as a path) and a group permission of the
// literal id * (the management API) are left out with a warning quoting
// the plan's error; what else they list is adopted.
func TestAccQueryRefusedBlocks(t *testing.T) {
	acctest.Parallel(t)
	sb, c, w, gm := shapesWorkspace(t, false, "*")
	groups, err := c.CreateGroups(context.Background(), "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "stars"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.GrantGroupPolicies(context.Background(), "bk_cmdb", groups[0], bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: "edit_host"}},
		Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "*"}}}}}}); err != nil {
		t.Fatal(err)
	}
	grantHosts(t, c, bkiam.Subject{Type: "user", ID: "dave"}, "view_host", "/srv")
	grantHosts(t, c, bkiam.Subject{Type: "user", ID: "bob"}, "view_host", "2")
	before := snapshotIAM(sb)

	generated, out := generate(t, w, listBlock("bkiam_instance_grant", "view_host", "system", "bk_cmdb", "action", "view_host")+
		listBlock("bkiam_group_permission", "platform", "system", "bk_cmdb", "grade_manager_id", fmt.Sprint(gm)))
	if strings.Contains(generated, `"*"`) || strings.Contains(generated, "/srv") || strings.Contains(generated, "dave") || strings.Contains(generated, "bkiam_group_permission") {
		t.Errorf("the generated configuration holds a block the provider refuses:\n%s", generated)
	}
	wantIn(t, "the generated configuration", generated, `id = "bob"`)
	wantIn(t, "terraform query's output", out,
		"user dave's grant of view_host is left out: the block generated from what IAM holds would fail to plan. An id that begins with /",
		fmt.Sprintf("Group %d's permission of edit_host is left out: the block generated from what IAM holds would fail to plan. The id * is literal", groups[0]))
	importGenerated(t, w, sb, before, 1)
}

// TestAccQueryActionWithoutResourceType: users' grants of an action
// related to no resource type (create_biz) are listed, with
// `resources = []` and their expiry, and import by the identity the
// list gives (resource_types = []) with no change to IAM and an empty
// plan after.
func TestAccQueryActionWithoutResourceType(t *testing.T) {
	acctest.Parallel(t)
	sb, c, w, _ := shapesWorkspace(t, false, "*")
	until := time.Now().Add(30 * 24 * time.Hour).Truncate(time.Second)
	for _, g := range []struct {
		user   string
		expiry int64
	}{{"alice", bkiam.PermanentExpiry}, {"bob", until.Unix()}} {
		if _, err := c.BatchInstance(context.Background(), bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant,
			Subject: bkiam.Subject{Type: "user", ID: g.user}, Actions: []bkiam.Action{{ID: "create_biz"}}, ExpiredAt: g.expiry}); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshotIAM(sb)
	generated, _ := generate(t, w, listBlock("bkiam_instance_grant", "create_biz", "system", "bk_cmdb", "action", "create_biz"))
	wantIn(t, "the generated configuration", generated, `id = "alice"`, `id = "bob"`, `resources = [ ]`, `resource_types = []`,
		`expires_at = "`+until.UTC().Format(time.RFC3339)+`"`)
	importGenerated(t, w, sb, before, 2)
}
