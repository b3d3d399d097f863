package management_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestAccGradeManagerAdoptedWithoutScopes: a grade manager imported as
// terraform query generates it, without the scopes IAM cannot read back,
// plans: the import applies without a call that changes it, and the next
// plan is empty. Its null scopes are unknown to the group permissions'
// plan-time check, which then lets IAM judge (a grant inside the scope
// IAM holds applies). A change of the grade manager, which IAM applies as
// a full replace of its scopes, fails at plan, naming the attribute and
// the fix; so does a create without scopes. The destroy works with both
// null.
func TestAccGradeManagerAdoptedWithoutScopes(t *testing.T) {
	acctest.NeedsSandbox(t)
	acctest.Parallel(t)
	sb := sandboxtest.Start(t, sandbox.WithGradeManagerDeleteDelay(0))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	client := acctest.OutsideClient(t, sb)
	gm, err := client.CreateGradeManager(context.Background(), "bk_cmdb", bkiam.GradeManagerSpec{
		Name: "platform", Members: []string{"alice"},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "view_host"}},
			Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "*"}}}}}}},
		SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	const addr = "bkiam_grade_manager.platform"
	adopted := acctest.GradeManagerWithoutScopesHCL("platform", fmt.Sprintf("bk_cmdb/%d", gm))
	dev := acctest.GroupsHCL([3]string{"dev", "dev", ""})
	calls := acctest.NewCallCounter(sb)
	noUpdate := func(*terraform.State) error {
		if n := calls.SinceLast()["grade_manager:update"]; n != 0 {
			return fmt.Errorf("%d grade manager updates, want none: IAM's would replace the scopes it holds", n)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: calls.Reset,
				Config:    provider + adopted + dev + acctest.PermissionHCL("dev", []string{"view_host"}, map[string]string{"7": "host 7"}),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeTestCheckFunc(
					noUpdate,
					resource.TestCheckResourceAttr(addr, "id", fmt.Sprint(gm)),
					resource.TestCheckNoResourceAttr(addr, "authorization_scopes"),
					resource.TestCheckNoResourceAttr(addr, "subject_scopes"),
					checkGroupHeld(sb, map[string][]string{"view_host": {host7}}),
				),
			},
			{
				// The group, known now, is the grade manager's, whose planned
				// scope is unknown: the permission's change is not checked at
				// plan (an empty scope would refuse it), and IAM applies it.
				Config: provider + adopted + dev + acctest.PermissionHCL("dev", []string{"view_host"}, map[string]string{"7": "host 7", "8": "host 8"}),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("bkiam_group_permission.dev", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(noUpdate,
					checkGroupHeld(sb, map[string][]string{"view_host": {host7, "/bk_cmdb,host,8/"}})),
			},
			{
				Config: provider + acctest.GradeManagerWithoutScopesHCL("platform-2", "") + dev +
					acctest.PermissionHCL("dev", []string{"view_host"}, map[string]string{"7": "host 7", "8": "host 8"}),
				ExpectError: acctest.PlanErrorPattern("Scopes needed to update the grade manager",
					"authorization_scopes is not set, and this plan updates the grade manager (name). IAM replaces a grade manager's "+
						"scopes whole on every update and cannot read them back: write authorization_scopes and subject_scopes as they "+
						"are in IAM (the IAM web UI shows them) before changing name."),
			},
			{
				Config: provider + adopted + dev + acctest.PermissionHCL("dev", []string{"view_host"}, map[string]string{"7": "host 7", "8": "host 8"}) +
					`
resource "bkiam_grade_manager" "other" {
  system  = "bk_cmdb"
  name    = "other"
  members = ["alice"]
}
`,
				ExpectError: acctest.PlanErrorPattern("Scopes needed to create a grade manager",
					"subject_scopes is not set, and IAM creates a grade manager only with both authorization_scopes and subject_scopes"),
			},
		},
		CheckDestroy: func(*terraform.State) error {
			if m := sb.Management(); len(m.GradeManagers) != 0 || len(m.Groups) != 0 {
				return fmt.Errorf("after the destroy the sandbox holds %d grade managers and %d groups", len(m.GradeManagers), len(m.Groups))
			}
			return nil
		},
	})
}
