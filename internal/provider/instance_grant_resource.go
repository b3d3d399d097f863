package provider

import (
	"context"
	"fmt"
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

// ImportState adopts the grants of SYSTEM/SUBJECT_TYPE/SUBJECT_ID. IAM
// cannot say what the subject holds, so the imported resource holds
// nothing that is known; the next apply grants what the configuration
// declares, which IAM treats as a no-op wherever it already holds.
func (r *instanceGrantResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	parts := strings.SplitN(req.ID, "/", 3)
	if len(parts) != 3 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[2]) == "" ||
		(parts[1] != subjectUser && parts[1] != subjectGroup) {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Expected SYSTEM/SUBJECT_TYPE/SUBJECT_ID with SUBJECT_TYPE user or group, e.g. bk_cmdb/user/alice; got %q.", req.ID))
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
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("system"), parts[0])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("subject"), subjectValue)...)
}
