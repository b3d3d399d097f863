package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// benchSizes are the instance counts of the plan benchmarks: the second
// is twice the first (and IAM's limit), so that the figures show how the
// cost grows.
var benchSizes = []int{5000, 10000}

// BenchmarkPlanCreate is the provider's share of planning a create of one
// bkiam_instance_grant, through the protocol server as Terraform calls it;
// `go test -bench PlanCreate -cpuprofile` shows where the time goes.
func BenchmarkPlanCreate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchPlanInstanceGrantOn(b, n, protoServerB(b)) })
	}
}

func benchPlanInstanceGrantOn(b *testing.B, n int, server tfprotov6.ProviderServer) {
	QuietUnrequestedLogs()
	objType := objectTypeOf("bkiam_instance_grant")
	resourcesType := objType.AttributeTypes["resources"].(tftypes.List)
	entryType := resourcesType.ElementType.(tftypes.Object)
	instances := map[string]tftypes.Value{}
	for i := range n {
		instances[fmt.Sprint(i)] = tftypes.NewValue(tftypes.String, fmt.Sprintf("host %d", i))
	}
	value := func(computed any) tftypes.Value {
		v := map[string]tftypes.Value{}
		for name, typ := range objType.AttributeTypes {
			v[name] = tftypes.NewValue(typ, nil)
		}
		v["id"] = tftypes.NewValue(tftypes.String, computed)
		v["policies"] = tftypes.NewValue(objType.AttributeTypes["policies"], computed)
		v["system"] = tftypes.NewValue(tftypes.String, "bk_cmdb")
		v["subject"] = tftypes.NewValue(objType.AttributeTypes["subject"], map[string]tftypes.Value{
			"type": tftypes.NewValue(tftypes.String, "user"), "id": tftypes.NewValue(tftypes.String, "alice")})
		v["actions"] = tftypes.NewValue(objType.AttributeTypes["actions"], []tftypes.Value{tftypes.NewValue(tftypes.String, "view_host")})
		v["resources"] = tftypes.NewValue(resourcesType, []tftypes.Value{tftypes.NewValue(entryType, map[string]tftypes.Value{
			"system": tftypes.NewValue(tftypes.String, "bk_cmdb"), "type": tftypes.NewValue(tftypes.String, "host"),
			"instances": tftypes.NewValue(entryType.AttributeTypes["instances"], instances),
		})})
		return tftypes.NewValue(objType, v)
	}
	benchPlanCreate(b, server, "bkiam_instance_grant", objType, value)
}

// benchPlanCreate measures the calls of a plan, through the protocol
// server: validation and the plan of a create (config value(nil),
// proposed new state value(unknown)), then the read and plan of a no-op
// (state, proposed new state and config all alike).
func benchPlanCreate(b *testing.B, server tfprotov6.ProviderServer, typeName string, objType tftypes.Object, value func(computed any) tftypes.Value) {
	b.Helper()
	ctx := context.Background()
	config, err := tfprotov6.NewDynamicValue(objType, value(nil))
	if err != nil {
		b.Fatal(err)
	}
	proposed, err := tfprotov6.NewDynamicValue(objType, value(tftypes.UnknownValue))
	if err != nil {
		b.Fatal(err)
	}
	prior, _ := tfprotov6.NewDynamicValue(objType, tftypes.NewValue(objType, nil))
	b.Run("validate", func(b *testing.B) {
		for b.Loop() {
			resp, err := server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: &config})
			if err != nil || testutil.HasError(resp.Diagnostics) {
				b.Fatal(err, resp.Diagnostics)
			}
		}
	})
	// Each iteration stands for one Terraform command, whose provider
	// process starts with an empty ledger of shared grants.
	b.Run("create", func(b *testing.B) {
		for b.Loop() {
			newCommand(server)
			resp, err := server.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
				TypeName: typeName, Config: &config, ProposedNewState: &proposed, PriorState: &prior,
			})
			if err != nil || testutil.HasError(resp.Diagnostics) {
				b.Fatal(err, resp.Diagnostics)
			}
		}
	})
	// A state as a create leaves it: computed attributes known (null
	// stands in for their values; only their being known matters here).
	state, err := tfprotov6.NewDynamicValue(objType, value(nil))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("no-op", func(b *testing.B) {
		for b.Loop() {
			newCommand(server)
			read, err := server.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: typeName, CurrentState: &state})
			if err != nil || testutil.HasError(read.Diagnostics) {
				b.Fatal(err, read.Diagnostics)
			}
			resp, err := server.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
				TypeName: typeName, Config: &config, ProposedNewState: read.NewState, PriorState: read.NewState,
			})
			if err != nil || testutil.HasError(resp.Diagnostics) {
				b.Fatal(err, resp.Diagnostics)
			}
		}
	})
}

