package provider

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
)

// versionedGrant is bkiam_instance_grant as a later provider version might
// declare it: schema version 1, with a step from version 0 that counts its
// runs and checks it is given today's attributes.
type versionedGrant struct {
	authz.InstanceGrant
	upgrades, identityUpgrades *atomic.Int64
}

func (v versionedGrant) Schema(ctx context.Context) schema.Schema {
	s := v.InstanceGrant.Schema(ctx)
	s.Version = 1
	return s
}

// IdentitySchema: the identity at version 1 too, with a step from version
// 0 that counts its runs (IdentityUpgrades).
func (v versionedGrant) IdentitySchema(ctx context.Context) identityschema.Schema {
	s := v.InstanceGrant.IdentitySchema(ctx)
	s.Version = 1
	return s
}

func (v versionedGrant) IdentityUpgrades() map[int64]func(map[string]any) (map[string]any, error) {
	return map[int64]func(map[string]any) (map[string]any, error){
		0: func(attributes map[string]any) (map[string]any, error) {
			v.identityUpgrades.Add(1)
			if _, ok := attributes["subject_id"]; !ok {
				return nil, &json.UnsupportedValueError{Str: "no subject_id"}
			}
			return attributes, nil
		},
	}
}

func (v versionedGrant) StateUpgrades() map[int64]func(map[string]any) (map[string]any, error) {
	return map[int64]func(map[string]any) (map[string]any, error){
		0: func(attributes map[string]any) (map[string]any, error) {
			v.upgrades.Add(1)
			for _, name := range []string{"id", "system", "subject", "actions", "resources", "policies"} {
				if _, ok := attributes[name]; !ok {
					return nil, &json.UnsupportedValueError{Str: "no " + name}
				}
			}
			return attributes, nil
		},
	}
}

// versionedServer serves the provider with bkiam_instance_grant at schema
// and identity schema version 1 (versionedGrant).
func versionedServer(upgrades, identityUpgrades *atomic.Int64) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		r := serveResource[authz.InstanceGrantModel](versionedGrant{upgrades: upgrades, identityUpgrades: identityUpgrades})
		resources := slices.Clone(protocolResources)
		for i := range resources {
			if resources[i].TypeName() == r.TypeName() {
				resources[i] = r
			}
		}
		srv, err := newServer(&bkiamProvider{version: "test", frameworkResources: frameworkResources, dataSources: frameworkDataSources}, resources)
		if err != nil {
			return nil, err
		}
		return schemaVersionServer{ProviderServer: srv, typeName: r.TypeName(), version: r.SchemaVersion(),
			identityVersion: versionedGrant{}.IdentitySchema(context.Background()).Version}, nil
	}
}

// schemaVersionServer announces a resource's schema and identity schema
// versions to Terraform: the framework serves the schemas from the
// registered resources.
type schemaVersionServer struct {
	tfprotov6.ProviderServer
	typeName                 string
	version, identityVersion int64
}

func (s schemaVersionServer) GetResourceIdentitySchemas(ctx context.Context, req *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	resp, err := s.ProviderServer.GetResourceIdentitySchemas(ctx, req)
	if resp != nil && resp.IdentitySchemas[s.typeName] != nil {
		resp.IdentitySchemas[s.typeName].Version = s.identityVersion
	}
	return resp, err
}

func (s schemaVersionServer) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	resp, err := s.ProviderServer.GetProviderSchema(ctx, req)
	if resp != nil && resp.ResourceSchemas[s.typeName] != nil {
		resp.ResourceSchemas[s.typeName].Version = s.version
	}
	return resp, err
}

// upgradeTestGrant is a resource at schema version 2 whose steps rename
// attributes: "sys" (version 0) to "system_id" (1) to "system" (2).
type upgradeTestGrant struct {
	authz.InstanceGrant
	steps map[int64]func(map[string]any) (map[string]any, error)
}

func (g upgradeTestGrant) Schema(ctx context.Context) schema.Schema {
	s := g.InstanceGrant.Schema(ctx)
	s.Version = 2
	return s
}

func (g upgradeTestGrant) StateUpgrades() map[int64]func(map[string]any) (map[string]any, error) {
	return g.steps
}

func rename(from, to string) func(map[string]any) (map[string]any, error) {
	return func(a map[string]any) (map[string]any, error) {
		a[to] = a[from]
		delete(a, from)
		return a, nil
	}
}

