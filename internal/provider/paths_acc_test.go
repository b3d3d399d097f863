package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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

// TestAccPathOutsideRevokeThenUpdateCreator: the same for a creator
// grant: its created paths revoked outside Terraform (the creator's
// policies go), then an update that registers another instance. IAM
// answers the registration with new policy ids; the provider registers
// the other paths again in the same apply.
func TestAccPathOutsideRevokeThenUpdateCreator(t *testing.T) {
	sb, provider := target(t)
	revokeAll := func() {
		actions := make([]bkiam.Action, len(jobActions))
		for i, a := range jobActions {
			actions[i] = bkiam.Action{ID: a}
		}
		if _, err := outsideClient(t, sb).BatchPath(context.Background(), bkiam.BatchPathRequest{
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
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config("job1", "job2"), ConfigPlanChecks: emptyPlanAfterApply,
				Check: checkHeld(sb, "bk_job", "user", "alice", allFour(jobPaths("job1", "job2")))},
			{PreConfig: revokeAll, Config: config("job1", "job2", "job3"), ConfigPlanChecks: emptyPlanAfterApply,
				Check: checkHeld(sb, "bk_job", "user", "alice", allFour(jobPaths("job1", "job2", "job3")))},
		},
		CheckDestroy: checkNothingHeld(sb),
	})
}

// TestAccPathExpiringBesidePermanent: alice holds view_host through a
// grant that expires (a: host 1) and a permanent one (b: host 2). IAM
// keeps one expiry per subject and action, the later, so after a's expiry
// IAM still holds host 1. a stays in state, its plan stays empty (before,
// the provider dropped it on its own clock and every plan then failed on
// its past expires_at), and deleting a's block revokes host 1 and leaves
// b's host 2. With and without detect_drift.
func TestAccPathExpiringBesidePermanent(t *testing.T) {
	for _, drift := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "detect_drift"}[drift], func(t *testing.T) {
			sb, provider := target(t)
			if drift {
				provider = strings.Replace(provider, "provider \"bkiam\" {\n", "provider \"bkiam\" {\n  detect_drift = true\n", 1)
			}
			expiry := time.Now().Add(8 * time.Second).Truncate(time.Second)
			a := sharedHostGrant("a", "view_host", fmt.Sprintf("  expires_at = %q\n", expiry.UTC().Format(time.RFC3339)), "1")
			b := sharedHostGrant("b", "view_host", "", "2")
			both := map[string][]string{"view_host": hostPaths("1", "2")}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{
					{Config: provider + a + b, ConfigPlanChecks: emptyPlanAfterApply, Check: checkHeld(sb, "bk_cmdb", "user", "alice", both)},
					{
						PreConfig: func() { time.Sleep(time.Until(expiry) + time.Second) },
						Config:    provider + a + b,
						PlanOnly:  true,
						Check:     checkHeld(sb, "bk_cmdb", "user", "alice", both),
					},
					{
						Config:           provider + b,
						ConfigPlanChecks: emptyPlanAfterApply,
						Check:            checkHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"view_host": hostPaths("2")}),
					},
				},
				CheckDestroy: checkNothingHeld(sb),
			})
		})
	}
}
