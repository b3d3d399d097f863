package authz

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// systemDataSource is bkiam_system: the model a system registered in IAM,
// read through the same per-configuration cache as the plan-time checks.
// Its values are small (a system has tens of actions), so the framework
// serves it.
type systemDataSource struct {
	conns.DataSource
}

var _ datasource.DataSourceWithConfigure = &systemDataSource{}

func NewSystemDataSource() datasource.DataSource {
	return &systemDataSource{conns.DataSource{Name: "system"}}
}

// typeRefAttrs are the attributes of a reference to a resource type.
var typeRefAttrs = map[string]schema.Attribute{
	"system": schema.StringAttribute{Computed: true, MarkdownDescription: "The system of the resource type."},
	"id":     schema.StringAttribute{Computed: true, MarkdownDescription: "The resource type's id."},
}

var typeRefType = types.ObjectType{AttrTypes: map[string]attr.Type{"system": types.StringType, "id": types.StringType}}

var systemActionType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name": types.StringType, "name_en": types.StringType, "auth_type": types.StringType, "hidden": types.BoolType,
	"related_resource_types": types.ListType{ElemType: typeRefType},
}}

var systemResourceTypeType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name": types.StringType, "name_en": types.StringType, "parents": types.ListType{ElemType: typeRefType},
}}

var creatorActionType = types.ObjectType{AttrTypes: map[string]attr.Type{"id": types.StringType, "required": types.BoolType}}

var systemCreatorType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"parent": types.StringType, "actions": types.ListType{ElemType: creatorActionType},
}}

func (d *systemDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The model a system registered in IAM: its actions with the resource types each relates to " +
			"(in the order a grant's `resources` must follow), its resource types, and its resource-creator " +
			"configuration. Read through the API gateway (`apigw_url`; ESB has no model API), once per system per " +
			"provider process, shared with the plan-time checks of `check_model`.",
		Attributes: map[string]schema.Attribute{
			"system": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The system's id, e.g. `bk_cmdb`. The provider's app must be a client of it.",
				Validators:          []validator.String{verify.IAMIDValidator{}},
			},
			"actions": schema.MapNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The system's actions, by id.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":    schema.StringAttribute{Computed: true, MarkdownDescription: "The action's name."},
					"name_en": schema.StringAttribute{Computed: true, MarkdownDescription: "The action's English name."},
					"auth_type": schema.StringAttribute{Computed: true, MarkdownDescription: "How IAM stores grants of it: `abac`, " +
						"`rbac` or `all` (empty means `abac`). A user group's grant of an `rbac` or `all` action on one resource " +
						"type is stored as RBAC relations."},
					"hidden": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the IAM web UI hides the action."},
					"related_resource_types": schema.ListNestedAttribute{
						Computed: true,
						MarkdownDescription: "The resource types the action relates to, in the order a grant's `resources` " +
							"must give them; empty for an action granted without instances.",
						NestedObject: schema.NestedAttributeObject{Attributes: typeRefAttrs},
					},
				}},
			},
			"resource_types": schema.MapNestedAttribute{
				Computed:            true,
				MarkdownDescription: "The system's resource types, by id.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":    schema.StringAttribute{Computed: true, MarkdownDescription: "The resource type's name."},
					"name_en": schema.StringAttribute{Computed: true, MarkdownDescription: "The resource type's English name."},
					"parents": schema.ListNestedAttribute{
						Computed:            true,
						MarkdownDescription: "The resource types an instance of this type can live under (its ancestors' types).",
						NestedObject:        schema.NestedAttributeObject{Attributes: typeRefAttrs},
					},
				}},
			},
			"creator_actions": schema.MapNestedAttribute{
				Computed: true,
				MarkdownDescription: "The resource-creator configuration, by resource type: the actions IAM grants the " +
					"creator of an instance of the type (what `bkiam_creator_grant` registers). The configuration is a tree; " +
					"`parent` names the type a sub resource type is configured under, empty at the top.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"parent": schema.StringAttribute{Computed: true, MarkdownDescription: "The type this one is configured under; empty at the top."},
					"actions": schema.ListNestedAttribute{
						Computed:            true,
						MarkdownDescription: "The actions the creator gets.",
						NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
							"id":       schema.StringAttribute{Computed: true, MarkdownDescription: "The action's id."},
							"required": schema.BoolAttribute{Computed: true, MarkdownDescription: "The system's `required` flag (IAM grants every action either way)."},
						}},
					},
				}},
			},
		},
	}
}

