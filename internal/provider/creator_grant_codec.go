package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// creatorGrantModel is a bkiam_creator_grant value (creatorGrant.schema).
//
// An import leaves instances null: the resource holds nothing known, and
// the next apply registers what the configuration declares.
type creatorGrantModel struct {
	ID             protocol.StringValue                                            `tf:"id"`
	System         protocol.StringValue                                            `tf:"system"`
	Type           protocol.StringValue                                            `tf:"type"`
	Creator        protocol.StringValue                                            `tf:"creator"`
	Instances      protocol.Value[map[string]protocol.Value[creatorInstanceModel]] `tf:"instances"`
	Actions        protocol.StringsValue                                           `tf:"actions"`
	GrantedActions protocol.StringsValue                                           `tf:"granted_actions"`
	Policies       protocol.Int64MapValue                                          `tf:"policies"`
	Timeouts       protocol.Value[protocol.TimeoutsModel]                          `tf:"timeouts"`
}

type creatorInstanceModel struct {
	Name      protocol.StringValue                            `tf:"name"`
	Ancestors protocol.Value[[]protocol.Value[ancestorModel]] `tf:"ancestors"`
}

type ancestorModel struct {
	System protocol.StringValue `tf:"system"`
	Type   protocol.StringValue `tf:"type"`
	ID     protocol.StringValue `tf:"id"`
}

func (creatorGrant) Decode(v tftypes.Value) (creatorGrantModel, error) {
	var d protocol.Decoder
	a := protocol.AsAttributes(&d, v)
	decodeAncestor := func(d *protocol.Decoder, v tftypes.Value) ancestorModel {
		n := protocol.AsAttributes(d, v)
		return ancestorModel{System: protocol.DecodeString(d, n["system"]), Type: protocol.DecodeString(d, n["type"]), ID: protocol.DecodeString(d, n["id"])}
	}
	decodeInstance := func(d *protocol.Decoder, v tftypes.Value) creatorInstanceModel {
		in := protocol.AsAttributes(d, v)
		return creatorInstanceModel{Name: protocol.DecodeString(d, in["name"]), Ancestors: protocol.DecodeCollection(d, in["ancestors"], protocol.ListOf(decodeAncestor))}
	}
	m := creatorGrantModel{
		ID:             protocol.DecodeString(&d, a["id"]),
		System:         protocol.DecodeString(&d, a["system"]),
		Type:           protocol.DecodeString(&d, a["type"]),
		Creator:        protocol.DecodeString(&d, a["creator"]),
		Instances:      protocol.DecodeCollection(&d, a["instances"], protocol.MapOf(decodeInstance)),
		Actions:        protocol.DecodeStrings(&d, a["actions"]),
		GrantedActions: protocol.DecodeStrings(&d, a["granted_actions"]),
		Policies:       protocol.DecodeInt64Map(&d, a["policies"]),
		Timeouts:       protocol.DecodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.Err
}

func (creatorGrant) Encode(typ tftypes.Object, m creatorGrantModel) tftypes.Value {
	encodeAncestor := func(t tftypes.Type, n ancestorModel) tftypes.Value {
		return protocol.NewAttrs(t).String("system", n.System).String("type", n.Type).String("id", n.ID).Object()
	}
	encodeInstance := func(t tftypes.Type, in creatorInstanceModel) tftypes.Value {
		return protocol.NewAttrs(t).String("name", in.Name).With("ancestors", func(t tftypes.Type) tftypes.Value {
			return protocol.EncodeValue(t, in.Ancestors, protocol.FromList(encodeAncestor))
		}).Object()
	}
	return protocol.NewAttrs(typ).
		String("id", m.ID).
		String("system", m.System).
		String("type", m.Type).
		String("creator", m.Creator).
		With("instances", func(t tftypes.Type) tftypes.Value {
			return protocol.EncodeValue(t, m.Instances, protocol.FromMap(encodeInstance))
		}).
		Strings("actions", m.Actions).
		Strings("granted_actions", m.GrantedActions).
		Int64Map("policies", m.Policies).
		With("timeouts", func(t tftypes.Type) tftypes.Value { return protocol.EncodeTimeouts(t, m.Timeouts) }).
		Object()
}