func TestUpgradeState(t *testing.T) {
	today := `{"id":"bk_cmdb/user/alice","system":"bk_cmdb","subject":{"type":"user","id":"alice"},"actions":["view_host"],` +
		`"resources":[{"system":"bk_cmdb","type":"host","instances":{"1":"host1"}}],"expires_at":null,"policies":{"view_host":7},` +
		`"detect_drift":null,"timeouts":null,"dropped_in_a_later_version":true}`
	steps := map[int64]func(map[string]any) (map[string]any, error){0: rename("sys", "system_id"), 1: rename("system_id", "system")}
	cases := []struct {
		name    string
		version int64
		state   string
		steps   map[int64]func(map[string]any) (map[string]any, error)
		err     string
	}{
		{name: "current version", version: 2, state: today, steps: steps},
		{name: "two steps", version: 0, state: strings.Replace(today, `"system":"bk_cmdb",`, `"sys":"bk_cmdb",`, 1), steps: steps},
		{name: "one step", version: 1, state: strings.Replace(today, `"system":"bk_cmdb",`, `"system_id":"bk_cmdb",`, 1), steps: steps},
		{name: "newer", version: 3, state: today, steps: steps, err: "written at schema version 3 by a newer version of the provider"},
		{name: "no step", version: 0, state: today, steps: map[int64]func(map[string]any) (map[string]any, error){1: steps[1]},
			err: "no upgrade from that version"},
		{name: "not the schema", version: 2, state: strings.Replace(today, `"actions":["view_host"]`, `"actions":"view_host"`, 1),
			steps: steps, err: "does not fit the resource's schema at version 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := serveResource[authz.InstanceGrantModel](upgradeTestGrant{steps: c.steps})
			resp := upgradeState(t, r, &tfprotov6.UpgradeResourceStateRequest{
				TypeName: r.TypeName(), Version: c.version, RawState: &tfprotov6.RawState{JSON: []byte(c.state)},
			})
			if c.err != "" {
				if len(resp.Diagnostics) == 0 || !strings.Contains(resp.Diagnostics[0].Detail, c.err) {
					t.Fatalf("diagnostics %v, want one saying %q", resp.Diagnostics, c.err)
				}
				return
			}
			if len(resp.Diagnostics) > 0 {
				t.Fatalf("diagnostics: %v", resp.Diagnostics)
			}
			v, err := resp.UpgradedState.Unmarshal(r.ObjectType())
			if err != nil {
				t.Fatalf("upgraded state does not unmarshal: %v", err)
			}
			m, err := authz.InstanceGrant{}.Decode(v)
			if err != nil {
				t.Fatalf("upgraded state does not decode: %v", err)
			}
			if got, _ := m.System.Get(); got != "bk_cmdb" {
				t.Errorf("system = %q, want bk_cmdb", got)
			}
			if got := protocol.Int64MapOf(m.Policies)["view_host"]; got != 7 {
				t.Errorf("policies.view_host = %d, want 7", got)
			}
		})
	}
	t.Run("flatmap", func(t *testing.T) {
		r := serveResource[authz.InstanceGrantModel](authz.InstanceGrant{})
		resp := upgradeState(t, r, &tfprotov6.UpgradeResourceStateRequest{
			TypeName: r.TypeName(), RawState: &tfprotov6.RawState{Flatmap: map[string]string{"id": "x"}},
		})
		if len(resp.Diagnostics) == 0 || !strings.Contains(resp.Diagnostics[0].Detail, "flatmap") {
			t.Fatalf("diagnostics %v, want the flatmap refused", resp.Diagnostics)
		}
	})
}

// TestUpgradeProblems: the guard TestProtocolSchemasUseNothingIgnored
// runs refuses a schema version without its steps.
func TestUpgradeProblems(t *testing.T) {
	steps := map[int64]func(map[string]any) (map[string]any, error){0: rename("a", "b"), 1: rename("b", "c")}
	if p := serveResource[authz.InstanceGrantModel](upgradeTestGrant{steps: steps}).UpgradeProblems(); len(p) != 0 {
		t.Errorf("complete steps: %v", p)
	}
	delete(steps, 1)
	steps[2] = rename("c", "d")
	p := serveResource[authz.InstanceGrantModel](upgradeTestGrant{steps: steps}).UpgradeProblems()
	if len(p) != 2 || !strings.Contains(strings.Join(p, "\n"), "no upgrade step from version 1") ||
		!strings.Contains(strings.Join(p, "\n"), "from version 2, which schema version 2 never runs") {
		t.Errorf("problems %q, want a missing step 1 and a stale step 2", p)
	}
}

