package authz_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
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
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// checkExpiry checks the expiry the sandbox stores for each of alice's policies.
func checkExpiry(sb *sandboxtest.Sandbox, want int64) func(*terraform.State) error {
	return func(*terraform.State) error {
		if sb == nil {
			return nil
		}
		for _, p := range sb.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies {
			if p.ExpiredAt != want {
				return fmt.Errorf("policy %s expires at %d, want %d", p.Action, p.ExpiredAt, want)
			}
		}
		return nil
	}
}

// TestAccInstanceGrant_lifecycle pins the calls of each step: the writes,
// and the expiry check's reads (acctest.ExpiryReads), in its plan and
// again in its apply: one query of the user, then each action the step
// grants by id where the user holds it and the grant changes its expiry,
// from its list where the user holds nothing of it; a step that grants
// nothing (a new name, the same instant spelled otherwise) reads nothing.
func TestAccInstanceGrant_lifecycle(t *testing.T) {
	acctest.Parallel(t)
	acctest.EachTransport(t, func(t *testing.T, sb *sandboxtest.Sandbox, provider string) {
		calls := acctest.NewCallCounter(sb)
		ids450 := sandboxtest.IDRange(0, 450)
		ids455 := sandboxtest.IDRange(5, 460) // 10 added, 5 removed
		renamed := func(id string) string {
			if id == "7" {
				return "the renamed seventh host"
			}
			return sandboxtest.HostName(id)
		}
		both := []string{"edit_host", "view_host"}
		swapped := []string{"delete_host", "view_host"}

		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					// 450 instances at 200 per grant call: 3 calls.
					Config:            acctest.HostGrant{Actions: both, Ids: ids450}.Config(provider),
					ConfigPlanChecks:  acctest.EmptyPlanAfterApply,
					ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(acctest.GrantAddr, tfjsonpath.New("id"), knownvalue.StringExact("bk_cmdb/user/alice"))},
					Check: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"edit_host": sandboxtest.HostPaths(ids450...), "view_host": sandboxtest.HostPaths(ids450...)}), checkExpiry(sb, bkiam.PermanentExpiry),
						acctest.CheckPolicyIDs(sb),
						calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2, Pages: 4}, map[string]int{"batch_instance:grant": 3})),
					),
				},
				{
					// Add 10 instances and remove 5: one grant, one revoke.
					Config:           acctest.HostGrant{Actions: both, Ids: ids455}.Config(provider),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"edit_host": sandboxtest.HostPaths(ids455...), "view_host": sandboxtest.HostPaths(ids455...)}), acctest.CheckPolicyIDs(sb),
						calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2}, map[string]int{"batch_instance:grant": 1, "batch_instance:revoke": 1})),
					),
				},
				{
					// Swap an action: grant the new one everywhere (3
					// calls), revoke the old one everywhere (1 call); the
					// kept action keeps its policy id in the plan.
					Config: acctest.HostGrant{Actions: swapped, Ids: ids455}.Config(provider),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{
							plancheck.ExpectKnownValue(acctest.GrantAddr, tfjsonpath.New("policies").AtMapKey("view_host"), knownvalue.NotNull()),
							plancheck.ExpectUnknownValue(acctest.GrantAddr, tfjsonpath.New("policies").AtMapKey("delete_host")),
						},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					Check: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"delete_host": sandboxtest.HostPaths(ids455...), "view_host": sandboxtest.HostPaths(ids455...)}), acctest.CheckPolicyIDs(sb),
						calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2, Pages: 2}, map[string]int{"batch_instance:grant": 3, "batch_instance:revoke": 1})),
					),
				},
				{
					// A new display name alone: recorded, nothing sent.
					Config: acctest.HostGrant{Actions: swapped, Ids: ids455, Name: renamed}.Config(provider),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(acctest.GrantAddr, plancheck.ResourceActionUpdate)},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(acctest.GrantAddr, tfjsonpath.New("resources").AtSliceIndex(0).AtMapKey("instances").AtMapKey("7"), knownvalue.StringExact("the renamed seventh host"))},
					Check:             calls.Expect(map[string]int{}),
				},
				{
					// From permanent to a date: IAM cannot lower an
					// expiry, so revoke (1 call for both actions) and
					// grant again (3 calls).
					Config:           acctest.HostGrant{Actions: swapped, Ids: ids455, Name: renamed, ExpiresAt: "2099-01-01T00:00:00Z"}.Config(provider),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"delete_host": sandboxtest.HostPaths(ids455...), "view_host": sandboxtest.HostPaths(ids455...)}), checkExpiry(sb, 4070908800),
						acctest.CheckPolicyIDs(sb),
						calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2, Gets: 4}, map[string]int{"batch_instance:revoke": 1, "batch_instance:grant": 3})),
					),
				},
				{
					// A later date: one grant of one instance for both
					// actions, which raises their whole policies; nothing
					// revoked.
					Config:           acctest.HostGrant{Actions: swapped, Ids: ids455, Name: renamed, ExpiresAt: "2099-06-01T08:00:00+08:00"}.Config(provider),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check: resource.ComposeAggregateTestCheckFunc(
						acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"delete_host": sandboxtest.HostPaths(ids455...), "view_host": sandboxtest.HostPaths(ids455...)}),
						checkExpiry(sb, 4083955200),
						acctest.CheckPolicyIDs(sb),
						calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2, Gets: 4}, map[string]int{"batch_instance:grant": 1})),
					),
				},
				{
					// The same instant spelled differently: Terraform
					// compares spellings, so the plan shows an update,
					// but no call is sent.
					Config:           acctest.HostGrant{Actions: swapped, Ids: ids455, Name: renamed, ExpiresAt: "2099-06-01T00:00:00Z"}.Config(provider),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check:            resource.ComposeAggregateTestCheckFunc(checkExpiry(sb, 4083955200), calls.Expect(map[string]int{})),
				},
				{
					// The same configuration again: an empty plan.
					Config:   acctest.HostGrant{Actions: swapped, Ids: ids455, Name: renamed, ExpiresAt: "2099-06-01T00:00:00Z"}.Config(provider),
					PlanOnly: true,
				},
				{
					// Applying it again sends nothing.
					Config:           acctest.HostGrant{Actions: swapped, Ids: ids455, Name: renamed, ExpiresAt: "2099-06-01T00:00:00Z"}.Config(provider),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check:            calls.Expect(map[string]int{}),
				},
				{
					// A refresh makes no call either.
					RefreshState: true,
					Check:        calls.Expect(map[string]int{}),
				},
			},
			CheckDestroy: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", nil), calls.Expect(map[string]int{"batch_instance:revoke": 1})),
		})
	})
}

