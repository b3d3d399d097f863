package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var (
	_ resource.Resource                = (*creatorGrantResource)(nil)
	_ resource.ResourceWithImportState = (*creatorGrantResource)(nil)
)

// creatorGrantResource is bkiam_creator_grant as the framework knows it:
// its schema and import. Validation, plan and apply are served by
// creatorGrantProtocol (see protocolServer); read returns state as it is,
// as IAM has no API that reads a grant back by the ids a grant returns,
// and creator grants never expire.
type creatorGrantResource struct {
	servedByProtocol
}

// NewCreatorGrantResource returns the bkiam_creator_grant resource.
func NewCreatorGrantResource() resource.Resource { return &creatorGrantResource{} }

func (r *creatorGrantResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_creator_grant"
}

func (r *creatorGrantResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = creatorGrantSchema(ctx)
}

// ImportState adopts SYSTEM/TYPE/CREATOR: as for bkiam_instance_grant, the
// next apply registers what the configuration declares, a no-op in IAM
// wherever the creator already holds it.
func (r *creatorGrantResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	parts := strings.Split(req.ID, "/")
	if len(parts) != 3 || strings.TrimSpace(parts[0]) == "" || strings.TrimSpace(parts[1]) == "" || strings.TrimSpace(parts[2]) == "" {
		resp.Diagnostics.AddError("Invalid import ID",
			fmt.Sprintf("Expected SYSTEM/TYPE/CREATOR, e.g. bk_sops/mini_app/alice; got %q.", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("system"), parts[0])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("type"), parts[1])...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("creator"), parts[2])...)
}
