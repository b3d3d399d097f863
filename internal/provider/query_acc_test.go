package provider_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/demo"
	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
	"github.com/bkiam/terraform-provider-bkiam/internal/tfcli"
)

// fillSite fills the sandbox as the adoption guide's sandbox is filled
// (demo.FillExampleSite), through IAM's APIs.
func fillSite(t *testing.T, sb *sandboxtest.Sandbox) demo.ExampleSite {
	t.Helper()
	site, err := demo.FillExampleSite(context.Background(), acctest.OutsideClient(t, sb))
	if err != nil {
		t.Fatal(err)
	}
	return site
}

// adoptionWorkspace is where the adoption guide starts: a sandbox filled
// as a team's site is (fillSite), and a workspace whose CLI attaches to a
// provider served here, configured through the gateway with detect_drift.
func adoptionWorkspace(t *testing.T) (*sandboxtest.Sandbox, demo.ExampleSite, *acctest.CLIWorkspace) {
	t.Helper()
	sb := sandboxtest.Start(t)
	site := fillSite(t, sb)
	server, err := provider.NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	w := acctest.NewAttachedWorkspace(t, server)
	w.Configure(acctest.DriftProvider(sb, ""), "")
	return sb, site, w
}

// siteQuery lists everything FillExampleSite made but the grade manager, whose
// scopes IAM cannot read back (TestAccQuery lists it on its own).
func siteQuery(site demo.ExampleSite) string {
	return gradeManagerLists("bk_cmdb", site.GradeManager, "platform", "platform", "platform") +
		listBlock("bkiam_instance_grant", "view_host", "system", "bk_cmdb", "action", "view_host")
}

// listBlock is a list block of a query file: a list of kind named name,
// its config the attributes and values given in pairs (all strings).
func listBlock(kind, name string, attrs ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "list %q %q {\n  provider = bkiam\n  config {\n", kind, name)
	for i := 0; i+1 < len(attrs); i += 2 {
		fmt.Fprintf(&b, "    %s = %q\n", attrs[i], attrs[i+1])
	}
	b.WriteString("  }\n}\n\n")
	return b.String()
}

// gradeManagerLists are the list blocks of grade manager gm's groups,
// their members and their permissions, under the names given.
func gradeManagerLists(system string, gm int64, groups, members, permissions string) string {
	id := fmt.Sprint(gm)
	return listBlock("bkiam_group", groups, "system", system, "grade_manager_id", id) +
		listBlock("bkiam_group_members", members, "system", system, "grade_manager_id", id) +
		listBlock("bkiam_group_permission", permissions, "system", system, "grade_manager_id", id)
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
	return acctest.IAMWrites(sb)
}

// queryCLI is the CLI that runs terraform query: the one under test from
// Terraform 1.14, and on OpenTofu 1.12 (which has no query but imports by
// identity) the repository's Terraform 1.16, as the adoption guide has
// OpenTofu users do.
func queryCLI(t *testing.T) string {
	t.Helper()
	switch {
	case acctest.CLI.Terraform(1, 14):
		return testutil.Terraform(t)
	case acctest.CLI.Tofu(1, 12):
		path := filepath.Join(testutil.RepoRoot(t), "bin", "terraform-1.16")
		q, err := tfcli.Identify(context.Background(), path)
		if err != nil || !q.Terraform(1, 14) {
			t.Skipf("OpenTofu applies what Terraform 1.14+ generates, and %s is not one (%v): make tools builds it", path, err)
		}
		return path
	}
	t.Skipf("%s has neither terraform query (Terraform 1.14) nor import by identity (OpenTofu 1.12)", acctest.CLI)
	return ""
}

