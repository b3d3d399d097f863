package management

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
)

// GroupPermissionModel is a bkiam_group_permission value
// (groupPermission.schema). Its resources are bkiam_instance_grant's.
//
// An import by SYSTEM/GROUP_ID/ACTIONS leaves resources null until the
// read that follows fills them from IAM.
type GroupPermissionModel struct {
	ID      protocol.StringValue `tf:"id"`
	System  protocol.StringValue `tf:"system"`
	GroupID protocol.StringValue `tf:"group_id"`
	// GroupSystem is the system that manages the group; null means System.
	GroupSystem protocol.StringValue                                  `tf:"group_system"`
	Actions     protocol.StringsValue                                 `tf:"actions"`
	Resources   protocol.Value[[]protocol.Value[authz.ResourceModel]] `tf:"resources"`
	Timeouts    protocol.Value[protocol.TimeoutsModel]                `tf:"timeouts"`
}

func (GroupPermission) Decode(v tftypes.Value) (GroupPermissionModel, error) {
	var d protocol.Decoder
	a := protocol.AsAttributes(&d, v)
	m := GroupPermissionModel{
		ID:          protocol.DecodeString(&d, a["id"]),
		System:      protocol.DecodeString(&d, a["system"]),
		GroupID:     protocol.DecodeString(&d, a["group_id"]),
		GroupSystem: protocol.DecodeString(&d, a["group_system"]),
		Actions:     protocol.DecodeStrings(&d, a["actions"]),
		Resources: protocol.DecodeCollection(&d, a["resources"], protocol.ListOf(func(d *protocol.Decoder, v tftypes.Value) authz.ResourceModel {
			r := protocol.AsAttributes(d, v)
			return authz.ResourceModel{System: protocol.DecodeString(d, r["system"]), Type: protocol.DecodeString(d, r["type"]),
				Instances: protocol.DecodeStringMap(d, r["instances"])}
		})),
		Timeouts: protocol.DecodeTimeouts(&d, a["timeouts"]),
	}
	return m, d.Err
}

func (GroupPermission) Encode(typ tftypes.Object, m GroupPermissionModel) tftypes.Value {
	return protocol.NewAttrs(typ).
		String("id", m.ID).
		String("system", m.System).
		String("group_id", m.GroupID).
		String("group_system", m.GroupSystem).
		Strings("actions", m.Actions).
		With("resources", func(t tftypes.Type) tftypes.Value {
			return protocol.EncodeValue(t, m.Resources, protocol.FromList(func(t tftypes.Type, r authz.ResourceModel) tftypes.Value {
				return protocol.NewAttrs(t).String("system", r.System).String("type", r.Type).StringMap("instances", r.Instances).Object()
			}))
		}).
		With("timeouts", func(t tftypes.Type) tftypes.Value { return protocol.EncodeTimeouts(t, m.Timeouts) }).
		Object()
}

// asGrant is the model as the bkiam_instance_grant it is carried out as:
// the group as subject, permanent.
func (m GroupPermissionModel) asGrant() authz.InstanceGrantModel {
	return authz.InstanceGrantModel{
		ID: m.ID, System: m.System, Actions: m.Actions, Resources: m.Resources, Timeouts: m.Timeouts,
		Subject: protocol.Known(authz.SubjectModel{Type: protocol.Known(bkiam.SubjectGroup), ID: m.GroupID}),
	}
}

// fromGrant takes back what an instance grant's plan, apply or read
// changed: the actions and resources.
func (m GroupPermissionModel) fromGrant(g authz.InstanceGrantModel) GroupPermissionModel {
	m.Actions, m.Resources = g.Actions, g.Resources
	return m
}

// managedBy is the system whose management API manages the group: the
// one in the calls' path. ok is false while it is unknown.
func (m GroupPermissionModel) managedBy() (string, bool) {
	if m.GroupSystem.IsNull() {
		return m.System.Get()
	}
	return m.GroupSystem.Get()
}
