package access_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
)

// The access data sources on the systems a real site runs
// (acctest.BlueKingSandbox): most bk_job actions relate to bk_cmdb's biz
// and host, resource types of another system, which IAM's batch policy
// query refuses to answer without resources. Before issue 61 every read
// that asked it failed: a denied access check, bkiam_effective_permissions,
// bkiam_user_access with actions and bkiam_expiring of a user.

// TestAccAccessCheckCrossSystem_planTimeValidation: a check of bk_job's
// access_business with the business under bk_job's system fails the plan
// before any check is sent, saying that biz is bk_cmdb's.
func TestAccAccessCheckCrossSystem_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := acctest.BlueKingSandbox(t)
	resource.Test(t, acctest.PlanTimeTest(t, acctest.Transports[acctest.GatewayTransport].Block(sb.URL), []acctest.PlanTimeCase{{
		Name: "access check: another system's type under the action's system", Config: `
data "bkiam_access_check" "test" {
  system    = "bk_job"
  subject   = { type = "user", id = "alice" }
  actions   = ["access_business"]
  resources = [{ system = "bk_job", type = "biz", id = "2" }]
}

output "allowed" {
  value = data.bkiam_access_check.test.allowed
}
`, Want: []string{"Resources do not match the action", "Action access_business relates to [bk_cmdb/biz], in that order; resources give " +
			`[bk_job/biz]. Give one instance of each, in order (IAM answers a mismatch with a system error). Resource type biz is bk_cmdb's: ` +
			`write the entry's system as "bk_cmdb", the system of the type, which need not be the action's.`}}}))
}
