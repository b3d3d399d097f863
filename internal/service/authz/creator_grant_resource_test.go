package authz_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// creatorConfig renders a bkiam_creator_grant of alice.
type creatorConfig struct {
	system, typ string
	// instances maps ids to their project ("" for none); names are "<id> app".
	// An instance under a project is keyed by its path,
	// /SYSTEM,project,PROJECT/SYSTEM,TYPE,ID/; one without, by its id.
	instances map[string]string
	actions   []string
}

// unlessModel is actions where the provider reads no model (the ESB, or
// check_model = false), which a creator grant must then name, and nil
// (actions unset) where it reads one.
func unlessModel(provider string, actions []string) []string {
	if strings.Contains(provider, "esb_url") || strings.Contains(provider, "check_model = false") {
		return actions
	}
	return nil
}

func (g creatorConfig) config(provider string) string {
	var b strings.Builder
	for _, id := range acctest.SortedKeys(g.instances) {
		fmt.Fprintf(&b, "    %q = %q\n", g.key(id), id+" app")
	}
	actions := ""
	if g.actions != nil {
		actions = fmt.Sprintf("  actions = [%s]\n", acctest.QuoteList(g.actions))
	}
	return provider + fmt.Sprintf(`
resource "bkiam_creator_grant" "test" {
  system  = %q
  type    = %q
  creator = "alice"
  instances = {
%s  }
%s}
`, g.system, g.typ, b.String(), actions)
}

// key is the instances key of the instance id.
func (g creatorConfig) key(id string) string {
	if p := g.instances[id]; p != "" {
		return "/" + g.system + ",project," + p + "/" + g.system + "," + g.typ + "," + id + "/"
	}
	return id
}

func jobs(ids ...string) map[string]string {
	out := map[string]string{}
	for _, id := range ids {
		out[id] = ""
	}
	return out
}

func jobPaths(ids ...string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "/bk_job,job," + id + "/"
	}
	sort.Strings(out)
	return out
}

// allFour is what bk_job's creator config grants for a job.
func allFour(paths []string) map[string][]string {
	return map[string][]string{"delete": paths, "edit": paths, "list": paths, "view": paths}
}

// TestAccCreatorGrant_jobs: the documentation's example without
// ancestors (three bk_job jobs), then additions, removals and a destroy.
func TestAccCreatorGrant_jobs(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the calls the provider sends")
	acctest.Parallel(t)
	acctest.EachTransport(t, func(t *testing.T, sb *sandboxtest.Sandbox, provider string) {
		calls := acctest.NewCallCounter(sb)
		three := creatorConfig{system: "bk_job", typ: "job", instances: jobs("job1", "job2", "job3"), actions: unlessModel(provider, jobActions)}
		changed := creatorConfig{system: "bk_job", typ: "job", instances: jobs("job2", "job3", "job4"), actions: unlessModel(provider, jobActions)}
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					Config:           three.config(provider),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(acctest.CreatorAddr, tfjsonpath.New("id"), knownvalue.StringExact("bk_job/job/alice")),
						statecheck.ExpectKnownValue(acctest.CreatorAddr, tfjsonpath.New("granted_actions"), knownvalue.SetExact([]knownvalue.Check{
							knownvalue.StringExact("delete"), knownvalue.StringExact("edit"), knownvalue.StringExact("list"), knownvalue.StringExact("view"),
						})),
					},
					Check: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_job", "user", "alice", allFour(jobPaths("job1", "job2", "job3"))), checkExpiry(sb, bkiam.PermanentExpiry),
						// The expiry check asks IAM about alice, then reads the
						// four actions' lists (she holds none of them), in the
						// plan and in the apply.
						calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2, Pages: 8}, map[string]int{"batch_resource_creator_action": 1})),
					),
				},
				{
					// Add job4, remove job1: one creator grant, one path revoke.
					Config:           changed.config(provider),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check:            resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_job", "user", "alice", allFour(jobPaths("job2", "job3", "job4"))), calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2}, map[string]int{"batch_resource_creator_action": 1, "batch_path:revoke": 1}))),
				},
				{
					Config:   changed.config(provider),
					PlanOnly: true,
				},
			},
			CheckDestroy: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_job", "user", "alice", nil), calls.Expect(map[string]int{"batch_path:revoke": 1})),
		})
	})
}

