package authz

import (
	"context"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// The identities of the authorization API's resources (see DESIGN.md,
// "Resource identity"): what names the object in IAM, which
// `import { identity = {…} }` takes and `terraform query` lists.

func identityString(description string) identityschema.StringAttribute {
	return identityschema.StringAttribute{Description: description, RequiredForImport: true}
}

func identityList(description string) identityschema.ListAttribute {
	return identityschema.ListAttribute{Description: description, ElementType: types.StringType, OptionalForImport: true}
}

// IdentitySchema: an instance grant is what a subject holds of some
// actions on one list of resource types in a system. IAM keeps a policy
// per subject and action, so the actions name it; they and the resource
// types change in place, so the identity follows them (MutableIdentity).
func (InstanceGrant) IdentitySchema(context.Context) identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"system":       identityString("The system of the actions, e.g. `bk_cmdb`."),
		"subject_type": identityString("`user` or `group`."),
		"subject_id":   identityString("The username, or the group's numeric id."),
		"actions": identityList("The actions, sorted. Leave out (with `resource_types`) to adopt the subject's grants " +
			"holding nothing known, as the short import ID does."),
		"resource_types": identityList("The resource types of the actions, each `SYSTEM/TYPE`, in the order of " +
			"`resources`: one, several for a combined resource, `[]` for actions related to no resource type. With " +
			"`detect_drift`, an import reads what the subject holds of the actions on them."),
	}}
}

func (InstanceGrant) IdentityOf(m InstanceGrantModel) protocol.Identity {
	subject, ok := m.Subject.Get()
	if !ok && m.Subject.IsUnknown() {
		subject = SubjectModel{Type: protocol.Unknown[string](), ID: protocol.Unknown[string]()}
	}
	return protocol.Identity{
		"system":         m.System,
		"subject_type":   subject.Type,
		"subject_id":     subject.ID,
		"actions":        protocol.SortedStrings(m.Actions),
		"resource_types": resourceTypes(m.Resources),
	}
}

// resourceTypes lists the resources' SYSTEM/TYPE: unknown if one is.
func resourceTypes(x protocol.Value[[]protocol.Value[ResourceModel]]) protocol.StringsValue {
	entries, ok := x.Get()
	if !ok {
		if x.IsUnknown() {
			return protocol.Unknown[[]protocol.StringValue]()
		}
		return protocol.StringsValue{}
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		r, ok := e.Get()
		system, okSystem := r.System.Get()
		typ, okType := r.Type.Get()
		if !ok || !okSystem || !okType {
			return protocol.Unknown[[]protocol.StringValue]()
		}
		out = append(out, system+"/"+typ)
	}
	return protocol.KnownStrings(out)
}

// ImportID: without actions and resource types, the short import ID;
// with them, the long one, which names every type of the actions: none
// (resource_types = [], actions related to no resource type), one, or
// several (a combined resource). Every identity IdentityOf writes of a
// known grant is one of these (TestInstanceGrantIdentityRoundTrip). An
// identity with actions and no resource_types at all is refused rather
// than read as actions of no type: it is an identity with its types left
// out, and the import would read the wrong policies.
func (InstanceGrant) ImportID(id protocol.Identity, diags *protocol.Diagnostics) string {
	short := id.Str("system") + "/" + id.Str("subject_type") + "/" + id.Str("subject_id")
	actions, types := id.List("actions"), id.List("resource_types")
	if len(actions) == 0 && len(types) == 0 {
		return short
	}
	typesGiven, _ := id["resource_types"].(protocol.StringsValue)
	if len(actions) == 0 || typesGiven.IsNull() || typesGiven.IsUnknown() || slices.ContainsFunc(types, func(t string) bool {
		system, typ, ok := strings.Cut(t, "/")
		return !ok || system == "" || typ == "" || strings.Contains(typ, "/")
	}) {
		diags.AddError("Invalid import identity",
			"An instance grant's import identity names its actions and all their resource types, each SYSTEM/TYPE in the order "+
				`of resources: e.g. actions = ["view_host"], resource_types = ["bk_cmdb/host"]; several types for a combined resource, `+
				`e.g. resource_types = ["bk_cmdb/biz", "bk_cmdb/host"]; resource_types = [] for actions related to no resource type. `+
				"Or neither actions nor resource_types: the grant is then adopted holding nothing known.")
		return short
	}
	return strings.Join(append([]string{short, strings.Join(actions, ",")}, types...), "/")
}

func (InstanceGrant) MutableIdentity() bool { return true }

// IdentitySchema: a creator grant is what a creator holds of a type's
// creator actions in a system; all three force a replacement.
func (CreatorGrant) IdentitySchema(context.Context) identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"system":  identityString("The system, e.g. `bk_sops`."),
		"type":    identityString("The resource type the creator created, e.g. `mini_app`."),
		"creator": identityString("The creator's username."),
	}}
}

func (CreatorGrant) IdentityOf(m CreatorGrantModel) protocol.Identity {
	return protocol.Identity{"system": m.System, "type": m.Type, "creator": m.Creator}
}

func (CreatorGrant) ImportID(id protocol.Identity, _ *protocol.Diagnostics) string {
	return id.Str("system") + "/" + id.Str("type") + "/" + id.Str("creator")
}

func (CreatorGrant) MutableIdentity() bool { return false }