// TestAccInstanceGrant_import: grants that exist before Terraform are
// adopted: the import holds nothing known, and the next apply grants what
// the configuration declares, which IAM already holds.
func TestAccInstanceGrant_import(t *testing.T) {
	acctest.Parallel(t)
	acctest.EachTransport(t, func(t *testing.T, sb *sandboxtest.Sandbox, provider string) {
		calls := acctest.NewCallCounter(sb)
		ids := sandboxtest.IDRange(0, 5)
		cfg := acctest.HostGrant{Actions: []string{"view_host"}, Ids: ids}.Config(provider)
		held := map[string][]string{"view_host": sandboxtest.HostPaths(ids...)}
		var before int64

		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					// The importer alone, into a scratch state.
					PreConfig: func() {
						grantOutsideTerraform(t, sb, ids)
						if sb != nil {
							before = sb.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies[0].PolicyID
						}
						calls.Reset()
					},
					Config:        cfg,
					ResourceName:  acctest.GrantAddr,
					ImportState:   true,
					ImportStateId: "bk_cmdb/user/alice",
					ImportStateCheck: func(states []*terraform.InstanceState) error {
						if len(states) != 1 {
							return fmt.Errorf("imported %d resources", len(states))
						}
						a := states[0].Attributes
						if a["id"] != "bk_cmdb/user/alice" || a["system"] != "bk_cmdb" || a["subject.type"] != "user" || a["subject.id"] != "alice" {
							return fmt.Errorf("imported %v", a)
						}
						return nil
					},
				},
				{
					// An import block and the configuration: the apply
					// grants (a no-op in IAM) and adopts the policy.
					Config: cfg + `
import {
  to = bkiam_instance_grant.test
  id = "bk_cmdb/user/alice"
}
`,
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", held), calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2}, map[string]int{"batch_instance:grant": 1})),
						func(s *terraform.State) error {
							if sb == nil {
								return nil
							}
							got := s.RootModule().Resources[acctest.GrantAddr].Primary.Attributes["policies.view_host"]
							if got != strconv.FormatInt(before, 10) {
								return fmt.Errorf("adopted policy id %s, want the existing %d", got, before)
							}
							return nil
						},
					),
				},
			},
			CheckDestroy: acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", nil),
		})
	})
}

