package management

import (
	"context"
	"fmt"
	"slices"
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

// gradeManagerDataSource is the bkiam_grade_manager data source: a grade
// manager the system created through the management API, found by its
// exact name. Only the v1 management API lists grade managers, and its
// name filter is a case-insensitive substring match, so the client filters
// again (bkiam.GradeManagersNamed); the members come from the v2 detail.
type gradeManagerDataSource struct {
	conns.DataSource
}

var _ datasource.DataSourceWithConfigure = &gradeManagerDataSource{}

func NewGradeManagerDataSource() datasource.DataSource {
	return &gradeManagerDataSource{conns.DataSource{Name: "grade_manager"}}
}

type gradeManagerDataSourceModel struct {
	System      types.String `tfsdk:"system"`
	Name        types.String `tfsdk:"name"`
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Members     types.List   `tfsdk:"members"`
	SyncPerm    types.Bool   `tfsdk:"sync_perm"`
}

func (d *gradeManagerDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A grade manager (分级管理员) that `system` created through the management API, found by its exact " +
			"name: its id goes to `bkiam_group`, the `bkiam_group` data source or `terraform import`. IAM lets a system see only " +
			"the grade managers it created through the API, so one made in the IAM web UI is not found. Needs the management " +
			"allow-list entries `grade_manager_list` and `v2_grade_manager_detail`. API gateway only.",
		Attributes: map[string]schema.Attribute{
			"system": schema.StringAttribute{Required: true, MarkdownDescription: "The system that created the grade manager.",
				Validators: []validator.String{verify.IAMIDValidator{}}},
			"name": schema.StringAttribute{Required: true, MarkdownDescription: "The grade manager's exact name (case-sensitive).",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
			"id":          schema.StringAttribute{Computed: true, MarkdownDescription: "The grade manager's numeric id."},
			"description": schema.StringAttribute{Computed: true, MarkdownDescription: "The grade manager's description."},
			"members": schema.ListAttribute{Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The grade manager's members (usernames), sorted."},
			"sync_perm": schema.BoolAttribute{Computed: true,
				MarkdownDescription: "Whether the grade manager has a sync group, which holds its members and its scope as permissions."},
		},
	}
}

func (d *gradeManagerDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	config, ok := conns.ReadConfig[gradeManagerDataSourceModel](ctx, &d.DataSource, req, resp)
	if !ok || !managementDataSourceReady(d.Data, "bkiam_grade_manager", &resp.Diagnostics) {
		return
	}
	system, name := config.System.ValueString(), config.Name.ValueString()
	found, err := d.Data.Client.GradeManagersNamed(ctx, system, name)
	if err != nil {
		resp.Diagnostics.AddError("Cannot find the grade manager", managementError(fmt.Sprintf("Listing the grade managers of %s", system), err))
		return
	}
	switch len(found) {
	case 0:
		resp.Diagnostics.AddAttributeError(path.Root("name"), "No such grade manager",
			fmt.Sprintf("%s has created no grade manager named exactly %q through the management API. IAM lists to a system only "+
				"the grade managers it created through the API (not those made in the web UI), and this lookup is exact where "+
				"IAM's filter is not: check the name's case and spaces, and the system.", system, name))
		return
	case 1:
	default:
		// IAM keeps grade-manager names unique; two rows would be a broken site.
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Several grade managers",
			fmt.Sprintf("IAM lists %d grade managers of %s named exactly %q, though it keeps names unique; give the id instead.", len(found), system, name))
		return
	}
	gm, err := d.Data.Client.GradeManager(ctx, system, found[0].ID)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the grade manager", managementError(fmt.Sprintf("Reading grade manager %d in %s", found[0].ID, system), err))
		return
	}
	members, diags := types.ListValueFrom(ctx, types.StringType, slices.Sorted(slices.Values(gm.Members)))
	resp.Diagnostics.Append(diags...)
	config.ID = types.StringValue(strconv.FormatInt(gm.ID, 10))
	config.Description = types.StringValue(gm.Description)
	config.Members = members
	config.SyncPerm = types.BoolValue(gm.SyncPerm)
	resp.Diagnostics.Append(resp.State.Set(ctx, config)...)
}
