package acctest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

const GrantAddr = "bkiam_instance_grant.test"

// HostGrant renders a bkiam_instance_grant of bk_cmdb hosts to alice.
type HostGrant struct {
	Actions   []string
	Ids       []string
	Name      func(string) string
	ExpiresAt string
}

func (g HostGrant) Config(provider string) string {
	name := g.Name
	if name == nil {
		name = sandboxtest.HostName
	}
	expires := ""
	if g.ExpiresAt != "" {
		expires = fmt.Sprintf("  expires_at = %q\n", g.ExpiresAt)
	}
	return provider + fmt.Sprintf(`
resource "bkiam_instance_grant" "test" {
  system  = "bk_cmdb"
  subject = { type = "user", id = "alice" }
  actions = [%s]
  resources = [{
    system    = "bk_cmdb"
    type      = "host"
    instances = %s
  }]
%s}
`, QuoteList(g.Actions), InstancesHCL(g.Ids, name), expires)
}

func QuoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// EmptyPlanAfterApply is the check every applying step carries.
var EmptyPlanAfterApply = resource.ConfigPlanChecks{
	PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
}

func EqualStrings(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}
