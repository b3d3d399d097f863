package authz_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccModelChecks: each check refuses its configuration at plan time,
// naming the attribute and the fix, and no refused plan sends IAM anything
// but model reads.
func TestAccModelChecks(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	test := acctest.PlanTimeTest(t, acctest.Transports[acctest.GatewayTransport].Block(sb.URL), acctest.ModelCheckCases())
	test.CheckDestroy = func(*terraform.State) error {
		if n := acctest.IAMCalls(sb); n != 0 {
			return fmt.Errorf("refused plans sent %d requests besides model reads: %v", n, sb.Stats().Requests)
		}
		if sb.Stats().Requests["model_query"] == 0 {
			return fmt.Errorf("no model was read: the checks did not run")
		}
		return nil
	}
	resource.Test(t, test)
}

// TestAccModelChecksOff: with check_model = false the plan reads no model
// and IAM's own answer refuses the apply.
func TestAccModelChecksOff(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the provider's setting")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      acctest.NoModelChecks(acctest.Transports[acctest.GatewayTransport].Block(sb.URL)) + acctest.ModelCheckCases()[0].Config,
			ExpectError: regexp.MustCompile(`(?s)IAM call failed.*veiw_host`),
		}},
		CheckDestroy: func(*terraform.State) error {
			if n := sb.Stats().Requests["model_query"]; n != 0 {
				return fmt.Errorf("%d model reads with check_model = false", n)
			}
			return nil
		},
	})
}

// TestAccModelReadFails: a model read that fails after the retries fails
// the plan with the route, the code and the request id, and says how to
// turn the checks off; the plan sends nothing else.
func TestAccModelReadFails(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what a failed model read makes the provider do")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				if err := sb.SetFaults(sandbox.Faults{ModelFail: &sandbox.FailFault{Count: 100, Status: 503, Code: 1902500}}); err != nil {
					t.Fatal(err)
				}
			},
			Config: acctest.Transports[acctest.GatewayTransport].Block(sb.URL) + acctest.HostGrant{Actions: []string{"view_host"}, Ids: []string{"1"}}.Config(""),
			ExpectError: regexp.MustCompile(`(?s)Cannot read the model of system bk_cmdb.*GET\s+/api/v1/model/systems/bk_cmdb/query.*HTTP\s+503.*` +
				`code\s+1902500.*request\s+[0-9a-f]{32}.*after\s+3\s+attempts.*set\s+check_model\s+=\s+false`),
		}},
		CheckDestroy: func(*terraform.State) error {
			if n := acctest.IAMCalls(sb); n != 0 {
				return fmt.Errorf("the failed plan sent %d other requests", n)
			}
			return nil
		},
	})
}

// TestAccModelReadsPerCommand pins the cost: a plan of 201 resources across three
// systems reads each system's model once, and the policy list of each
// action it grants once (the expiry check), and a plan of an unchanged
// configuration reads no model and calls nothing.
func TestAccModelReadsPerCommand(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	var b strings.Builder
	for i := range 67 {
		fmt.Fprintf(&b, `
resource "bkiam_instance_grant" "cmdb%d" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "%d" = "host%d" } }]
}
resource "bkiam_instance_grant" "job%d" {
  system    = "bk_job"
  subject   = { type = "user", id = "bob" }
  actions   = ["view"]
  resources = [{ system = "bk_job", type = "job", instances = { "%d" = "job%d" } }]
}
resource "bkiam_creator_grant" "sops%d" {
  system    = "bk_sops"
  type      = "project"
  creator   = "carol"
  instances = { "p%d" = "project %d" }
}
`, i, i, i, i, i, i, i, i, i)
	}
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), b.String())
	reads := func() int { return sb.Stats().Requests["model_query"] }
	w.MustRun("plan", "-out=tfplan")
	if n := reads(); n != 3 {
		t.Fatalf("a plan of 201 resources in 3 systems read %d models, want 3", n)
	}
	// The expiry check reads each action a user is granted once, however
	// many resources grant it: view_host, view and the two creator actions
	// of a sops project.
	if n := sb.Stats().Requests["policy_list"]; n != 4 {
		t.Fatalf("the plan read %d pages of policy lists, want 4: one per action", n)
	}
	if n := acctest.IAMCalls(sb) - 4; n != 0 {
		t.Fatalf("the plan sent %d other requests", n)
	}
	w.MustRun("apply", "tfplan")
	before, calls := reads(), acctest.IAMCalls(sb)
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the apply is not empty")
	}
	if n := reads() - before; n != 0 {
		t.Fatalf("a plan of the unchanged configuration read %d models", n)
	}
	if n := acctest.IAMCalls(sb) - calls; n != 0 {
		t.Fatalf("a plan of the unchanged configuration sent %d requests", n)
	}
}

// TestAccExpiryConflictsError_planTime: with expiry_conflicts = "error"
// the plans of acctest.ExpiryConflictCases fail, whatever IAM holds, and
// send IAM nothing: the configuration's own conflict (two resources
// granting alice view_host, one permanent, one until a date: IAM keeps
// the later for both) and a policy the check cannot read.
func TestAccExpiryConflictsError_planTime(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	test := acctest.PlanTimeTest(t, acctest.ExpiryConflictsError(acctest.Transports[acctest.GatewayTransport].Block(sb.URL)), acctest.ExpiryConflictCases())
	test.CheckDestroy = func(*terraform.State) error {
		if n := acctest.IAMCalls(sb); n != 0 {
			return fmt.Errorf("refused plans sent %d requests besides reads: %v", n, sb.Stats().Requests)
		}
		return nil
	}
	resource.Test(t, test)
}
