package examples

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccHandover runs the handover module (examples/modules/handover,
// docs/guides/handover.md) on the CLI under test against a site filled
// through IAM's APIs: bob, who leaves, is in dev until 2031-06-30 and in
// ops for good, and in a third group the handover leaves alone; his
// department (3) is in dev too; he holds view_host on hosts 1 and 2 until
// 2031-06-30 and edit_host on host 3 for good. dave takes over. The root
// configuration adopts bob's side with import blocks, as the guide does.
//   - Before: dave holds nothing.
//   - A plan whose groups say bob is in dev for good (IAM: until
//     2031-06-30) shows bob's resources imported and the change to his
//     expiry, and sends nothing.
//   - Phase overlap, a reviewed plan applied: the plan imports bob's three
//     resources and changes none of them; the apply sends no write but
//     dave's (two member adds, two grants); dave is in dev and ops until
//     bob's exact expiries, and holds bob's grants with their expiries;
//     bob's memberships, grants and expiries are as they were. Both hold
//     access.
//   - Phase complete, with IAM refusing the second call of the apply: the
//     apply fails half way; dave still holds everything, and the re-apply
//     finishes.
//   - After: bob is in neither dev nor ops and holds no grant of the two
//     actions; dave holds all; bob's third group and his department's
//     membership in dev are untouched; the plan is empty.
func TestAccHandover(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	c := acctest.OutsideClient(t, sb)
	gm, dev := acctest.OutsideGroup(t, c, "platform", "dev")
	ids, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "ops"}, {Name: "release"}})
	if err != nil {
		t.Fatal(err)
	}
	ops, release := ids[0], ids[1]
	until := time.Date(2031, 6, 30, 0, 0, 0, 0, time.UTC).Unix()
	perm := bkiam.PermanentExpiry
	for _, add := range []struct {
		group  int64
		member bkiam.MemberRef
		expiry int64
	}{
		{dev, bkiam.MemberRef{Type: "user", ID: "bob"}, until},
		{dev, bkiam.MemberRef{Type: "department", ID: "3"}, perm},
		{ops, bkiam.MemberRef{Type: "user", ID: "bob"}, perm},
		{release, bkiam.MemberRef{Type: "user", ID: "bob"}, perm},
	} {
		if err := c.AddMembers(ctx, "bk_cmdb", add.group, []bkiam.MemberRef{add.member}, add.expiry); err != nil {
			t.Fatal(err)
		}
	}
	grant := func(action string, expiry int64, hosts ...string) {
		t.Helper()
		var instances []bkiam.Instance
		for _, h := range hosts {
			instances = append(instances, bkiam.Instance{ID: h, Name: "host " + h})
		}
		if _, err := c.BatchInstance(ctx, bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant, ExpiredAt: expiry,
			Subject: bkiam.Subject{Type: "user", ID: "bob"}, Actions: []bkiam.Action{{ID: action}},
			Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: instances}}}); err != nil {
			t.Fatal(err)
		}
	}
	grant("view_host", until, "1", "2")
	grant("edit_host", perm, "3")

	// members is which of the three groups member ("user:bob") is in,
	// each until when.
	members := func(member string) map[int64]int64 {
		got := map[int64]int64{}
		for _, g := range []int64{dev, ops, release} {
			for _, m := range sb.Members(g) {
				if m.Type+":"+m.ID == member {
					got[g] = m.ExpiredAt
				}
			}
		}
		return got
	}
	// grants is what user holds of the two actions: action → paths and expiry.
	grants := func(user string) map[string]string {
		got := map[string]string{}
		for _, p := range sb.Policies(sandbox.PolicyFilter{System: "bk_cmdb", SubjectType: "user", SubjectID: user}).Policies {
			if p.Action == "view_host" || p.Action == "edit_host" {
				got[p.Action] = fmt.Sprintf("%s until %d", strings.Join(slices.Sorted(slices.Values(p.Paths)), " "), p.ExpiredAt)
			}
		}
		return got
	}
	bobsGroups := map[int64]int64{dev: until, ops: perm, release: perm}
	handed := map[int64]int64{dev: until, ops: perm}
	bobsGrants := map[string]string{
		"view_host": fmt.Sprintf("/bk_cmdb,host,1/ /bk_cmdb,host,2/ until %d", until),
		"edit_host": fmt.Sprintf("/bk_cmdb,host,3/ until %d", perm),
	}
	expect := func(when string, user string, gotGroups, wantGroups map[int64]int64, gotGrants, wantGrants map[string]string) {
		t.Helper()
		if !maps.Equal(gotGroups, wantGroups) {
			t.Errorf("%s: %s is in %v, want %v", when, user, gotGroups, wantGroups)
		}
		if !maps.Equal(gotGrants, wantGrants) {
			t.Errorf("%s: %s holds %v, want %v", when, user, gotGrants, wantGrants)
		}
	}
	department := func(when string) {
		t.Helper()
		if got := members("department:3"); !maps.Equal(got, map[int64]int64{dev: perm}) {
			t.Errorf("%s: department 3 is in %v, want dev alone, for good", when, got)
		}
	}
	expect("before", "dave", members("user:dave"), map[int64]int64{}, grants("dave"), map[string]string{})

	providerDir := testutil.BuildProvider(t)
	w := acctest.NewCLIWorkspace(t, providerDir)
	if err := os.CopyFS(filepath.Join(w.Dir, "handover"), os.DirFS(filepath.Join(testutil.RepoRoot(t), "examples", "modules", "handover"))); err != nil {
		t.Fatal(err)
	}
	// bob's side is adopted, as the guide does, by import blocks of the
	// root configuration: the long import ID of a grant needs detect_drift.
	configure := func(phase, devExpiry string) {
		w.Configure(acctest.DriftProvider(sb, ""), fmt.Sprintf(`
module "handover" {
  source    = "./handover"
  system    = "bk_cmdb"
  leaver    = "bob"
  successor = "dave"
  groups    = { %q = %q, %q = "permanent" }
  grants = {
    view = {
      actions    = ["view_host"]
      resources  = [{ system = "bk_cmdb", type = "host", instances = { "1" = "1", "2" = "2" } }]
      expires_at = "2031-06-30T00:00:00Z"
    }
    edit = {
      actions   = ["edit_host"]
      resources = [{ system = "bk_cmdb", type = "host", instances = { "3" = "3" } }]
    }
  }
  phase = %q
}
`, fmt.Sprint(dev), devExpiry, fmt.Sprint(ops), phase))
	}
	imports := fmt.Sprintf(`import {
  to = module.handover.bkiam_user_groups.leaver[0]
  id = "bk_cmdb/user/bob/%d,%d"
}

import {
  to = module.handover.bkiam_instance_grant.leaver["view"]
  id = "bk_cmdb/user/bob/view_host/bk_cmdb/host"
}

import {
  to = module.handover.bkiam_instance_grant.leaver["edit"]
  id = "bk_cmdb/user/bob/edit_host/bk_cmdb/host"
}
`, dev, ops)
	leaverAddrs := []string{
		"module.handover.bkiam_user_groups.leaver[0]",
		`module.handover.bkiam_instance_grant.leaver["view"]`,
		`module.handover.bkiam_instance_grant.leaver["edit"]`,
	}
	// policyIDs is bob's policy id of each of the two actions: a grant
	// sent again would keep them, so they are checked beside the calls.
	policyIDs := func() map[string]int64 {
		got := map[string]int64{}
		for _, p := range sb.Policies(sandbox.PolicyFilter{System: "bk_cmdb", SubjectType: "user", SubjectID: "bob"}).Policies {
			got[p.Action] = p.PolicyID
		}
		return got
	}
	bobsPolicies := policyIDs()
	configure("overlap", "permanent")
	w.Write("imports.tf", imports)
	// terraform get installs the module (the provider comes from
	// dev_overrides, which init would look up in a registry on the older
	// CLIs); the workspace's commands all take -input, which get does not.
	get := exec.Command(w.Terraform, "get", "-no-color")
	testutil.EndWithTest(get)
	get.Dir, get.Env = w.Dir, append(os.Environ(), "TF_CLI_CONFIG_FILE="+filepath.Join(w.Dir, "terraform.tfrc"), "CHECKPOINT_DISABLE=1")
	if out, err := get.CombinedOutput(); err != nil {
		t.Fatalf("get: %v\n%s", err, out)
	}
	calls := acctest.NewCallCounter(sb)
	calls.Reset()
	writes := func() map[string]int {
		got := map[string]int{}
		for kind, n := range calls.SinceLast() {
			if !acctest.IsRead(kind) {
				got[kind] = n
			}
		}
		return got
	}

	// groups says bob is in dev for good; IAM holds until 2031-06-30. The
	// plan imports bob's side and shows the expiry it would change on him.
	out := w.MustRun("plan")
	for _, addr := range leaverAddrs[1:] {
		if !strings.Contains(out, "# "+addr+" will be imported") {
			t.Errorf("the plan does not import %s:\n%s", addr, out)
		}
	}
	if !strings.Contains(out, fmt.Sprintf("# %s will be updated in-place\n  # (imported from \"bk_cmdb/user/bob/%d,%d\")", leaverAddrs[0], dev, ops)) ||
		!strings.Contains(out, fmt.Sprintf(`~ "%d" = "2031-06-30T00:00:00Z" -> "permanent"`, dev)) {
		t.Errorf("the plan does not show bob's groups imported and the change to his expiry in dev:\n%s", out)
	}
	if got := writes(); len(got) != 0 {
		t.Errorf("the plan wrote to IAM: %v", got)
	}

	// Phase overlap as the guide runs it, with bob's expiries as IAM holds
	// them: a reviewed plan that imports bob's side and changes none of it.
	configure("overlap", "2031-06-30T00:00:00Z")
	out = w.MustRun("plan", "-out=overlap.tfplan")
	for _, addr := range leaverAddrs {
		if !strings.Contains(out, "# "+addr+" will be imported") {
			t.Errorf("the overlap's plan does not import %s:\n%s", addr, out)
		}
		for _, change := range []string{"created", "updated in-place", "destroyed", "must be replaced"} {
			if strings.Contains(out, "# "+addr+" will be "+change) || strings.Contains(out, "# "+addr+" "+change) {
				t.Errorf("the overlap's plan: %s %s:\n%s", addr, change, out)
			}
		}
	}
	if !strings.Contains(out, "Plan: 3 to import, 3 to add, 0 to change, 0 to destroy.") {
		t.Errorf("the overlap's plan is not 3 imports and dave's 3 resources:\n%s", out)
	}
	calls.Reset()
	w.MustRun("apply", "overlap.tfplan")
	// dave's two memberships and two grants, and nothing for bob.
	if got, want := writes(), map[string]int{"member:add": 2, "batch_instance:grant": 2}; !maps.Equal(got, want) {
		t.Errorf("the overlap's apply wrote %v, want dave's alone, %v", got, want)
	}
	if got := policyIDs(); !maps.Equal(got, bobsPolicies) {
		t.Errorf("overlap: bob's policies are %v, were %v", got, bobsPolicies)
	}
	expect("overlap", "bob", members("user:bob"), bobsGroups, grants("bob"), bobsGrants)
	expect("overlap", "dave", members("user:dave"), handed, grants("dave"), bobsGrants)
	department("overlap")
	if !w.PlanIsEmpty() {
		t.Error("the plan after the overlap's apply is not empty")
	}

	// Phase complete as the guide runs it, a reviewed plan applied, with
	// IAM refusing the apply's second call.
	// The import blocks go with the leaver's resources: an import block
	// whose target is not in the configuration is an error.
	configure("complete", "2031-06-30T00:00:00Z")
	w.Remove("imports.tf")
	w.MustRun("plan", "-out=complete.tfplan")
	if err := sb.SetFaults(sandbox.Faults{SpareReads: true, Fail: &sandbox.FailFault{After: 1, Count: 1, Status: 400, Code: 1902412}}); err != nil {
		t.Fatal(err)
	}
	out, code := w.Run("apply", "complete.tfplan")
	if err := sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	if code == 0 || !strings.Contains(out, "fault injected by the sandbox") {
		t.Fatalf("the apply IAM refused a call of did not fail with IAM's refusal (exit %d):\n%s", code, out)
	}
	expect("complete, failed half way", "dave", members("user:dave"), handed, grants("dave"), bobsGrants)
	// Half way: bob lost some of what the module holds of his, not all.
	kept := len(members("user:bob")) - 1 + len(grants("bob"))
	if kept == 0 || kept == len(handed)+len(bobsGrants) {
		t.Errorf("the failed apply was not half way: bob keeps %v and %v\n%s", members("user:bob"), grants("bob"), out)
	}
	w.MustRun("apply", "-auto-approve")
	expect("complete", "bob", members("user:bob"), map[int64]int64{release: perm}, grants("bob"), map[string]string{})
	expect("complete", "dave", members("user:dave"), handed, grants("dave"), bobsGrants)
	department("complete")
	if !w.PlanIsEmpty() {
		t.Error("the plan after the completion is not empty")
	}
}
