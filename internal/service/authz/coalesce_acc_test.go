package authz_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccInstanceGrant_coalescing pins the call counts of the benchmark's
// second scenario at a small size: many resources of one instance each for
// one subject are granted and revoked in shared calls; with batch_window =
// "0s", one call each. How many calls merge depends on when Terraform's
// walk hands the resources over, so the merged case asserts a floor that
// holds under load (-race on two cores): at least half the calls saved
// with IAM at 20 ms per call, two thirds at 100 ms, where more requests
// gather while each call is answered (issue 55: merging keeps its gain when
// IAM is slow). Runs without load merge about 5x; make bench reports the
// figures at 1000.
func TestAccInstanceGrant_coalescing(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the calls the provider merges are its own doing")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	const resources = 50
	for _, tc := range []struct {
		name   string
		window string
		// latency is IAM's own time per call, as in make bench: while one
		// call is in flight, the next resources' calls gather.
		latency int
		check   func(calls int) error
	}{
		{"merged", "", 20, func(calls int) error {
			if calls > resources/2 {
				return fmt.Errorf("%d resources took %d calls, want at most %d", resources, calls, resources/2)
			}
			return nil
		}},
		// IAM slow: merging keeps its gain (make bench measures 1000 at
		// 100 ms), as more requests gather while each call is answered.
		{"merged, IAM slow", "", 100, func(calls int) error {
			if calls > resources/3 {
				return fmt.Errorf("%d resources took %d calls against an IAM at 100 ms per call, want at most %d", resources, calls, resources/3)
			}
			return nil
		}},
		{"off", `batch_window = "0s"`, 20, func(calls int) error {
			if calls != resources {
				return fmt.Errorf("%d resources took %d calls with merging off, want one each", resources, calls)
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.Start(t)
			if err := sb.SetFaults(sandbox.Faults{LatencyMS: tc.latency}); err != nil {
				t.Fatal(err)
			}
			calls := acctest.NewCallCounter(sb)
			config := fmt.Sprintf(`
provider "bkiam" {
  apigw_url  = %q
  app_code   = %q
  app_secret = %q
  %s
}

resource "bkiam_instance_grant" "host" {
  count     = %d # the test framework's state shim cannot read for_each keys
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { (tostring(count.index)) = "host${count.index}" } }]
}
`, sb.URL, sandboxtest.AppCode, sandboxtest.AppSecret, tc.window, resources)
			count := func(kind string) func(*terraform.State) error {
				return func(*terraform.State) error { return tc.check(calls.SinceLast()[kind]) }
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:           config,
					ConfigPlanChecks: acctest.EmptyPlanAfterApply,
					Check: resource.ComposeAggregateTestCheckFunc(
						count("batch_instance:grant"), acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"view_host": sandboxtest.HostPaths(sandboxtest.IDRange(0, resources)...)}),
					),
				}},
				CheckDestroy: resource.ComposeAggregateTestCheckFunc(
					count("batch_instance:revoke"), acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", nil),
				),
			})
		})
	}
}
