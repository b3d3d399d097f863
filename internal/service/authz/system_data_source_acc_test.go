package authz_test

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccSystemDataSource: bkiam_system shows the sandbox's model as a
// module would use it (related types in order, auth_type, parents, the
// creator tree flattened by type), and a configuration can check a grant
// against it; each system's model is read once per command.
func TestAccSystemDataSource(t *testing.T) {
	testutil.SameOnEveryCLI(t, "a data source read, the same call on every CLI")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	cfg := provider + `
data "bkiam_system" "cmdb" {
  system = "bk_cmdb"
}

data "bkiam_system" "sops" {
  system = "bk_sops"
}

locals {
  # What a module does with it: the resource types a grant of an action
  # must give, in order.
  edit_biz_host_types = [for rt in data.bkiam_system.cmdb.actions["edit_biz_host"].related_resource_types : rt.id]
}

output "edit_biz_host_types" {
  value = join(",", local.edit_biz_host_types)
}

output "rbac_actions" {
  value = join(",", sort([for id, a in data.bkiam_system.cmdb.actions : id if a.auth_type == "rbac"]))
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckOutput("edit_biz_host_types", "biz,host"),
					resource.TestCheckOutput("rbac_actions", "manage_host"),
					resource.TestCheckResourceAttr("data.bkiam_system.cmdb", "actions.%", "8"),
					resource.TestCheckResourceAttr("data.bkiam_system.cmdb", "actions.create_biz.related_resource_types.#", "0"),
					resource.TestCheckResourceAttr("data.bkiam_system.cmdb", "actions.view_host.related_resource_types.0.system", "bk_cmdb"),
					resource.TestCheckResourceAttr("data.bkiam_system.cmdb", "resource_types.host.parents.0.id", "biz"),
					resource.TestCheckResourceAttr("data.bkiam_system.cmdb", "creator_actions.biz.parent", ""),
					resource.TestCheckResourceAttr("data.bkiam_system.cmdb", "creator_actions.biz.actions.#", "2"),
					resource.TestCheckResourceAttr("data.bkiam_system.sops", "creator_actions.mini_app.parent", "project"),
					resource.TestCheckResourceAttr("data.bkiam_system.sops", "creator_actions.mini_app.actions.0.id", "mini_app_view"),
					func(*terraform.State) error {
						if n := acctest.IAMCalls(sb) - sb.Stats().Requests["policy_list"]; n != 0 {
							return fmt.Errorf("reading the models sent %d other requests", n)
						}
						return nil
					},
				),
			},
			{
				Config:      provider + `data "bkiam_system" "x" { system = "bk_nope" }`,
				ExpectError: regexp.MustCompile(`(?s)Cannot read the model of system bk_nope.*code\s+1901404`),
			},
			{
				Config:      provider + `data "bkiam_system" "x" { system = " bk_cmdb" }`,
				ExpectError: regexp.MustCompile(`(?s)Invalid IAM id.*system is " bk_cmdb", which starts or ends with white space`),
			},
			{
				Config:      acctest.Transports[acctest.ESBTransport].Block(sb.URL) + `data "bkiam_system" "x" { system = "bk_cmdb" }`,
				ExpectError: regexp.MustCompile(`(?s)Cannot read the model of system bk_cmdb.*needs\s+the\s+API\s+gateway:\s+ESB\s+has\s+no\s+model\s+API;\s+set\s+apigw_url`),
			},
		},
	})
}
