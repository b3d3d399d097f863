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
		With("timeouts", func(t tftypes.Type) tftypes.Value { return protocol.EncodeTimeouts(t, m.Timeouts) }).
		Object()
}
