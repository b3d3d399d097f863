package management_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// groupHeld is what the sandbox holds for the group "dev": action → paths.
func groupHeld(sb *sandboxtest.Sandbox) map[string][]string {
	out := map[string][]string{}
	for _, gm := range sb.GradeManagers() {
		for _, g := range sb.Groups(gm.ID) {
			if g.Name != "dev" {
				continue
			}
			for _, p := range sb.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: fmt.Sprint(g.ID)}).Policies {
				out[p.Action] = p.Paths
			}
		}
	}
	return out
}

func checkGroupHeld(sb *sandboxtest.Sandbox, want map[string][]string) func(*terraform.State) error {
	return func(*terraform.State) error {
		if got := groupHeld(sb); !mapsOfSlicesEqual(got, want) {
			return fmt.Errorf("the group holds %v, want %v", got, want)
		}
		return nil
	}
}

func mapsOfSlicesEqual(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

const (
	host5 = "/bk_cmdb,biz,2/bk_cmdb,host,5/"
	host6 = "/bk_cmdb,biz,2/bk_cmdb,host,6/"
	host7 = "/bk_cmdb,host,7/"
)

// TestAccGroupPermission is the life of a group's permissions: instances by id and by path,
// granted; moved between two resources' actions in one apply; revoked outside Terraform (drift
// shows, and the next apply grants it again); imported from what IAM lists; destroyed.
func TestAccGroupPermission(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	client := acctest.OutsideClient(t, sb)
	step1 := provider + acctest.PermissionBase + acctest.PermissionHCL("viewers", []string{"view_host"}, map[string]string{"7": "host7", host5: "host5"}) + acctest.PermissionHCL("editors", []string{"edit_host"}, map[string]string{host6: "host6"})
	// Instances move between the two resources' actions.
	step2 := provider + acctest.PermissionBase + acctest.PermissionHCL("viewers", []string{"view_host"}, map[string]string{host6: "host6"}) + acctest.PermissionHCL("editors", []string{"edit_host"}, map[string]string{"7": "host7", host5: "host5"})
	group := func() int64 {
		for _, g := range sb.Groups(sb.GradeManagers()[0].ID) {
			if g.Name == "dev" {
				return g.ID
			}
		}
		t.Fatal("no group dev")
		return 0
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: step1, Check: checkGroupHeld(sb, map[string][]string{"view_host": {host5, host7}, "edit_host": {host6}})},
			{Config: step2, Check: checkGroupHeld(sb, map[string][]string{"view_host": {host6}, "edit_host": {host5, host7}})},
			{
				// Drift: host 7 revoked outside Terraform.
				PreConfig: func() {
					if err := client.RevokeGroupPolicies(context.Background(), "bk_cmdb", group(), bkiam.GroupPolicyRequest{
						Actions: []bkiam.Action{{ID: "edit_host"}},
						Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host",
							Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "7"}}}}},
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config:             step2,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{Config: step2, Check: checkGroupHeld(sb, map[string][]string{"view_host": {host6}, "edit_host": {host5, host7}})},
			{
				ResourceName: "bkiam_group_permission.editors", ImportState: true,
				ImportStateIdFunc: func(*terraform.State) (string, error) { return fmt.Sprintf("bk_cmdb/%d/edit_host", group()), nil },
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 {
						return fmt.Errorf("imported %d states", len(states))
					}
					a := states[0].Attributes
					if a["resources.0.instances.%"] != "2" || a["resources.0.instances.7"] == "" || a["resources.0.instances."+host5] == "" ||
						a["actions.#"] != "1" || a["group_id"] != fmt.Sprint(group()) {
						return fmt.Errorf("imported %v", a)
					}
					return nil
				},
			},
		},
		CheckDestroy: func(*terraform.State) error {
			if n := len(sb.Policies(sandbox.PolicyFilter{SubjectType: "group"}).Policies); n != 0 {
				return fmt.Errorf("after destroy groups hold %d policies", n)
			}
			return nil
		},
	})
}

