package provider_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// What CLIs newer than Terraform 1.5.7 send (OpenTofu 1.12, Terraform
// 1.16), on the protocol-served resources. Each is either served or
// refused explicitly:
//
//   - GetMetadata: served by the framework, naming the protocol-served
//     resources and the data source.
//   - Resource identity: none. GetResourceIdentitySchemas answers no
//     schema and no error, so a CLI plans and imports by ID as before.
//   - Client capabilities: write-only attributes are allowed but the
//     provider has none; deferral is never used (a plan with unknown
//     provider settings is an error that says what to apply first, with
//     or without DeferralAllowed).
//   - Provider functions and ephemeral resources: none, in GetMetadata
//     and in the schemas; a configuration that uses one, or a list
//     resource or action the provider does not have, is refused by the
//     CLI, naming it (TestAccNewerCLIRefusals).
//   - Actions: bkiam_user_cleanup alone, served by the framework through
//     the router (internal/service/admin's tests invoke it).
//   - The plan's private data that Terraform 1.16 sends back at apply:
//     dropped by terraform-plugin-go (TestPlannedPrivateNotSurfaced).

// TestProtocolNewerCLICalls checks the protocol answers of the list above.
func TestProtocolNewerCLICalls(t *testing.T) {
	ctx := context.Background()
	s := acctest.ProtoServer(t)

	meta, err := s.GetMetadata(ctx, &tfprotov6.GetMetadataRequest{})
	if err != nil || testutil.HasError(meta.Diagnostics) {
		t.Fatalf("GetMetadata: %v %s", err, testutil.RenderDiags(meta.Diagnostics))
	}
	var names []string
	for _, r := range meta.Resources {
		names = append(names, r.TypeName)
	}
	for _, d := range meta.DataSources {
		names = append(names, d.TypeName)
	}
	slices.Sort(names)
	if want := []string{"bkiam_access_check", "bkiam_creator_grant", "bkiam_effective_permissions", "bkiam_expiring", "bkiam_grade_manager", "bkiam_grade_manager", "bkiam_group", "bkiam_group", "bkiam_group_members", "bkiam_group_permission", "bkiam_instance_grant", "bkiam_system", "bkiam_user_access", "bkiam_user_groups"}; !slices.Equal(names, want) {
		t.Errorf("GetMetadata names %v, want %v", names, want)
	}
	if len(meta.Functions)+len(meta.EphemeralResources)+len(meta.StateStores) != 0 {
		t.Errorf("GetMetadata declares functions %v, ephemeral resources %v or state stores %v",
			meta.Functions, meta.EphemeralResources, meta.StateStores)
	}
	if want := []tfprotov6.ActionMetadata{{TypeName: "bkiam_user_cleanup"}}; !reflect.DeepEqual(meta.Actions, want) {
		t.Errorf("GetMetadata declares the actions %v, want %v", meta.Actions, want)
	}
	// A list resource for every kind IAM can enumerate: all but the
	// creator grant.
	listable := []string{"bkiam_grade_manager", "bkiam_group", "bkiam_group_members", "bkiam_group_permission", "bkiam_instance_grant", "bkiam_user_groups"}
	var lists []string
	for _, l := range meta.ListResources {
		lists = append(lists, l.TypeName)
	}
	if slices.Sort(lists); !slices.Equal(lists, listable) {
		t.Errorf("GetMetadata declares the list resources %v, want %v", lists, listable)
	}
	schema, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || testutil.HasError(schema.Diagnostics) {
		t.Fatalf("GetProviderSchema: %v %s", err, testutil.RenderDiags(schema.Diagnostics))
	}
	if len(schema.Functions)+len(schema.EphemeralResourceSchemas)+len(schema.StateStoreSchemas) != 0 {
		t.Errorf("GetProviderSchema declares functions, ephemeral resources or state stores: %d %d %d",
			len(schema.Functions), len(schema.EphemeralResourceSchemas), len(schema.StateStoreSchemas))
	}
	if got := slices.Sorted(maps.Keys(schema.ActionSchemas)); !slices.Equal(got, []string{"bkiam_user_cleanup"}) {
		t.Errorf("GetProviderSchema has action schemas %v, want bkiam_user_cleanup", got)
	}
	if got := slices.Sorted(maps.Keys(schema.ListResourceSchemas)); !slices.Equal(got, listable) {
		t.Errorf("GetProviderSchema has list resource schemas %v, want %v", got, listable)
	}

	// Every resource has an identity, served by the framework from the
	// resource (or its shim).
	ids, err := s.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil || testutil.HasError(ids.Diagnostics) {
		t.Fatalf("GetResourceIdentitySchemas: %v %s", err, testutil.RenderDiags(ids.Diagnostics))
	}
	if got, want := slices.Sorted(maps.Keys(ids.IdentitySchemas)), []string{"bkiam_creator_grant", "bkiam_grade_manager", "bkiam_group",
		"bkiam_group_members", "bkiam_group_permission", "bkiam_instance_grant", "bkiam_user_groups"}; !slices.Equal(got, want) {
		t.Errorf("GetResourceIdentitySchemas has identities for %v, want %v", got, want)
	}
	fns, err := s.GetFunctions(ctx, &tfprotov6.GetFunctionsRequest{})
	if err != nil || testutil.HasError(fns.Diagnostics) || len(fns.Functions) != 0 {
		t.Errorf("GetFunctions: %v %v", err, fns.Functions)
	}
	call, err := s.CallFunction(ctx, &tfprotov6.CallFunctionRequest{Name: "anything"})
	if err != nil || call.Error == nil {
		t.Errorf("CallFunction of an unknown function: %v %+v, want an error", err, call)
	}

	// A plan with every client capability on is the plan without them:
	// nothing deferred, no diagnostic.
	env := acctest.NewProtoEnv(t, nil)
	grant := acctest.HostsOf([]string{"view_host"}, "1")
	plain := acctest.InstanceProto.Plan(t, env.Server, nil, nil, grant)
	config := acctest.InstanceProto.Value(t, grant)
	proposed := acctest.InstanceProto.Proposed(*grant, nil)
	acctest.NewCommand(env.Server)
	withCaps, err := env.Server.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: acctest.InstanceProto.TypeName(), PriorState: acctest.InstanceProto.Value(t, nil), ProposedNewState: acctest.InstanceProto.Value(t, &proposed),
		Config: config, ClientCapabilities: &tfprotov6.PlanResourceChangeClientCapabilities{DeferralAllowed: true},
	})
	if err != nil || len(acctest.WithoutNotices(withCaps.Diagnostics)) != len(acctest.WithoutNotices(plain.Diagnostics)) || withCaps.Deferred != nil {
		t.Fatalf("PlanResourceChange with DeferralAllowed: %v deferred=%v %s", err, withCaps.Deferred, testutil.RenderDiags(withCaps.Diagnostics))
	}
	v, err := env.Server.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: acctest.InstanceProto.TypeName(), Config: config,
		ClientCapabilities: &tfprotov6.ValidateResourceConfigClientCapabilities{WriteOnlyAttributesAllowed: true}})
	if err != nil || len(v.Diagnostics) != 0 {
		t.Fatalf("ValidateResourceConfig with WriteOnlyAttributesAllowed: %v %s", err, testutil.RenderDiags(v.Diagnostics))
	}
}