// grantOutsideTerraform grants alice view_host on ids as someone using the
// IAM API directly would.
func grantOutsideTerraform(t *testing.T, sb *sandboxtest.Sandbox, ids []string) {
	t.Helper()
	client := acctest.OutsideClient(t, sb)
	var instances []bkiam.Instance
	for _, id := range ids {
		instances = append(instances, bkiam.Instance{ID: id, Name: sandboxtest.HostName(id)})
	}
	_, err := client.BatchInstance(context.Background(), bkiam.BatchInstanceRequest{
		System: "bk_cmdb", Operate: bkiam.OperationGrant, ExpiredAt: bkiam.PermanentExpiry,
		Subject: bkiam.Subject{Type: "user", ID: "alice"}, Actions: []bkiam.Action{{ID: "view_host"}},
		Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: instances}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// errorResponse matches the error a failed call reports: its code (or a
// prefix of it) and the request id users quote to their IAM operators.
// Terraform wraps long messages, so any space may be a line break.
func errorResponse(code int, text string) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`(?s)code %d\d*.*request\s+[0-9a-f]{32}.*%s`, code, strings.ReplaceAll(text, " ", `\s+`)))
}

// TestAccInstanceGrant_subjectsAndShapes: a group subject, a combined
// resource (an action on a business and a host together) and an action
// related to no resource type.
func TestAccInstanceGrant_subjectsAndShapes(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the calls the provider sends for each subject and resource shape")
	acctest.Parallel(t)
	acctest.EachTransport(t, func(t *testing.T, sb *sandboxtest.Sandbox, provider string) {
		calls := acctest.NewCallCounter(sb)
		config := func(hosts string) string {
			return provider + `
resource "bkiam_instance_grant" "group" {
  system    = "bk_cmdb"
  subject   = { type = "group", id = "1" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1", "2" = "host2" } }]
}

resource "bkiam_instance_grant" "combined" {
  system  = "bk_cmdb"
  subject = { type = "user", id = "bob" }
  actions = ["edit_biz_host"]
  resources = [
    { system = "bk_cmdb", type = "biz", instances = { "1" = "biz1" } },
    { system = "bk_cmdb", type = "host", instances = ` + hosts + ` },
  ]
}

resource "bkiam_instance_grant" "no_type" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "carol" }
  actions   = ["create_biz"]
  resources = []
}

resource "bkiam_instance_grant" "admin" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "admin" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
}
`
		}
		combo := func(hosts ...string) []string {
			return []string{"/bk_cmdb,biz,1/ & " + strings.Join(sandboxtest.HostPaths(hosts...), " & ")}
		}
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					Config:           config(`{ "7" = "host7", "8" = "host8" }`),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "group", "1", map[string][]string{"view_host": sandboxtest.HostPaths("1", "2")}), acctest.CheckHeld(sb, "bk_cmdb", "user", "bob", map[string][]string{"edit_biz_host": combo("7", "8")}), acctest.CheckHeld(sb, "bk_cmdb", "user", "carol", map[string][]string{"create_biz": {"any"}}), acctest.
						// IAM accepts a grant to admin and stores nothing.
						CheckHeld(sb, "bk_cmdb", "user", "admin", nil), resource.TestCheckResourceAttr("bkiam_instance_grant.admin", "policies.view_host", "0"),
						// The expiry check reads bob's and carol's actions in
						// the plan and the apply: a group's never expire, and
						// IAM stores nothing for admin.
						calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 4, Pages: 4}, map[string]int{"batch_instance:grant": 4})),
					),
				},
				{
					// A changed combination is revoked whole and granted
					// anew: IAM drops a stored combination only when a
					// revoke fully contains it, and a grant the stored one
					// contains adds nothing.
					Config:           config(`{ "7" = "host7", "8" = "host8", "9" = "host9" }`),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check:            resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "bob", map[string][]string{"edit_biz_host": combo("7", "8", "9")}), calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2}, map[string]int{"batch_instance:revoke": 1, "batch_instance:grant": 1}))),
				},
				{
					// Shrunk: a revoke of hosts 8 and 9 alone would overlap
					// the stored combination in part, which IAM ignores, and
					// all three hosts would stay. What IAM keeps is exactly
					// the configuration.
					Config:           config(`{ "7" = "host7" }`),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check:            resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "bob", map[string][]string{"edit_biz_host": combo("7")}), calls.Expect(map[string]int{"batch_instance:revoke": 1, "batch_instance:grant": 1})),
				},
			},
			CheckDestroy: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "group", "1", nil), acctest.CheckHeld(sb, "bk_cmdb", "user", "bob", nil), acctest.CheckHeld(sb, "bk_cmdb", "user", "carol", nil), calls.Expect(map[string]int{"batch_instance:revoke": 4})),
		})
	})
}