// groupPermissionOfAnotherSystem is a grade manager of bk_cmdb whose scope holds bk_job's actions
// (the sandbox lets bk_cmdb authorize bk_job), its group, and the group's view permission on jobs
// ids, routed through groupSystem's management API when it is not "".
func groupPermissionOfAnotherSystem(groupSystem string, ids ...string) string {
	var inst []string
	for _, id := range ids {
		inst = append(inst, fmt.Sprintf("%q = \"job %s\"", id, id))
	}
	gs := ""
	if groupSystem != "" {
		gs = fmt.Sprintf("  group_system = %q\n", groupSystem)
	}
	return fmt.Sprintf(`
resource "bkiam_grade_manager" "platform" {
  system  = "bk_cmdb"
  name    = "platform"
  members = ["alice"]
  authorization_scopes = [
    { system = "bk_cmdb", actions = ["create_biz"], resources = [] },
    { system = "bk_job", actions = ["view", "edit"], resources = [{ system = "bk_job", type = "job", all_instances = true }] },
  ]
  subject_scopes = [{ type = "*", id = "*" }]
}

resource "bkiam_group" "dev" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = "dev"
}

resource "bkiam_group_permission" "jobs" {
  system    = "bk_job"
%s  group_id  = bkiam_group.dev.id
  actions   = ["view"]
  resources = [{ system = "bk_job", type = "job", instances = { %s } }]
}
`, gs, strings.Join(inst, ", "))
}

// groupJobsHeld checks that the sandbox's groups hold view on exactly want in bk_job.
func groupJobsHeld(sb *sandboxtest.Sandbox, want ...string) func(*terraform.State) error {
	return func(*terraform.State) error {
		var got []string
		for _, p := range sb.Policies(sandbox.PolicyFilter{SubjectType: "group", System: "bk_job"}).Policies {
			got = append(got, p.Action+" "+strings.Join(p.Paths, " "))
		}
		if w := []string{"view " + strings.Join(want, " ")}; len(want) > 0 && !slices.Equal(got, w) || len(want) == 0 && len(got) != 0 {
			return fmt.Errorf("the group holds %v in bk_job, want view on %v", got, want)
		}
		return nil
	}
}

// TestAccGroupPermissionOfAnotherSystem: a group of bk_cmdb's grade manager is granted bk_job's
// actions. IAM checks ownership by the grade manager's creator, not the path's system, so an app
// that is a client of both goes through bk_job's path: create and change send the difference, and
// refresh reads them back there (IAM lists only the path system's permissions), so a permission
// revoked outside Terraform is granted again. With group_system the calls go through bk_cmdb's path
// instead, where refresh cannot list bk_job's permissions and trusts state without a call.
func TestAccGroupPermissionOfAnotherSystem(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the calls the provider sends")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	client := acctest.OutsideClient(t, sb)
	var lists int
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: provider + groupPermissionOfAnotherSystem("", "j1", "j2"), Check: groupJobsHeld(sb, "/bk_job,job,j1/", "/bk_job,job,j2/")},
			{
				// Revoked outside Terraform: the refresh through bk_job's path sees it, the apply grants it again.
				PreConfig: func() {
					ps := sb.Policies(sandbox.PolicyFilter{SubjectType: "group", System: "bk_job"}).Policies
					if len(ps) != 1 {
						t.Fatalf("the group's bk_job policies: %+v", ps)
					}
					group, _ := strconv.ParseInt(ps[0].Subject.ID, 10, 64)
					if err := client.RevokeGroupPolicies(context.Background(), "bk_job", group, bkiam.GroupPolicyRequest{System: "bk_job",
						Actions: []bkiam.Action{{ID: "view"}}, Resources: []bkiam.PathResource{{System: "bk_job", Type: "job",
							Paths: [][]bkiam.PathNode{{{System: "bk_job", Type: "job", ID: "j1"}}}}}}); err != nil {
						t.Fatal(err)
					}
				},
				Config: provider + groupPermissionOfAnotherSystem("", "j1", "j2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("bkiam_group_permission.jobs", plancheck.ResourceActionUpdate),
				}},
				Check: groupJobsHeld(sb, "/bk_job,job,j1/", "/bk_job,job,j2/"),
			},
			{Config: provider + groupPermissionOfAnotherSystem("bk_cmdb", "j2", "j3"), Check: groupJobsHeld(sb, "/bk_job,job,j2/", "/bk_job,job,j3/")},
			{
				PreConfig:    func() { lists = sb.Stats().Requests["group_policy:list"] },
				RefreshState: true,
				Check: func(*terraform.State) error {
					if n := sb.Stats().Requests["group_policy:list"] - lists; n != 0 {
						return fmt.Errorf("the refresh listed the group's permissions %d times; IAM lists only bk_cmdb's", n)
					}
					return nil
				},
			},
		},
		CheckDestroy: groupJobsHeld(sb),
	})
}

