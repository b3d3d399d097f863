package provider_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
)

// TestAccSite_MoveGroupGrant: a group's custom policy granted through the
// authorization API (bkiam_instance_grant) moves to a bkiam_group_permission,
// which reads it through the management API, and back, with moved blocks.
// Each move plans a no-op and the plan after it is empty, so both APIs
// read the one policy alike; the group holds the same instances throughout,
// read through the management API. Terraform 1.8+ (OpenTofu 1.12 cannot
// refresh a moved resource that has an identity: TestAccMoveInstanceGrantToGroupPermission).
func TestAccSite_MoveGroupGrant(t *testing.T) {
	if !acctest.CLI.Terraform(1, 8) {
		t.Skipf("%s does not move a resource to another type (Terraform 1.8+; OpenTofu 1.12 fails after the move)", acctest.CLI)
	}
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	base := e.Provider + e.GroupBase("move", p.Actions[0], p.Instances...)
	held := p.Instances[:2]
	grant := `
resource "bkiam_instance_grant" "x" {
  system    = %[1]q
  subject   = { type = "group", id = bkiam_group.site.id }
  actions   = [%[2]q]
  resources = [{ system = %[1]q, type = %[3]q, instances = %[4]s }]
}
`
	permission := `
resource "bkiam_group_permission" "x" {
  system    = %[1]q
  group_id  = bkiam_group.site.id
  actions   = [%[2]q]
  resources = [{ system = %[1]q, type = %[3]q, instances = %[4]s }]
}
`
	config := func(block, moved string) string {
		return base + fmt.Sprintf(block, p.System, p.Actions[0], p.Type, hclMap(held...)) + moved
	}
	moved := func(from, to string) string {
		return fmt.Sprintf("\nmoved {\n  from = %s.x\n  to   = %s.x\n}\n", from, to)
	}
	// inIAM reads the group's custom policy through the management API.
	inIAM := func(s *terraform.State) error {
		group, err := strconv.ParseInt(s.RootModule().Resources["bkiam_group.site"].Primary.ID, 10, 64)
		if err != nil {
			return err
		}
		policies, err := e.Client.GroupPolicies(context.Background(), p.System, group)
		if err != nil {
			return err
		}
		var instances []string
		for _, gp := range policies {
			for _, rg := range gp.ResourceGroups {
				for _, tp := range rg {
					for _, path := range tp.Paths {
						instances = append(instances, gp.Action+" "+path[len(path)-1].ID)
					}
				}
			}
		}
		var want []string
		for _, id := range held {
			want = append(want, p.Actions[0]+" "+id)
		}
		if slices.Sort(instances); !slices.Equal(instances, want) {
			return fmt.Errorf("the group holds %v, want %v", instances, want)
		}
		return nil
	}
	noop := func(addr string) resource.ConfigPlanChecks {
		return resource.ConfigPlanChecks{
			PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop)},
			PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(grant, ""), Check: inIAM},
			{Config: config(permission, moved("bkiam_instance_grant", "bkiam_group_permission")), ConfigPlanChecks: noop("bkiam_group_permission.x"), Check: inIAM},
			{Config: config(grant, moved("bkiam_group_permission", "bkiam_instance_grant")), ConfigPlanChecks: noop("bkiam_instance_grant.x"), Check: inIAM},
		},
	})
}
