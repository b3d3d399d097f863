package provider

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// What CLIs newer than Terraform 1.5.7 send (OpenTofu 1.12, Terraform
// 1.6 to 1.14), on the protocol-served resources. Each is either served
// or refused explicitly:
//
//   - GetMetadata: served by the framework, naming the protocol-served
//     resources and the data source.
//   - Resource identity: none. GetResourceIdentitySchemas answers no
//     schema and no error, so a CLI plans and imports by ID as before.
//   - Client capabilities: write-only attributes are allowed but the
//     provider has none; deferral is never used (a plan with unknown
//     provider settings is an error that says what to apply first, with
//     or without DeferralAllowed).
//   - Provider functions and ephemeral resources: none; a configuration
//     that calls one is refused by the CLI, naming it.

// TestProtocolNewerCLICalls checks the protocol answers of the list above.
func TestProtocolNewerCLICalls(t *testing.T) {
	ctx := context.Background()
	s := protoServer(t)

	meta, err := s.GetMetadata(ctx, &tfprotov6.GetMetadataRequest{})
	if err != nil || hasError(meta.Diagnostics) {
		t.Fatalf("GetMetadata: %v %s", err, renderDiags(meta.Diagnostics))
	}
	var names []string
	for _, r := range meta.Resources {
		names = append(names, r.TypeName)
	}
	for _, d := range meta.DataSources {
		names = append(names, d.TypeName)
	}
	slices.Sort(names)
	if want := []string{"bkiam_creator_grant", "bkiam_grade_manager", "bkiam_grade_manager", "bkiam_group", "bkiam_group", "bkiam_group_members", "bkiam_group_permission", "bkiam_instance_grant", "bkiam_system"}; !slices.Equal(names, want) {
		t.Errorf("GetMetadata names %v, want %v", names, want)
	}
	if len(meta.Functions) != 0 || len(meta.EphemeralResources) != 0 {
		t.Errorf("GetMetadata declares functions %v or ephemeral resources %v", meta.Functions, meta.EphemeralResources)
	}

	ids, err := s.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil || hasError(ids.Diagnostics) || len(ids.IdentitySchemas) != 0 {
		t.Errorf("GetResourceIdentitySchemas: %v %v %s", err, ids.IdentitySchemas, renderDiags(ids.Diagnostics))
	}
	fns, err := s.GetFunctions(ctx, &tfprotov6.GetFunctionsRequest{})
	if err != nil || hasError(fns.Diagnostics) || len(fns.Functions) != 0 {
		t.Errorf("GetFunctions: %v %v", err, fns.Functions)
	}
	call, err := s.CallFunction(ctx, &tfprotov6.CallFunctionRequest{Name: "anything"})
	if err != nil || call.Error == nil {
		t.Errorf("CallFunction of an unknown function: %v %+v, want an error", err, call)
	}

	// A plan with every client capability on is the plan without them:
	// nothing deferred, no diagnostic.
	env := newProtoEnv(t, nil)
	grant := hostsOf([]string{"view_host"}, "1")
	plain := instanceProto.plan(t, env.server, nil, nil, grant)
	config := instanceProto.value(t, grant)
	proposed := instanceProto.proposed(*grant, nil)
	newCommand(env.server)
	withCaps, err := env.server.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: instanceProto.typeName(), PriorState: instanceProto.value(t, nil), ProposedNewState: instanceProto.value(t, &proposed),
		Config: config, ClientCapabilities: &tfprotov6.PlanResourceChangeClientCapabilities{DeferralAllowed: true},
	})
	if err != nil || len(withCaps.Diagnostics) != len(plain.Diagnostics) || withCaps.Deferred != nil {
		t.Fatalf("PlanResourceChange with DeferralAllowed: %v deferred=%v %s", err, withCaps.Deferred, renderDiags(withCaps.Diagnostics))
	}
	v, err := env.server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: instanceProto.typeName(), Config: config,
		ClientCapabilities: &tfprotov6.ValidateResourceConfigClientCapabilities{WriteOnlyAttributesAllowed: true}})
	if err != nil || len(v.Diagnostics) != 0 {
		t.Fatalf("ValidateResourceConfig with WriteOnlyAttributesAllowed: %v %s", err, renderDiags(v.Diagnostics))
	}
}

// TestAccOpenTofuRefusesFunctionsAndEphemeralResources: through OpenTofu
// (Terraform 1.5.7 cannot parse either), a call of a provider function and
// an ephemeral block of this provider are refused at plan, naming them,
// and nothing reaches IAM.
func TestAccOpenTofuRefusesFunctionsAndEphemeralResources(t *testing.T) {
	if !cli.IsTofu() {
		t.Skip("OpenTofu only: Terraform 1.5.7 has neither provider functions nor ephemeral resources")
	}
	sb := sandboxtest.Start(t)
	provider := transports[gatewayTransport].block(sb.URL)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      provider + `output "x" { value = provider::bkiam::grant_id("alice") }`,
				ExpectError: regexp.MustCompile(`(?s)Function not found in provider.*provider::bkiam::grant_id" was not registered`),
			},
			{
				Config:      provider + `ephemeral "bkiam_instance_grant" "x" {}`,
				ExpectError: regexp.MustCompile(`(?s)Invalid ephemeral resource.*does not support ephemeral resource\s+"bkiam_instance_grant"`),
			},
		},
	})
	if n := sb.Stats().Total; n != 0 {
		t.Fatalf("refused configurations sent %d requests", n)
	}
}