// TestAccGroupPermissionNotClientOfActionsSystem: for an app that is not a client of the actions'
// system, IAM refuses bk_job's path ("can not access system bk_job"), and the error names
// group_system; through the grade manager's creator (group_system = "bk_cmdb") create, change and
// destroy work.
func TestAccGroupPermissionNotClientOfActionsSystem(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM refuses and how the provider words it")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	m := sandbox.DefaultModel()
	for i := range m.Apps {
		if m.Apps[i].Code == sandboxtest.AppCode {
			m.Apps[i].ClientOf = []string{"bk_cmdb", "bk_sops"}
		}
	}
	sb := sandboxtest.Start(t, sandbox.WithModel(m), sandbox.WithGradeManagerDeleteDelay(0))
	// The app cannot read bk_job's model either, so the plan-time model checks are off.
	provider := strings.Replace(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), "max_retries = 2\n", "max_retries = 2\n  check_model = false\n", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: provider + groupPermissionOfAnotherSystem("", "j1"),
				ExpectError: acctest.PlanErrorPattern("Call 1 of 1 failed, granting view on 1 bk_job/job instances", "HTTP 403",
					"can not access system bk_job", "If the app is not a client of system, set group_system to the system that created the grade manager"),
			},
			{Config: provider + groupPermissionOfAnotherSystem("bk_cmdb", "j1", "j2"), Check: groupJobsHeld(sb, "/bk_job,job,j1/", "/bk_job,job,j2/")},
			{Config: provider + groupPermissionOfAnotherSystem("bk_cmdb", "j2", "j3"), Check: groupJobsHeld(sb, "/bk_job,job,j2/", "/bk_job,job,j3/")},
		},
		CheckDestroy: groupJobsHeld(sb),
	})
}

// TestAccGroupPermissionOutsideScope: a grant outside the grade manager's authorization scope is
// refused with an error that says so and names the fix.
func TestAccGroupPermissionOutsideScope(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM refuses and how the provider words it")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	_, provider := acctest.Target(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: provider + acctest.PermissionBase + acctest.PermissionHCL("viewers", []string{"view_host"}, map[string]string{"/bk_cmdb,biz,3/bk_cmdb,host,1/": "host1"}),
			ExpectError: acctest.PlanErrorPattern("Call 1 of 1 failed, granting view_host on 1 bk_cmdb/host instances", "code 1902412",
				"outside the authorization scope of the group's grade manager: widen its authorization_scopes, or grant less"),
		}},
	})
}