// TestAccQuery: a site filled through IAM's APIs is brought under
// Terraform as a newcomer would (docs/guides/adopt-a-site.md): terraform
// query lists it, -generate-config-out writes the resource and import
// blocks, and applying them imports everything without a call that
// changes IAM, records in state what IAM holds, and plans empty after.
// The grade manager, whose scopes IAM cannot read back, is listed with
// its identity and what IAM can read. Terraform 1.14 and later; on
// OpenTofu 1.12, Terraform 1.16 lists and generates and OpenTofu applies.
func TestAccQuery(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	querier := queryCLI(t)
	sb, site, w := adoptionWorkspace(t)
	applier := w.Terraform
	w.Terraform = querier
	before := snapshotIAM(sb)

	// The grade managers, listed on their own, and the groups holding
	// edit_host (IAM's action_id filter: dev, not ops).
	w.Write("gm.tfquery.hcl", listBlock("bkiam_grade_manager", "all", "system", "bk_cmdb")+
		listBlock("bkiam_group", "editors", "system", "bk_cmdb", "grade_manager_id", fmt.Sprint(site.GradeManager), "action", "edit_host"))
	out := w.MustRun("query")
	if !strings.Contains(out, fmt.Sprintf("list.bkiam_grade_manager.all   id=%d,system=bk_cmdb   platform", site.GradeManager)) {
		t.Fatalf("terraform query did not list the grade manager:\n%s", out)
	}
	if !strings.Contains(out, fmt.Sprintf("id=%d,system=bk_cmdb   dev", site.Dev)) || strings.Contains(out, "   ops") {
		t.Fatalf("terraform query did not list exactly the group holding edit_host:\n%s", out)
	}
	w.Remove("gm.tfquery.hcl")

	w.Write("site.tfquery.hcl", siteQuery(site))
	out = w.MustRun("query", "-generate-config-out=generated.tf")
	generated, err := os.ReadFile(filepath.Join(w.Dir, "generated.tf"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Terraform aligns the = of a block: compare with single spaces.
	flat := strings.Join(strings.Fields(string(generated)), " ")
	for _, want := range []string{
		`resource "bkiam_group" "platform_0"`, `name = "dev"`, `description = "developers"`,
		`resource "bkiam_group_members" "platform_0"`, `"2" = "permanent"`, `bob = "2031-06-30T00:00:00Z"`,
		`resource "bkiam_group_permission" "platform_0"`, `"/bk_cmdb,biz,2/bk_cmdb,host,*/" = "*"`,
		`resource "bkiam_instance_grant" "view_host_0"`, `expires_at = "2031-06-30T00:00:00Z"`,
		`identity = {`,
		// ops's view_host, granted through the authorization API, is
		// adopted by bkiam_group_permission, not by bkiam_instance_grant.
		fmt.Sprintf(`group_id = "%d"`, site.Ops), `actions = ["view_host"]`,
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the generated configuration has no %s:\n%s", want, generated)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	w.Remove("site.tfquery.hcl")

	if strings.Contains(flat, `type = "group"`) {
		t.Errorf("bkiam_instance_grant's list generated a group's grant, which bkiam_group_permission adopts:\n%s", generated)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), fmt.Sprintf("group %d's grant of view_host is left out", site.Ops)) {
		t.Errorf("terraform query did not say why ops's grant is left out of bkiam_instance_grant's list:\n%s", out)
	}
	w.Terraform = applier
	applyImportsOnly(t, w, sb, before, 8)
	// State is what IAM holds: each grant as the sandbox stores it.
	if err := acctest.CheckStateMatchesStore(w, sb, false, "user/alice", "user/dave"); err != nil {
		t.Error(err)
	}
}

// TestAccQueryAgain: Terraform generates a block for every result of a
// query, whatever state manages, so the adoption guide's second query
// passes each list block the identities Terraform holds (managed, from
// terraform state identities -json). Over a site adopted with TestAccQuery's
// steps, and then changed outside Terraform (a new group qa with a member,
// bob's grant of view_host, and a grant of edit_host to alice, whose
// view_host is managed), it generates exactly those four objects, with a
// warning for each managed one it leaves out; applying them imports the
// four without a call that changes IAM, and the plan after is empty.
// Without managed it generates all twelve.
func TestAccQueryAgain(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	querier := queryCLI(t)
	sb, site, w := adoptionWorkspace(t)
	applier := w.Terraform
	w.Terraform = querier
	before := snapshotIAM(sb)
	w.Write("site.tfquery.hcl", siteQuery(site))
	w.MustRun("query", "-generate-config-out=generated.tf")
	w.Remove("site.tfquery.hcl")
	w.Terraform = applier
	applyImportsOnly(t, w, sb, before, 8)

	ctx := context.Background()
	c := acctest.OutsideClient(t, sb)
	groups, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(site.GradeManager), []bkiam.GroupSpec{{Name: "qa"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddMembers(ctx, "bk_cmdb", groups[0], []bkiam.MemberRef{{Type: "user", ID: "dave"}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct{ user, action, host string }{{"bob", "view_host", "9"}, {"alice", "edit_host", "1"}} {
		if _, err := c.BatchInstance(ctx, bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant,
			Subject: bkiam.Subject{Type: "user", ID: g.user}, Actions: []bkiam.Action{{ID: g.action}},
			Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: g.host, Name: "host " + g.host}}}},
			ExpiredAt: bkiam.PermanentExpiry}); err != nil {
			t.Fatal(err)
		}
	}

	// The second query: new labels, as Terraform names generated blocks
	// after them and the first query's blocks are in the configuration.
	w.Terraform = querier
	w.Write("managed.json", w.MustRun("state", "identities", "-json"))
	again := gradeManagerLists("bk_cmdb", site.GradeManager, "again", "again", "again") +
		listBlock("bkiam_instance_grant", "again_view", "system", "bk_cmdb", "action", "view_host") +
		listBlock("bkiam_instance_grant", "again_edit", "system", "bk_cmdb", "action", "edit_host")
	blocks := func(file string) []string {
		generated, err := os.ReadFile(filepath.Join(w.Dir, file))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, line := range strings.Split(string(generated), "\n") {
			if strings.HasPrefix(line, "resource ") {
				out = append(out, strings.TrimSuffix(line, " {"))
			}
		}
		return out
	}
	w.Write("again.tfquery.hcl", again)
	w.MustRun("query", "-generate-config-out=unfiltered.tf")
	if got := blocks("unfiltered.tf"); len(got) != 12 {
		t.Fatalf("without managed the second query generated %d blocks, want all 12: %v", len(got), got)
	}
	w.Remove("unfiltered.tf")
	w.Write("again.tfquery.hcl", strings.ReplaceAll(again, "  config {\n", "  config {\n    managed = jsondecode(file(\"managed.json\"))\n"))
	out := w.MustRun("query", "-generate-config-out=again.tf")
	want := []string{`resource "bkiam_group" "again_0"`, `resource "bkiam_group_members" "again_0"`,
		`resource "bkiam_instance_grant" "again_view_0"`, `resource "bkiam_instance_grant" "again_edit_0"`}
	got := blocks("again.tf")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the second query generated %v, want %v\n%s", got, want, out)
	}
	// Terraform folds the warnings of one summary into the first.
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "Left out: already managed") ||
		!strings.Contains(flat, "manages it, as managed says") || !strings.Contains(flat, "more similar warnings") {
		t.Errorf("the second query did not warn that it left out what state manages:\n%s", out)
	}
	generated, _ := os.ReadFile(filepath.Join(w.Dir, "again.tf"))
	for _, w := range []string{`name = "qa"`, `dave = "permanent"`, `id = "bob"`, `"9" = "9"`, `actions = ["edit_host"]`} {
		if !strings.Contains(strings.Join(strings.Fields(string(generated)), " "), w) {
			t.Errorf("the second query's configuration has no %s:\n%s", w, generated)
		}
	}
	w.Remove("again.tfquery.hcl")
	w.Terraform = applier
	applyImportsOnly(t, w, sb, snapshotIAM(sb), 4)
}

