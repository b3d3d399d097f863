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

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/bkiam/terraform-provider-bkiam/internal/parentwatch"
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

// instanceGrant is floor_instance_grant.
type instanceGrant struct{}

func (instanceGrant) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_instance_grant"
}

func (instanceGrant) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true,
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		"system": schema.StringAttribute{Required: true},
		"subject": schema.SingleNestedAttribute{Required: true, Attributes: map[string]schema.Attribute{
			"type": schema.StringAttribute{Required: true},
			"id":   schema.StringAttribute{Required: true},
		}},
		"actions": schema.SetAttribute{Required: true, ElementType: types.StringType},
		"resources": schema.ListNestedAttribute{Required: true, NestedObject: schema.NestedAttributeObject{
			Attributes: map[string]schema.Attribute{
				"system":    schema.StringAttribute{Required: true},
				"type":      schema.StringAttribute{Required: true},
				"instances": schema.MapAttribute{Required: true, ElementType: types.StringType},
			},
		}},
	}}
}

// Create stores the plan, with a fixed id.
func (instanceGrant) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = req.Plan.Raw
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), "floor")...)
}

// Read keeps the state as it is.
func (instanceGrant) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

// Update stores the plan, whose id is the state's (UseStateForUnknown).
func (instanceGrant) Update(_ context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}

// Delete does nothing: the framework removes the resource from the state.
func (instanceGrant) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