// TestAccGroupPermissionPlannedScope: once the grade manager and the group
// exist, a permission outside the grade manager's scope fails the plan,
// before any call, naming the scope and the fix (an action outside it, an
// instance under another business, one under business 2 given by its id
// alone); the same permission with the scope widened in the same plan
// passes and applies. (Created all at once, the group's id is unknown at
// plan and IAM's answer at apply names the fix:
// TestAccGroupPermissionOutsideScope.)
func TestAccGroupPermissionPlannedScope(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	grants := func() int { return sb.Stats().Requests["group_policy:grant"] }
	var before int
	noCall := func() {
		if n := grants() - before; n != 0 {
			t.Errorf("the refused plan sent %d grants", n)
		}
	}
	widened := strings.Replace(acctest.PermissionBase, `      instances = [
        { id = "*", ancestors = [{ system = "bk_cmdb", type = "biz", id = "2" }] },
        { id = "7" },
      ]`, "      all_instances = true", 1)
	dependent := func(hcl string) string {
		return strings.Replace(hcl, "  group_id = bkiam_group.dev.id\n", "  group_id = bkiam_group.dev.id\n  depends_on = [bkiam_grade_manager.platform]\n", 1)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: provider + acctest.PermissionBase},
			{
				PreConfig: func() { before = grants() },
				Config:    provider + acctest.PermissionBase + acctest.PermissionHCL("hosts", []string{"delete_host"}, map[string]string{"7": "host7"}),
				ExpectError: acctest.PlanErrorPattern("Outside the grade manager's scope", `has no authorization scope of bk_cmdb with the action "delete_host"`,
					`Add "delete_host" to an authorization_scopes entry of system "bk_cmdb", or remove it here.`),
			},
			{
				PreConfig: noCall,
				Config:    provider + acctest.PermissionBase + acctest.PermissionHCL("hosts", []string{"view_host"}, map[string]string{"/bk_cmdb,biz,3/bk_cmdb,host,1/": "h1", "5": "h5", "7": "host7"}),
				ExpectError: acctest.PlanErrorPattern(`The instance "/bk_cmdb,biz,3/bk_cmdb,host,1/" of bk_cmdb/host for the action "view_host" is outside the authorization scope of the group's grade manager`,
					`as this plan leaves it, and IAM would refuse it. Its scope for the type holds /biz,2/host,*/, /host,7/. IAM compares the instance's path (/biz,3/host,1/) `+
						`with the scope's by string prefix, a trailing * cut: { id = "*" } admits instances given by their id alone, and only all_instances = true `+
						`admits every instance. Widen the grade manager's authorization_scopes, or grant less.`,
					`The instance "5" of bk_cmdb/host`, `path (/host,5/)`),
			},
			{
				PreConfig:        noCall,
				Config:           provider + widened + dependent(acctest.PermissionHCL("hosts", []string{"view_host"}, map[string]string{"/bk_cmdb,biz,3/bk_cmdb,host,1/": "h1", "5": "h5"})),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            checkGroupHeld(sb, map[string][]string{"view_host": {"/bk_cmdb,biz,3/bk_cmdb,host,1/", "/bk_cmdb,host,5/"}}),
			},
		},
	})
}

// TestAccGroupPermissionPartialFailure: a change whose revoke fails after its grant went out
// leaves state equal to what IAM holds; the next apply sends only the revoke.
func TestAccGroupPermissionPartialFailure(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	sb := sandboxtest.Start(t, sandbox.WithGradeManagerDeleteDelay(0))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(provider, acctest.PermissionBase+acctest.PermissionHCL("viewers", []string{"view_host", "edit_host"}, map[string]string{"7": "host7", host5: "host5"}))
	w.MustRun("apply", "-auto-approve")
	w.Configure(provider, acctest.PermissionBase+acctest.PermissionHCL("viewers", []string{"view_host", "edit_host"}, map[string]string{host6: "host6", host5: "host5"}))
	// Without a refresh the grant of host 6 is the first call, the revoke of host 7 the second.
	if err := sb.SetFaults(sandbox.Faults{Fail: &sandbox.FailFault{After: 1, Count: 1, Status: 400, Code: 1902412}}); err != nil {
		t.Fatal(err)
	}
	out, code := w.Run("apply", "-auto-approve", "-refresh=false")
	if code == 0 || !acctest.PlanErrorPattern("Call 2 of 2 failed, revoking edit_host, view_host on 1 bk_cmdb/host instances", "The call before it succeeded").MatchString(out) {
		t.Fatalf("the apply should have failed at the revoke (exit %d):\n%s", code, out)
	}
	if err := sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	all := []string{host5, host6, host7}
	if got := groupHeld(sb); !mapsOfSlicesEqual(got, map[string][]string{"view_host": all, "edit_host": all}) {
		t.Fatalf("after the failed revoke the group holds %v", got)
	}
	// State records host 7 as still held: the next apply revokes it, and nothing else.
	before := sb.Stats().Requests
	w.MustRun("apply", "-auto-approve", "-refresh=false")
	after := sb.Stats().Requests
	if g, r := after["group_policy:grant"]-before["group_policy:grant"], after["group_policy:revoke"]-before["group_policy:revoke"]; g != 0 || r != 1 {
		t.Fatalf("the re-run sent %d grants and %d revokes, want 0 and 1", g, r)
	}
	want := []string{host5, host6}
	if got := groupHeld(sb); !mapsOfSlicesEqual(got, map[string][]string{"view_host": want, "edit_host": want}) {
		t.Fatalf("after the re-run the group holds %v", got)
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the re-run is not empty")
	}
	w.MustRun("destroy", "-auto-approve")
}

