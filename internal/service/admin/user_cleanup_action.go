package admin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
)

// userCleanupAction is bkiam_user_cleanup: IAM's leaver cleanup of some
// users (bkiam.Client.CleanupUsers). Its plan asks IAM whether the app may
// call the route, with a call that cleans nothing (ProbeCleanup), so that a
// site whose gateway or allow-list does not let it through fails at plan,
// naming what to ask for, rather than halfway through an apply.
type userCleanupAction struct {
	data *conns.Data
}

// NewUserCleanupAction is bkiam_user_cleanup, for the provider's Actions.
func NewUserCleanupAction() action.Action { return &userCleanupAction{} }

var (
	_ action.ActionWithConfigure      = (*userCleanupAction)(nil)
	_ action.ActionWithModifyPlan     = (*userCleanupAction)(nil)
	_ action.ActionWithValidateConfig = (*userCleanupAction)(nil)
)

type userCleanupModel struct {
	Users            types.List   `tfsdk:"users"`
	Before           types.String `tfsdk:"before"`
	IAMHonoursBefore types.Bool   `tfsdk:"iam_honours_before"`
}

func (a *userCleanupAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_user_cleanup"
}

func (a *userCleanupAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Removes what IAM holds for users who leave, through IAM's admin API (the leaver cleanup, " +
			"`DELETE /api/v1/open/admin/cleanup/users/permission/`): each user's custom and temporary policies in every " +
			"system, direct group memberships, subject-template memberships and manager roles. Memberships of the users' " +
			"departments stay. IAM answers at once and cleans in a background task: the action ends when IAM has queued " +
			"the cleanup, not when it is done; the `bkiam_user_access` data source's `holds_nothing` tells when it is. " +
			"Terraform 1.14 and later (`terraform apply -invoke=action.bkiam_user_cleanup.NAME`, or `action_trigger`). " +
			"Needs the API gateway (`apigw_url`) of the bk-iam gateway's 2026 generation, the gateway resource " +
			"`admin_cleanup_users_permission` granted to the app, and the app on IAM's admin API allow-list for " +
			"`subject_permission_cleanup`; the plan checks all three without cleaning anything.",
		Attributes: map[string]schema.Attribute{
			"users": schema.ListAttribute{
				ElementType: types.StringType,
				Required:    true,
				MarkdownDescription: "The usernames to clean up, at least one. A user IAM does not know is cleaned of nothing. " +
					"A user whose cleanup is still running is left to it: IAM drops the second call silently.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1)),
				},
			},
			"before": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "An RFC 3339 time: the group memberships, subject-template memberships and roles the users " +
					"were given after it are kept (policies go whatever their age). **IAM 1.10 and later only**: an older IAM " +
					"ignores it and removes everything, so it needs `iam_honours_before = true`. IAM's hourly retry of a failed " +
					"cleanup drops it too, and then removes everything.",
			},
			"iam_honours_before": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Set to `true` to confirm that the site's IAM is 1.10 or later, which honours `before`. " +
					"Required with `before`: no API tells an IAM's version, and an older one would clean everything.",
			},
		},
	}
}

func (a *userCleanupAction) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	a.data = conns.FromProviderData(req.ProviderData, "bkiam_user_cleanup", &resp.Diagnostics)
}

// ValidateConfig checks what the configuration alone can tell: before's
// form, and that an older IAM's full cleanup was ruled out.
func (a *userCleanupAction) ValidateConfig(ctx context.Context, req action.ValidateConfigRequest, resp *action.ValidateConfigResponse) {
	var m userCleanupModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	checkBefore(m, &resp.Diagnostics)
}

