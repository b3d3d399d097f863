package authz_test

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
)

// The expiry check and the creator grants on the systems a real site
// runs (acctest.BlueKingSandbox): most bk_job actions relate to bk_cmdb's
// biz and host, resource types of another system, which IAM's batch
// policy query refuses to answer without resources. Before issue 61 every
// plan of such a grant said "Cannot read the expiry IAM keeps" instead of
// what the grant does to IAM's expiry, and failed with expiry_conflicts =
// "error".

// TestAccCrossSystem_planTimeValidation: on the BlueKing model, a
// resource of bk_cmdb's type written under bk_job's system (access_business
// on "bk_job"/"biz", execute_script's host under bk_job), and a creator's
// ancestor so written, fail the plan before any call, saying that the
// entry goes under the system of its type; as does an ancestor type the
// system has not, with the types it has above the instance's.
func TestAccCrossSystem_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := acctest.BlueKingSandbox(t)
	test := acctest.PlanTimeTest(t, acctest.Transports[acctest.GatewayTransport].Block(sb.URL), acctest.BlueKingModelCheckCases())
	test.CheckDestroy = func(*terraform.State) error {
		if n := acctest.IAMCalls(sb); n != 0 {
			return fmt.Errorf("refused plans sent %d requests besides model reads: %v", n, sb.Stats().Requests)
		}
		return nil
	}
	resource.Test(t, test)
}
