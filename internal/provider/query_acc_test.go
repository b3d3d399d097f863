package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// existingSite is what a team's IAM holds before it picks up the
// provider, made through IAM's APIs, not through Terraform.
type existingSite struct {
	gradeManager, dev, ops int64
}

// fillSite makes, as the IAM web UI and scripts would: a grade manager
// of bk_cmdb with two groups; dev's members (a user for good, another
// until a date, a department) and its permissions (edit_host on a host
// by id and on every host of business 2); ops's member; and users' and a
// group's custom grants of view_host on hosts.
func fillSite(t *testing.T, sb *sandboxtest.Sandbox) existingSite {
	t.Helper()
	ctx := context.Background()
	c := outsideClient(t, sb)
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", bkiam.GradeManagerSpec{Name: "platform", Description: "the platform team",
		Members: []string{"alice"},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "view_host"}, {ID: "edit_host"}},
			Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{
				{{System: "bk_cmdb", Type: "biz", ID: "2"}, {System: "bk_cmdb", Type: "host", ID: "*"}},
				{{System: "bk_cmdb", Type: "host", ID: "*"}}}}}}},
		SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		t.Fatal(err)
	}
	groups, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "dev", Description: "developers"}, {Name: "ops"}})
	if err != nil {
		t.Fatal(err)
	}
	site := existingSite{gradeManager: gm, dev: groups[0], ops: groups[1]}
	until := time.Date(2031, 6, 30, 0, 0, 0, 0, time.UTC).Unix()
	for _, add := range []struct {
		group   int64
		members []bkiam.MemberRef
		expiry  int64
	}{
		{site.dev, []bkiam.MemberRef{{Type: "user", ID: "alice"}, {Type: "department", ID: "2"}}, bkiam.PermanentExpiry},
		{site.dev, []bkiam.MemberRef{{Type: "user", ID: "bob"}}, until},
		{site.ops, []bkiam.MemberRef{{Type: "user", ID: "carol"}}, bkiam.PermanentExpiry},
	} {
		if err := c.AddMembers(ctx, "bk_cmdb", add.group, add.members, add.expiry); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.GrantGroupPolicies(ctx, "bk_cmdb", site.dev, bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: "edit_host"}},
		Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{
			{{System: "bk_cmdb", Type: "host", ID: "7", Name: "host7"}},
			{{System: "bk_cmdb", Type: "biz", ID: "2", Name: "biz2"}, {System: "bk_cmdb", Type: "host", ID: "*"}}}}}}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		subject bkiam.Subject
		ids     []string
		expiry  int64
	}{
		{bkiam.Subject{Type: "user", ID: "alice"}, []string{"1", "2"}, bkiam.PermanentExpiry},
		{bkiam.Subject{Type: "user", ID: "dave"}, []string{"3"}, until},
		{bkiam.Subject{Type: "group", ID: fmt.Sprint(site.ops)}, []string{"4", "5"}, bkiam.PermanentExpiry},
	} {
		var instances []bkiam.Instance
		for _, id := range g.ids {
			instances = append(instances, bkiam.Instance{ID: id, Name: "host " + id})
		}
		if _, err := c.BatchInstance(ctx, bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant, Subject: g.subject,
			Actions: []bkiam.Action{{ID: "view_host"}}, Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: instances}},
			ExpiredAt: g.expiry}); err != nil {
			t.Fatal(err)
		}
	}
	return site
}

// siteQuery lists everything fillSite made but the grade manager, whose
// scopes IAM cannot read back (TestAccQuery lists it on its own).
func siteQuery(site existingSite) string {
	return fmt.Sprintf(`list "bkiam_group" "platform" {
  provider = bkiam
  config {
    system           = "bk_cmdb"
    grade_manager_id = "%[1]d"
  }
}

list "bkiam_group_members" "platform" {
  provider = bkiam
  config {
    system           = "bk_cmdb"
    grade_manager_id = "%[1]d"
  }
}

list "bkiam_group_permission" "dev" {
  provider = bkiam
  config {
    system   = "bk_cmdb"
    group_id = "%[2]d"
  }
}

list "bkiam_instance_grant" "view_host" {
  provider = bkiam
  config {
    system = "bk_cmdb"
    action = "view_host"
  }
}
`, site.gradeManager, site.dev)
}