// TestAccCreatorGrant_scale: 450 instances create in 3 creator calls and
// destroy in 1 path revoke.
func TestAccCreatorGrant_scale(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the calls the provider sends")
	acctest.Parallel(t)
	sb, provider := acctest.Target(t)
	calls := acctest.NewCallCounter(sb)
	ids := make([]string, 450)
	for i := range ids {
		ids[i] = fmt.Sprintf("job%03d", i)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:           creatorConfig{system: "bk_job", typ: "job", instances: jobs(ids...)}.config(provider),
			ConfigPlanChecks: acctest.EmptyPlanAfterApply,
			Check:            resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_job", "user", "alice", allFour(jobPaths(ids...))), calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2, Pages: 8}, map[string]int{"batch_resource_creator_action": 3}))),
		}},
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_job", "user", "alice", nil), calls.Expect(map[string]int{"batch_path:revoke": 1})),
	})
}

func sopsPath(project, app string) string {
	return "/bk_sops,project," + project + "/bk_sops,mini_app," + app + "/"
}

// TestAccCreatorGrant_miniApps: the documentation's example with
// ancestors (bk_sops mini apps under projects), with the expected
// actions set; moving a mini app to another project grants the new path
// before revoking the old one.
func TestAccCreatorGrant_miniApps(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the calls the provider sends")
	acctest.Parallel(t)
	acctest.EachTransport(t, func(t *testing.T, sb *sandboxtest.Sandbox, provider string) {
		calls := acctest.NewCallCounter(sb)
		actions := []string{"mini_app_view", "mini_app_edit"}
		before := creatorConfig{system: "bk_sops", typ: "mini_app", actions: actions,
			instances: map[string]string{"mini_app1": "project1", "mini_app2": "project2"}}
		moved := creatorConfig{system: "bk_sops", typ: "mini_app", actions: actions,
			instances: map[string]string{"mini_app1": "project1", "mini_app2": "project1"}}
		held := func(paths ...string) map[string][]string {
			sort.Strings(paths)
			return map[string][]string{"mini_app_view": paths, "mini_app_edit": paths}
		}
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					Config:           before.config(provider),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(acctest.CreatorAddr, tfjsonpath.New("instances"), knownvalue.MapExact(map[string]knownvalue.Check{
						sopsPath("project1", "mini_app1"): knownvalue.StringExact("mini_app1 app"),
						sopsPath("project2", "mini_app2"): knownvalue.StringExact("mini_app2 app"),
					}))},
					Check: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_sops", "user", "alice", held(sopsPath("project1", "mini_app1"), sopsPath("project2", "mini_app2"))), calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2, Pages: 4}, map[string]int{"batch_resource_creator_action": 1})),
						checkCreatorPolicies(sb, "bk_sops"),
					),
				},
				{
					Config: moved.config(provider),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						// The recorded actions are known in the plan; the policy ids of an update that
						// registers are known after apply (a policy revoked whole outside Terraform
						// comes back under a new id).
						PreApply: []plancheck.PlanCheck{
							plancheck.ExpectKnownValue(acctest.CreatorAddr, tfjsonpath.New("granted_actions"), knownvalue.SetSizeExact(2)),
							plancheck.ExpectUnknownValue(acctest.CreatorAddr, tfjsonpath.New("policies").AtMapKey("mini_app_view")),
						},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					Check: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_sops", "user", "alice", held(sopsPath("project1", "mini_app1"), sopsPath("project1", "mini_app2"))), calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2}, map[string]int{"batch_resource_creator_action": 1, "batch_path:revoke": 1})),
						checkCreatorPolicies(sb, "bk_sops"),
						// The move changes the key: the old path is gone, the new one there.
						resource.TestCheckNoResourceAttr(acctest.CreatorAddr, "instances."+sopsPath("project2", "mini_app2")),
						resource.TestCheckResourceAttr(acctest.CreatorAddr, "instances."+sopsPath("project1", "mini_app2"), "mini_app2 app"),
						resource.TestCheckResourceAttr(acctest.CreatorAddr, "instances.%", "2"),
					),
				},
			},
			CheckDestroy: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_sops", "user", "alice", nil), calls.Expect(map[string]int{"batch_path:revoke": 1})),
		})
	})
}

// checkCreatorPolicies checks the policies attribute against the sandbox.
func checkCreatorPolicies(sb *sandboxtest.Sandbox, system string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		if sb == nil {
			return nil
		}
		attrs := s.RootModule().Resources[acctest.CreatorAddr].Primary.Attributes
		for _, p := range sb.Policies(sandbox.PolicyFilter{System: system, SubjectID: "alice"}).Policies {
			if got := attrs["policies."+p.Action]; got != fmt.Sprint(p.PolicyID) {
				return fmt.Errorf("policies.%s = %q, the sandbox's policy id is %d", p.Action, got, p.PolicyID)
			}
		}
		return nil
	}
}

