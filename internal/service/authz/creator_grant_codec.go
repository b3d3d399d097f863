package authz

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// CreatorGrantModel is a bkiam_creator_grant value (creatorGrant.schema).
//
// instances maps each instance's key — its id, or its path under its
// ancestors in IAM's notation (/SYSTEM,TYPE,ID/…/, the instance last) —
// to its display name: a map of strings, which Terraform converts in a
// fraction of the time a map of objects takes at 10 000 instances
// (schema version 1; version 0 held objects of name and ancestors). An
// import leaves instances null: the resource holds nothing known, and the
// next apply registers what the configuration declares.
type CreatorGrantModel struct {
	ID             protocol.StringValue                   `tf:"id"`
	System         protocol.StringValue                   `tf:"system"`
	Type           protocol.StringValue                   `tf:"type"`
	Creator        protocol.StringValue                   `tf:"creator"`
	Instances      protocol.StringMapValue                `tf:"instances"`
	Actions        protocol.StringsValue                  `tf:"actions"`
	GrantedActions protocol.StringsValue                  `tf:"granted_actions"`
	Policies       protocol.Int64MapValue                 `tf:"policies"`
	Timeouts       protocol.Value[protocol.TimeoutsModel] `tf:"timeouts"`
}

func (CreatorGrant) Decode(v tftypes.Value) (CreatorGrantModel, error) {
	var d protocol.Decoder
	a := protocol.AsAttributes(&d, v)
	m := CreatorGrantModel{
		ID:             protocol.DecodeString(&d, a["id"]),
		System:         protocol.DecodeString(&d, a["system"]),
		Type:           protocol.DecodeString(&d, a["type"]),
		Creator:        protocol.DecodeString(&d, a["creator"]),
		Instances:      protocol.DecodeStringMap(&d, a["instances"]),
		Actions:        protocol.DecodeStrings(&d, a["actions"]),
		GrantedActions: protocol.DecodeStrings(&d, a["granted_actions"]),
		Policies:       protocol.DecodeInt64Map(&d, a["policies"]),
		Timeouts:       protocol.DecodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.Err
}

func (CreatorGrant) Encode(typ tftypes.Object, m CreatorGrantModel) tftypes.Value {
	return protocol.NewAttrs(typ).
		String("id", m.ID).
		String("system", m.System).
		String("type", m.Type).
		String("creator", m.Creator).
		StringMap("instances", m.Instances).
		Strings("actions", m.Actions).
		Strings("granted_actions", m.GrantedActions).
		Int64Map("policies", m.Policies).
		With("timeouts", func(t tftypes.Type) tftypes.Value { return protocol.EncodeTimeouts(t, m.Timeouts) }).
		Object()
}
