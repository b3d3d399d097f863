package access

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
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
	"github.com/bkiam/terraform-provider-bkiam/internal/renewal"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// expiringDataSource is bkiam_expiring: what is about to lapse, so that a
// check block or an output can report it before anyone loses access. A
// group's members are read through the management API's member list; a
// user's grants of given actions through IAM's answer about the user, and
// the policy lists where it cannot tell (conns.Data.Policies: one scan per
// action, shared with the plan's expiry check and detect_drift, made again
// for a user this process has written to). renewed_by
// (expiring_renewed_by.go) names the lapses the configuration renews.
type expiringDataSource struct {
	conns.DataSource
}

var (
	_ datasource.DataSourceWithConfigure        = &expiringDataSource{}
	_ datasource.DataSourceWithConfigValidators = &expiringDataSource{}
)

func NewExpiringDataSource() datasource.DataSource {
	return &expiringDataSource{conns.DataSource{Name: "expiring"}}
}

var expiringMemberType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"type": types.StringType, "id": types.StringType, "expires_at": types.StringType, "renewed_by": types.StringType,
}}

var expiringGrantType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"action": types.StringType, "expires_at": types.StringType, "renewed_by": types.StringType,
}}

var renewedByRow = schema.StringAttribute{Computed: true, MarkdownDescription: "The name in `renewed_by` of the rolling " +
	"expiry that renews it in its renewal window; null when nothing there does."}

func (d *expiringDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "What lapses within a window: the members of a user group, or a user's grants of given " +
			"actions, whose expiry falls between now and now plus `within` (already expired ones are not listed; " +
			"permanent ones never are). For a `check` block that warns before access lapses, or an output that reports " +
			"it; with `renewed_by`, the lapses the configuration's rolling expiries renew are named and left out of " +
			"`lapsing`. Set `group_id`, or `user` with `actions`. Read through the API gateway (`apigw_url`): the member list " +
			"of IAM's management API; for a user, IAM's answer about the user (the backend's policy query) and, where " +
			"it cannot tell (a manager of the system, a gateway that drops its debug output, nothing live), a scan of the " +
			"action's policy list (pages of 500 policies), shared with the plan's expiry check and made again once this " +
			"provider has written to the user's action. A user's grants are the user's own policies, one expiry per action (IAM keeps one per " +
			"user and action), not what the user holds through groups.",
		Attributes: map[string]schema.Attribute{
			"system": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The system: for `group_id`, the system whose management API manages the group; for " +
					"`user`, the system of the actions.",
				Validators: []validator.String{verify.IAMIDValidator{}},
			},
			"within": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The window from now, e.g. `\"30d\"` (units `w`, `d`, `h`, `m`, `s`).",
				Validators:          []validator.String{durationValidator{}},
			},
			"group_id": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "A user group's numeric id: list its members (users and departments) that lapse.",
			},
			"user": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "A username: list its grants of `actions` that lapse.",
			},
			"actions": schema.SetAttribute{
				Optional:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "With `user`: the actions to look at.",
			},
			"members": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "With `group_id`: the members that lapse, soonest first.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"type":       schema.StringAttribute{Computed: true, MarkdownDescription: "`user` or `department`."},
					"id":         schema.StringAttribute{Computed: true, MarkdownDescription: "The username or department id."},
					"expires_at": schema.StringAttribute{Computed: true, MarkdownDescription: "When the membership lapses (RFC 3339)."},
					"renewed_by": renewedByRow,
				}},
			},
			"grants": schema.ListNestedAttribute{
				Computed:            true,
				MarkdownDescription: "With `user`: the actions whose grants lapse, soonest first.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"action":     schema.StringAttribute{Computed: true, MarkdownDescription: "The action."},
					"expires_at": schema.StringAttribute{Computed: true, MarkdownDescription: "When the user's policy for it lapses (RFC 3339)."},
					"renewed_by": renewedByRow,
				}},
			},
			"renewed_by": renewedByAttribute,
			"lapsing": schema.Int64Attribute{
				Computed: true,
				MarkdownDescription: "How many members or grants lapse within the window and nothing in `renewed_by` renews: `0` " +
					"when none.",
			},
		},
	}
}

func (d *expiringDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{
		datasourcevalidator.ExactlyOneOf(path.MatchRoot("group_id"), path.MatchRoot("user")),
		datasourcevalidator.RequiredTogether(path.MatchRoot("user"), path.MatchRoot("actions")),
		datasourcevalidator.Conflicting(path.MatchRoot("group_id"), path.MatchRoot("actions")),
	}
}

type expiringModel struct {
	System    types.String `tfsdk:"system"`
	Within    types.String `tfsdk:"within"`
	GroupID   types.String `tfsdk:"group_id"`
	User      types.String `tfsdk:"user"`
	Actions   types.Set    `tfsdk:"actions"`
	Members   types.List   `tfsdk:"members"`
	Grants    types.List   `tfsdk:"grants"`
	RenewedBy types.Map    `tfsdk:"renewed_by"`
	Lapsing   types.Int64  `tfsdk:"lapsing"`
}

// lapse is one row of the answer.
type lapse struct {
	kind, id  string // members: type and id; grants: "" and the action
	expiresAt int64
}