// TestAccCreatorGrant_unrelatedPolicies: IAM's answer lists the creator's
// other policies in the system. With actions unset, those of the type's
// creator configuration in the model are recorded (before, every action
// IAM listed was, and the real IAM refuses to revoke another type's action
// from the created paths, so such a grant could not be destroyed); with
// actions set, exactly those. Either way the other grant survives.
func TestAccCreatorGrant_unrelatedPolicies(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM holds and the provider leaves alone")
	acctest.Parallel(t)
	for _, tc := range []struct {
		name     string
		actions  []string
		recorded []string
	}{
		{"actions unset", nil, []string{"edit_biz", "view_biz"}},
		{"actions set", []string{"view_biz", "edit_biz"}, []string{"edit_biz", "view_biz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, provider := acctest.Target(t)
			otherGrant := map[string][]string{"view_host": sandboxtest.HostPaths("1", "2")}
			var expect []knownvalue.Check
			for _, a := range tc.recorded {
				expect = append(expect, knownvalue.StringExact(a))
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					PreConfig:         func() { grantOutsideTerraform(t, sb, []string{"1", "2"}) },
					Config:            creatorConfig{system: "bk_cmdb", typ: "biz", actions: tc.actions, instances: jobs("biz1")}.config(provider),
					ConfigPlanChecks:  acctest.EmptyPlanAfterApply,
					ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(acctest.CreatorAddr, tfjsonpath.New("granted_actions"), knownvalue.SetExact(expect))},
					Check: acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{
						"view_host": sandboxtest.HostPaths("1", "2"), "view_biz": {"/bk_cmdb,biz,biz1/"}, "edit_biz": {"/bk_cmdb,biz,biz1/"},
					}),
				}},
				// The creator grant is gone, the other grant untouched.
				CheckDestroy: acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", otherGrant),
			})
		})
	}
}

// TestAccCreatorGrant_errors: IAM's refusals are clear errors with code
// and request id, and leave nothing behind.
func TestAccCreatorGrant_errors(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM refuses at apply and how the provider words it")
	acctest.Parallel(t)
	acctest.EachTransport(t, func(t *testing.T, sb *sandboxtest.Sandbox, provider string) {
		// IAM's own refusals: the plan-time model checks are off, or they
		// would refuse these first (TestAccModelChecks).
		provider = acctest.NoModelChecks(provider)
		outsider := acctest.OutsiderProvider(provider)
		steps := []resource.TestStep{}
		if sb != nil { // the sandbox model's app that is a client of no system
			steps = append(steps, resource.TestStep{
				Config:      outsider + creatorConfig{system: "bk_job", typ: "job", instances: jobs("job1"), actions: jobActions}.config(""),
				ExpectError: errorResponse(1902403, `can not access system bk_job`),
			})
		}
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: append(steps, []resource.TestStep{
				{
					Config:      creatorConfig{system: "bk_cmdb", typ: "host", instances: jobs("1"), actions: []string{"view_host"}}.config(provider),
					ExpectError: errorResponse(1902412, `do not register actions for authorization of creator`),
				},
				{
					Config:      creatorConfig{system: "bk_sops", typ: "mini_app", instances: map[string]string{"m1": "project9"}, actions: []string{"mini_app_view"}}.config(provider),
					ExpectError: errorResponse(1902416, `project9`),
				},
			}...),
			CheckDestroy: acctest.CheckNothingHeld(sb),
		})
	})
}

// TestAccCreatorGrant_missingExpectedAction: IAM registers the creator,
// but not for an expected action. The apply fails; state records the
// expected actions IAM did grant, and destroy revokes exactly those: the
// configured creator actions the resource was not told to expect stay, as
// the documentation warns.
func TestAccCreatorGrant_missingExpectedAction(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM answers and how the provider words it")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t) // relies on the sandbox model's creator config for bk_job
	sb, provider := acctest.Target(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			// What IAM grants, checked at apply: the plan-time check
			// (TestAccModelChecks) is off.
			Config:      creatorConfig{system: "bk_job", typ: "job", actions: []string{"view", "launch"}, instances: jobs("job1")}.config(acctest.NoModelChecks(provider)),
			ExpectError: regexp.MustCompile(`(?s)did\s+not\s+grant\s+launch`),
		}},
		CheckDestroy: acctest.CheckHeld(sb, "bk_job", "user", "alice", map[string][]string{
			"delete": jobPaths("job1"), "edit": jobPaths("job1"), "list": jobPaths("job1"),
		}),
	})
}