// TestAccNewerCLIRefusals: what the newer CLIs let a configuration ask of
// a provider and this one does not offer is refused at plan, by the CLI,
// naming it, and nothing reaches IAM. Each case runs on the CLIs that
// have the feature (Terraform 1.5.7 has none of them): provider functions
// (Terraform 1.8, OpenTofu 1.7), ephemeral resources (Terraform 1.10,
// OpenTofu 1.11), list resources of a kind IAM cannot list (Terraform
// 1.14), actions (Terraform 1.14). Import by identity is served
// (TestAccIdentity).
func TestAccNewerCLIRefusals(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	cases := []struct {
		name    string
		has     bool // the CLI under test has the feature
		files   map[string]string
		command []string
		want    []string // the CLI's error, planErrorPattern's fragments
	}{
		{"provider function", acctest.CLI.Terraform(1, 8) || acctest.CLI.Tofu(1, 7), map[string]string{"fn.tf": `output "x" { value = provider::bkiam::grant_id("alice") }`}, []string{"plan"},
			map[bool][]string{false: {"Unknown provider function", `There is no function named "provider::bkiam::grant_id"`},
				true: {"Function not found in provider", `Function "provider::bkiam::grant_id" was not registered`}}[acctest.CLI.IsTofu()]},
		{"ephemeral resource", acctest.CLI.Terraform(1, 10) || acctest.CLI.Tofu(1, 11), map[string]string{"eph.tf": `ephemeral "bkiam_instance_grant" "x" {}`}, []string{"plan"},
			[]string{"Invalid ephemeral resource", `does not support ephemeral resource "bkiam_instance_grant"`}},
		{"list resource", acctest.CLI.Terraform(1, 14), map[string]string{"all.tfquery.hcl": `list "bkiam_creator_grant" "all" {
  provider = bkiam
}`}, []string{"query"},
			[]string{"Invalid list resource", `does not support list resource "bkiam_creator_grant"`}},
		{"action", acctest.CLI.Terraform(1, 14), map[string]string{"action.tf": `action "bkiam_instance_grant" "a" {}`}, []string{"plan"},
			[]string{"does not have an action schema for bkiam_instance_grant"}},
	}
	ran := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.has {
				t.Skipf("%s has no %s", acctest.CLI, tc.name)
			}
			ran++
			sb := sandboxtest.Start(t)
			server, err := provider.NewServer("test")()
			if err != nil {
				t.Fatal(err)
			}
			w := acctest.NewAttachedWorkspace(t, server)
			w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), "")
			for name, text := range tc.files {
				w.Write(name, text+"\n")
			}
			out, code := w.Run(tc.command...)
			if code == 0 || !acctest.PlanErrorPattern(tc.want...).MatchString(out) {
				t.Fatalf("%s %s exited %d, want an error with %q:\n%s", acctest.CLI, tc.command[0], code, tc.want, out)
			}
			if n := sb.Stats().Total; n != 0 {
				t.Fatalf("the refused configuration sent %d requests to IAM", n)
			}
		})
	}
	t.Logf("%s: %d of %d cases apply", acctest.CLI, ran, len(cases))
}