// firstByString returns the first n ids in the order the planner sends
// them: sorted as strings.
func firstByString(ids []string, n int) []string {
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	return sorted[:n]
}

// TestAccInstanceGrant_partialFailure: when call k of n fails, state
// records exactly the calls that succeeded, and the next apply sends only
// the rest.
func TestAccInstanceGrant_partialFailure(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	acctest.EachTransport(t, func(t *testing.T, sb *sandboxtest.Sandbox, provider string) {
		calls := acctest.NewCallCounter(sb)
		ids := sandboxtest.IDRange(0, 450)
		chunk := sandboxtest.HostPaths(firstByString(ids, 200)...)
		all := sandboxtest.HostPaths(ids...)
		failSecond := func() {
			// The second write: the plan's expiry reads are spared.
			if err := sb.SetFaults(sandbox.Faults{SpareReads: true, Fail: &sandbox.FailFault{After: 1, Count: 1, Status: 500, Code: 1902500}}); err != nil {
				t.Fatal(err)
			}
			calls.Reset()
		}
		clearFaults := func() {
			if err := sb.SetFaults(sandbox.Faults{}); err != nil {
				t.Fatal(err)
			}
		}
		failure := regexp.MustCompile(`(?s)Call 2 of 3 failed.*code 1902500.*request\s+[0-9a-f]{32}.*The\s+call\s+before\s+it\s+succeeded`)
		view := []string{"view_host"}
		both := []string{"delete_host", "view_host"}

		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					// Create: the second of three grants fails.
					PreConfig:   failSecond,
					Config:      acctest.HostGrant{Actions: view, Ids: ids}.Config(provider),
					ExpectError: failure,
				},
				{
					// The first chunk was granted and recorded; Terraform
					// tainted the resource, so the next apply revokes it
					// and grants everything again. The replacement's create
					// is checked at plan; its re-plan in the apply comes
					// after the destroy's revoke, and reads nothing (the
					// plan decided).
					PreConfig: func() {
						if got := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice")["view_host"]; len(got) != 200 || got[0] != chunk[0] {
							t.Errorf("after the failed create the sandbox holds %d paths, want the first 200", len(got))
						}
						clearFaults()
						calls.Reset()
					},
					Config:           acctest.HostGrant{Actions: view, Ids: ids}.Config(provider),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check:            resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"view_host": all}), calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 1}, map[string]int{"batch_instance:revoke": 1, "batch_instance:grant": 3}))),
				},
				{
					// Update: adding an action takes three grants; the
					// second fails.
					PreConfig:   failSecond,
					Config:      acctest.HostGrant{Actions: both, Ids: ids}.Config(provider),
					ExpectError: failure,
				},
				{
					// State knows delete_host holds the first 200, so the
					// plan is not empty...
					PreConfig: func() {
						if got := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice")["delete_host"]; !acctest.EqualStrings(got, chunk) {
							t.Errorf("after the failed update the sandbox holds %d delete_host paths, want the first 200", len(got))
						}
						clearFaults()
						calls.Reset()
					},
					Config:             acctest.HostGrant{Actions: both, Ids: ids}.Config(provider),
					PlanOnly:           true,
					ExpectNonEmptyPlan: true,
				},
				{
					// ...and the next apply grants only the other 250.
					Config:           acctest.HostGrant{Actions: both, Ids: ids}.Config(provider),
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"view_host": all, "delete_host": all}), acctest.CheckPolicyIDs(sb),
						// State shows the 200 hosts both actions hold, so each
						// plan grants both again: a query in each of the
						// plan-only step's two plans and this step's plan and
						// apply (nothing is read by id: the grant keeps the
						// permanent expiry the policies have).
						calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 4}, map[string]int{"batch_instance:grant": 2})),
					),
				},
			},
			CheckDestroy: acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", nil),
		})
	})
}

