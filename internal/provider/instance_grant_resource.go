package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

var (
	_ resource.Resource                = (*instanceGrantResource)(nil)
	_ resource.ResourceWithImportState = (*instanceGrantResource)(nil)
)

// defaultTimeout bounds a create, update or delete without a timeouts block.
const defaultTimeout = 30 * time.Minute

// instanceGrantResource is bkiam_instance_grant as the framework knows it:
// its schema and import. Validation, plan, apply and read are served by
// instanceGrantProtocol (see protocolServer).
type instanceGrantResource struct {
	servedByProtocol
}

// NewInstanceGrantResource returns the bkiam_instance_grant resource.
func NewInstanceGrantResource() resource.Resource { return &instanceGrantResource{} }

func (r *instanceGrantResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_instance_grant"
}

func (r *instanceGrantResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = instanceGrantSchema(ctx)
}

// ImportState takes SYSTEM/SUBJECT_TYPE/SUBJECT_ID, which adopts the
// subject's grants holding nothing known (the next apply grants what the
// configuration declares, which IAM treats as a no-op wherever it already
// holds), or SYSTEM/SUBJECT_TYPE/SUBJECT_ID/ACTION[,ACTION…]/RESOURCE_SYSTEM/TYPE,
// whose actions and resource type the read that follows fills in from
// IAM when detect_drift is on (see instanceGrantProtocol.read).
func (r *instanceGrantResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	parts := strings.Split(req.ID, "/")
	if (len(parts) != 3 && len(parts) != 6) || slices.ContainsFunc(parts, func(p string) bool { return strings.TrimSpace(p) == "" }) ||
		(parts[1] != subjectUser && parts[1] != subjectGroup) {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Expected SYSTEM/SUBJECT_TYPE/SUBJECT_ID with SUBJECT_TYPE user or group, e.g. bk_cmdb/user/alice, "+
				"or, to read what the subject holds (detect_drift), SYSTEM/SUBJECT_TYPE/SUBJECT_ID/ACTION[,ACTION…]/RESOURCE_SYSTEM/TYPE, "+
				"e.g. bk_cmdb/user/alice/view_host,edit_host/bk_cmdb/host; got %q.", req.ID))
		return
	}
	subject := bkiam.Subject{Type: parts[1], ID: parts[2]}
	var problems diagnostics
	checkSubject(subject, root("id"), &problems)
	for _, p := range problems {
		if p.Severity == tfprotov6.DiagnosticSeverityError {
			resp.Diagnostics.AddAttributeError(path.Root("id"), p.Summary, p.Detail)
		} else {
			resp.Diagnostics.AddAttributeWarning(path.Root("id"), p.Summary, p.Detail)
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	subjectValue, d := types.ObjectValue(map[string]attr.Type{"type": types.StringType, "id": types.StringType}, map[string]attr.Value{
		"type": types.StringValue(subject.Type), "id": types.StringValue(subject.ID),
	})
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), strings.Join(parts[:3], "/"))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("system"), parts[0])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("subject"), subjectValue)...)
	if len(parts) == 3 {
		return
	}
	actions := strings.Split(parts[3], ",")
	if slices.ContainsFunc(actions, func(a string) bool { return strings.TrimSpace(a) == "" }) {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("The actions of import ID %q are a comma-separated list without blanks, e.g. view_host,edit_host.", req.ID))
		return
	}
	entryType := map[string]attr.Type{"system": types.StringType, "type": types.StringType, "instances": types.MapType{ElemType: types.StringType}}
	entry, d := types.ObjectValue(entryType, map[string]attr.Value{
		"system": types.StringValue(parts[4]), "type": types.StringValue(parts[5]),
		"instances": types.MapNull(types.StringType),
	})
	resp.Diagnostics.Append(d...)
	resources, d := types.ListValue(types.ObjectType{AttrTypes: entryType}, []attr.Value{entry})
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("actions"), actions)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("resources"), resources)...)
}
