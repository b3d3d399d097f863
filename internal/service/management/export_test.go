package management

import (
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/rolling"
)

// The acceptance and protocol tests beside the resources (package
// management_test) reach these through the names below; the provider
// itself needs none of them.

const (
	PermanentMember  = permanentMember
	FollowsExpiresIn = followsExpiresIn
)

// RenewalPrivate is the private state an apply that recorded state keeps
// for its renewal: the tests make a state recorded in the past with it.
func RenewalPrivate(state GroupMembersModel) protocol.PrivateState {
	return rolling.WithRenewal(nil, &state)
}

// UserGroupsRenewalPrivate is RenewalPrivate for a bkiam_user_groups.
func UserGroupsRenewalPrivate(state UserGroupsModel) protocol.PrivateState {
	return rolling.WithRenewal(nil, &state)
}