// checkBefore returns before as a time (zero when not given or unknown).
func checkBefore(m userCleanupModel, diags *diag.Diagnostics) time.Time {
	if m.Before.IsNull() || m.Before.IsUnknown() {
		return time.Time{}
	}
	at, err := time.Parse(time.RFC3339, m.Before.ValueString())
	if err != nil {
		diags.AddAttributeError(path.Root("before"), "Invalid before",
			fmt.Sprintf("before = %q is not an RFC 3339 time: give one such as \"2026-03-01T00:00:00+08:00\" (memberships and "+
				"roles given after it are kept).", m.Before.ValueString()))
		return time.Time{}
	}
	if at.Unix() <= 0 {
		diags.AddAttributeError(path.Root("before"), "Invalid before",
			fmt.Sprintf("before = %q is not after 1970-01-01T00:00:00Z: IAM takes a positive unix time, and reads 0 as "+
				"no before at all, a full cleanup. Give a later time, or leave before out.", m.Before.ValueString()))
		return time.Time{}
	}
	if !m.IAMHonoursBefore.IsUnknown() && !m.IAMHonoursBefore.ValueBool() {
		diags.AddAttributeError(path.Root("iam_honours_before"), "before needs IAM 1.10",
			"IAM honours before from release 1.10 on; an older IAM ignores it and removes every membership and role "+
				"of the users, those given after before too. No API tells IAM's version: set iam_honours_before = true "+
				"to confirm the site runs IAM 1.10 or later, or leave before out for a full cleanup.")
	}
	return at
}

// ModifyPlan fails the plan where the cleanup cannot go through: a
// provider on ESB, which carries no admin route, or a gateway or IAM that
// refuses the app (the probe sends an empty list, which IAM refuses
// before it writes anything).
func (a *userCleanupAction) ModifyPlan(ctx context.Context, _ action.ModifyPlanRequest, resp *action.ModifyPlanResponse) {
	if a.data == nil || a.data.Client == nil {
		resp.Diagnostics.AddError("Provider not configured",
			"bkiam_user_cleanup was planned before the provider was configured; this is a bug in the provider.")
		return
	}
	if a.data.Client.Transport() != bkiam.TransportGateway {
		resp.Diagnostics.AddError("The admin API needs the API gateway",
			"bkiam_user_cleanup goes through IAM's admin API, which the API gateway serves and ESB does not. The provider "+
				"is configured with esb_url: set apigw_url (and remove esb_url) in the provider configuration, or use a "+
				"provider alias configured for the gateway for this action.")
		return
	}
	if err := a.data.Client.ProbeCleanup(ctx); err != nil {
		resp.Diagnostics.AddError("IAM's leaver cleanup is not available to this app",
			fmt.Sprintf("bkiam_user_cleanup needs the bk-iam gateway resource %s granted to the app and the app on IAM's "+
				"admin API allow-list for %s. Asked whether it may call the route (a call that cleans nothing), the site "+
				"answered: %s", bkiam.CleanupGatewayResource, bkiam.CleanupAllowListEntry, err))
	}
}

func (a *userCleanupAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var m userCleanupModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	before := checkBefore(m, &resp.Diagnostics)
	var users []string
	resp.Diagnostics.Append(m.Users.ElementsAs(ctx, &users, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if a.data == nil || a.data.Client == nil {
		resp.Diagnostics.AddError("Provider not configured",
			"bkiam_user_cleanup was invoked before the provider was configured; this is a bug in the provider.")
		return
	}
	list := make([]bkiam.CleanupUser, len(users))
	for i, u := range users {
		list[i] = bkiam.CleanupUser{ID: u, Before: before}
	}
	names := strings.Join(users, ", ")
	scope := "everything they hold but their departments' memberships"
	if !before.IsZero() {
		scope = "their policies, and the memberships and roles given them up to " + before.Format(time.RFC3339)
	}
	resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf("asking IAM to clean up %d user(s): %s (%s)", len(users), names, scope)})
	if err := a.data.Client.CleanupUsers(ctx, list); err != nil {
		resp.Diagnostics.AddError("IAM refused the leaver cleanup",
			fmt.Sprintf("Cleaning up %s: %s", names, err))
		return
	}
	resp.SendProgress(action.InvokeProgressEvent{Message: fmt.Sprintf("IAM has queued the cleanup of %s; it runs in the "+
		"background, after this apply ends. Read the bkiam_user_access data source of each user: holds_nothing is true "+
		"once it has finished.", names)})
}
