package management_test

import (
	"context"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestProtocolOwnership403OnRefresh: IAM answers a group deleted outside
// Terraform with the same 403 as one the system did not create. A refresh
// removes bkiam_group_members (and bkiam_group_permission) from state only
// when IAM's lists confirm the group is gone, with a warning that names
// the resource; when they cannot (here the app may not call the v1
// grade-manager list), it fails, says what to check, and keeps state.
func TestProtocolOwnership403OnRefresh(t *testing.T) {
	restricted := acctest.EditedModel(t, func(m *sandbox.Model) {
		for i := range m.Apps {
			if m.Apps[i].Code == "bkiam-sandbox" {
				m.Apps[i].Management = map[string][]string{"*": {
					"v2_grade_manager_create", "v2_grade_manager_detail", "v2_grade_manager_update", "v2_grade_manager_delete",
					"v2_group_batch_create", "v2_group_list", "v2_group_update", "v2_group_delete",
					"v2_group_member_add", "v2_group_member_delete", "v2_group_member_list", "v2_group_member_expired_at_update",
					"group_policy_grant", "group_policy_revoke", "group_policy_list",
				}}
			}
		}
	})
	cases := []struct {
		name string
		opts []sandbox.Option
		want acctest.ProtoDiag
		gone bool
	}{
		{name: "confirmed", gone: true,
			want: acctest.ProtoWarning(`Deleted outside Terraform: bkiam_group_members "bk_cmdb/`, nil)},
		{name: "unconfirmed", opts: []sandbox.Option{sandbox.WithModel(restricted)},
			want: acctest.ProtoError("the provider could not confirm it through IAM's lists", nil)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := acctest.NewProtoEnvWith(t, nil, c.opts...)
			client := acctest.OutsideClient(t, env.Sandbox)
			group := newGroup(t, client, "dev")
			config := membersModel(group, map[string]string{"alice": ""})
			created := membersResource.MustChange(t, env.Server, nil, nil, &config)
			if err := client.DeleteGroup(context.Background(), "bk_cmdb", group); err != nil {
				t.Fatal(err)
			}
			read := membersResource.Read(t, env.Server, created.NewState, nil)
			if len(read.Diagnostics) != 1 {
				t.Fatalf("diagnostics:\n%s", testutil.RenderDiags(read.Diagnostics))
			}
			acctest.ExpectDiags(t, read.Diagnostics, c.want)
			if gone := membersResource.Model(t, read.NewState) == nil; gone != c.gone {
				t.Errorf("removed from state: %v, want %v", gone, c.gone)
			}
			if !c.gone {
				for _, text := range []string{"grade_manager_list", "terraform state rm", "IAM web UI"} {
					acctest.ExpectDiags(t, read.Diagnostics, acctest.ProtoError(text, nil))
				}
			}
		})
	}
}
