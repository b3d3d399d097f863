package provider_test

import (
	"errors"
	"fmt"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccStateUpgrade: a state written by today's provider (schema
// version 0) is upgraded by a provider whose schema is at version 1, as
// the first schema change will need: its step runs, the plan is empty and
// IAM is untouched. The state it writes back is at version 1, which
// today's provider then refuses with an error naming the fix instead of
// misreading it (the CLIs refuse it first). The later provider's identity
// is at version 1 too: Terraform 1.12+ upgrades today's stored identity
// through its step (UpgradeResourceIdentity, routed to the resource).
func TestAccStateUpgrade(t *testing.T) {
	acctest.Parallel(t)
	sb, block := acctest.Target(t)
	acctest.SandboxNames(t)
	var upgrades, identityUpgrades atomic.Int64
	config := block + acctest.SharedHostGrant("a", "view_host", "", "1", "2")
	want := map[string][]string{"view_host": sandboxtest.HostPaths("1", "2")}
	today := acctest.ProtoV6ProviderFactories
	later := map[string]func() (tfprotov6.ProviderServer, error){"bkiam": provider.VersionedServer(&upgrades, &identityUpgrades)}
	calls := acctest.NewCallCounter(sb)
	resource.Test(t, resource.TestCase{
		Steps: []resource.TestStep{
			{
				ProtoV6ProviderFactories: today,
				Config:                   config,
				Check:                    acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", want),
			},
			{
				// The later provider reads today's state through its step.
				ProtoV6ProviderFactories: later,
				Config:                   config,
				ConfigPlanChecks:         resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: func(*terraform.State) error {
					if upgrades.Load() == 0 {
						return errors.New("the upgrade step from schema version 0 never ran")
					}
					// Terraform 1.12+ keeps identities, and upgrades a stored
					// one through the provider when its version is older.
					if c := testutil.CLI(t); c.Terraform(1, 12) && identityUpgrades.Load() == 0 {
						return fmt.Errorf("%s did not upgrade the version 0 identity through the provider's step", c)
					}
					return nil
				},
			},
			{
				// Today's provider refuses the state the later one wrote. The
				// CLIs refuse it before asking the provider, whose own
				// refusal (TestUpgradeState) stands behind theirs.
				ProtoV6ProviderFactories: today,
				Config:                   config,
				ExpectError:              regexp.MustCompile(`created by a newer provider\s+version|newer version of the provider`),
			},
			{
				ProtoV6ProviderFactories: later,
				Config:                   config,
				ConfigPlanChecks:         acctest.EmptyPlanAfterApply,
				Check:                    resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", want), calls.Expect(map[string]int{"batch_instance:grant": 1, "policy_query_by_actions": 2, "policy_list": 2})),
			},
		},
		CheckDestroy: acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", nil),
	})
}