// TestAccCreatorGrant_partialFailureAndImport: a failed call leaves state
// equal to what IAM holds, the next apply sends only the rest; and an
// import adopts existing creator grants.
func TestAccCreatorGrant_partialFailureAndImport(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	acctest.EachTransport(t, func(t *testing.T, sb *sandboxtest.Sandbox, provider string) {
		calls := acctest.NewCallCounter(sb)
		few := creatorConfig{system: "bk_job", typ: "job", instances: jobs("job1", "job2", "job3"), actions: unlessModel(provider, jobActions)}
		ids := []string{"job1", "job2", "job3"}
		for i := 0; i < 447; i++ {
			ids = append(ids, fmt.Sprintf("more%03d", i))
		}
		many := creatorConfig{system: "bk_job", typ: "job", instances: jobs(ids...), actions: unlessModel(provider, jobActions)}
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					// Existing creator grants, adopted by an import block.
					PreConfig: func() {
						client, err := bkiam.New(bkiam.Config{APIGatewayURL: sb.URL, AppCode: sandboxtest.AppCode, AppSecret: sandboxtest.AppSecret})
						if err != nil {
							t.Fatal(err)
						}
						if _, err := client.BatchResourceCreatorAction(context.Background(), bkiam.CreatorActionRequest{
							System: "bk_job", Type: "job", Creator: "alice", Instances: []bkiam.CreatorInstance{{ID: "job1", Name: "job1 app"}},
						}); err != nil {
							t.Fatal(err)
						}
						calls.Reset()
					},
					Config:           few.config(provider) + "\nimport {\n  to = bkiam_creator_grant.test\n  id = \"bk_job/job/alice\"\n}\n",
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check:            resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_job", "user", "alice", allFour(jobPaths("job1", "job2", "job3"))), calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2}, map[string]int{"batch_resource_creator_action": 1}))),
				},
				{
					// 447 more in 3 calls; the second fails.
					PreConfig: func() {
						// The second write: the plan's expiry reads are spared.
						if err := sb.SetFaults(sandbox.Faults{SpareReads: true, Fail: &sandbox.FailFault{After: 1, Count: 1, Status: 500, Code: 1902500}}); err != nil {
							t.Fatal(err)
						}
					},
					Config:      many.config(provider),
					ExpectError: regexp.MustCompile(`(?s)Call 2 of 3 failed.*code 1902500.*request\s+[0-9a-f]{32}`),
				},
				{
					// The first 200 are recorded: the rest take 2 calls.
					PreConfig: func() {
						if err := sb.SetFaults(sandbox.Faults{}); err != nil {
							t.Fatal(err)
						}
						if got := len(sandboxtest.HeldPaths(sb, "bk_job", "user", "alice")["view"]); got != 203 {
							t.Errorf("after the failure the sandbox holds %d paths, want 203", got)
						}
						calls.Reset()
					},
					Config:           many.config(provider),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check:            resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_job", "user", "alice", allFour(jobPaths(ids...))), calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2}, map[string]int{"batch_resource_creator_action": 2}))),
				},
			},
			CheckDestroy: acctest.CheckHeld(sb, "bk_job", "user", "alice", nil),
		})
	})
}

// TestAccCreatorGrant_actionsNeedTheModel: without the model, over either
// transport, a creator grant without actions fails at plan, naming
// actions, and sends IAM nothing.
func TestAccCreatorGrant_actionsNeedTheModel(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the provider's check against the model")
	acctest.Parallel(t)
	acctest.EachTransport(t, func(t *testing.T, sb *sandboxtest.Sandbox, provider string) {
		resource.Test(t, acctest.PlanTimeTest(t, acctest.NoModelChecks(provider), acctest.CreatorActionsNeedModelCases()))
		if sb != nil && sb.Stats().Total != 0 {
			t.Fatalf("refused configurations sent %d requests", sb.Stats().Total)
		}
	})
}

func TestAccCreatorGrant_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	sb, provider := acctest.Target(t)
	resource.Test(t, acctest.PlanTimeTest(t, provider, acctest.CreatorGrantValidationCases()))
	if sb == nil {
		return
	}
	if n := sb.Stats().Total; n != 0 {
		t.Fatalf("refused configurations sent %d requests", n)
	}
}
