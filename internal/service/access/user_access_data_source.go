package access

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/heldpolicy"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// userAccessDataSource is bkiam_user_access: a person's access read
// whole, for audits and for the check after a leaver is cleaned up. No
// route of IAM lists it (issue 1996 asked for one), and what an app may
// read of it depends on the gateway's generation, so it combines what it
// is let through to:
//
//   - the admin API's subject groups (2026 gateway, with the resource
//     granted and the admin allow-list's subject_joined_group_list): the
//     user's direct memberships with their expiry, expired ones too;
//   - the backend's users/{id}/groups (any app before 2026; a grant of
//     open_user_groups from 2026 on): unexpired groups, without expiry,
//     with inherit the departments' too, so that the difference is what
//     the user reaches only through a department; without the admin API,
//     the direct ones come from the call without inherit, and their expiry
//     from the management API's member's-groups details, for the groups
//     that are the app's through system;
//   - the backend's policy query with its debug output (the policy lists
//     where it cannot tell): the user's own policies of the actions.
//
// A route refused is left for the other; with neither, the read fails
// naming what to ask for.
type userAccessDataSource struct {
	conns.DataSource
}

var _ datasource.DataSourceWithConfigure = &userAccessDataSource{}

func NewUserAccessDataSource() datasource.DataSource {
	return &userAccessDataSource{conns.DataSource{Name: "user_access"}}
}

var userAccessGroupType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name": types.StringType, "expires_at": types.StringType, "direct": types.BoolType,
	"expired": types.BoolType, "through_department": types.BoolType,
}}

var userAccessPolicyType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"expires_at": types.StringType, "policy_id": types.StringType,
}}

func (d *userAccessDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A person's access, read whole, for audits and offboarding checks: the user groups a user " +
			"belongs to (directly or through a department, with the expiry of the user's own membership), the user's own " +
			"policies of given actions with their expiry, and `holds_nothing`, for a `check` block after a leaver is " +
			"cleaned up. What an app may read depends on the generation of the bk-iam API gateway (the guide *Auditing " +
			"access* has the table): before 2026, the backend's `users/{id}/groups` (gateway resource `open_user_groups`, " +
			"any app) and, for the groups that are the app's through `system`, the management API's member's-groups " +
			"details; from 2026, the admin API's subject groups (gateway resource `admin_list_subject_groups` granted " +
			"to the app, and `subject_joined_group_list` on IAM's admin allow-list for it), and `users/{id}/groups` " +
			"when `open_user_groups` is granted. A route refused is left for the other; with neither, the read fails " +
			"naming what to ask for. Not read: roles (grade, system and super manager), subject-template memberships, " +
			"temporary policies, and what the user's groups hold (`bkiam_effective_permissions` merges it all). Read " +
			"through the API gateway (`apigw_url`).",
		Attributes: map[string]schema.Attribute{
			"user": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The username. A user IAM does not know fails the read (a typo would read as holding nothing).",
			},
			"system": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The system of `actions`, and the one through which the app's groups are read on a " +
					"gateway before 2026 (the groups its grade managers and its system manager hold): the expiry of " +
					"the user's membership in any other group is not told there.",
				Validators: []validator.String{verify.IAMIDValidator{}},
			},
			"actions": schema.SetAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The actions of `system` whose policies of the user's own to read; none: no policy is read.",
			},
			"groups": schema.MapNestedAttribute{
				Computed: true,
				MarkdownDescription: "By group id: the groups the user is in, directly (expired memberships too, where " +
					"the admin API lists them) or through a department or an ancestor department (unexpired).",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{Computed: true, MarkdownDescription: "The group's name."},
					"expires_at": schema.StringAttribute{Computed: true, MarkdownDescription: "When the user's own membership " +
						"lapses (RFC 3339, or `permanent`); null for a group the user is in only through a department, and " +
						"where IAM does not tell it to the app (before 2026, a group that is not the app's through `system`)."},
					"direct": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the user is a member " +
						"itself, unexpired."},
					"expired": schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the user's own " +
						"membership has expired (only the admin API lists those: from 2026). IAM's leaver cleanup " +
						"removes it too."},
					"through_department": schema.BoolAttribute{Computed: true, MarkdownDescription: "`true` when the " +
						"user reaches the group through a department (or an ancestor) and is not a member itself, " +
						"unexpired; null where IAM does not tell: for a group the user is in directly (IAM lists it once), " +
						"and for every group when `users/{id}/groups` is refused (then groups reached only through a " +
						"department are not listed)."},
				}},
			},
			"policies": schema.MapNestedAttribute{
				Computed: true,
				MarkdownDescription: "By action: the user's own unexpired policy of each of `actions` it holds one of " +
					"(not its groups'); an action the user holds nothing of is not a key.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"expires_at": schema.StringAttribute{Computed: true, MarkdownDescription: "When it lapses (RFC 3339, or `permanent`)."},
					"policy_id": schema.StringAttribute{Computed: true, MarkdownDescription: "The backend id of the policy " +
						"(the latest-expiring one when a permission template adds rows of its own)."},
				}},
			},
			"department_only_groups": schema.Int64Attribute{
				Computed: true,
				MarkdownDescription: "How many groups of `groups` the user is in only through a department. " +
					"`holds_nothing` leaves them out: IAM's leaver cleanup keeps them while the user is in the department.",
			},
			"holds_nothing": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "`true` when the user is a member itself of no group (unexpired) and holds no " +
					"unexpired policy of its own of `actions`: what IAM's leaver cleanup leaves. Groups reached through a " +
					"department do not count (`department_only_groups`).",
			},
			"read_through": schema.ListAttribute{
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "The routes that answered: `admin_subject_groups`, `user_groups`, " +
					"`member_group_details`, `policy_query`.",
			},
		},
	}
}

