package access

import (
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
	"expression": types.StringType, "any": types.BoolType, "none": types.BoolType, "conditional": types.BoolType,
	"instances": types.MapType{ElemType: types.ListType{ElemType: types.StringType}},
	"paths":     types.MapType{ElemType: types.ListType{ElemType: types.StringType}},
}}

func (d *effectivePermissionsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "What a user may do, for given actions, as IAM evaluates it (the backend's " +
			"`query_by_actions`; an action related to another system's resource type, such as bk_job's `access_business` " +
			"on bk_cmdb's `biz`, alone through the single-action `query`, as that one refuses it without resources): the " +
			"user's own grants and those of every group it belongs to (directly, through a " +
			"department or an ancestor department), permission-template rows, merged into one expression per action, " +
			"expired ones left out. In IAM's JSON and in a readable form, with the groups the user belongs to. What an " +
			"app cannot see: which users are managers (IAM answers `admin`, super managers and the system's managers " +
			"as *any* without reading a policy, and `as_manager` says so; a grade manager is answered by its policies, " +
			"like any user), which group gave what (IAM merges them; `groups` lists the groups the user is in), and a " +
			"policy's time window (`_bk_iam_env_`): IAM evaluates it with its clock as it answers, so within the window " +
			"the instances it covers are listed plainly and outside it they are absent, as the real IAM answered. " +
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
					"expression": schema.StringAttribute{
						Computed: true,
						MarkdownDescription: "IAM's expression, as JSON (`{}` when nothing), in one canonical form: the members of " +
							"every AND and OR, and the ids of every `in`, sorted and each once. IAM merges a user's grants in no " +
							"fixed order; the same grants print the same expression on every read.",
					},
					"any": schema.BoolAttribute{
						Computed: true,
						MarkdownDescription: "Whether it allows every instance of a resource type, or everything (an action " +
							"related to no type, or a manager's answer), whatever `check_model`.",
					},
					"none": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether it allows nothing."},
					"instances": schema.MapAttribute{
						Computed:    true,
						ElementType: types.ListType{ElemType: types.StringType},
						MarkdownDescription: "By resource type (`SYSTEM/TYPE`): the instance ids it allows, on their own or " +
							"under a topology path (an instance granted under business 1; a check then gives the instance's " +
							"`paths`), sorted. The system is the action's related type's with `check_model` (`bk_cmdb/biz` for " +
							"bk_job's `access_business`), else the data source's `system` (`bk_job/biz`: IAM's expression names " +
							"no system, and without the model the provider cannot tell another system's type).",
					},
					"paths": schema.MapAttribute{
						Computed:    true,
						ElementType: types.ListType{ElemType: types.StringType},
						MarkdownDescription: "By resource type (`SYSTEM/TYPE`, as `instances`): the topology path prefixes under " +
							"which it allows every instance, as IAM writes them: `/biz,1/` for every host of business 1 (how " +
							"the web UI and CMDB grant), `/biz,1/set,*/` for every host under any set of it. A " +
							"`bkiam_access_check` allows such an instance when it gives the instance's `paths`.",
					},
					"conditional": schema.BoolAttribute{
						Computed: true,
						MarkdownDescription: "Whether some grant depends on other attributes (`host.os eq linux`, made in the web " +
							"UI) or combines several resource types (a combined resource): those show only in `expression`.",
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
	conditions, asManager, err := d.Data.Client.QueryByActions(ctx, system, bkiam.Subject{Type: bkiam.SubjectUser, ID: user}, actions, d.Data.AskAlone(ctx, system))
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
		// A type's system: the action's related type's of that name, with
		// check_model; else the data source's.
		systemOf := func(typ string) string {
			for _, rt := range related[a] {
				if sys, t, _ := strings.Cut(rt, "/"); t == typ {
					return sys
				}
			}
			return system
		}
		v, err := readablePermission(ctx, byAction[a], systemOf)
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
// IAM's expression in canonical form, and what it allows read from its
// alternatives (policyexpr.Alternatives): every instance or everything,
// ids, path prefixes, or something else (conditional). systemOf names the
// system of a resource type for the keys.
func readablePermission(ctx context.Context, raw []byte, systemOf func(typ string) string) (attr.Value, error) {
	p, err := readPermission(raw, systemOf)
	if err != nil {
		return nil, err
	}
	inst, diags := types.MapValueFrom(ctx, types.ListType{ElemType: types.StringType}, p.instances)
	if diags.HasError() {
		return nil, fmt.Errorf("%v", diags)
	}
	paths, diags := types.MapValueFrom(ctx, types.ListType{ElemType: types.StringType}, p.paths)
	if diags.HasError() {
		return nil, fmt.Errorf("%v", diags)
	}
	v, diags := types.ObjectValue(effectivePermissionType.AttrTypes, map[string]attr.Value{
		"expression": types.StringValue(p.expression), "any": types.BoolValue(p.any), "none": types.BoolValue(p.none),
		"conditional": types.BoolValue(p.conditional), "instances": inst, "paths": paths,
	})
	if diags.HasError() {
		return nil, fmt.Errorf("%v", diags)
	}
	return v, nil
}

// permission is what readablePermission shows of one action.
type permission struct {
	expression             string
	any, none, conditional bool
	// instances and paths are by SYSTEM/TYPE, sorted and each once.
	instances, paths map[string][]string
}

func readPermission(raw []byte, systemOf func(typ string) string) (permission, error) {
	p := permission{expression: "{}", instances: map[string][]string{}, paths: map[string][]string{}}
	if noPolicy(raw) {
		p.none = true
		return p, nil
	}
	e, err := policyexpr.Parse(raw)
	if err != nil {
		return p, err
	}
	canonical, err := e.Canonical()
	if err != nil {
		return p, err
	}
	p.expression = string(canonical)
	alternatives, ok := e.Alternatives()
	if !ok {
		p.conditional = true // too many alternatives to tell: the expression says it all
		return p, nil
	}
	p.none = len(alternatives) == 0
	for _, alt := range alternatives {
		typ, what, values := classify(alt)
		key := systemOf(typ) + "/" + typ
		switch what {
		case grantsEvery:
			p.any = true
		case grantsIDs:
			p.instances[key] = append(p.instances[key], values...)
		case grantsUnder:
			p.paths[key] = append(p.paths[key], values...)
		default:
			p.conditional = true
		}
	}
	for _, m := range []map[string][]string{p.instances, p.paths} {
		for k, v := range m {
			slices.Sort(v)
			m[k] = slices.Compact(v)
		}
	}
	return p, nil
}

// What an alternative of an expression grants, as the data source shows it.
const (
	grantsEvery = iota // every instance of a type, or everything
	grantsIDs          // instances by id, on their own or under a path
	grantsUnder        // every instance under path prefixes
	grantsOther        // on other attributes, or a combination of types
)

// classify reads one alternative: its resource type ("" for none) and
// what it grants of it, with the ids or the prefixes. Every instance
// (any on TYPE.id, or on everything) is neutral beside other conditions;
// several id lists hold together (their intersection); one prefix beside
// ids only places the ids, which a check then gives the path of.
func classify(alt policyexpr.Alternative) (typ string, what int, values []string) {
	types := alt.Types()
	if len(types) > 1 {
		return "", grantsOther, nil
	}
	if len(types) == 1 {
		typ = types[0]
	}
	ids, idsSeen := alt.IDsOf(typ)
	var prefixes []string
	for _, c := range alt {
		if _, isID := c.IDs(); isID || c.Every() {
			continue
		}
		if got, ok := c.Prefixes(); ok && prefixes == nil {
			prefixes = slices.Clone(got)
			continue
		}
		return typ, grantsOther, nil
	}
	switch {
	case idsSeen:
		return typ, grantsIDs, ids
	case prefixes != nil:
		return typ, grantsUnder, prefixes
	}
	return typ, grantsEvery, nil
}