// TestAccGroupPermissionWithoutList: without the group_policy_list allow-list entry, a refresh
// warns once and trusts state; grants and revokes still work.
func TestAccGroupPermissionWithoutList(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the calls the provider sends")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	m := sandbox.DefaultModel()
	for i := range m.Apps {
		if m.Apps[i].Code == sandboxtest.AppCode {
			m.Apps[i].Management = map[string][]string{"*": {"v2_grade_manager_create", "v2_grade_manager_detail", "v2_grade_manager_update",
				"v2_grade_manager_delete", "v2_group_batch_create", "v2_group_list", "v2_group_update", "v2_group_delete",
				"group_policy_grant", "group_policy_revoke"}}
		}
	}
	sb := sandboxtest.Start(t, sandbox.WithModel(m), sandbox.WithGradeManagerDeleteDelay(0))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(provider, acctest.PermissionBase+acctest.PermissionHCL("viewers", []string{"view_host"}, map[string]string{"7": "host7"})+acctest.PermissionHCL("editors", []string{"edit_host"}, map[string]string{"7": "host7"}))
	w.MustRun("apply", "-auto-approve")
	out, code := w.Run("plan", "-detailed-exitcode")
	if code != 0 || strings.Count(out, "Group permissions are not read back") != 1 {
		t.Fatalf("the plan should be empty and warn once (exit %d):\n%s", code, out)
	}
	w.MustRun("destroy", "-auto-approve")
	if n := len(sb.Policies(sandbox.PolicyFilter{SubjectType: "group"}).Policies); n != 0 {
		t.Fatalf("after destroy groups hold %d policies", n)
	}
}

// TestAccGroupPermission_planTimeValidation: every mistake is refused at plan time, before any
// call.
func TestAccGroupPermission_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	sb, provider := acctest.Target(t)
	test := acctest.PlanTimeTest(t, provider, acctest.GroupPermissionValidationCases())
	test.CheckDestroy = func(*terraform.State) error {
		if sb != nil {
			if n := acctest.IAMCalls(sb); n != 0 {
				return fmt.Errorf("refused configurations sent %d requests", n)
			}
		}
		return nil
	}
	resource.Test(t, test)
}

