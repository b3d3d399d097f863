package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// groupPermissionModel is a bkiam_group_permission value
// (groupPermission.schema). Its resources are bkiam_instance_grant's.
//
// An import by SYSTEM/GROUP_ID/ACTIONS leaves resources null until the
// read that follows fills them from IAM.
type groupPermissionModel struct {
	ID      stringValue `tf:"id"`
	System  stringValue `tf:"system"`
	GroupID stringValue `tf:"group_id"`
	// GroupSystem is the system that manages the group; null means System.
	GroupSystem stringValue                   `tf:"group_system"`
	Actions     stringsValue                  `tf:"actions"`
	Resources   value[[]value[resourceModel]] `tf:"resources"`
	Timeouts    value[timeoutsModel]          `tf:"timeouts"`
}

func (groupPermission) decode(v tftypes.Value) (groupPermissionModel, error) {
	var d decoder
	a := asAttributes(&d, v)
	m := groupPermissionModel{
		ID:          decodeString(&d, a["id"]),
		System:      decodeString(&d, a["system"]),
		GroupID:     decodeString(&d, a["group_id"]),
		GroupSystem: decodeString(&d, a["group_system"]),
		Actions:     decodeStrings(&d, a["actions"]),
		Resources: decodeCollection(&d, a["resources"], listOf(func(d *decoder, v tftypes.Value) resourceModel {
			r := asAttributes(d, v)
			return resourceModel{System: decodeString(d, r["system"]), Type: decodeString(d, r["type"]),
				Instances: decodeStringMap(d, r["instances"])}
		})),
		Timeouts: decodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.err
}

func (groupPermission) encode(typ tftypes.Object, m groupPermissionModel) tftypes.Value {
	return newAttrs(typ).
		string("id", m.ID).
		string("system", m.System).
		string("group_id", m.GroupID).
		string("group_system", m.GroupSystem).
		strings("actions", m.Actions).
		with("resources", func(t tftypes.Type) tftypes.Value {
			return encodeValue(t, m.Resources, fromList(func(t tftypes.Type, r resourceModel) tftypes.Value {
				return newAttrs(t).string("system", r.System).string("type", r.Type).stringMap("instances", r.Instances).object()
			}))
		}).
		with("timeouts", func(t tftypes.Type) tftypes.Value { return encodeTimeouts(t, m.Timeouts) }).
		object()
}

// asGrant is the model as the bkiam_instance_grant it is carried out as:
// the group as subject, permanent.
func (m groupPermissionModel) asGrant() instanceGrantModel {
	return instanceGrantModel{
		ID: m.ID, System: m.System, Actions: m.Actions, Resources: m.Resources, Timeouts: m.Timeouts,
		Subject: known(subjectModel{Type: known(subjectGroup), ID: m.GroupID}),
	}
}

// fromGrant takes back what an instance grant's plan, apply or read
// changed: the actions and resources.
func (m groupPermissionModel) fromGrant(g instanceGrantModel) groupPermissionModel {
	m.Actions, m.Resources = g.Actions, g.Resources
	return m
}

// managedBy is the system whose management API manages the group: the
// one in the calls' path. ok is false while it is unknown.
func (m groupPermissionModel) managedBy() (string, bool) {
	if m.GroupSystem.isNull() {
		return m.System.get()
	}
	return m.GroupSystem.get()
}
