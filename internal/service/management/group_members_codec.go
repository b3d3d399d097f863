package management

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// GroupMembersModel is a bkiam_group_members value (groupMembers.schema).
type GroupMembersModel struct {
	ID          protocol.StringValue                   `tf:"id"`
	System      protocol.StringValue                   `tf:"system"`
	GroupID     protocol.StringValue                   `tf:"group_id"`
	Users       protocol.StringMapValue                `tf:"users"`
	Departments protocol.StringMapValue                `tf:"departments"`
	ExpiresIn   protocol.StringValue                   `tf:"expires_in"`
	RenewBefore protocol.StringValue                   `tf:"renew_before"`
	ExpiresAt   protocol.StringValue                   `tf:"expires_at"`
	Enforce     protocol.BoolValue                     `tf:"enforce_expiry"`
	Jitter      protocol.StringValue                   `tf:"renew_jitter"`
	Timeouts    protocol.Value[protocol.TimeoutsModel] `tf:"timeouts"`
}

func (GroupMembers) Decode(v tftypes.Value) (GroupMembersModel, error) {
	var d protocol.Decoder
	a := protocol.AsAttributes(&d, v)
	m := GroupMembersModel{
		ID:          protocol.DecodeString(&d, a["id"]),
		System:      protocol.DecodeString(&d, a["system"]),
		GroupID:     protocol.DecodeString(&d, a["group_id"]),
		Users:       protocol.DecodeStringMap(&d, a["users"]),
		Departments: protocol.DecodeStringMap(&d, a["departments"]),
		ExpiresIn:   protocol.DecodeString(&d, a["expires_in"]),
		RenewBefore: protocol.DecodeString(&d, a["renew_before"]),
		ExpiresAt:   protocol.DecodeString(&d, a["expires_at"]),
		Enforce:     protocol.DecodeBool(&d, a["enforce_expiry"]),
		Jitter:      protocol.DecodeString(&d, a["renew_jitter"]),
		Timeouts:    protocol.DecodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.Err
}

func (GroupMembers) Encode(typ tftypes.Object, m GroupMembersModel) tftypes.Value {
	return protocol.NewAttrs(typ).
		String("id", m.ID).
		String("system", m.System).
		String("group_id", m.GroupID).
		StringMap("users", m.Users).
		StringMap("departments", m.Departments).
		String("expires_in", m.ExpiresIn).
		String("renew_before", m.RenewBefore).
		String("expires_at", m.ExpiresAt).
		Bool("enforce_expiry", m.Enforce).
		String("renew_jitter", m.Jitter).
		With("timeouts", func(t tftypes.Type) tftypes.Value { return protocol.EncodeTimeouts(t, m.Timeouts) }).
		Object()
}