func protoServerB(b *testing.B) tfprotov6.ProviderServer {
	b.Helper()
	s, err := NewServer("test")()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkPlanCreatorCreate is the same for one bkiam_creator_grant.
func BenchmarkPlanCreatorCreate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchPlanCreatorGrantOn(b, n, protoServerB(b)) })
	}
}

func benchPlanCreatorGrantOn(b *testing.B, n int, server tfprotov6.ProviderServer) {
	QuietUnrequestedLogs()
	objType := objectTypeOf("bkiam_creator_grant")
	instancesType := objType.AttributeTypes["instances"].(tftypes.Map)
	instances := map[string]tftypes.Value{}
	for i := range n {
		instances[fmt.Sprint(i)] = tftypes.NewValue(instancesType.ElementType, fmt.Sprintf("job %d", i))
	}
	value := func(computed any) tftypes.Value {
		v := map[string]tftypes.Value{}
		for name, typ := range objType.AttributeTypes {
			v[name] = tftypes.NewValue(typ, nil)
		}
		for _, name := range []string{"id", "granted_actions", "policies"} {
			v[name] = tftypes.NewValue(objType.AttributeTypes[name], computed)
		}
		v["system"] = tftypes.NewValue(tftypes.String, "bk_job")
		v["type"] = tftypes.NewValue(tftypes.String, "job")
		v["creator"] = tftypes.NewValue(tftypes.String, "alice")
		v["instances"] = tftypes.NewValue(instancesType, instances)
		return tftypes.NewValue(objType, v)
	}
	benchPlanCreate(b, server, "bkiam_creator_grant", objType, value)
}

// BenchmarkPlanMembersCreate is the plan of a bkiam_group_members of n
// users (a map of strings, like the instance grant's instances).
func BenchmarkPlanMembersCreate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchPlanMembersOn(b, n, protoServerB(b)) })
	}
}

func benchPlanMembersOn(b *testing.B, n int, server tfprotov6.ProviderServer) {
	QuietUnrequestedLogs()
	objType := objectTypeOf("bkiam_group_members")
	usersType := objType.AttributeTypes["users"].(tftypes.Map)
	users := map[string]tftypes.Value{}
	for i := range n {
		users[fmt.Sprintf("u%d", i)] = tftypes.NewValue(usersType.ElementType, "permanent")
	}
	value := func(computed any) tftypes.Value {
		v := map[string]tftypes.Value{}
		for name, typ := range objType.AttributeTypes {
			v[name] = tftypes.NewValue(typ, nil)
		}
		v["id"] = tftypes.NewValue(tftypes.String, computed)
		v["system"] = tftypes.NewValue(tftypes.String, "bk_cmdb")
		v["group_id"] = tftypes.NewValue(tftypes.String, "42")
		v["users"] = tftypes.NewValue(usersType, users)
		return tftypes.NewValue(objType, v)
	}
	benchPlanCreate(b, server, "bkiam_group_members", objType, value)
}

// The exit ramp (DESIGN.md): the same schemas served by plain framework
// resources, planned by the framework's own machinery, so that each
// framework upgrade shows in make bench whether the protocol-level path
// is still worth its keep. The framework's plan of bkiam_creator_grant
// was quadratic while its instances were a map of objects (it copied the
// whole map for each element it planned), and was measured at 1 000 and
// 2 000 instances; with a map of strings (schema version 1) it is linear,
// and measured at the protocol path's sizes.
var frameworkCreatorSizes = []int{5000, 10000}

// BenchmarkPlanCreateFramework is BenchmarkPlanCreate through the framework.
func BenchmarkPlanCreateFramework(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchPlanInstanceGrantOn(b, n, frameworkTwinServer(b))
		})
	}
}

// BenchmarkPlanCreatorCreateFramework is BenchmarkPlanCreatorCreate
// through the framework.
func BenchmarkPlanCreatorCreateFramework(b *testing.B) {
	for _, n := range frameworkCreatorSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchPlanCreatorGrantOn(b, n, frameworkTwinServer(b))
		})
	}
}

// frameworkTwinServer serves every protocol-level resource's schema from
// a plain framework resource (frameworkTwin), under the same type names.
func frameworkTwinServer(b *testing.B) tfprotov6.ProviderServer {
	b.Helper()
	var twins []func() resource.Resource
	for _, r := range protocolResources {
		shim := r.FrameworkResource()
		twins = append(twins, func() resource.Resource { return frameworkTwin{shim} })
	}
	s, err := providerserver.NewProtocol6WithError(twinProvider{twins})()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		b.Fatal(err)
	}
	return s
}

// frameworkTwin is a protocol-level resource's schema as a plain
// framework resource: the framework validates, plans and reads it (the
// plan and read leave the values as they are); apply is never measured.
type frameworkTwin struct{ resource.Resource }

func (frameworkTwin) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

type twinProvider struct{ resources []func() resource.Resource }

func (twinProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = typeName
}

func (twinProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (twinProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p twinProvider) Resources(context.Context) []func() resource.Resource { return p.resources }

func (twinProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }
