package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// The paths a user's CLI takes besides plan-then-apply with a refresh,
// each asserting what IAM holds and that the next plan is honest.

// TestAccPathOutsideRevokeThenUpdate: a grant's policy revoked whole
// outside Terraform (so IAM creates a new one, under a new id, on the next
// grant), then an update that grants to it, without drift detection. The
// plan cannot know the new id, so it shows it known after apply; before,
// it showed the old id and Terraform aborted with "Provider produced
// inconsistent result after apply".
func TestAccPathOutsideRevokeThenUpdate(t *testing.T) {
	sb, provider := target(t)
	revokeAll := func() {
		if _, err := outsideClient(t, sb).BatchInstance(context.Background(), bkiam.BatchInstanceRequest{
			System: "bk_cmdb", Operate: bkiam.OperationRevoke, Subject: bkiam.Subject{Type: "user", ID: "alice"},
			Actions:   []bkiam.Action{{ID: "view_host"}},
			Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: "1", Name: "host1"}, {ID: "2", Name: "host2"}}}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:           provider + sharedHostGrant("test", "view_host", "", "1", "2"),
				ConfigPlanChecks: emptyPlanAfterApply,
				Check:            checkHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"view_host": hostPaths("1", "2")}),
			},
			{
				PreConfig:        revokeAll,
				Config:           provider + sharedHostGrant("test", "view_host", "", "1", "2", "3"),
				ConfigPlanChecks: emptyPlanAfterApply,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"view_host": hostPaths("1", "2", "3")}),
					checkPolicyIDs(sb),
				),
			},
		},
		CheckDestroy: checkNothingHeld(sb),
	})
}
