package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// BenchmarkPlanCreate10k is the provider's share of planning a create of
// one bkiam_instance_grant with 10000 instances, through the protocol
// server as Terraform calls it; `go test -bench PlanCreate10k -cpuprofile`
// shows where the time goes.
func BenchmarkPlanCreate10k(b *testing.B) {
	QuietUnrequestedLogs()
	ctx := context.Background()
	objType := instanceGrantSchema(ctx).Type().TerraformType(ctx).(tftypes.Object)
	resourcesType := objType.AttributeTypes["resources"].(tftypes.List)
	entryType := resourcesType.ElementType.(tftypes.Object)
	instances := map[string]tftypes.Value{}
	for i := 0; i < 10000; i++ {
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
	benchPlanCreate(b, "bkiam_instance_grant", objType, value)
}

// benchPlanCreate measures PlanResourceChange of a create whose config is
// value(nil) and whose proposed new state is value(unknown).
func benchPlanCreate(b *testing.B, typeName string, objType tftypes.Object, value func(computed any) tftypes.Value) {
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
	server := protoServerB(b)
	for b.Loop() {
		resp, err := server.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
			TypeName: typeName, Config: &config, ProposedNewState: &proposed, PriorState: &prior,
		})
		if err != nil || hasError(resp.Diagnostics) {
			b.Fatal(err, resp.Diagnostics)
		}
	}
}

func protoServerB(b *testing.B) tfprotov6.ProviderServer {
	b.Helper()
	s, err := protoV6ProviderFactories["bkiam"]()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkPlanCreatorCreate10k is the same for one bkiam_creator_grant
// with 10000 instances.
func BenchmarkPlanCreatorCreate10k(b *testing.B) {
	QuietUnrequestedLogs()
	ctx := context.Background()
	objType := creatorGrantSchema(ctx).Type().TerraformType(ctx).(tftypes.Object)
	instancesType := objType.AttributeTypes["instances"].(tftypes.Map)
	instanceType := instancesType.ElementType.(tftypes.Object)
	instances := map[string]tftypes.Value{}
	for i := 0; i < 10000; i++ {
		instances[fmt.Sprint(i)] = tftypes.NewValue(instanceType, map[string]tftypes.Value{
			"name":      tftypes.NewValue(tftypes.String, fmt.Sprintf("job %d", i)),
			"ancestors": tftypes.NewValue(instanceType.AttributeTypes["ancestors"], nil),
		})
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
	benchPlanCreate(b, "bkiam_creator_grant", objType, value)
}