// TestAccGroupPermissionFaultMatrix: the member fault classes strike the second call of a change
// (a grant, then a revoke) of a group's permissions, through the CLI with -refresh=false. After
// each: the error names the call; IAM holds no more than state records (exactly as much when the
// answer came); the same command without the fault, and a refreshing plan, converge.
func TestAccGroupPermissionFaultMatrix(t *testing.T) {
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	acctest.Parallel(t)
	providerDir := testutil.BuildProvider(t)
	for _, fc := range memberFaultClasses {
		t.Run(strings.ReplaceAll(fc.name, " ", "_"), func(t *testing.T) {
			if !fc.everyCLI {
				testutil.SameOnEveryCLI(t, "the provider's handling of IAM's answer; the classes that run on every CLI cover what the CLI does with a failed step")
			}
			acctest.Parallel(t)
			sb := sandboxtest.Start(t, sandbox.WithGradeManagerDeleteDelay(0))
			provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
			w := acctest.NewCLIWorkspace(t, providerDir)
			w.Configure(provider, acctest.PermissionBase+acctest.PermissionHCL("viewers", []string{"view_host", "edit_host"}, map[string]string{"7": "host7", host5: "host5"}))
			w.MustRun("apply", "-auto-approve")
			w.Configure(provider, acctest.PermissionBase+acctest.PermissionHCL("viewers", []string{"view_host", "edit_host"}, map[string]string{host6: "host6", host5: "host5"}))
			if err := sb.SetFaults(fc.fault(1)); err != nil {
				t.Fatal(err)
			}
			out, code := w.Run("apply", "-auto-approve", "-refresh=false")
			if err := sb.SetFaults(sandbox.Faults{}); err != nil {
				t.Fatal(err)
			}
			switch {
			case fc.recovers && code != 0:
				t.Fatalf("the retries should have absorbed the fault, but terraform exited %d:\n%s", code, out)
			case !fc.recovers && code == 0:
				t.Fatalf("terraform succeeded despite the fault:\n%s", out)
			case !fc.recovers:
				patterns := append([]string{`Call 2 of 2 failed, revoking edit_host, view_host on 1 bk_cmdb/host instances`, `request [0-9a-f]{32}`}, fc.failure...)
				for _, p := range patterns {
					p = strings.ReplaceAll(p, memberInDoubt, `IAM may or may not have carried out this call`)
					if !regexp.MustCompile(`(?s)` + strings.ReplaceAll(p, " ", `\s+`)).MatchString(out) {
						t.Fatalf("the error does not match %q:\n%s", p, out)
					}
				}
				// The revoke of host 7 failed: IAM holds 7 unless the call went
				// through unanswered; state must record it either way.
				held := groupHeld(sb)["view_host"]
				if !fc.doubt && !slices.Equal(held, []string{host5, host6, host7}) {
					t.Fatalf("after a refused revoke the group holds %v", held)
				}
				rec := w.StateInstances(t, "bkiam_group_permission")
				for _, p := range held {
					if !rec[p] {
						t.Fatalf("IAM holds %s, which the state does not record (state %v)", p, rec)
					}
				}
				w.MustRun("apply", "-auto-approve")
			}
			want := []string{host5, host6}
			if got := groupHeld(sb); !mapsOfSlicesEqual(got, map[string][]string{"view_host": want, "edit_host": want}) {
				t.Fatalf("at the end the group holds %v", got)
			}
			if !w.PlanIsEmpty() {
				t.Fatal("the plan at the end is not empty")
			}
		})
	}
}

// TestAccGroupPermissionSharedWithInstanceGrant: a group's permission and an instance grant to
// the same group write one IAM policy; removing the permission leaves what the grant still grants
// (the ledger of shared grants covers both).
func TestAccGroupPermissionSharedWithInstanceGrant(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	provider = acctest.AllowShared(provider) // both grant host 7, by design
	grant := `
resource "bkiam_instance_grant" "dev_hosts" {
  system    = "bk_cmdb"
  subject   = { type = "group", id = bkiam_group.dev.id }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "7" = "host7" } }]
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: provider + acctest.PermissionBase + grant + acctest.PermissionHCL("viewers", []string{"view_host"}, map[string]string{"7": "host7", host5: "host5"}),
				Check:  checkGroupHeld(sb, map[string][]string{"view_host": {host5, host7}}),
			},
			{
				// The permission goes; host 7, which the grant keeps, stays.
				Config: provider + acctest.PermissionBase + grant,
				Check:  checkGroupHeld(sb, map[string][]string{"view_host": {host7}}),
			},
		},
	})
}

// TestAccGroupPermissionNoResourceType: a permission of an action related
// to no resource type (bk_cmdb's create_biz), resources = []. IAM's
// management grant and revoke take "resources": [] and refuse null with
// 400 1902412 (internal/bkiam's package doc, "The management API"),
// as the sandbox does; the provider used to send null, so neither the
// create nor the destroy went through.
func TestAccGroupPermissionNoResourceType(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the calls the provider sends")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	config := provider + `
resource "bkiam_grade_manager" "platform" {
  system               = "bk_cmdb"
  name                 = "platform"
  members              = ["alice"]
  authorization_scopes = [{ system = "bk_cmdb", actions = ["create_biz"], resources = [] }]
  subject_scopes       = [{ type = "*", id = "*" }]
}

resource "bkiam_group" "dev" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = "dev"
}

resource "bkiam_group_permission" "create" {
  system    = "bk_cmdb"
  group_id  = bkiam_group.dev.id
  actions   = ["create_biz"]
  resources = []
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:           config,
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            checkGroupHeld(sb, map[string][]string{"create_biz": nil}),
			},
			{
				// The permission alone goes; the group stays.
				Config: strings.Split(config, `resource "bkiam_group_permission"`)[0],
				Check:  checkGroupHeld(sb, map[string][]string{}),
			},
		},
	})
}
