package access

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// accessCheckDataSource is bkiam_access_check: IAM's own answer to "may
// this subject do these actions on these resources", counting what IAM
// counts (its own grants, its groups' joined directly or through a
// department or an ancestor department, permission templates, expiry),
// for check blocks, postconditions and terraform test assertions.
type accessCheckDataSource struct {
	conns.DataSource
}

var _ datasource.DataSourceWithConfigure = &accessCheckDataSource{}

func NewAccessCheckDataSource() datasource.DataSource {
	return &accessCheckDataSource{conns.DataSource{Name: "access_check"}}
}

func (d *accessCheckDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Whether a subject may do actions, as IAM itself answers it (the backend's " +
			"`auth_by_actions`, at most 10 actions per call): counting the subject's own grants, the grants of every " +
			"group it belongs to (directly, through a department or an ancestor department), permission-template rows, " +
			"and leaving out what has expired. For `check` blocks, `postcondition`s and `terraform test` assertions. " +
			"IAM allows `admin`, super managers and the system's managers everything without reading a policy: " +
			"`as_manager` says so, so that an assertion about a manager is not taken for one about their grants. IAM " +
			"answers a user it does not know `false`; the plan fails instead, naming the user. Read through the API " +
			"gateway (`apigw_url`); the app must be a client of the system. IAM's backend caches policies and " +
			"memberships, so a check made right after a change may answer from before it (not measured here).",
		Attributes: map[string]schema.Attribute{
			"system": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The system of the actions, e.g. `bk_cmdb`.",
				Validators:          []validator.String{verify.IAMIDValidator{}},
			},
			"subject": schema.SingleNestedAttribute{
				Required:            true,
				MarkdownDescription: "Who: `{ type = \"user\", id = \"alice\" }`, or a user group by its numeric id.",
				Attributes: map[string]schema.Attribute{
					"type": schema.StringAttribute{Required: true, MarkdownDescription: "`user` or `group`.",
						Validators: []validator.String{stringvalidator.OneOf(bkiam.SubjectUser, bkiam.SubjectGroup)}},
					"id": schema.StringAttribute{Required: true, MarkdownDescription: "The username or the group's id."},
				},
			},
			"actions": schema.SetAttribute{
				Required:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The actions to check.",
				Validators:          []validator.Set{setvalidator.SizeAtLeast(1)},
			},
			"resources": schema.ListNestedAttribute{
				Optional: true,
				MarkdownDescription: "On what: one instance of each resource type the actions relate to, in the order of " +
					"the actions' related types (the `bkiam_system` data source lists them); every action must relate to " +
					"the same types. Leave it out for actions related to no resource type. IAM compares them as a set and " +
					"accepts another order; the plan asks for the model's, as a grant's `resources` do.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"system": schema.StringAttribute{Required: true, MarkdownDescription: "The resource type's system."},
					"type":   schema.StringAttribute{Required: true, MarkdownDescription: "The resource type."},
					"id":     schema.StringAttribute{Required: true, MarkdownDescription: "The instance's id."},
				}},
			},
			"allowed": schema.MapAttribute{
				Computed:            true,
				ElementType:         types.BoolType,
				MarkdownDescription: "By action: whether IAM allows it.",
			},
			"all_allowed": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "Whether IAM allows every action.",
			},
			"as_manager": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether IAM allowed the subject as `admin`, a super manager or a manager of the " +
					"system, without reading any policy.",
			},
		},
	}
}

type accessCheckModel struct {
	System     types.String `tfsdk:"system"`
	Subject    types.Object `tfsdk:"subject"`
	Actions    types.Set    `tfsdk:"actions"`
	Resources  types.List   `tfsdk:"resources"`
	Allowed    types.Map    `tfsdk:"allowed"`
	AllAllowed types.Bool   `tfsdk:"all_allowed"`
	AsManager  types.Bool   `tfsdk:"as_manager"`
}

func (d *accessCheckDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	m, ok := conns.ReadConfig[accessCheckModel](ctx, &d.DataSource, req, resp)
	if !ok {
		return
	}
	var subject struct {
		Type types.String `tfsdk:"type"`
		ID   types.String `tfsdk:"id"`
	}
	resp.Diagnostics.Append(m.Subject.As(ctx, &subject, basetypes.ObjectAsOptions{})...)
	var actions []string
	resp.Diagnostics.Append(m.Actions.ElementsAs(ctx, &actions, false)...)
	var resources []bkiam.AuthResource
	if !m.Resources.IsNull() {
		var rs []struct {
			System types.String `tfsdk:"system"`
			Type   types.String `tfsdk:"type"`
			ID     types.String `tfsdk:"id"`
		}
		resp.Diagnostics.Append(m.Resources.ElementsAs(ctx, &rs, false)...)
		for _, r := range rs {
			resources = append(resources, bkiam.AuthResource{System: r.System.ValueString(), Type: r.Type.ValueString(), ID: r.ID.ValueString()})
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	slices.Sort(actions)
	system := m.System.ValueString()
	who := bkiam.Subject{Type: subject.Type.ValueString(), ID: subject.ID.ValueString()}
	d.checkAgainstModel(ctx, system, actions, resources, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if who.Type == bkiam.SubjectUser && !strings.EqualFold(who.ID, "admin") {
		at := path.Root("subject").AtName("id")
		_, known, err := knownUser(ctx, d.Data, who.ID, at, `"denied"`, &resp.Diagnostics)
		if !known {
			return
		}
		if err != nil {
			resp.Diagnostics.AddAttributeWarning(at, "Cannot tell an unknown user from a denied one",
				fmt.Sprintf("IAM answers a user it does not know false, and the provider could not ask IAM whether it knows %q "+
					"(the gateway's user-groups route, which an app may need granted): %v.", who.ID, err))
		}
	}
	answer, err := d.Data.Client.AuthByActions(ctx, system, who, actions, resources)
	if err != nil {
		resp.Diagnostics.AddError("Cannot check access", err.Error())
		return
	}
	allowed := map[string]attr.Value{}
	all := true
	for _, a := range actions {
		allowed[a] = types.BoolValue(answer.Allowed[a])
		all = all && answer.Allowed[a]
	}
	var diags diag.Diagnostics
	m.Allowed, diags = types.MapValue(types.BoolType, allowed)
	resp.Diagnostics.Append(diags...)
	m.AllAllowed, m.AsManager = types.BoolValue(all), types.BoolValue(answer.AsManager)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// checkAgainstModel refuses, with check_model, actions the system does
// not have and resources that are not one of each of the actions'
// related types, in order.
func (d *accessCheckDataSource) checkAgainstModel(ctx context.Context, system string, actions []string, resources []bkiam.AuthResource, diags *diag.Diagnostics) {
	related, ok := relatedTypes(ctx, d.Data, system, actions, diags)
	if !ok || related == nil {
		return
	}
	given := make([]string, len(resources))
	for i, r := range resources {
		given[i] = r.System + "/" + r.Type
	}
	for _, id := range actions {
		if want := related[id]; !slices.Equal(want, given) {
			diags.AddAttributeError(path.Root("resources"), "Resources do not match the action",
				fmt.Sprintf("Action %s relates to [%s], in that order; resources give [%s]. Give one instance of each, in order "+
					"(IAM answers a mismatch with a system error).", id, strings.Join(want, ", "), strings.Join(given, ", ")))
		}
	}
}
