package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestFrameworkResourcesBesideProtocolOnes: a plain framework data source
// or resource served beside the protocol-level resources is declared to
// Terraform with them and gets the provider's client from Configure, as
// the framework intends (ResourceData, DataSourceData).
func TestFrameworkResourcesBesideProtocolOnes(t *testing.T) {
	ctx := context.Background()
	server, err := newServer(&bkiamProvider{
		version:            "test",
		frameworkResources: []func() resource.Resource{func() resource.Resource { return &transportResource{} }},
		dataSources:        []func() datasource.DataSource{func() datasource.DataSource { return &transportDataSource{} }},
	}, protocolResources)
	if err != nil {
		t.Fatal(err)
	}

	schemas, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || testutil.HasError(schemas.Diagnostics) {
		t.Fatalf("GetProviderSchema: %v %s", err, testutil.RenderDiags(schemas.Diagnostics))
	}
	for _, name := range []string{"bkiam_instance_grant", "bkiam_creator_grant", "bkiam_test_transport"} {
		if schemas.ResourceSchemas[name] == nil {
			t.Errorf("resource %s is not declared", name)
		}
	}
	if schemas.DataSourceSchemas["bkiam_test_transport"] == nil {
		t.Error("data source bkiam_test_transport is not declared")
	}

	configured, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{
		Config: providerConfig(t, map[string]any{"apigw_url": "https://gw.example.com/api/bk-iam/prod", "app_code": "app", "app_secret": "s3cret"}),
	})
	if err != nil || testutil.HasError(configured.Diagnostics) {
		t.Fatalf("ConfigureProvider: %v %s", err, testutil.RenderDiags(configured.Diagnostics))
	}

	objType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"transport": tftypes.String}}
	config, err := tfprotov6.NewDynamicValue(objType, tftypes.NewValue(objType, map[string]tftypes.Value{
		"transport": tftypes.NewValue(tftypes.String, nil)}))
	if err != nil {
		t.Fatal(err)
	}
	read, err := server.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: "bkiam_test_transport", Config: &config})
	if err != nil || testutil.HasError(read.Diagnostics) {
		t.Fatalf("ReadDataSource: %v %s", err, testutil.RenderDiags(read.Diagnostics))
	}
	assertTransport(t, "data source", read.State, objType)

	planned := tftypes.NewValue(objType, map[string]tftypes.Value{"transport": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)})
	plannedDV, err := tfprotov6.NewDynamicValue(objType, planned)
	if err != nil {
		t.Fatal(err)
	}
	prior, err := tfprotov6.NewDynamicValue(objType, tftypes.NewValue(objType, nil))
	if err != nil {
		t.Fatal(err)
	}
	applied, err := server.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{
		TypeName: "bkiam_test_transport", PriorState: &prior, PlannedState: &plannedDV, Config: &config,
	})
	if err != nil || testutil.HasError(applied.Diagnostics) {
		t.Fatalf("ApplyResourceChange: %v %s", err, testutil.RenderDiags(applied.Diagnostics))
	}
	assertTransport(t, "resource", applied.NewState, objType)
}

func assertTransport(t *testing.T, what string, dv *tfprotov6.DynamicValue, objType tftypes.Object) {
	t.Helper()
	v, err := dv.Unmarshal(objType)
	if err != nil {
		t.Fatal(err)
	}
	var attrs map[string]tftypes.Value
	var transport string
	if err := v.As(&attrs); err != nil {
		t.Fatal(err)
	}
	if err := attrs["transport"].As(&transport); err != nil || transport != string(bkiam.TransportGateway) {
		t.Errorf("the framework %s saw transport %q (%v), want the configured client's %q", what, transport, err, bkiam.TransportGateway)
	}
}

// transportDataSource and transportResource are plain framework types
// that report the transport of the client Configure handed them.
type transportDataSource struct{ data *conns.Data }

func (d *transportDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_test_transport"
}

func (d *transportDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = dsschema.Schema{Attributes: map[string]dsschema.Attribute{"transport": dsschema.StringAttribute{Computed: true}}}
}

func (d *transportDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	d.data, _ = req.ProviderData.(*conns.Data)
}

func (d *transportDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.data == nil {
		resp.Diagnostics.AddError("No provider data", "Configure did not hand the data source the provider's client.")
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("transport"), string(d.data.Client.Transport()))...)
}

type transportResource struct{ data *conns.Data }

func (r *transportResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_test_transport"
}

func (r *transportResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{Attributes: map[string]schema.Attribute{"transport": schema.StringAttribute{Computed: true}}}
}

func (r *transportResource) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	r.data, _ = req.ProviderData.(*conns.Data)
}

func (r *transportResource) Create(ctx context.Context, _ resource.CreateRequest, resp *resource.CreateResponse) {
	if r.data == nil {
		resp.Diagnostics.AddError("No provider data", "Configure did not hand the resource the provider's client.")
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, struct {
		Transport types.String `tfsdk:"transport"`
	}{types.StringValue(string(r.data.Client.Transport()))})...)
}

func (r *transportResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}
func (r *transportResource) Update(context.Context, resource.UpdateRequest, *resource.UpdateResponse) {
}
func (r *transportResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}
