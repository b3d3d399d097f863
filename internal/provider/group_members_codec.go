package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// groupMembersModel is a bkiam_group_members value (groupMembers.schema).
type groupMembersModel struct {
	ID          StringValue          `tf:"id"`
	System      StringValue          `tf:"system"`
	GroupID     StringValue          `tf:"group_id"`
	Users       StringMapValue       `tf:"users"`
	Departments StringMapValue       `tf:"departments"`
	Timeouts    Value[TimeoutsModel] `tf:"timeouts"`
}

func (groupMembers) Decode(v tftypes.Value) (groupMembersModel, error) {
	var d Decoder
	a := AsAttributes(&d, v)
	m := groupMembersModel{
		ID:          DecodeString(&d, a["id"]),
		System:      DecodeString(&d, a["system"]),
		GroupID:     DecodeString(&d, a["group_id"]),
		Users:       DecodeStringMap(&d, a["users"]),
		Departments: DecodeStringMap(&d, a["departments"]),
		Timeouts:    DecodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.Err
}

func (groupMembers) Encode(typ tftypes.Object, m groupMembersModel) tftypes.Value {
	return NewAttrs(typ).
		String("id", m.ID).
		String("system", m.System).
		String("group_id", m.GroupID).
		StringMap("users", m.Users).
		StringMap("departments", m.Departments).
		With("timeouts", func(t tftypes.Type) tftypes.Value { return EncodeTimeouts(t, m.Timeouts) }).
		Object()
}