func (d *expiringDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	m, ok := conns.ReadConfig[expiringModel](ctx, &d.DataSource, req, resp)
	if !ok {
		return
	}
	within, ok := windowOf(path.Root("within"), m.Within.ValueString(), &resp.Diagnostics)
	if !ok {
		return // known only now, and not a duration
	}
	now := time.Now()
	until := now.Add(within).Unix()
	soon := func(at int64) bool { return at > now.Unix() && at <= until && at < bkiam.PermanentExpiry }
	system := m.System.ValueString()
	renewers := renewersOf(ctx, m.RenewedBy, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	var rows []lapse
	var group int64
	switch {
	case !m.GroupID.IsNull():
		var err error
		group, err = strconv.ParseInt(m.GroupID.ValueString(), 10, 64)
		if err != nil || group <= 0 {
			resp.Diagnostics.AddAttributeError(path.Root("group_id"), "Invalid group id",
				fmt.Sprintf("group_id must be a user group's numeric id, such as bkiam_group.dev.id or \"42\"; got %q.", m.GroupID.ValueString()))
			return
		}
		members, err := d.Data.Client.GroupMembers(ctx, system, group)
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("group_id"), "Cannot read the group's members", err.Error())
			return
		}
		for _, mb := range members {
			if soon(mb.ExpiredAt) {
				rows = append(rows, lapse{kind: mb.Type, id: mb.ID, expiresAt: mb.ExpiredAt})
			}
		}
	default:
		var actions []string
		resp.Diagnostics.Append(m.Actions.ElementsAs(ctx, &actions, false)...)
		if resp.Diagnostics.HasError() {
			return
		}
		if d.Data.Policies == nil {
			resp.Diagnostics.AddAttributeError(path.Root("user"), "Cannot read the user's policies", bkiam.ErrReadNeedsGateway.Error())
			return
		}
		user := bkiam.Subject{Type: bkiam.SubjectUser, ID: m.User.ValueString()}
		// Only the expiry: IAM's answer about the user gives it, no row is
		// read by id.
		expiryOnly := func(string, int64) bool { return false }
		held, _, err := heldpolicy.NewLiveReader(d.Data.Policies).Read(ctx, system, user, actions, expiryOnly)
		if err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("actions"), "Cannot read the user's policies", err.Error())
			return
		}
		for _, action := range actions {
			if policy := held[action].Live; policy != nil && soon(policy.ExpiredAt) {
				rows = append(rows, lapse{id: action, expiresAt: policy.ExpiredAt})
			}
		}
	}
	slices.SortFunc(rows, func(a, b lapse) int {
		return cmp.Or(cmp.Compare(a.expiresAt, b.expiresAt), cmp.Compare(a.kind, b.kind), cmp.Compare(a.id, b.id))
	})
	m.Members, m.Grants = types.ListNull(expiringMemberType), types.ListNull(expiringGrantType)
	var values []attr.Value
	lapsing := 0
	for _, r := range rows {
		at := types.StringValue(time.Unix(r.expiresAt, 0).UTC().Format(time.RFC3339))
		renewedBy := types.StringNull()
		if name := renewing(renewers, system, m.User.ValueString(), group, r); name != "" {
			renewedBy = types.StringValue(name)
		} else {
			lapsing++
		}
		var attrs map[string]attr.Value
		if m.GroupID.IsNull() {
			attrs = map[string]attr.Value{"action": types.StringValue(r.id), "expires_at": at, "renewed_by": renewedBy}
		} else {
			attrs = map[string]attr.Value{"type": types.StringValue(r.kind), "id": types.StringValue(r.id), "expires_at": at, "renewed_by": renewedBy}
		}
		typ := expiringGrantType
		if !m.GroupID.IsNull() {
			typ = expiringMemberType
		}
		v, diags := types.ObjectValue(typ.AttrTypes, attrs)
		resp.Diagnostics.Append(diags...)
		values = append(values, v)
	}
	list := func(typ types.ObjectType) types.List {
		l, diags := types.ListValue(typ, values)
		resp.Diagnostics.Append(diags...)
		return l
	}
	if m.GroupID.IsNull() {
		m.Grants = list(expiringGrantType)
	} else {
		m.Members = list(expiringMemberType)
	}
	m.Lapsing = types.Int64Value(int64(lapsing))
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// durationValidator checks a duration as internal/renewal reads it.
type durationValidator struct{}

func (durationValidator) Description(context.Context) string {
	return `a duration such as "30d", "12h" or "1w"`
}

func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (durationValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	windowOf(req.Path, req.ConfigValue.ValueString(), &resp.Diagnostics)
}

// windowOf parses the duration at p (within, or one of renewed_by), or
// says why it cannot.
func windowOf(p path.Path, s string, diags *diag.Diagnostics) (time.Duration, bool) {
	d, err := renewal.ParseDuration(s)
	if err != nil {
		hint := "Write the window from now, e.g. \"30d\"."
		if !p.Equal(path.Root("within")) {
			// A duration of renewed_by: the rolling resource's own.
			hint = "Pass the rolling resource's own value (the resource itself), or write it as that resource does, e.g. \"90d\"."
		}
		diags.AddAttributeError(p, "Invalid duration", fmt.Sprintf("%s: %v. %s", p, err, hint))
		return 0, false
	}
	return d, true
}