// upgradeState upgrades a stored state of r as the provider's server does.
func upgradeState(t *testing.T, r protocol.Resource[*conns.Data], req *tfprotov6.UpgradeResourceStateRequest) *tfprotov6.UpgradeResourceStateResponse {
	t.Helper()
	resp, err := protocol.NewRouter[*conns.Data](nil, nil, []protocol.Resource[*conns.Data]{r}).UpgradeResourceState(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// upgradeTestIdentity is bkiam_instance_grant with its identity schema at
// version 1, whose step from version 0 renames "sys" to "system".
type upgradeTestIdentity struct {
	authz.InstanceGrant
	steps map[int64]func(map[string]any) (map[string]any, error)
}

func (g upgradeTestIdentity) IdentitySchema(ctx context.Context) identityschema.Schema {
	s := g.InstanceGrant.IdentitySchema(ctx)
	s.Version = 1
	return s
}

func (g upgradeTestIdentity) IdentityUpgrades() map[int64]func(map[string]any) (map[string]any, error) {
	return g.steps
}

// TestUpgradeIdentity: the router upgrades a stored identity through the
// resource's steps (UpgradeResourceIdentity), as it does state: an
// identity written at version 0 reads at version 1; one at the current
// version reads as it is; a newer one, a missing step, or an identity that
// does not fit the schema is refused, saying so. Without the route, the
// framework's view of the resource, which has no steps, answered.
func TestUpgradeIdentity(t *testing.T) {
	current := `{"system":"bk_cmdb","subject_type":"user","subject_id":"alice","actions":["view_host"],"resource_types":["bk_cmdb/host"]}`
	steps := map[int64]func(map[string]any) (map[string]any, error){0: rename("sys", "system")}
	cases := []struct {
		name     string
		version  int64
		identity string
		steps    map[int64]func(map[string]any) (map[string]any, error)
		err      string
	}{
		{name: "current version", version: 1, identity: current, steps: steps},
		{name: "one step", version: 0, identity: strings.Replace(current, `"system":`, `"sys":`, 1), steps: steps},
		{name: "newer", version: 2, identity: current, steps: steps, err: "written at identity schema version 2 by a newer version of the provider"},
		{name: "no step", version: 0, identity: current, steps: nil, err: "no upgrade from that version"},
		{name: "not the schema", version: 1, identity: strings.Replace(current, `"actions":["view_host"]`, `"actions":"view_host"`, 1),
			steps: steps, err: "does not fit the resource's identity schema at version 1"},
		{name: "no JSON", version: 1, steps: steps, err: "without its JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := serveResource[authz.InstanceGrantModel](upgradeTestIdentity{steps: c.steps})
			req := &tfprotov6.UpgradeResourceIdentityRequest{TypeName: r.TypeName(), Version: c.version, RawIdentity: &tfprotov6.RawState{}}
			if c.identity != "" {
				req.RawIdentity.JSON = []byte(c.identity)
			}
			resp, err := protocol.NewRouter[*conns.Data](nil, nil, []protocol.Resource[*conns.Data]{r}).UpgradeResourceIdentity(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if c.err != "" {
				if len(resp.Diagnostics) == 0 || !strings.Contains(resp.Diagnostics[0].Detail, c.err) {
					t.Fatalf("diagnostics %v, want one saying %q", resp.Diagnostics, c.err)
				}
				return
			}
			if len(resp.Diagnostics) > 0 {
				t.Fatalf("diagnostics: %v", resp.Diagnostics)
			}
			typ := (authz.InstanceGrant{}).IdentitySchema(context.Background()).Type().TerraformType(context.Background())
			v, err := resp.UpgradedIdentity.IdentityData.Unmarshal(typ)
			if err != nil {
				t.Fatalf("upgraded identity does not unmarshal: %v", err)
			}
			var attrs map[string]tftypes.Value
			if err := v.As(&attrs); err != nil {
				t.Fatal(err)
			}
			var system string
			if err := attrs["system"].As(&system); err != nil || system != "bk_cmdb" {
				t.Errorf("system = %q (%v), want bk_cmdb", system, err)
			}
		})
	}
	if p := serveResource[authz.InstanceGrantModel](upgradeTestIdentity{}).UpgradeProblems(); len(p) != 1 ||
		!strings.Contains(p[0], "identity schema version 1 has no upgrade step from version 0") {
		t.Errorf("UpgradeProblems of an identity at version 1 without steps: %q", p)
	}
}
