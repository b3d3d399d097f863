package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// instanceGrantModel is a bkiam_instance_grant value (instanceGrant.schema).
//
// An import by SYSTEM/SUBJECT_TYPE/SUBJECT_ID leaves actions and
// resources null: the resource holds nothing known, and the next apply
// grants what the configuration declares.
type instanceGrantModel struct {
	ID        StringValue                   `tf:"id"`
	System    StringValue                   `tf:"system"`
	Subject   Value[subjectModel]           `tf:"subject"`
	Actions   StringsValue                  `tf:"actions"`
	Resources Value[[]Value[resourceModel]] `tf:"resources"`
	ExpiresAt StringValue                   `tf:"expires_at"`
	Policies  Int64MapValue                 `tf:"policies"`
	Timeouts  Value[TimeoutsModel]          `tf:"timeouts"`
}

type subjectModel struct {
	Type StringValue `tf:"type"`
	ID   StringValue `tf:"id"`
}

// resourceModel is an entry of resources: one resource type and its
// instances, by id.
type resourceModel struct {
	System    StringValue    `tf:"system"`
	Type      StringValue    `tf:"type"`
	Instances StringMapValue `tf:"instances"`
}

func (instanceGrant) Decode(v tftypes.Value) (instanceGrantModel, error) {
	var d Decoder
	a := AsAttributes(&d, v)
	m := instanceGrantModel{
		ID:     DecodeString(&d, a["id"]),
		System: DecodeString(&d, a["system"]),
		Subject: DecodeValue(&d, a["subject"], func(d *Decoder, v tftypes.Value) subjectModel {
			s := AsAttributes(d, v)
			return subjectModel{Type: DecodeString(d, s["type"]), ID: DecodeString(d, s["id"])}
		}),
		Actions: DecodeStrings(&d, a["actions"]),
		Resources: DecodeCollection(&d, a["resources"], ListOf(func(d *Decoder, v tftypes.Value) resourceModel {
			r := AsAttributes(d, v)
			return resourceModel{System: DecodeString(d, r["system"]), Type: DecodeString(d, r["type"]),
				Instances: DecodeStringMap(d, r["instances"])}
		})),
		ExpiresAt: DecodeString(&d, a["expires_at"]),
		Policies:  DecodeInt64Map(&d, a["policies"]),
		Timeouts:  DecodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.Err
}

func (instanceGrant) Encode(typ tftypes.Object, m instanceGrantModel) tftypes.Value {
	return NewAttrs(typ).
		String("id", m.ID).
		String("system", m.System).
		With("subject", func(t tftypes.Type) tftypes.Value {
			return EncodeValue(t, m.Subject, func(t tftypes.Type, s subjectModel) tftypes.Value {
				return NewAttrs(t).String("type", s.Type).String("id", s.ID).Object()
			})
		}).
		Strings("actions", m.Actions).
		With("resources", func(t tftypes.Type) tftypes.Value {
			return EncodeValue(t, m.Resources, FromList(func(t tftypes.Type, r resourceModel) tftypes.Value {
				return NewAttrs(t).String("system", r.System).String("type", r.Type).StringMap("instances", r.Instances).Object()
			}))
		}).
		String("expires_at", m.ExpiresAt).
		Int64Map("policies", m.Policies).
		With("timeouts", func(t tftypes.Type) tftypes.Value { return EncodeTimeouts(t, m.Timeouts) }).
		Object()
}
