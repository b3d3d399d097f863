package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// creatorGrantModel is a bkiam_creator_grant value (creatorGrant.schema).
//
// An import leaves instances null: the resource holds nothing known, and
// the next apply registers what the configuration declares.
type creatorGrantModel struct {
	ID             StringValue                                   `tf:"id"`
	System         StringValue                                   `tf:"system"`
	Type           StringValue                                   `tf:"type"`
	Creator        StringValue                                   `tf:"creator"`
	Instances      Value[map[string]Value[creatorInstanceModel]] `tf:"instances"`
	Actions        StringsValue                                  `tf:"actions"`
	GrantedActions StringsValue                                  `tf:"granted_actions"`
	Policies       Int64MapValue                                 `tf:"policies"`
	Timeouts       Value[TimeoutsModel]                          `tf:"timeouts"`
}

type creatorInstanceModel struct {
	Name      StringValue                   `tf:"name"`
	Ancestors Value[[]Value[ancestorModel]] `tf:"ancestors"`
}

type ancestorModel struct {
	System StringValue `tf:"system"`
	Type   StringValue `tf:"type"`
	ID     StringValue `tf:"id"`
}

func (creatorGrant) Decode(v tftypes.Value) (creatorGrantModel, error) {
	var d Decoder
	a := AsAttributes(&d, v)
	decodeAncestor := func(d *Decoder, v tftypes.Value) ancestorModel {
		n := AsAttributes(d, v)
		return ancestorModel{System: DecodeString(d, n["system"]), Type: DecodeString(d, n["type"]), ID: DecodeString(d, n["id"])}
	}
	decodeInstance := func(d *Decoder, v tftypes.Value) creatorInstanceModel {
		in := AsAttributes(d, v)
		return creatorInstanceModel{Name: DecodeString(d, in["name"]), Ancestors: DecodeCollection(d, in["ancestors"], ListOf(decodeAncestor))}
	}
	m := creatorGrantModel{
		ID:             DecodeString(&d, a["id"]),
		System:         DecodeString(&d, a["system"]),
		Type:           DecodeString(&d, a["type"]),
		Creator:        DecodeString(&d, a["creator"]),
		Instances:      DecodeCollection(&d, a["instances"], MapOf(decodeInstance)),
		Actions:        DecodeStrings(&d, a["actions"]),
		GrantedActions: DecodeStrings(&d, a["granted_actions"]),
		Policies:       DecodeInt64Map(&d, a["policies"]),
		Timeouts:       DecodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.Err
}

func (creatorGrant) Encode(typ tftypes.Object, m creatorGrantModel) tftypes.Value {
	encodeAncestor := func(t tftypes.Type, n ancestorModel) tftypes.Value {
		return NewAttrs(t).String("system", n.System).String("type", n.Type).String("id", n.ID).Object()
	}
	encodeInstance := func(t tftypes.Type, in creatorInstanceModel) tftypes.Value {
		return NewAttrs(t).String("name", in.Name).With("ancestors", func(t tftypes.Type) tftypes.Value {
			return EncodeValue(t, in.Ancestors, FromList(encodeAncestor))
		}).Object()
	}
	return NewAttrs(typ).
		String("id", m.ID).
		String("system", m.System).
		String("type", m.Type).
		String("creator", m.Creator).
		With("instances", func(t tftypes.Type) tftypes.Value { return EncodeValue(t, m.Instances, FromMap(encodeInstance)) }).
		Strings("actions", m.Actions).
		Strings("granted_actions", m.GrantedActions).
		Int64Map("policies", m.Policies).
		With("timeouts", func(t tftypes.Type) tftypes.Value { return EncodeTimeouts(t, m.Timeouts) }).
		Object()
}
