// Command terraform-provider-floor is the empty provider of make bench
// (internal/bench): the smallest plugin provider terraform-plugin-framework
// allows, served as terraform-provider-bkiam is, with one resource,
// floor_instance_grant, whose schema has the attributes a
// bkiam_instance_grant of the benchmarks sets. It validates nothing, calls
// nothing and stores the plan as the state, so that its time under a
// scenario is what any plugin provider costs Terraform there (processes
// started, schemas, plans and state), the floor the provider's time is
// measured against once its IAM calls' latency is added.
package main

import (
	"context"
	"log"
	"os"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/parentwatch"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
)

// address is the provider's address; make bench's CLI configuration
// overrides bench/floor with the directory that holds this binary.
const address = "registry.terraform.io/bench/floor"

func main() {
	// As the real provider's main does: exit once a killed CLI is gone,
	// and keep the SDK's trace logging off unless asked for
	// (provider.QuietUnrequestedLogs, which this command does not import).
	parentwatch.Start(parentwatch.DefaultInterval, func(int) { os.Exit(1) })
	if os.Getenv("TF_LOG") == "" && os.Getenv("TF_LOG_PROVIDER") == "" {
		for _, name := range []string{"TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
			if _, set := os.LookupEnv(name); !set {
				_ = os.Setenv(name, "off")
			}
		}
	}
	server, err := providerserver.NewProtocol6WithError(floorProvider{})()
	if err != nil {
		log.Fatal(err)
	}
	if err := tf6server.Serve(address, func() tfprotov6.ProviderServer { return server }); err != nil {
		log.Fatal(err)
	}
}

// floorProvider is provider "floor": no configuration, one resource.
type floorProvider struct{}

func (floorProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "floor"
}

func (floorProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (floorProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (floorProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return instanceGrant{} }}
}

func (floorProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

// instanceGrant is floor_instance_grant: bkiam_instance_grant's schema and
// identity schema (internal/service/authz), so that Terraform stores, plans
// and rewrites as many bytes for it as for the real resource. Terraform
// rewrites the state file after each resource it applies, so the bytes a
// resource stores are part of what any provider of this schema costs.
type instanceGrant struct{}

func (instanceGrant) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_instance_grant"
}

func (instanceGrant) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = authz.InstanceGrant{}.Schema(ctx)
}

func (instanceGrant) IdentitySchema(ctx context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = authz.InstanceGrant{}.IdentitySchema(ctx)
}

// Create stores the plan with its unknown values set as the real resource
// sets them (id, a policy id per action, expires_at null), and the identity.
func (instanceGrant) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = known(req.Plan.Raw)
	g := read(ctx, req.Plan.GetAttribute, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	policies := map[string]int64{}
	for _, a := range g.actions {
		policies[a] = 1
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), g.system+"/"+g.subjectType+"/"+g.subjectID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("policies"), policies)...)
	g.identify(ctx, resp.Identity, &resp.Diagnostics)
}

// Read keeps the state as it is, and gives it its identity where the CLI
// keeps none (Terraform before 1.12, OpenTofu).
func (instanceGrant) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if resp.Identity == nil || !resp.Identity.Raw.IsNull() {
		return
	}
	g := read(ctx, req.State.GetAttribute, &resp.Diagnostics)
	if !resp.Diagnostics.HasError() {
		g.identify(ctx, resp.Identity, &resp.Diagnostics)
	}
}

// Update stores the plan, its unknown values null, and the identity.
func (instanceGrant) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = known(req.Plan.Raw)
	g := read(ctx, req.Plan.GetAttribute, &resp.Diagnostics)
	if !resp.Diagnostics.HasError() {
		g.identify(ctx, resp.Identity, &resp.Diagnostics)
	}
}

// grant is what the identity is made of.
type grant struct {
	system, subjectType, subjectID string
	actions, types                 []string
}

// read reads a grant from a plan or a state (their GetAttribute).
func read(ctx context.Context, get func(context.Context, path.Path, any) diag.Diagnostics, diags *diag.Diagnostics) grant {
	var g grant
	var resources []struct {
		System    string            `tfsdk:"system"`
		Type      string            `tfsdk:"type"`
		Instances map[string]string `tfsdk:"instances"`
	}
	for p, into := range map[string]any{"system": &g.system, "actions": &g.actions, "resources": &resources} {
		diags.Append(get(ctx, path.Root(p), into)...)
	}
	diags.Append(get(ctx, path.Root("subject").AtName("type"), &g.subjectType)...)
	diags.Append(get(ctx, path.Root("subject").AtName("id"), &g.subjectID)...)
	slices.Sort(g.actions)
	g.types = []string{}
	for _, r := range resources {
		g.types = append(g.types, r.System+"/"+r.Type)
	}
	return g
}

// identify sets the identity bkiam_instance_grant gives g.
func (g grant) identify(ctx context.Context, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics) {
	if identity == nil {
		return
	}
	for name, v := range map[string]any{"system": g.system, "subject_type": g.subjectType, "subject_id": g.subjectID,
		"actions": g.actions, "resource_types": g.types} {
		diags.Append(identity.SetAttribute(ctx, path.Root(name), v)...)
	}
}

// Delete does nothing: the framework removes the resource from the state.
func (instanceGrant) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

// known is v with its unknown values null.
func known(v tftypes.Value) tftypes.Value {
	out, _ := tftypes.Transform(v, func(_ *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if !v.IsKnown() {
			return tftypes.NewValue(v.Type(), nil), nil
		}
		return v, nil
	})
	return out
}
