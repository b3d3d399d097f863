package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// groupMembersModel is a bkiam_group_members value (groupMembers.schema).
type groupMembersModel struct {
	ID          stringValue          `tf:"id"`
	System      stringValue          `tf:"system"`
	GroupID     stringValue          `tf:"group_id"`
	Users       memberMapValue       `tf:"users"`
	Departments memberMapValue       `tf:"departments"`
	Timeouts    value[timeoutsModel] `tf:"timeouts"`
}

// memberModel is one member's entry: its expiry, null for permanent.
type memberModel struct {
	ExpiresAt stringValue `tf:"expires_at"`
}

// memberMapValue is a map of members by id.
type memberMapValue = value[map[string]value[memberModel]]

func decodeMembers(d *decoder, v tftypes.Value) memberMapValue {
	return decodeCollection(d, v, mapOf(func(d *decoder, v tftypes.Value) memberModel {
		return memberModel{ExpiresAt: decodeString(d, asAttributes(d, v)["expires_at"])}
	}))
}

func encodeMembers(typ tftypes.Type, x memberMapValue) tftypes.Value {
	return encodeValue(typ, x, fromMap(func(t tftypes.Type, m memberModel) tftypes.Value {
		return newAttrs(t).string("expires_at", m.ExpiresAt).object()
	}))
}

func (groupMembers) decode(v tftypes.Value) (groupMembersModel, error) {
	var d decoder
	a := asAttributes(&d, v)
	m := groupMembersModel{
		ID:          decodeString(&d, a["id"]),
		System:      decodeString(&d, a["system"]),
		GroupID:     decodeString(&d, a["group_id"]),
		Users:       decodeMembers(&d, a["users"]),
		Departments: decodeMembers(&d, a["departments"]),
		Timeouts:    decodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.err
}

func (groupMembers) encode(typ tftypes.Object, m groupMembersModel) tftypes.Value {
	return newAttrs(typ).
		string("id", m.ID).
		string("system", m.System).
		string("group_id", m.GroupID).
		with("users", func(t tftypes.Type) tftypes.Value { return encodeMembers(t, m.Users) }).
		with("departments", func(t tftypes.Type) tftypes.Value { return encodeMembers(t, m.Departments) }).
		with("timeouts", func(t tftypes.Type) tftypes.Value { return encodeTimeouts(t, m.Timeouts) }).
		object()
}
