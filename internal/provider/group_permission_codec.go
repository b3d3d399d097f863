package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// groupPermissionModel is a bkiam_group_permission value
// (groupPermission.schema). Its resources are bkiam_instance_grant's.
//
// An import by SYSTEM/GROUP_ID/ACTIONS leaves resources null until the
// read that follows fills them from IAM.
type groupPermissionModel struct {
	ID      protocol.StringValue `tf:"id"`
	System  protocol.StringValue `tf:"system"`
	GroupID protocol.StringValue `tf:"group_id"`
	// GroupSystem is the system that manages the group; null means System.
	GroupSystem protocol.StringValue                            `tf:"group_system"`
	Actions     protocol.StringsValue                           `tf:"actions"`
	Resources   protocol.Value[[]protocol.Value[resourceModel]] `tf:"resources"`
	Timeouts    protocol.Value[protocol.TimeoutsModel]          `tf:"timeouts"`
}

func (groupPermission) Decode(v tftypes.Value) (groupPermissionModel, error) {
	var d protocol.Decoder
	a := protocol.AsAttributes(&d, v)
	m := groupPermissionModel{
		ID:          protocol.DecodeString(&d, a["id"]),
		System:      protocol.DecodeString(&d, a["system"]),
		GroupID:     protocol.DecodeString(&d, a["group_id"]),
		GroupSystem: protocol.DecodeString(&d, a["group_system"]),
		Actions:     protocol.DecodeStrings(&d, a["actions"]),
		Resources: protocol.DecodeCollection(&d, a["resources"], protocol.ListOf(func(d *protocol.Decoder, v tftypes.Value) resourceModel {
			r := protocol.AsAttributes(d, v)
			return resourceModel{System: protocol.DecodeString(d, r["system"]), Type: protocol.DecodeString(d, r["type"]),
				Instances: protocol.DecodeStringMap(d, r["instances"])}
		})),
		Timeouts: protocol.DecodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.Err
}

func (groupPermission) Encode(typ tftypes.Object, m groupPermissionModel) tftypes.Value {
	return protocol.NewAttrs(typ).
		String("id", m.ID).
		String("system", m.System).
		String("group_id", m.GroupID).
		String("group_system", m.GroupSystem).
		Strings("actions", m.Actions).
		With("resources", func(t tftypes.Type) tftypes.Value {
			return protocol.EncodeValue(t, m.Resources, protocol.FromList(func(t tftypes.Type, r resourceModel) tftypes.Value {
				return protocol.NewAttrs(t).String("system", r.System).String("type", r.Type).StringMap("instances", r.Instances).Object()
			}))
		}).
		With("timeouts", func(t tftypes.Type) tftypes.Value { return protocol.EncodeTimeouts(t, m.Timeouts) }).
		Object()
}

// asGrant is the model as the bkiam_instance_grant it is carried out as:
// the group as subject, permanent.
func (m groupPermissionModel) asGrant() instanceGrantModel {
	return instanceGrantModel{
		ID: m.ID, System: m.System, Actions: m.Actions, Resources: m.Resources, Timeouts: m.Timeouts,
		Subject: protocol.Known(subjectModel{Type: protocol.Known(subjectGroup), ID: m.GroupID}),
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
	if m.GroupSystem.IsNull() {
		return m.System.Get()
	}
	return m.GroupSystem.Get()
}
