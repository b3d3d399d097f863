package management_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestAccGroupMembersObjectAllowList: on IAM's SaaS of July 2026, groups
// of a grade manager made in the web UI answer the ownership 403, whose
// error names the row of the management object allow-list to ask for
// (the app, the group, the refused call's API); with such a row, here for
// every API on the other group, the members are managed as any. The
// default model's groups are 1 to 3: the groups made here are 4 and 5.
func TestAccGroupMembersObjectAllowList(t *testing.T) {
	acctest.NeedsSandbox(t)
	acctest.Parallel(t)
	sb := sandboxtest.Start(t, sandbox.WithModel(acctest.EditedModel(t, func(m *sandbox.Model) {
		m.SaaS = "2026"
		m.Apps[0].ManagementObjects = []sandbox.ManagementObject{{ObjectType: "group", ObjectID: 5, API: "*"}}
	})))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	client := acctest.OutsideClient(t, sb)
	gm, dev := acctest.OutsideGroup(t, client, "web-ui-managers", "dev")
	ops := addGroup(t, client, gm, "ops")
	if dev != 4 || ops != 5 {
		t.Fatalf("the groups made are %d and %d, not 4 and 5", dev, ops)
	}
	if err := sb.ForgetCreator(gm); err != nil { // as made in the web UI
		t.Fatal(err)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: acctest.GroupMembersConfig(provider, dev, map[string]string{"alice": "permanent"}, nil),
				ExpectError: acctest.PlanErrorPattern("Cannot read the group's members", "it was made in the IAM web UI, or it no longer exists.",
					"IAM's SaaS from its July 2026 release lets an app manage an object like it through its management object allow-list",
					"ask IAM's administrators for the entry app_code "+sandboxtest.AppCode+", object_type group, object_id 4, api v2_group_member_list",
					`(or api "*" for every management API on it)`)},
			{Config: acctest.GroupMembersConfig(provider, ops, map[string]string{"alice": "permanent"}, nil),
				Check: checkMembers(sb, ops, map[string]int64{"user:alice": bkiam.PermanentExpiry})},
		},
	})
}
