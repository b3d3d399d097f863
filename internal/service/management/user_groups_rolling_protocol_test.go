package management_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/management"
)

var userGroupsResource = acctest.ProtoResource[management.UserGroupsModel]{
	Def: management.UserGroups{},
	Proposed: func(config management.UserGroupsModel, prior *management.UserGroupsModel) management.UserGroupsModel {
		// The computed attributes: unknown on create, else the prior's.
		config.ID, config.ExpiresAt = protocol.Unknown[string](), protocol.Unknown[string]()
		if prior != nil {
			config.ID, config.ExpiresAt = prior.ID, prior.ExpiresAt
		}
		return config
	},
}

// userGroupsRollingModel is bob's bkiam_user_groups in bk_cmdb: group →
// expiry ("" for permanent), with expires_in and, unless "",
// renew_before.
func userGroupsRollingModel(groups map[int64]string, expiresIn, renewBefore string) management.UserGroupsModel {
	elems := map[string]string{}
	for g, exp := range groups {
		if exp == "" {
			exp = management.PermanentMember
		}
		elems[fmt.Sprint(g)] = exp
	}
	m := management.UserGroupsModel{System: protocol.Known("bk_cmdb"), User: protocol.Known("bob"),
		Groups: protocol.KnownStringMap(elems), ExpiresIn: protocol.Known(expiresIn)}
	if renewBefore != "" {
		m.RenewBefore = protocol.Known(renewBefore)
	}
	return m
}

// TestProtocolUserGroupsRollingPassed: without renew_before the rolling
// expiry is never renewed; once it has passed, a group that starts
// following it is refused at plan time, naming the fix, while the group
// that already follows it stays as it is. With renew_before, a plan over
// state last read before the expiry passed (-refresh=false) is refused
// too, saying to refresh.
func TestProtocolUserGroupsRollingPassed(t *testing.T) {
	env := acctest.NewProtoEnv(t, nil)
	client := acctest.OutsideClient(t, env.Sandbox)
	gm, dev := acctest.OutsideGroup(t, client, "passed-managers", "dev")
	ops := addGroup(t, client, gm, "ops")
	state := userGroupsRollingModel(map[int64]string{dev: management.FollowsExpiresIn}, "1h", "")
	state.ID = protocol.Known("bk_cmdb/user/bob")
	// Recorded an hour ago, it passed a minute ago.
	passed := rfc(time.Now().Add(-time.Minute).Unix())
	state.ExpiresAt = protocol.Known(passed)
	prior := userGroupsResource.Value(t, &state)
	joined := userGroupsRollingModel(map[int64]string{dev: management.FollowsExpiresIn, ops: management.FollowsExpiresIn}, "1h", "")
	opsKey := protocol.Root("groups").WithElementKeyString(fmt.Sprint(ops))
	env.Calls.Reset()
	acctest.ExpectDiags(t, userGroupsResource.Plan(t, env.Server, prior, nil, &joined).Diagnostics,
		acctest.ProtoError(fmt.Sprintf(`groups["%d"] follows expires_in, whose expiry (expires_at %s) has passed, and IAM adds members only `+
			"with an expiry in the future. Without renew_before the rolling expiry is never renewed: set renew_before to renew it, "+
			"or change expires_in to start a new period at the apply.", ops, passed), opsKey))

	// With renew_before, a plan over state last read before the expiry
	// passed (-refresh=false) does not renew: it says to refresh.
	state.RenewBefore, joined.RenewBefore = protocol.Known("10m"), protocol.Known("10m")
	prior = userGroupsResource.Value(t, &state)
	var diags protocol.Diagnostics
	stale := protocol.WithReadAt(management.UserGroupsRenewalPrivate(state), time.Now().Add(-time.Hour)).Bytes(&diags)
	acctest.ExpectDiags(t, userGroupsResource.Plan(t, env.Server, prior, stale, &joined).Diagnostics,
		acctest.ProtoError("A plan goes by the time the state was last refreshed or applied, and this one's state was not refreshed "+
			"since the expiry passed (-refresh=false): plan with a refresh, which renews it.", opsKey))
	// Neither plan reads or writes a membership.
	env.ExpectCalls(t, map[string]int{})
}
