package authz

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// InstanceGrantModel is a bkiam_instance_grant value (instanceGrant.schema).
//
// An import by SYSTEM/SUBJECT_TYPE/SUBJECT_ID leaves actions and
// resources null: the resource holds nothing known, and the next apply
// grants what the configuration declares.
type InstanceGrantModel struct {
	ID        protocol.StringValue                            `tf:"id"`
	System    protocol.StringValue                            `tf:"system"`
	Subject   protocol.Value[SubjectModel]                    `tf:"subject"`
	Actions   protocol.StringsValue                           `tf:"actions"`
	Resources protocol.Value[[]protocol.Value[ResourceModel]] `tf:"resources"`
	ExpiresAt protocol.StringValue                            `tf:"expires_at"`
	// ExpiresIn and RenewBefore make ExpiresAt a rolling expiry
	// (rolling.go).
	ExpiresIn   protocol.StringValue                   `tf:"expires_in"`
	RenewBefore protocol.StringValue                   `tf:"renew_before"`
	Policies    protocol.Int64MapValue                 `tf:"policies"`
	Timeouts    protocol.Value[protocol.TimeoutsModel] `tf:"timeouts"`
}

type SubjectModel struct {
	Type protocol.StringValue `tf:"type"`
	ID   protocol.StringValue `tf:"id"`
}

// ResourceModel is an entry of resources: one resource type and its
// instances, by id.
type ResourceModel struct {
	System    protocol.StringValue    `tf:"system"`
	Type      protocol.StringValue    `tf:"type"`
	Instances protocol.StringMapValue `tf:"instances"`
}

func (InstanceGrant) Decode(v tftypes.Value) (InstanceGrantModel, error) {
	var d protocol.Decoder
	a := protocol.AsAttributes(&d, v)
	m := InstanceGrantModel{
		ID:     protocol.DecodeString(&d, a["id"]),
		System: protocol.DecodeString(&d, a["system"]),
		Subject: protocol.DecodeValue(&d, a["subject"], func(d *protocol.Decoder, v tftypes.Value) SubjectModel {
			s := protocol.AsAttributes(d, v)
			return SubjectModel{Type: protocol.DecodeString(d, s["type"]), ID: protocol.DecodeString(d, s["id"])}
		}),
		Actions: protocol.DecodeStrings(&d, a["actions"]),
		Resources: protocol.DecodeCollection(&d, a["resources"], protocol.ListOf(func(d *protocol.Decoder, v tftypes.Value) ResourceModel {
			r := protocol.AsAttributes(d, v)
			return ResourceModel{System: protocol.DecodeString(d, r["system"]), Type: protocol.DecodeString(d, r["type"]),
				Instances: protocol.DecodeStringMap(d, r["instances"])}
		})),
		ExpiresAt:   protocol.DecodeString(&d, a["expires_at"]),
		ExpiresIn:   protocol.DecodeString(&d, a["expires_in"]),
		RenewBefore: protocol.DecodeString(&d, a["renew_before"]),
		Policies:    protocol.DecodeInt64Map(&d, a["policies"]),
		Timeouts:    protocol.DecodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.Err
}

func (InstanceGrant) Encode(typ tftypes.Object, m InstanceGrantModel) tftypes.Value {
	return protocol.NewAttrs(typ).
		String("id", m.ID).
		String("system", m.System).
		With("subject", func(t tftypes.Type) tftypes.Value {
			return protocol.EncodeValue(t, m.Subject, func(t tftypes.Type, s SubjectModel) tftypes.Value {
				return protocol.NewAttrs(t).String("type", s.Type).String("id", s.ID).Object()
			})
		}).
		Strings("actions", m.Actions).
		With("resources", func(t tftypes.Type) tftypes.Value {
			return protocol.EncodeValue(t, m.Resources, protocol.FromList(func(t tftypes.Type, r ResourceModel) tftypes.Value {
				return protocol.NewAttrs(t).String("system", r.System).String("type", r.Type).StringMap("instances", r.Instances).Object()
			}))
		}).
		String("expires_at", m.ExpiresAt).
		String("expires_in", m.ExpiresIn).
		String("renew_before", m.RenewBefore).
		Int64Map("policies", m.Policies).
		With("timeouts", func(t tftypes.Type) tftypes.Value { return protocol.EncodeTimeouts(t, m.Timeouts) }).
		Object()
}