type userAccessModel struct {
	User                 types.String `tfsdk:"user"`
	System               types.String `tfsdk:"system"`
	Actions              types.Set    `tfsdk:"actions"`
	Groups               types.Map    `tfsdk:"groups"`
	Policies             types.Map    `tfsdk:"policies"`
	DepartmentOnlyGroups types.Int64  `tfsdk:"department_only_groups"`
	HoldsNothing         types.Bool   `tfsdk:"holds_nothing"`
	ReadThrough          types.List   `tfsdk:"read_through"`
}

// accessGroup is one group of the answer; expiresAt 0 and throughDepartment nil are "not told".
type accessGroup struct {
	name              string
	expiresAt         int64
	direct, expired   bool
	throughDepartment *bool
}

func (d *userAccessDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	m, ok := conns.ReadConfig[userAccessModel](ctx, &d.DataSource, req, resp)
	if !ok {
		return
	}
	user, system := m.User.ValueString(), m.System.ValueString()
	var actions []string
	if !m.Actions.IsNull() {
		resp.Diagnostics.Append(m.Actions.ElementsAs(ctx, &actions, false)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	var through []string
	groups, routes, ok := d.readGroups(ctx, user, system, &resp.Diagnostics)
	if !ok {
		return
	}
	through = append(through, routes...)
	policies, ok := d.readPolicies(ctx, user, system, actions, &resp.Diagnostics)
	if !ok {
		return
	}
	if len(actions) > 0 {
		through = append(through, "policy_query")
	}

	holdsNothing := len(policies) == 0
	departmentOnly := 0
	gv := map[string]attr.Value{}
	for id, g := range groups {
		holdsNothing = holdsNothing && !g.direct
		if g.throughDepartment != nil && *g.throughDepartment {
			departmentOnly++
		}
		v, diags := types.ObjectValue(userAccessGroupType.AttrTypes, map[string]attr.Value{
			"name": types.StringValue(g.name), "expires_at": expiryValue(g.expiresAt), "direct": types.BoolValue(g.direct),
			"expired": types.BoolValue(g.expired), "through_department": types.BoolPointerValue(g.throughDepartment),
		})
		resp.Diagnostics.Append(diags...)
		gv[strconv.FormatInt(id, 10)] = v
	}
	pv := map[string]attr.Value{}
	for action, row := range policies {
		v, diags := types.ObjectValue(userAccessPolicyType.AttrTypes, map[string]attr.Value{
			"expires_at": expiryValue(row.ExpiredAt), "policy_id": types.StringValue(strconv.FormatInt(row.ID, 10)),
		})
		resp.Diagnostics.Append(diags...)
		pv[action] = v
	}
	var diags diag.Diagnostics
	m.Groups, diags = types.MapValue(userAccessGroupType, gv)
	resp.Diagnostics.Append(diags...)
	m.Policies, diags = types.MapValue(userAccessPolicyType, pv)
	resp.Diagnostics.Append(diags...)
	m.ReadThrough, diags = types.ListValueFrom(ctx, types.StringType, through)
	resp.Diagnostics.Append(diags...)
	m.DepartmentOnlyGroups = types.Int64Value(int64(departmentOnly))
	m.HoldsNothing = types.BoolValue(holdsNothing)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// expiryValue is an expiry as the provider prints them: RFC 3339, or
// "permanent"; null for 0, "not told".
func expiryValue(at int64) types.String {
	switch {
	case at == 0:
		return types.StringNull()
	case at >= bkiam.PermanentExpiry:
		return types.StringValue("permanent")
	}
	return types.StringValue(time.Unix(at, 0).UTC().Format(time.RFC3339))
}

// readGroups reads the user's groups through the routes the app is let
// through to (see userAccessDataSource), and the names of the routes that
// answered. ok is false when it reported an error.
func (d *userAccessDataSource) readGroups(ctx context.Context, user, system string, diags *diag.Diagnostics) (map[int64]*accessGroup, []string, bool) {
	c := d.Data.Client
	now := time.Now().Unix()
	groups := map[int64]*accessGroup{}
	var routes []string
	unknown := func() {
		diags.AddAttributeError(path.Root("user"), "Unknown user",
			fmt.Sprintf("IAM does not know user %q: a typo would read as a user holding nothing. Check the username (a user "+
				"IAM's organisation sync has removed is no longer known either).", user))
	}
	admin, adminErr := c.AdminSubjectGroups(ctx, bkiam.SubjectUser, user)
	switch {
	case adminErr == nil:
		routes = append(routes, "admin_subject_groups")
		for _, g := range admin {
			live := g.ExpiredAt > now
			groups[g.ID] = &accessGroup{name: g.Name, expiresAt: g.ExpiredAt, direct: live, expired: !live}
		}
	case errors.Is(adminErr, bkiam.ErrUnknownSubject):
		unknown()
		return nil, nil, false
	case !errors.Is(adminErr, bkiam.ErrRouteRefused):
		diags.AddAttributeError(path.Root("user"), "Cannot read the user's groups", adminErr.Error())
		return nil, nil, false
	}
	all, err := c.UserGroupList(ctx, user, true)
	switch {
	case errors.Is(err, bkiam.ErrUnknownSubject):
		unknown()
		return nil, nil, false
	case errors.Is(err, bkiam.ErrRouteRefused) && adminErr == nil:
		diags.AddAttributeWarning(path.Root("user"), "Groups reached through a department are not read",
			fmt.Sprintf("The user's own memberships were read through the admin API, but the groups of its departments "+
				"need the backend's users/{id}/groups, which was refused: %v. through_department is null, and groups the "+
				"user reaches only through a department are not listed.", err))
		return groups, routes, true
	case errors.Is(err, bkiam.ErrRouteRefused):
		diags.AddAttributeError(path.Root("user"), "Cannot read the user's groups",
			fmt.Sprintf("Neither route that lists a user's groups lets this app through. Ask for one of them: on a "+
				"2026 bk-iam API gateway, the gateway resource %s granted to the app and %s on IAM's admin API "+
				"allow-list for it (the admin API's subject groups, with expiry); or the gateway resource %s granted "+
				"to the app (the backend's users/{id}/groups).\n\nThe admin API: %v\n\nThe backend: %v",
				bkiam.GatewayAdminSubjectGroups, bkiam.AdminSubjectJoinedGroupList, bkiam.GatewayOpenUserGroups, adminErr, err))
		return nil, nil, false
	case err != nil:
		diags.AddAttributeError(path.Root("user"), "Cannot read the user's groups", err.Error())
		return nil, nil, false
	}
	routes = append(routes, "user_groups")
	if adminErr != nil {
		// No admin API: the direct memberships are the call without
		// inherit, and their expiry the app's groups' details.
		direct, err := c.UserGroupList(ctx, user, false)
		if err != nil {
			diags.AddAttributeError(path.Root("user"), "Cannot read the user's groups", err.Error())
			return nil, nil, false
		}
		ids := make([]int64, 0, len(direct))
		for _, g := range direct {
			groups[g.ID] = &accessGroup{name: g.Name, direct: true}
			ids = append(ids, g.ID)
		}
		expiries, err := d.memberExpiries(ctx, system, user, ids)
		if err != nil {
			diags.AddAttributeWarning(path.Root("system"), "The expiry of the user's memberships is not read",
				fmt.Sprintf("The management API's member's-groups details of system %s could not be read, so expires_at is "+
					"null: %v. The app needs v2_member_groups_detail_list on IAM's management allow-list for the system.", system, err))
		} else {
			routes = append(routes, "member_group_details")
		}
		for id, at := range expiries {
			groups[id].expiresAt = at
		}
	}
	yes := true
	for _, g := range all {
		if cur := groups[g.ID]; cur != nil && cur.direct {
			continue // IAM lists a group once: a department may reach it too, or not
		}
		if cur := groups[g.ID]; cur != nil {
			cur.throughDepartment = &yes
			continue
		}
		groups[g.ID] = &accessGroup{name: g.Name, throughDepartment: &yes}
	}
	return groups, routes, true
}

// memberExpiries reads the expiry of the user's membership in each of
// ids that is the app's group through system. The details route refuses
// a whole batch for one group that is not (ErrNotOwned): such a batch is
// halved until the groups that are not are alone, and left out.
func (d *userAccessDataSource) memberExpiries(ctx context.Context, system, user string, ids []int64) (map[int64]int64, error) {
	out := map[int64]int64{}
	var read func(batch []int64) error
	read = func(batch []int64) error {
		rows, err := d.Data.Client.MemberGroupDetails(ctx, system, bkiam.SubjectUser, user, batch)
		switch {
		case errors.Is(err, bkiam.ErrNotOwned) && len(batch) > 1:
			half := len(batch) / 2
			if err := read(batch[:half]); err != nil {
				return err
			}
			return read(batch[half:])
		case errors.Is(err, bkiam.ErrNotOwned):
			return nil // not the app's: its expiry is not told
		case err != nil:
			return err
		}
		for _, r := range rows {
			out[r.ID] = r.ExpiredAt
		}
		return nil
	}
	for batch := range slices.Chunk(ids, bkiam.MemberGroupDetailLimit) {
		if err := read(batch); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readPolicies reads, by action, the user's own unexpired policy: IAM's
// answer about the user (the backend's policy query, its debug output),
// or the action's policy list where that cannot tell (a manager, a
// gateway that drops the debug output). Of several rows, the
// latest-expiring. ok is false when it reported an error.
func (d *userAccessDataSource) readPolicies(ctx context.Context, user, system string, actions []string, diags *diag.Diagnostics) (map[string]heldpolicy.Row, bool) {
	out := map[string]heldpolicy.Row{}
	if len(actions) == 0 {
		return out, true
	}
	if d.Data.Policies == nil {
		diags.AddAttributeError(path.Root("actions"), "Cannot read the user's policies", bkiam.ErrReadNeedsGateway.Error())
		return nil, false
	}
	subject := bkiam.Subject{Type: bkiam.SubjectUser, ID: user}
	keep := func(action string, row heldpolicy.Row) {
		if cur, ok := out[action]; !ok || row.ExpiredAt > cur.ExpiredAt {
			out[action] = row
		}
	}
	rows, _, err := d.Data.Policies.OwnRows(ctx, system, subject, actions)
	if errors.Is(err, bkiam.ErrSubjectFrozen) {
		diags.AddAttributeWarning(path.Root("user"), "Frozen in IAM",
			fmt.Sprintf("IAM has frozen user %s (its admin API freezes a leaver): every system that asks IAM denies the user each "+
				"action until it is unfrozen, and IAM's policy query refuses the user, so its policies are read from the "+
				"actions' policy lists.", user))
	}
	switch {
	case errors.Is(err, heldpolicy.ErrUnanswered):
		for _, action := range actions {
			live, _, err := d.Data.Policies.Scan(ctx, system, action, subject)
			if err != nil {
				diags.AddAttributeError(path.Root("actions"), "Cannot read the user's policies", err.Error())
				return nil, false
			}
			for _, p := range live {
				keep(action, heldpolicy.Row{ID: p.ID, ExpiredAt: p.ExpiredAt})
			}
		}
	case err != nil:
		diags.AddAttributeError(path.Root("actions"), "Cannot read the user's policies", err.Error())
		return nil, false
	}
	for action, rs := range rows {
		for _, r := range rs {
			keep(action, r)
		}
	}
	return out, true
}
