package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// creatorGrantModel is a bkiam_creator_grant value (creatorGrant.schema).
//
// An import leaves instances null: the resource holds nothing known, and
// the next apply registers what the configuration declares.
type creatorGrantModel struct {
	ID             stringValue                                   `tf:"id"`
	System         stringValue                                   `tf:"system"`
	Type           stringValue                                   `tf:"type"`
	Creator        stringValue                                   `tf:"creator"`
	Instances      value[map[string]value[creatorInstanceModel]] `tf:"instances"`
	Actions        stringsValue                                  `tf:"actions"`
	GrantedActions stringsValue                                  `tf:"granted_actions"`
	Policies       int64MapValue                                 `tf:"policies"`
	Timeouts       value[timeoutsModel]                          `tf:"timeouts"`
}

type creatorInstanceModel struct {
	Name      stringValue                   `tf:"name"`
	Ancestors value[[]value[ancestorModel]] `tf:"ancestors"`
}

type ancestorModel struct {
	System stringValue `tf:"system"`
	Type   stringValue `tf:"type"`
	ID     stringValue `tf:"id"`
}

func (creatorGrant) decode(v tftypes.Value) (creatorGrantModel, error) {
	var d decoder
	a := asAttributes(&d, v)
	decodeAncestor := func(d *decoder, v tftypes.Value) ancestorModel {
		n := asAttributes(d, v)
		return ancestorModel{System: decodeString(d, n["system"]), Type: decodeString(d, n["type"]), ID: decodeString(d, n["id"])}
	}
	decodeInstance := func(d *decoder, v tftypes.Value) creatorInstanceModel {
		in := asAttributes(d, v)
		return creatorInstanceModel{Name: decodeString(d, in["name"]), Ancestors: decodeCollection(d, in["ancestors"], listOf(decodeAncestor))}
	}
	m := creatorGrantModel{
		ID:             decodeString(&d, a["id"]),
		System:         decodeString(&d, a["system"]),
		Type:           decodeString(&d, a["type"]),
		Creator:        decodeString(&d, a["creator"]),
		Instances:      decodeCollection(&d, a["instances"], mapOf(decodeInstance)),
		Actions:        decodeStrings(&d, a["actions"]),
		GrantedActions: decodeStrings(&d, a["granted_actions"]),
		Policies:       decodeInt64Map(&d, a["policies"]),
		Timeouts:       decodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.err
}

func (creatorGrant) encode(typ tftypes.Object, m creatorGrantModel) tftypes.Value {
	encodeAncestor := func(t tftypes.Type, n ancestorModel) tftypes.Value {
		return newAttrs(t).string("system", n.System).string("type", n.Type).string("id", n.ID).object()
	}
	encodeInstance := func(t tftypes.Type, in creatorInstanceModel) tftypes.Value {
		return newAttrs(t).string("name", in.Name).with("ancestors", func(t tftypes.Type) tftypes.Value {
			return encodeValue(t, in.Ancestors, fromList(encodeAncestor))
		}).object()
	}
	return newAttrs(typ).
		string("id", m.ID).
		string("system", m.System).
		string("type", m.Type).
		string("creator", m.Creator).
		with("instances", func(t tftypes.Type) tftypes.Value { return encodeValue(t, m.Instances, fromMap(encodeInstance)) }).
		strings("actions", m.Actions).
		strings("granted_actions", m.GrantedActions).
		int64Map("policies", m.Policies).
		with("timeouts", func(t tftypes.Type) tftypes.Value { return encodeTimeouts(t, m.Timeouts) }).
		object()
}