// TestAccInstanceGrant_errors: what IAM refuses fails with a clear error
// naming the code and the request id, and leaves nothing behind.
func TestAccInstanceGrant_errors(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM refuses at apply and how the provider words it")
	acctest.Parallel(t)
	acctest.EachTransport(t, func(t *testing.T, sb *sandboxtest.Sandbox, provider string) {
		grant := func(system, subject, action, typ string) string {
			return fmt.Sprintf(`
resource "bkiam_instance_grant" "test" {
  system    = %q
  subject   = { type = "user", id = %q }
  actions   = [%q]
  resources = [{ system = %q, type = %q, instances = { "1" = "one" } }]
}
`, system, subject, action, system, typ)
		}
		// IAM's own refusals: the plan-time model checks are off, or they
		// would refuse these first (TestAccModelChecks).
		provider = acctest.NoModelChecks(provider)
		outsider := acctest.OutsiderProvider(provider)
		steps := []resource.TestStep{}
		if sb != nil { // the sandbox model's app that is a client of no system
			steps = append(steps, resource.TestStep{Config: outsider + grant("bk_cmdb", "alice", "view_host", "host"), ExpectError: errorResponse(1902403, "can not access system")})
		}
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: append(steps, []resource.TestStep{
				{Config: provider + grant("bk_cmdb", "alice", "fly_host", "host"), ExpectError: errorResponse(1902412, `fly_host action not exists`)},
				{Config: provider + grant("bk_cmdb", "alice", "view_host", "biz"), ExpectError: errorResponse(1902417, "Action check error: action `view_host` related resource types `biz` wrong")},
				{Config: provider + grant("bk_cmdb", "zed", "view_host", "host"), ExpectError: errorResponse(1902412, `user\[zed\] not exists`)},
				{Config: provider + grant("no_such_system", "alice", "view_host", "host"), ExpectError: errorResponse(1902403, "can not access system no_such_system")},
			}...),
			CheckDestroy: acctest.CheckNothingHeld(sb),
		})
	})
}

// TestAccInstanceGrant_policyLimit: at IAM's limit of 10000 instances per
// policy, a change that replaces some instances must revoke before it
// grants, or IAM refuses the grant.
func TestAccInstanceGrant_policyLimit(t *testing.T) {
	testutil.SameOnEveryCLI(t, "IAM's limit on a policy, checked by the provider")
	acctest.Parallel(t)
	sb, provider := acctest.Target(t)
	calls := acctest.NewCallCounter(sb)
	full := sandboxtest.IDRange(0, conns.MaxPolicyInstances)
	shifted := sandboxtest.IDRange(100, conns.MaxPolicyInstances+100)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: acctest.HostGrant{Actions: []string{"view_host"}, Ids: full}.Config(provider),
				Check:  calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2, Pages: 2}, map[string]int{"batch_instance:grant": 50})),
			},
			{
				Config: acctest.HostGrant{Actions: []string{"view_host"}, Ids: shifted}.Config(provider),
				Check:  resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"view_host": sandboxtest.HostPaths(shifted...)}), calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2}, map[string]int{"batch_instance:revoke": 1, "batch_instance:grant": 1}))),
			},
		},
	})
}
