package authz_test

import (
	"context"
	"fmt"
	"reflect"
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

// The read-back cases where a real site differs from a first reading of
// the API (package doc of internal/bkiam, "Where the real server differs
// from a first reading"). Each pairs a step where IAM holds the grant in
// the unexpected shape (the plan must be empty) with a control where IAM
// no longer holds it (the plan must restore it), so that a read that
// sees nothing, or one that sees everything, cannot pass.

// groupHostGrant is group 1's grant of action on hosts 1 and 2.
func groupHostGrant(provider, action string) string {
	return provider + `
resource "bkiam_instance_grant" "group" {
  system    = "bk_cmdb"
  subject   = { type = "group", id = "1" }
  actions   = ["` + action + `"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1", "2" = "host2" } }]
}
`
}

// revokeGroupHost revokes group 1's action on a host outside Terraform.
func revokeGroupHost(t *testing.T, sb *sandboxtest.Sandbox, action, id string) {
	t.Helper()
	_, err := acctest.OutsideClient(t, sb).BatchInstance(context.Background(), bkiam.BatchInstanceRequest{
		System: "bk_cmdb", Operate: bkiam.OperationRevoke, Subject: bkiam.Subject{Type: "group", ID: "1"},
		Actions:   []bkiam.Action{{ID: action}},
		Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: id, Name: sandboxtest.HostName(id)}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// restoresGroupGrant: the plan updates the group's grant (to grant the
// lost host again), and the apply leaves nothing to do.
var restoresGroupGrant = resource.ConfigPlanChecks{
	PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("bkiam_instance_grant.group", plancheck.ResourceActionUpdate)},
	PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
}

// TestAccReadBackTemplateRows: a group that also holds the action through
// a permission template has two rows for it; the custom grant behind the
// template row (whose id is higher) still reads as held. Control: a host
// revoked from the custom row shows as lost although the template row
// remains.
func TestAccReadBackTemplateRows(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the provider's reading of IAM's rows")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	cfg := groupHostGrant(acctest.DriftProvider(sb, ""), "edit_host")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
			{
				PreConfig: func() {
					if err := sb.AddTemplatePolicy("bk_cmdb", sandbox.TemplatePolicy{TemplateID: 7, Group: "1", Action: "edit_host",
						Paths: []string{"/bk_cmdb,host,9/"}}); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				PreConfig:        func() { revokeGroupHost(t, sb, "edit_host", "2") },
				Config:           cfg,
				ConfigPlanChecks: restoresGroupGrant,
				Check:            acctest.CheckHeld(sb, "bk_cmdb", "group", "1", map[string][]string{"edit_host": sandboxtest.HostPaths("1", "2", "9")}),
			},
		},
	})
}

// TestAccReadBackRBACGroupGrant: a group's grant of an RBAC action is
// listed only with type=rbac; it reads as held. Control: a host revoked
// outside shows as lost.
func TestAccReadBackRBACGroupGrant(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the provider's reading of IAM's rows")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	cfg := groupHostGrant(acctest.DriftProvider(sb, ""), "manage_host")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply, Check: func(*terraform.State) error {
				for _, p := range sb.Policies(sandbox.PolicyFilter{SubjectType: "group", Action: "manage_host"}).Policies {
					if !p.RBAC {
						return fmt.Errorf("the sandbox stored group 1's manage_host grant as ABAC: the test would not exercise the RBAC list")
					}
				}
				return nil
			}},
			{
				PreConfig:        func() { revokeGroupHost(t, sb, "manage_host", "2") },
				Config:           cfg,
				ConfigPlanChecks: restoresGroupGrant,
				Check:            acctest.CheckHeld(sb, "bk_cmdb", "group", "1", map[string][]string{"manage_host": sandboxtest.HostPaths("1", "2")}),
			},
		},
	})
}

