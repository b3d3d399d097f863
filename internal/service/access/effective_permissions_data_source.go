package access

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/policyexpr"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// effectivePermissionsDataSource is bkiam_effective_permissions: for a
// user and actions, the expression IAM evaluates (the backend's
// query_by_actions: the user's own grants, its groups', through
// departments and their ancestors, template rows, merged, expired ones
// left out), in IAM's JSON and in a readable form, and the groups the
// user belongs to. What an auditor asks for and IAM's web UI does not
// show in one place.
type effectivePermissionsDataSource struct {
	conns.DataSource
}

var _ datasource.DataSourceWithConfigure = &effectivePermissionsDataSource{}

func NewEffectivePermissionsDataSource() datasource.DataSource {
	return &effectivePermissionsDataSource{conns.DataSource{Name: "effective_permissions"}}
}

var effectivePermissionType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"expression": types.StringType, "any": types.BoolType, "none": types.BoolType,
	"instances": types.MapType{ElemType: types.ListType{ElemType: types.StringType}},
}}

func (d *effectivePermissionsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "What a user may do, for given actions, as IAM evaluates it (the backend's " +
			"`query_by_actions`): the user's own grants and those of every group it belongs to (directly, through a " +
			"department or an ancestor department), permission-template rows, merged into one expression per action, " +
			"expired ones left out. In IAM's JSON and in a readable form, with the groups the user belongs to. What an " +
			"app cannot see: which users are managers (IAM answers `admin`, super managers and the system's managers " +
			"as *any* without reading a policy, and `as_manager` says so; a grade manager is answered by its policies, " +
			"like any user), and which group gave what (IAM merges them; `groups` lists the groups the user is in). " +
			"Read through the API gateway (`apigw_url`); the app must be a client of the system.",
		Attributes: map[string]schema.Attribute{
			"system": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The system of the actions, e.g. `bk_cmdb`.",
				Validators:          []validator.String{verify.IAMIDValidator{}},
			},
			"user": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The username. A user IAM does not know fails the plan.",
			},
			"actions": schema.SetAttribute{
				Required:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The actions to look at.",
				Validators:          []validator.Set{setvalidator.SizeAtLeast(1)},
			},
			"permissions": schema.MapNestedAttribute{
				Computed:            true,
				MarkdownDescription: "By action: what the user may do.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"expression": schema.StringAttribute{Computed: true, MarkdownDescription: "IAM's expression, as JSON (`{}` when nothing)."},
					"any":        schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether it allows every instance."},
					"none":       schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether it allows nothing."},
					"instances": schema.MapAttribute{
						Computed:    true,
						ElementType: types.ListType{ElemType: types.StringType},
						MarkdownDescription: "By resource type (`SYSTEM/TYPE`, the action's related types, with `check_model`): " +
							"the instance ids it allows by id. Grants by path (everything under an ancestor) show only in " +
							"`expression`.",
					},
				}},
			},
			"groups": schema.ListAttribute{
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "The ids of the groups the user is a member of, unexpired, directly or through a " +
					"department or an ancestor department: every such group, whichever actions it grants, from IAM's " +
					"user-groups route. Groups the user reaches through a subject template (人员模板) count in " +
					"`permissions` but are not listed: the route does not follow templates. `[]` for a user in no group; " +
					"null only when the route cannot be read (a site may need to grant it to the app), and the plan then warns.",
			},
			"as_manager": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "Whether IAM answered as for `admin`, a super manager or a manager of the system: everything, without reading a policy.",
			},
		},
	}
}

type effectivePermissionsModel struct {
	System      types.String `tfsdk:"system"`
	User        types.String `tfsdk:"user"`
	Actions     types.Set    `tfsdk:"actions"`
	Permissions types.Map    `tfsdk:"permissions"`
	Groups      types.List   `tfsdk:"groups"`
	AsManager   types.Bool   `tfsdk:"as_manager"`
}

func (d *effectivePermissionsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	m, ok := conns.ReadConfig[effectivePermissionsModel](ctx, &d.DataSource, req, resp)
	if !ok {
		return
	}
	var actions []string
	resp.Diagnostics.Append(m.Actions.ElementsAs(ctx, &actions, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	slices.Sort(actions)
	system, user := m.System.ValueString(), m.User.ValueString()
	related, ok := relatedTypes(ctx, d.Data, system, actions, &resp.Diagnostics) // nil without check_model
	if !ok {
		return
	}
	m.Groups = types.ListNull(types.StringType)
	if !strings.EqualFold(user, "admin") {
		groups, known, err := knownUser(ctx, d.Data, user, path.Root("user"), `"no permissions"`, &resp.Diagnostics)
		switch {
		case !known:
			return
		case err != nil:
			resp.Diagnostics.AddAttributeWarning(path.Root("user"), "Cannot list the user's groups",
				fmt.Sprintf("The provider could not read %q's groups (the gateway's user-groups route, which an app may need "+
					"granted), so groups is null and a typo in the user cannot be told from a user without permissions: %v.", user, err))
		default:
			if groups == nil {
				groups = []string{} // in no group: [], which null would not say
			}
			slices.Sort(groups)
			list, diags := types.ListValueFrom(ctx, types.StringType, groups)
			resp.Diagnostics.Append(diags...)
			m.Groups = list
		}
	}
	conditions, asManager, err := d.Data.Client.QueryByActions(ctx, system, bkiam.Subject{Type: bkiam.SubjectUser, ID: user}, actions)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the effective permissions", err.Error())
		return
	}
	byAction := map[string][]byte{}
	for _, c := range conditions {
		byAction[c.Action] = c.Condition
	}
	permissions := map[string]attr.Value{}
	for _, a := range actions {
		v, err := readablePermission(ctx, byAction[a], related[a])
		if err != nil {
			resp.Diagnostics.AddError("Cannot read the effective permissions", fmt.Sprintf("IAM's expression for %s: %v", a, err))
			return
		}
		permissions[a] = v
	}
	var diags diag.Diagnostics
	m.Permissions, diags = types.MapValue(effectivePermissionType, permissions)
	resp.Diagnostics.Append(diags...)
	m.AsManager = types.BoolValue(asManager)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// readablePermission is one action's answer as the data source shows it:
// IAM's JSON, whether it allows anything or everything, and the ids it
// allows of each related type.
func readablePermission(ctx context.Context, raw []byte, related []string) (attr.Value, error) {
	raw = bytes.TrimSpace(raw)
	none := len(raw) == 0 || bytes.Equal(raw, []byte("{}")) || bytes.Equal(raw, []byte("null"))
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	anyInstance := false
	instances := map[string][]string{}
	if !none {
		e, err := policyexpr.Parse(raw)
		if err != nil {
			return nil, err
		}
		for _, rt := range related {
			_, typ, _ := strings.Cut(rt, "/")
			ids, all := e.Instances(typ)
			anyInstance = anyInstance || all
			if len(ids) > 0 {
				instances[rt] = ids
			}
		}
		if _, all := e.Instances(""); all {
			anyInstance = true
		}
	}
	inst, diags := types.MapValueFrom(ctx, types.ListType{ElemType: types.StringType}, instances)
	if diags.HasError() {
		return nil, fmt.Errorf("%v", diags)
	}
	v, diags := types.ObjectValue(effectivePermissionType.AttrTypes, map[string]attr.Value{
		"expression": types.StringValue(string(raw)), "any": types.BoolValue(anyInstance), "none": types.BoolValue(none), "instances": inst,
	})
	if diags.HasError() {
		return nil, fmt.Errorf("%v", diags)
	}
	return v, nil
}
