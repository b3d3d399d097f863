package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// groupMembersModel is a bkiam_group_members value (groupMembers.schema).
type groupMembersModel struct {
	ID          stringValue          `tf:"id"`
	System      stringValue          `tf:"system"`
	GroupID     stringValue          `tf:"group_id"`
	Users       stringMapValue       `tf:"users"`
	Departments stringMapValue       `tf:"departments"`
	Timeouts    value[timeoutsModel] `tf:"timeouts"`
}

func (groupMembers) decode(v tftypes.Value) (groupMembersModel, error) {
	var d decoder
	a := asAttributes(&d, v)
	m := groupMembersModel{
		ID:          decodeString(&d, a["id"]),
		System:      decodeString(&d, a["system"]),
		GroupID:     decodeString(&d, a["group_id"]),
		Users:       decodeStringMap(&d, a["users"]),
		Departments: decodeStringMap(&d, a["departments"]),
		Timeouts:    decodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.err
}

func (groupMembers) encode(typ tftypes.Object, m groupMembersModel) tftypes.Value {
	return newAttrs(typ).
		string("id", m.ID).
		string("system", m.System).
		string("group_id", m.GroupID).
		stringMap("users", m.Users).
		stringMap("departments", m.Departments).
		with("timeouts", func(t tftypes.Type) tftypes.Value { return encodeTimeouts(t, m.Timeouts) }).
		object()
}
