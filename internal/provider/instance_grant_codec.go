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
	ID        stringValue                   `tf:"id"`
	System    stringValue                   `tf:"system"`
	Subject   value[subjectModel]           `tf:"subject"`
	Actions   stringsValue                  `tf:"actions"`
	Resources value[[]value[resourceModel]] `tf:"resources"`
	ExpiresAt stringValue                   `tf:"expires_at"`
	Policies  int64MapValue                 `tf:"policies"`
	Timeouts  value[timeoutsModel]          `tf:"timeouts"`
}

type subjectModel struct {
	Type stringValue `tf:"type"`
	ID   stringValue `tf:"id"`
}

// resourceModel is an entry of resources: one resource type and its
// instances, by id.
type resourceModel struct {
	System    stringValue    `tf:"system"`
	Type      stringValue    `tf:"type"`
	Instances stringMapValue `tf:"instances"`
}

func (instanceGrant) decode(v tftypes.Value) (instanceGrantModel, error) {
	var d decoder
	a := asAttributes(&d, v)
	m := instanceGrantModel{
		ID:     decodeString(&d, a["id"]),
		System: decodeString(&d, a["system"]),
		Subject: decodeValue(&d, a["subject"], func(d *decoder, v tftypes.Value) subjectModel {
			s := asAttributes(d, v)
			return subjectModel{Type: decodeString(d, s["type"]), ID: decodeString(d, s["id"])}
		}),
		Actions: decodeStrings(&d, a["actions"]),
		Resources: decodeCollection(&d, a["resources"], listOf(func(d *decoder, v tftypes.Value) resourceModel {
			r := asAttributes(d, v)
			return resourceModel{System: decodeString(d, r["system"]), Type: decodeString(d, r["type"]),
				Instances: decodeStringMap(d, r["instances"])}
		})),
		ExpiresAt: decodeString(&d, a["expires_at"]),
		Policies:  decodeInt64Map(&d, a["policies"]),
		Timeouts:  decodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.err
}

func (instanceGrant) encode(typ tftypes.Object, m instanceGrantModel) tftypes.Value {
	return newAttrs(typ).
		string("id", m.ID).
		string("system", m.System).
		with("subject", func(t tftypes.Type) tftypes.Value {
			return encodeValue(t, m.Subject, func(t tftypes.Type, s subjectModel) tftypes.Value {
				return newAttrs(t).string("type", s.Type).string("id", s.ID).object()
			})
		}).
		strings("actions", m.Actions).
		with("resources", func(t tftypes.Type) tftypes.Value {
			return encodeValue(t, m.Resources, fromList(func(t tftypes.Type, r resourceModel) tftypes.Value {
				return newAttrs(t).string("system", r.System).string("type", r.Type).stringMap("instances", r.Instances).object()
			}))
		}).
		string("expires_at", m.ExpiresAt).
		int64Map("policies", m.Policies).
		with("timeouts", func(t tftypes.Type) tftypes.Value { return encodeTimeouts(t, m.Timeouts) }).
		object()
}