// TestPlannedPrivateNotSurfaced is a tripwire. Terraform 1.16 stores the
// private data a plan returns and sends it back with the apply walk's
// re-plan (PlanResourceChange.Request field 9, planned_private, announced
// by the client capability store_planned_private); 1.5.7 and OpenTofu
// 1.12 do not. terraform-plugin-go v0.31.0 drops both as unknown fields,
// so the ledger of shared grants works from what every CLI sends
// (DESIGN.md, "Shared grants"; TestAccCLIWalks). The day an upgrade of the
// library hands them over, this fails: the apply walk could then learn
// what its plan decided on Terraform 1.16 and later, and the ledger's
// plan-walk guesses (book.refreshed) could be replaced there.
func TestPlannedPrivateNotSurfaced(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[tfprotov6.PlanResourceChangeRequest](),
		reflect.TypeFor[tfprotov6.PlanResourceChangeClientCapabilities](),
		reflect.TypeFor[tfprotov6.ValidateResourceConfigClientCapabilities](),
		reflect.TypeFor[tfprotov6.ReadResourceClientCapabilities](),
	} {
		for _, field := range []string{"PlannedPrivate", "StorePlannedPrivate"} {
			if _, ok := typ.FieldByName(field); ok {
				t.Errorf("terraform-plugin-go's %s now has %s: Terraform 1.16 sends the plan's private data back at apply, "+
					"and the provider can use it (see this test's comment)", typ, field)
			}
		}
	}
}

// TestAccStopManagingWithoutRevoking: the ways the newer CLIs offer to let
// go of a grant without revoking it, and the one that differs between
// them. A `removed` block with `lifecycle { destroy = false }` (Terraform
// 1.7, OpenTofu 1.7) forgets the grant on both. `lifecycle { destroy =
// false }` on the resource (Terraform 1.16, OpenTofu 1.12) forgets an
// instance whose for_each key goes, on both; but when the whole block is
// deleted, OpenTofu still forgets (it keeps the setting in state) while
// Terraform 1.16 destroys, and so revokes. Terraform 1.5.7 has neither
// (terraform state rm is its way).
func TestAccStopManagingWithoutRevoking(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	if !acctest.CLI.Terraform(1, 7) && !acctest.CLI.Tofu(1, 7) {
		t.Skipf("%s has no removed blocks", acctest.CLI)
	}
	sb := sandboxtest.Start(t)
	server, err := provider.NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	w := acctest.NewAttachedWorkspace(t, server)
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	grants := func(lifecycle string, keys ...string) string {
		return fmt.Sprintf(`
resource "bkiam_instance_grant" "g" {
  for_each  = toset(%s)
  system    = "bk_cmdb"
  subject   = { type = "user", id = each.key }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
%s}
`, acctest.HCLList(keys), lifecycle)
	}
	// step applies, and checks who holds view_host on host 1, what state
	// manages, and that the next plan is empty.
	step := func(what, config string, holders, managed []string) {
		t.Helper()
		w.Configure(provider, config)
		out := w.MustRun("apply", "-auto-approve")
		for _, u := range []string{"alice", "bob"} {
			if held := len(sandboxtest.HeldPaths(sb, "bk_cmdb", "user", u)) > 0; held != slices.Contains(holders, u) {
				t.Fatalf("%s: %s holds view_host: %v, want %v\n%s", what, u, held, !held, out)
			}
		}
		if got := strings.Fields(w.MustRun("state", "list")); !slices.Equal(got, managed) {
			t.Fatalf("%s: state manages %v, want %v", what, got, managed)
		}
		if !w.PlanIsEmpty() {
			t.Fatalf("%s: the next plan is not empty", what)
		}
	}

	step("create", grants("", "alice"), []string{"alice"}, []string{`bkiam_instance_grant.g["alice"]`})
	step("removed block", `
removed {
  from = bkiam_instance_grant.g
  lifecycle {
    destroy = false
  }
}
`, []string{"alice"}, nil)
	if !acctest.CLI.Terraform(1, 16) && !acctest.CLI.Tofu(1, 12) {
		return
	}
	keep := "  lifecycle {\n    destroy = false\n  }\n"
	step("create two", grants(keep, "alice", "bob"), []string{"alice", "bob"},
		[]string{`bkiam_instance_grant.g["alice"]`, `bkiam_instance_grant.g["bob"]`})
	step("a key goes", grants(keep, "bob"), []string{"alice", "bob"}, []string{`bkiam_instance_grant.g["bob"]`})
	holders := []string{"alice"} // Terraform 1.16 destroys bob's grant with the block
	if acctest.CLI.IsTofu() {
		holders = []string{"alice", "bob"}
	}
	step("the block goes", "", holders, nil)
}
