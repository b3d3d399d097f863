package authz

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// CreatorGrantModel is a bkiam_creator_grant value (creatorGrant.schema).
//
// An import leaves instances null: the resource holds nothing known, and
// the next apply registers what the configuration declares.
type CreatorGrantModel struct {
	ID             protocol.StringValue                                            `tf:"id"`
	System         protocol.StringValue                                            `tf:"system"`
	Type           protocol.StringValue                                            `tf:"type"`
	Creator        protocol.StringValue                                            `tf:"creator"`
	Instances      protocol.Value[map[string]protocol.Value[CreatorInstanceModel]] `tf:"instances"`
	Actions        protocol.StringsValue                                           `tf:"actions"`
	GrantedActions protocol.StringsValue                                           `tf:"granted_actions"`
	Policies       protocol.Int64MapValue                                          `tf:"policies"`
	Timeouts       protocol.Value[protocol.TimeoutsModel]                          `tf:"timeouts"`
}

type CreatorInstanceModel struct {
	Name      protocol.StringValue                            `tf:"name"`
	Ancestors protocol.Value[[]protocol.Value[AncestorModel]] `tf:"ancestors"`
}

type AncestorModel struct {
	System protocol.StringValue `tf:"system"`
	Type   protocol.StringValue `tf:"type"`
	ID     protocol.StringValue `tf:"id"`
}

func (CreatorGrant) Decode(v tftypes.Value) (CreatorGrantModel, error) {
	var d protocol.Decoder
	a := protocol.AsAttributes(&d, v)
	decodeAncestor := func(d *protocol.Decoder, v tftypes.Value) AncestorModel {
		n := protocol.AsAttributes(d, v)
		return AncestorModel{System: protocol.DecodeString(d, n["system"]), Type: protocol.DecodeString(d, n["type"]), ID: protocol.DecodeString(d, n["id"])}
	}
	decodeInstance := func(d *protocol.Decoder, v tftypes.Value) CreatorInstanceModel {
		in := protocol.AsAttributes(d, v)
		return CreatorInstanceModel{Name: protocol.DecodeString(d, in["name"]), Ancestors: protocol.DecodeCollection(d, in["ancestors"], protocol.ListOf(decodeAncestor))}
	}
	m := CreatorGrantModel{
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

func (CreatorGrant) Encode(typ tftypes.Object, m CreatorGrantModel) tftypes.Value {
	encodeAncestor := func(t tftypes.Type, n AncestorModel) tftypes.Value {
		return protocol.NewAttrs(t).String("system", n.System).String("type", n.Type).String("id", n.ID).Object()
	}
	encodeInstance := func(t tftypes.Type, in CreatorInstanceModel) tftypes.Value {
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
