package acctest

import (
	"context"
	"fmt"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// BlueKingSandbox starts a sandbox on the BlueKing model
// (sandbox.BlueKingModel): subsets of the real bk_cmdb, bk_job and bk_sops,
// whose bk_job actions relate to bk_cmdb's biz and host, another system's
// resource types, as on a real site.
func BlueKingSandbox(t *testing.T) *sandboxtest.Sandbox {
	t.Helper()
	m, err := sandbox.BlueKingModel()
	if err != nil {
		t.Fatal(err)
	}
	return sandboxtest.Start(t, sandbox.WithModel(m))
}

// Instances is a grant's resource entry of instances of system's typ,
// each named after its type and id ("biz2").
func Instances(system, typ string, ids ...string) bkiam.InstanceResource {
	r := bkiam.InstanceResource{System: system, Type: typ}
	for _, id := range ids {
		r.Instances = append(r.Instances, bkiam.Instance{ID: id, Name: typ + id})
	}
	return r
}

// GrantOutside grants user action of system on resources (one entry per
// related type, each of its own system) until expiresAt, with
// batch_instance, as a script using the IAM API directly would.
func GrantOutside(t testing.TB, c *bkiam.Client, system, user, action string, expiresAt int64, resources ...bkiam.InstanceResource) {
	t.Helper()
	if _, err := c.BatchInstance(context.Background(), bkiam.BatchInstanceRequest{System: system, Operate: bkiam.OperationGrant,
		Subject: bkiam.Subject{Type: bkiam.SubjectUser, ID: user}, Actions: []bkiam.Action{{ID: action}}, Resources: resources,
		ExpiredAt: expiresAt}); err != nil {
		t.Fatal(err)
	}
}

// BlueKingModelCheckCases are the plan-time checks of grants of bk_job's
// actions on bk_cmdb's types against the BlueKing model (check_model):
// the mistake a user makes writing them is a resource, or a creator's
// ancestor, under the action's system instead of its type's; each is
// refused before any call, saying whose type it is.
func BlueKingModelCheckCases() []PlanTimeCase {
	grant := func(actions, resources string) string {
		return fmt.Sprintf(`
resource "bkiam_instance_grant" "test" {
  system    = "bk_job"
  subject   = { type = "user", id = "alice" }
  actions   = [%s]
  resources = [%s]
}
`, actions, resources)
	}
	return []PlanTimeCase{
		{Name: "another system's type under the action's system", Config: grant(`"access_business"`,
			`{ system = "bk_job", type = "biz", instances = { "2" = "biz2" } }`),
			Want: []string{"Resource type does not match the action", `Action "access_business" of system bk_job relates to bk_cmdb/biz in this ` +
				`order, so resources[0] must be bk_cmdb/biz, got bk_job/biz. Resource type biz is bk_cmdb's: write the entry's system as "bk_cmdb", ` +
				`the system of the type, which need not be the action's.`}},
		{Name: "a combined resource of two systems, both under the action's", Config: grant(`"execute_script"`,
			`{ system = "bk_job", type = "script", instances = { "s1" = "s1" } }, { system = "bk_job", type = "host", instances = { "1" = "host1" } }`),
			Want: []string{"Resource type does not match the action", `Action "execute_script" of system bk_job relates to bk_job/script, ` +
				`bk_cmdb/host in this order, so resources[1] must be bk_cmdb/host, got bk_job/host. Resource type host is bk_cmdb's`}},
		{Name: "a creator's ancestor of another system under the grant's", Config: `
resource "bkiam_creator_grant" "test" {
  system    = "bk_job"
  type      = "script"
  creator   = "alice"
  instances = { "/bk_job,biz,2/bk_job,script,s1/" = "deploy.sh" }
}
`, Want: []string{"Unknown ancestor type", `The path "/bk_job,biz,2/bk_job,script,s1/" names an ancestor bk_job,biz,2, but system bk_job ` +
			`registers no resource type "biz", so IAM would refuse the creator grant. script's ancestor biz is bk_cmdb's: write the node under ` +
			`the system of its type, bk_cmdb,biz,2.`}},
		{Name: "a creator's ancestor the system does not have", Config: `
resource "bkiam_creator_grant" "test" {
  system    = "bk_job"
  type      = "job_plan"
  creator   = "alice"
  instances = { "/bk_job,template,1001/bk_job,job_plan,p1/" = "nightly" }
}
`, Want: []string{"Unknown ancestor type", `registers no resource type "template", so IAM would refuse the creator grant. The types system ` +
			`bk_job registers above job_plan are bk_job/job_template, bk_cmdb/biz, bk_cmdb/business_set.`}},
	}
}