// TestAccReadBackAncestorStarPrefix: a creator's path is still held when
// its own path is gone but a grant of every mini app under any project
// (the path project "*", mini app "*": IAM's prefix "/project,*/")
// remains. Control:
// once that grant is revoked too, the creator path shows as lost (its only
// instance, so the grant is planned afresh).
func TestAccReadBackAncestorStarPrefix(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the provider's reading of IAM's rows")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	cfg := acctest.DriftProvider(sb, "") + `
resource "bkiam_creator_grant" "test" {
  system  = "bk_sops"
  type    = "mini_app"
  creator = "alice"
  actions = ["mini_app_edit", "mini_app_view"]
  instances = {
    "/bk_sops,project,project1/bk_sops,mini_app,m1/" = "mini app 1"
  }
}
`
	// Every mini app under any project: the mini app's "*" leaf is dropped
	// from the prefix. (A path of the lone project "*" is refused for a
	// user, as the real IAM refuses it: TestUserGrantOfTheLoneStar.)
	everyProject := []bkiam.PathNode{{System: "bk_sops", Type: "project", ID: "*", Name: ""}, {System: "bk_sops", Type: "mini_app", ID: "*", Name: ""}}
	creatorPath := []bkiam.PathNode{{System: "bk_sops", Type: "project", ID: "project1", Name: "Project One"}, {System: "bk_sops", Type: "mini_app", ID: "m1", Name: "mini app 1"}}
	outside := func(op bkiam.Operation, path []bkiam.PathNode) {
		_, err := acctest.OutsideClient(t, sb).BatchPath(context.Background(), bkiam.BatchPathRequest{
			System: "bk_sops", Operate: op, Subject: bkiam.Subject{Type: "user", ID: "alice"},
			Actions:   []bkiam.Action{{ID: "mini_app_edit"}},
			Resources: []bkiam.PathResource{{System: "bk_sops", Type: "mini_app", Paths: [][]bkiam.PathNode{path}}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
			{
				PreConfig: func() {
					outside(bkiam.OperationGrant, everyProject)
					outside(bkiam.OperationRevoke, creatorPath)
				},
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            checkHeldAction(sb, "bk_sops", "user", "alice", "mini_app_edit", "/bk_sops,project,*/bk_sops,mini_app,*/"),
			},
			{
				PreConfig: func() { outside(bkiam.OperationRevoke, everyProject) },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("bkiam_creator_grant.test", plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkHeldAction(sb, "bk_sops", "user", "alice", "mini_app_edit", "/bk_sops,project,project1/bk_sops,mini_app,m1/"),
			},
		},
	})
}

// checkHeldAction checks the paths the sandbox holds for one action of a subject.
func checkHeldAction(sb *sandboxtest.Sandbox, system, subjectType, subjectID, action string, want ...string) func(*terraform.State) error {
	return func(*terraform.State) error {
		if got := sandboxtest.HeldPaths(sb, system, subjectType, subjectID)[action]; !reflect.DeepEqual(got, want) {
			return fmt.Errorf("the sandbox holds %s for %s %s: %q, want %q", action, subjectType, subjectID, got, want)
		}
		return nil
	}
}

// TestAccDestroyAfterGroupDeleted: a grant to a user group that was
// deleted in IAM since (taking its policies with it) is destroyed
// cleanly: IAM answers a revoke for a group it does not know with OK and
// nothing revoked. Refresh without detect_drift does not notice the
// deletion, so the destroy is what meets it.
func TestAccDestroyAfterGroupDeleted(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM answers for a deleted group")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	calls := acctest.NewCallCounter(sb)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:           strings.Replace(groupHostGrant(provider, "edit_host"), `id = "1"`, `id = "3"`, 1),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            acctest.CheckHeld(sb, "bk_cmdb", "group", "3", map[string][]string{"edit_host": sandboxtest.HostPaths("1", "2")}),
			},
			{
				PreConfig: func() {
					if err := sb.DeleteGroup("3"); err != nil {
						t.Fatal(err)
					}
					calls.Reset()
				},
				Config: provider,
				Check:  calls.Expect(map[string]int{"batch_instance:revoke": 1}),
			},
		},
	})
}
