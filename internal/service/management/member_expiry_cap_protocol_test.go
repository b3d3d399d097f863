package management_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/management"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// capRefusal is what the plan says of an expiry past max_member_expiry = "730d".
const capRefusal = "Expiry past the site's cap: "

// TestProtocolGroupMembersExpiryCap: with max_member_expiry = "730d", the
// plan refuses a member the apply would send an expiry more than two
// years out, on its own path, and a rolling expiry whose renewals would
// set one, on expires_in; a member already held past it, which the plan
// does not send, and "permanent" pass; without the setting (the default,
// for IAM 1.8 to 1.10) nothing is refused.
func TestProtocolGroupMembersExpiryCap(t *testing.T) {
	capped := acctest.NewProtoEnv(t, map[string]any{"max_member_expiry": "730d"})
	plain := acctest.NewProtoEnv(t, nil)
	threeYears := rfc(time.Now().AddDate(3, 0, 0).Unix())
	withinCap := rfc(time.Now().AddDate(1, 0, 0).Unix())
	held := membersModel(42, map[string]string{"alice": threeYears})
	held.ID = protocol.Known("bk_cmdb/42")
	alice := protocol.Root("users").WithElementKeyString("alice")
	for _, tc := range []struct {
		name   string
		env    *acctest.ProtoEnv
		prior  *management.GroupMembersModel
		config management.GroupMembersModel
		want   []acctest.ProtoDiag
	}{
		{name: "a date three years out", env: capped, config: membersModel(42, map[string]string{"alice": threeYears, "bob": ""}),
			want: []acctest.ProtoDiag{acctest.ProtoError(capRefusal+`users["alice"] is `+threeYears+", later than", alice)}},
		{name: "a date within the cap", env: capped, config: membersModel(42, map[string]string{"alice": withinCap})},
		{name: "renewals past the cap", env: capped, config: rollingModel(42, map[string]string{"alice": management.FollowsExpiresIn}, "730d", "7d"),
			want: []acctest.ProtoDiag{acctest.ProtoError(capRefusal+"max_member_expiry (730d) in the provider configuration says this IAM "+
				"refuses a membership expiry more than 730d after the call that sets it", protocol.Root("expires_in"))}},
		{name: "renewals within the cap", env: capped, config: rollingModel(42, map[string]string{"alice": management.FollowsExpiresIn}, "700d", "7d")},
		{name: "a rolling expiry nobody follows", env: capped, config: rollingModel(42, map[string]string{"alice": ""}, "730d", "7d")},
		{name: "a member held past the cap, not sent", env: capped, prior: &held,
			config: membersModel(42, map[string]string{"alice": threeYears, "bob": ""})},
		{name: "no cap configured", env: plain, config: rollingModel(42, map[string]string{"alice": management.FollowsExpiresIn, "bob": threeYears}, "3000d", "7d")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var prior *tfprotov6.DynamicValue
			if tc.prior != nil {
				prior = membersResource.Value(t, tc.prior)
			}
			tc.env.Calls.Reset()
			plan := membersResource.Plan(t, tc.env.Server, prior, nil, &tc.config)
			if tc.want == nil && testutil.HasError(plan.Diagnostics) {
				t.Fatalf("plan refused: %s", testutil.RenderDiags(plan.Diagnostics))
			}
			if tc.want != nil {
				acctest.ExpectDiags(t, plan.Diagnostics, tc.want...)
			}
			tc.env.ExpectCalls(t, map[string]int{}) // the check reads nothing
		})
	}
}

// TestProtocolUserGroupsExpiryCap: as TestProtocolGroupMembersExpiryCap,
// for bob's memberships.
func TestProtocolUserGroupsExpiryCap(t *testing.T) {
	env := acctest.NewProtoEnv(t, map[string]any{"max_member_expiry": "730d"})
	threeYears := rfc(time.Now().AddDate(3, 0, 0).Unix())
	in42 := protocol.Root("groups").WithElementKeyString("42")
	fixed := userGroupsRollingModel(map[int64]string{42: threeYears, 43: ""}, "", "")
	fixed.ExpiresIn = protocol.StringValue{}
	for _, tc := range []struct {
		name   string
		config management.UserGroupsModel
		want   []acctest.ProtoDiag
	}{
		{name: "a date three years out", config: fixed,
			want: []acctest.ProtoDiag{acctest.ProtoError(fmt.Sprintf(`%sgroups["42"] is %s, later than`, capRefusal, threeYears), in42)}},
		{name: "an expires_in past the cap", config: userGroupsRollingModel(map[int64]string{42: management.FollowsExpiresIn}, "105w", ""),
			want: []acctest.ProtoDiag{acctest.ProtoError(capRefusal+"max_member_expiry (730d) in the provider configuration says this IAM "+
				"refuses a membership expiry more than 730d after the call that sets it (IAM's SaaS from its July 2026 release caps member "+
				"adds and renewals at two years; \"permanent\" is not capped): expires_in (735d) sets the expiry that far after the apply "+
				"that starts a period. Shorten expires_in to at most 730d", protocol.Root("expires_in"))}},
		{name: "an expires_in within it", config: userGroupsRollingModel(map[int64]string{42: management.FollowsExpiresIn}, "100w", "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env.Calls.Reset()
			plan := userGroupsResource.Plan(t, env.Server, nil, nil, &tc.config)
			if tc.want == nil && testutil.HasError(plan.Diagnostics) {
				t.Fatalf("plan refused: %s", testutil.RenderDiags(plan.Diagnostics))
			}
			if tc.want != nil {
				acctest.ExpectDiags(t, plan.Diagnostics, tc.want...)
			}
			env.ExpectCalls(t, map[string]int{})
		})
	}
}
