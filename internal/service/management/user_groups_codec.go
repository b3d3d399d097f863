package management

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// UserGroupsModel is a bkiam_user_groups value (UserGroups.Schema).
type UserGroupsModel struct {
	ID          protocol.StringValue                   `tf:"id"`
	System      protocol.StringValue                   `tf:"system"`
	User        protocol.StringValue                   `tf:"user"`
	Department  protocol.StringValue                   `tf:"department"`
	Groups      protocol.StringMapValue                `tf:"groups"`
	ExpiresIn   protocol.StringValue                   `tf:"expires_in"`
	RenewBefore protocol.StringValue                   `tf:"renew_before"`
	ExpiresAt   protocol.StringValue                   `tf:"expires_at"`
	Enforce     protocol.BoolValue                     `tf:"enforce_expiry"`
	Timeouts    protocol.Value[protocol.TimeoutsModel] `tf:"timeouts"`
}

func (UserGroups) Decode(v tftypes.Value) (UserGroupsModel, error) {
	var d protocol.Decoder
	a := protocol.AsAttributes(&d, v)
	m := UserGroupsModel{
		ID:          protocol.DecodeString(&d, a["id"]),
		System:      protocol.DecodeString(&d, a["system"]),
		User:        protocol.DecodeString(&d, a["user"]),
		Department:  protocol.DecodeString(&d, a["department"]),
		Groups:      protocol.DecodeStringMap(&d, a["groups"]),
		ExpiresIn:   protocol.DecodeString(&d, a["expires_in"]),
		RenewBefore: protocol.DecodeString(&d, a["renew_before"]),
		ExpiresAt:   protocol.DecodeString(&d, a["expires_at"]),
		Enforce:     protocol.DecodeBool(&d, a["enforce_expiry"]),
		Timeouts:    protocol.DecodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.Err
}

func (UserGroups) Encode(typ tftypes.Object, m UserGroupsModel) tftypes.Value {
	return protocol.NewAttrs(typ).
		String("id", m.ID).
		String("system", m.System).
		String("user", m.User).
		String("department", m.Department).
		StringMap("groups", m.Groups).
		String("expires_in", m.ExpiresIn).
		String("renew_before", m.RenewBefore).
		String("expires_at", m.ExpiresAt).
		Bool("enforce_expiry", m.Enforce).
		With("timeouts", func(t tftypes.Type) tftypes.Value { return protocol.EncodeTimeouts(t, m.Timeouts) }).
		Object()
}