// iamSnapshot is everything the sandbox holds that Terraform could change.
type iamSnapshot struct {
	management sandbox.ManagementView
	policies   sandbox.PolicyList
}

func snapshotIAM(sb *sandboxtest.Sandbox) iamSnapshot {
	return iamSnapshot{sb.Management(), sb.Policies(sandbox.PolicyFilter{})}
}

// iamWrites counts the calls that change IAM.
func iamWrites(sb *sandboxtest.Sandbox) int {
	n := 0
	for key, count := range sb.Stats().Requests {
		if !strings.HasSuffix(key, ":list") && !strings.HasSuffix(key, ":get") && !slices.Contains([]string{"policy_list", "policy_get", "model_query", "group_policy:actions"}, key) {
			n += count
		}
	}
	return n
}

// TestAccQuery: a site filled through IAM's APIs is brought under
// Terraform as a newcomer would (docs/guides/adopt-a-site.md): terraform
// query lists it, -generate-config-out writes the resource and import
// blocks, and applying them imports everything without a call that
// changes IAM, records in state what IAM holds, and plans empty after.
// The grade manager, whose scopes IAM cannot read back, is listed with
// its identity and what IAM can read. Terraform 1.14 and later.
func TestAccQuery(t *testing.T) {
	needsSandbox(t)
	if !cli.Terraform(1, 14) {
		t.Skipf("%s has no terraform query (Terraform 1.14)", cli)
	}
	sb := sandboxtest.Start(t)
	site := fillSite(t, sb)
	server, err := NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	w := newAttachedWorkspace(t, server)
	w.configure(driftProvider(sb, ""), "")
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(w.dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshotIAM(sb)

	// The grade managers, listed on their own.
	write("gm.tfquery.hcl", `list "bkiam_grade_manager" "all" {
  provider = bkiam
  config {
    system = "bk_cmdb"
  }
}
`)
	out := w.mustRun("query")
	if !strings.Contains(out, fmt.Sprintf("list.bkiam_grade_manager.all   id=%d,system=bk_cmdb   platform", site.gradeManager)) {
		t.Fatalf("terraform query did not list the grade manager:\n%s", out)
	}
	if err := os.Remove(filepath.Join(w.dir, "gm.tfquery.hcl")); err != nil {
		t.Fatal(err)
	}

	write("site.tfquery.hcl", siteQuery(site))
	out = w.mustRun("query", "-generate-config-out=generated.tf")
	generated, err := os.ReadFile(filepath.Join(w.dir, "generated.tf"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Terraform aligns the = of a block: compare with single spaces.
	flat := strings.Join(strings.Fields(string(generated)), " ")
	for _, want := range []string{
		`resource "bkiam_group" "platform_0"`, `name = "dev"`, `description = "developers"`,
		`resource "bkiam_group_members" "platform_0"`, `"2" = "permanent"`, `bob = "2031-06-30T00:00:00Z"`,
		`resource "bkiam_group_permission" "dev_0"`, `"/bk_cmdb,biz,2/bk_cmdb,host,*/" = "*"`,
		`resource "bkiam_instance_grant" "view_host_0"`, `expires_at = "2031-06-30T00:00:00Z"`,
		`identity = {`,
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the generated configuration has no %s:\n%s", want, generated)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if err := os.Remove(filepath.Join(w.dir, "site.tfquery.hcl")); err != nil {
		t.Fatal(err)
	}

	writesBefore := iamWrites(sb)
	out = w.mustRun("apply", "-auto-approve")
	if !strings.Contains(out, "8 imported, 0 added, 0 changed, 0 destroyed") {
		t.Errorf("the apply of the generated configuration did not import exactly the 8 objects:\n%s", out)
	}
	if n := iamWrites(sb) - writesBefore; n != 0 {
		t.Errorf("importing the site sent %d calls that change IAM", n)
	}
	if after := snapshotIAM(sb); !reflect.DeepEqual(before, after) {
		t.Errorf("importing the site changed IAM:\nbefore %+v\nafter  %+v", before, after)
	}
	if !w.planIsEmpty() {
		t.Fatal("the plan after importing the site is not empty")
	}
	// State is what IAM holds: each grant as the sandbox stores it.
	if err := checkStateMatchesStore(w, sb, false, "user/alice", "user/dave", fmt.Sprintf("group/%d", site.ops)); err != nil {
		t.Error(err)
	}
}