// TestAccGenerateFromImportIDs: the adoption guide's path on every CLI,
// Terraform 1.5.7 included (no query, no identity): import blocks with
// the import IDs the resources document, and plan -generate-config-out
// writing the resource blocks from what the imports read. Applying them
// imports without a call that changes IAM, and the next plan is empty.
func TestAccGenerateFromImportIDs(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, site, w := adoptionWorkspace(t)
	w.Write("imports.tf", fmt.Sprintf(`
import {
  to = bkiam_group.dev
  id = "bk_cmdb/%[1]d/%[2]d"
}

import {
  to = bkiam_group_members.dev
  id = "bk_cmdb/%[2]d"
}

import {
  to = bkiam_group_permission.dev_edit
  id = "bk_cmdb/%[2]d/edit_host"
}

import {
  to = bkiam_instance_grant.alice_view
  id = "bk_cmdb/user/alice/view_host/bk_cmdb/host"
}

import {
  to = bkiam_instance_grant.ops_view
  id = "bk_cmdb/group/%[3]d/view_host/bk_cmdb/host"
}
`, site.GradeManager, site.Dev, site.Ops))
	before := snapshotIAM(sb)
	out, _ := w.Run("plan", "-generate-config-out=generated.tf")
	generated, err := os.ReadFile(filepath.Join(w.Dir, "generated.tf"))
	if err != nil {
		t.Fatalf("%s wrote no configuration: %v\n%s", acctest.CLI, err, out)
	}
	flat := strings.Join(strings.Fields(string(generated)), " ")
	for _, want := range []string{`resource "bkiam_group" "dev"`, `description = "developers"`, `bob = "2031-06-30T00:00:00Z"`,
		`"/bk_cmdb,biz,2/bk_cmdb,host,*/" = "*"`, `resource "bkiam_instance_grant" "ops_view"`} {
		if !strings.Contains(flat, want) {
			t.Errorf("the generated configuration has no %s:\n%s", want, generated)
		}
	}
	applyImportsOnly(t, w, sb, before, 5)
}

