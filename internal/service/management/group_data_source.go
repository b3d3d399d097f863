package management

import (
	"context"
	"fmt"
	"regexp"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// positiveIDPattern is a numeric id IAM gives (grade managers, groups).
var positiveIDPattern = regexp.MustCompile(`^[1-9][0-9]*$`)

// groupDataSource is the bkiam_group data source: a grade manager's group
// found by its exact name. IAM's name filter is a case-insensitive
// substring match, so the client filters again (bkiam.GroupByName).
type groupDataSource struct {
	conns.DataSource
}

var _ datasource.DataSourceWithConfigure = &groupDataSource{}

func NewGroupDataSource() datasource.DataSource {
	return &groupDataSource{conns.DataSource{Name: "group"}}
}

type groupDataSourceModel struct {
	System          types.String `tfsdk:"system"`
	GradeManagerID  types.String `tfsdk:"grade_manager_id"`
	Name            types.String `tfsdk:"name"`
	ID              types.String `tfsdk:"id"`
	Description     types.String `tfsdk:"description"`
	Readonly        types.Bool   `tfsdk:"readonly"`
	UserCount       types.Int64  `tfsdk:"user_count"`
	DepartmentCount types.Int64  `tfsdk:"department_count"`
}

func (d *groupDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A user group of a grade manager, found by its exact name (IAM's own filter matches " +
			"substrings, case-insensitively; the provider keeps the group whose name is exactly `name`). For a group made " +
			"outside Terraform: its id goes to `bkiam_group_members`, to grants, or to `terraform import`. API gateway only.",
		Attributes: map[string]schema.Attribute{
			"system": schema.StringAttribute{Required: true, MarkdownDescription: "The system that created the grade manager.",
				Validators: []validator.String{verify.IAMIDValidator{}}},
			"grade_manager_id": schema.StringAttribute{Required: true, MarkdownDescription: "The grade manager's numeric id.",
				Validators: []validator.String{stringvalidator.RegexMatches(positiveIDPattern, "must be a grade manager's numeric id")}},
			"name":             schema.StringAttribute{Required: true, MarkdownDescription: "The group's exact name (case-sensitive)."},
			"id":               schema.StringAttribute{Computed: true, MarkdownDescription: "The group's numeric id."},
			"description":      schema.StringAttribute{Computed: true, MarkdownDescription: "The group's description."},
			"readonly":         schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the IAM web UI may not change the group."},
			"user_count":       schema.Int64Attribute{Computed: true, MarkdownDescription: "How many users the group holds, expired ones included."},
			"department_count": schema.Int64Attribute{Computed: true, MarkdownDescription: "How many departments the group holds, expired ones included."},
		},
	}
}

func (d *groupDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	config, ok := conns.ReadConfig[groupDataSourceModel](ctx, &d.DataSource, req, resp)
	if !ok || !managementDataSourceReady(d.Data, "bkiam_group", &resp.Diagnostics) {
		return
	}
	system, name := config.System.ValueString(), config.Name.ValueString()
	gm, _ := strconv.ParseInt(config.GradeManagerID.ValueString(), 10, 64)
	g, err := d.Data.Client.GroupByName(ctx, system, gm, name)
	if err == nil && g == nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "No such group",
			fmt.Sprintf("Grade manager %d of %s has no group named exactly %q (IAM compares names case-insensitively when "+
				"it keeps them unique; this lookup is exact). Check the name's case and spaces.", gm, system, name))
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot find the group", managementError(fmt.Sprintf("Listing the groups of grade manager %d in %s", gm, system), err))
		return
	}
	config.ID = types.StringValue(strconv.FormatInt(g.ID, 10))
	config.Description = types.StringValue(g.Description)
	config.Readonly = types.BoolValue(g.Readonly)
	config.UserCount = types.Int64Value(int64(g.UserCount))
	config.DepartmentCount = types.Int64Value(int64(g.DepartmentCount))
	resp.Diagnostics.Append(resp.State.Set(ctx, config)...)
}
