package authz_test

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// A resource's policy revoked whole outside Terraform, then an update of
// it: IAM answers the next grant with a new policy id.

// TestAccPathOutsideRevokeThenUpdate: a grant's policy revoked whole
// outside Terraform (so IAM creates a new one, under a new id, on the next
// grant), then an update that grants to it, without drift detection. The
// plan cannot know the new id, so it shows it known after apply; before,
// it showed the old id and Terraform aborted with "Provider produced
// inconsistent result after apply".
func TestAccPathOutsideRevokeThenUpdate(t *testing.T) {
	acctest.Parallel(t)
	sb, provider := acctest.Target(t)
	revokeAll := func() {
		if _, err := acctest.OutsideClient(t, sb).BatchInstance(context.Background(), bkiam.BatchInstanceRequest{
			System: "bk_cmdb", Operate: bkiam.OperationRevoke, Subject: bkiam.Subject{Type: "user", ID: "alice"},
			Actions:   []bkiam.Action{{ID: "view_host"}},
			Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: "1", Name: "host1"}, {ID: "2", Name: "host2"}}}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:           provider + acctest.SharedHostGrant("test", "view_host", "", "1", "2"),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"view_host": sandboxtest.HostPaths("1", "2")}),
			},
			{
				PreConfig:        revokeAll,
				Config:           provider + acctest.SharedHostGrant("test", "view_host", "", "1", "2", "3"),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"view_host": sandboxtest.HostPaths("1", "2", "3")}), acctest.CheckPolicyIDs(sb)),
			},
		},
		CheckDestroy: acctest.CheckNothingHeld(sb),
	})
}

// TestAccPathOutsideRevokeThenUpdateCreator: the same for a creator
// grant: its created paths revoked outside Terraform (the creator's
// policies go), then an update that registers another instance. IAM
// answers the registration with new policy ids; the provider registers
// the other paths again in the same apply.
func TestAccPathOutsideRevokeThenUpdateCreator(t *testing.T) {
	acctest.Parallel(t)
	sb, provider := acctest.Target(t)
	revokeAll := func() {
		actions := make([]bkiam.Action, len(jobActions))
		for i, a := range jobActions {
			actions[i] = bkiam.Action{ID: a}
		}
		if _, err := acctest.OutsideClient(t, sb).BatchPath(context.Background(), bkiam.BatchPathRequest{
			System: "bk_job", Operate: bkiam.OperationRevoke, Subject: bkiam.Subject{Type: "user", ID: "alice"}, Actions: actions,
			Resources: []bkiam.PathResource{{System: "bk_job", Type: "job", Paths: [][]bkiam.PathNode{
				{{System: "bk_job", Type: "job", ID: "job1", Name: "job1 app"}}, {{System: "bk_job", Type: "job", ID: "job2", Name: "job2 app"}},
			}}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	config := func(ids ...string) string {
		return creatorConfig{system: "bk_job", typ: "job", instances: jobs(ids...), actions: jobActions}.config(provider)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config("job1", "job2"), ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: acctest.CheckHeld(sb, "bk_job", "user", "alice", allFour(jobPaths("job1", "job2")))},
			{PreConfig: revokeAll, Config: config("job1", "job2", "job3"), ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: acctest.CheckHeld(sb, "bk_job", "user", "alice", allFour(jobPaths("job1", "job2", "job3")))},
		},
		CheckDestroy: acctest.CheckNothingHeld(sb),
	})
}