// applyImportsOnly applies the generated configuration in w and checks
// what the adoption guide promises: exactly n objects imported and nothing
// else, no call that changes IAM, IAM's state as it was (before), and an
// empty plan after.
func applyImportsOnly(t *testing.T, w *acctest.CLIWorkspace, sb *sandboxtest.Sandbox, before iamSnapshot, n int) {
	t.Helper()
	checkImportsOnly(t, w, sb, before, n, func() string { return w.MustRun("apply", "-auto-approve") })
}

// applySavedImportsOnly is applyImportsOnly down the saved plan's path:
// terraform plan -out, then terraform apply of that plan.
func applySavedImportsOnly(t *testing.T, w *acctest.CLIWorkspace, sb *sandboxtest.Sandbox, before iamSnapshot, n int) {
	t.Helper()
	checkImportsOnly(t, w, sb, before, n, func() string {
		w.MustRun("plan", "-out=adopt.tfplan")
		return w.MustRun("apply", "adopt.tfplan")
	})
}

// checkImportsOnly runs apply and checks what applyImportsOnly promises.
func checkImportsOnly(t *testing.T, w *acctest.CLIWorkspace, sb *sandboxtest.Sandbox, before iamSnapshot, n int, apply func() string) {
	t.Helper()
	writesBefore := iamWrites(sb)
	out := apply()
	if want := fmt.Sprintf("%d imported, 0 added, 0 changed, 0 destroyed", n); !strings.Contains(out, want) {
		t.Errorf("the apply of the generated configuration did not import exactly the %d objects:\n%s", n, out)
	}
	if writes := iamWrites(sb) - writesBefore; writes != 0 {
		t.Errorf("importing the site sent %d calls that change IAM", writes)
	}
	if after := snapshotIAM(sb); !reflect.DeepEqual(before, after) {
		t.Errorf("importing the site changed IAM:\nbefore %+v\nafter  %+v", before, after)
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after importing the site is not empty")
	}
}