type systemDataSourceModel struct {
	System         types.String `tfsdk:"system"`
	Actions        types.Map    `tfsdk:"actions"`
	ResourceTypes  types.Map    `tfsdk:"resource_types"`
	CreatorActions types.Map    `tfsdk:"creator_actions"`
}

func (d *systemDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	config, ok := conns.ReadConfig[systemDataSourceModel](ctx, &d.DataSource, req, resp)
	if !ok {
		return
	}
	system := config.System.ValueString()
	model, err := d.Data.Models.Get(ctx, system)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("system"), "Cannot read the model of system "+system, err.Error())
		return
	}
	state, diags := systemState(model)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, state)...)
}

// systemState converts a model to the data source's values.
func systemState(m *bkiam.SystemModel) (systemDataSourceModel, diag.Diagnostics) {
	var all diag.Diagnostics
	refs := func(rs []bkiam.TypeRef) types.List {
		vals := make([]attr.Value, 0, len(rs))
		for _, r := range rs {
			v, d := types.ObjectValue(typeRefType.AttrTypes, map[string]attr.Value{"system": types.StringValue(r.System), "id": types.StringValue(r.ID)})
			all.Append(d...)
			vals = append(vals, v)
		}
		l, d := types.ListValue(typeRefType, vals)
		all.Append(d...)
		return l
	}
	actions := map[string]attr.Value{}
	for _, a := range m.Actions {
		related := make([]bkiam.TypeRef, 0, len(a.RelatedResourceTypes))
		for _, rt := range a.RelatedResourceTypes {
			related = append(related, bkiam.TypeRef{System: rt.System, ID: rt.ID})
		}
		v, d := types.ObjectValue(systemActionType.AttrTypes, map[string]attr.Value{
			"name": types.StringValue(a.Name), "name_en": types.StringValue(a.NameEn), "auth_type": types.StringValue(a.AuthType),
			"hidden": types.BoolValue(a.Hidden), "related_resource_types": refs(related),
		})
		all.Append(d...)
		actions[a.ID] = v
	}
	resourceTypes := map[string]attr.Value{}
	for _, t := range m.ResourceTypes {
		v, d := types.ObjectValue(systemResourceTypeType.AttrTypes, map[string]attr.Value{
			"name": types.StringValue(t.Name), "name_en": types.StringValue(t.NameEn), "parents": refs(t.Parents),
		})
		all.Append(d...)
		resourceTypes[t.ID] = v
	}
	creators := map[string]attr.Value{}
	var walk func(parent string, nodes []bkiam.CreatorNode)
	walk = func(parent string, nodes []bkiam.CreatorNode) {
		for _, n := range nodes {
			acts := make([]attr.Value, 0, len(n.Actions))
			for _, a := range n.Actions {
				v, d := types.ObjectValue(creatorActionType.AttrTypes, map[string]attr.Value{"id": types.StringValue(a.ID), "required": types.BoolValue(a.Required)})
				all.Append(d...)
				acts = append(acts, v)
			}
			l, d := types.ListValue(creatorActionType, acts)
			all.Append(d...)
			v, d := types.ObjectValue(systemCreatorType.AttrTypes, map[string]attr.Value{"parent": types.StringValue(parent), "actions": l})
			all.Append(d...)
			creators[n.ID] = v
			walk(n.ID, n.SubResourceTypes)
		}
	}
	walk("", m.CreatorConfig)
	out := systemDataSourceModel{System: types.StringValue(m.System)}
	var d diag.Diagnostics
	out.Actions, d = types.MapValue(systemActionType, actions)
	all.Append(d...)
	out.ResourceTypes, d = types.MapValue(systemResourceTypeType, resourceTypes)
	all.Append(d...)
	out.CreatorActions, d = types.MapValue(systemCreatorType, creators)
	all.Append(d...)
	return out, all
}
