package authz_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestEmptyInstancesAreNeverSent: to IAM an empty instance list means
// every instance, and a revoke with one deletes the whole policy. Whatever
// Terraform hands the provider — a plan or a state edited by hand to hold
// an empty map — an apply never sends one: alice's unrelated grant of
// host 9 survives every case, and nothing becomes a grant of everything.
func TestEmptyInstancesAreNeverSent(t *testing.T) {
	ctx := context.Background()
	typ := acctest.ObjectTypeOf("bkiam_instance_grant")
	value := func(ids ...string) tftypes.Value {
		if ids == nil {
			return tftypes.NewValue(typ, nil)
		}
		instances := map[string]string{}
		for _, id := range ids[1:] { // ids[0] is a marker, so that an empty map is expressible
			instances[id] = "host " + id
		}
		return authz.InstanceGrant{}.Encode(typ, authz.InstanceGrantModel{
			ID:        protocol.Known("bk_cmdb/user/alice"),
			System:    protocol.Known("bk_cmdb"),
			Subject:   protocol.Known(authz.SubjectModel{Type: protocol.Known("user"), ID: protocol.Known("alice")}),
			Actions:   protocol.KnownStrings([]string{"view_host"}),
			Resources: authz.ResourcesValue([]grantplan.Resource{{System: "bk_cmdb", Type: "host", Instances: instances}}),
			Policies:  authz.PoliciesValue([]string{"view_host"}, map[string]int64{"view_host": 1}),
		})
	}
	const marker = "-"
	for _, tc := range []struct {
		name           string
		prior, planned tftypes.Value
		want           []string // what alice then holds on view_host
	}{
		{"create with an empty map", value(), value(marker), []string{"9"}},
		{"destroy of a state edited to an empty map", value(marker), value(), []string{"9"}},
		{"update from a state edited to an empty map", value(marker), value(marker, "1"), []string{"1", "9"}},
		{"update to an empty map", value(marker, "1"), value(marker), []string{"9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.Start(t)
			outside := acctest.OutsideClient(t, sb)
			if _, err := outside.BatchInstance(ctx, bkiam.BatchInstanceRequest{
				System: "bk_cmdb", Operate: bkiam.OperationGrant, ExpiredAt: bkiam.PermanentExpiry,
				Subject: bkiam.Subject{Type: "user", ID: "alice"}, Actions: []bkiam.Action{{ID: "view_host"}},
				Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: "9", Name: "host 9"}}}},
			}); err != nil {
				t.Fatal(err)
			}
			server := acctest.ProtoServer(t)
			configured, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{
				Config: acctest.ProviderConfig(t, map[string]any{"apigw_url": sb.URL, "app_code": sandboxtest.AppCode, "app_secret": sandboxtest.AppSecret}),
			})
			if err != nil || testutil.HasError(configured.Diagnostics) {
				t.Fatalf("ConfigureProvider: %v %s", err, testutil.RenderDiags(configured.Diagnostics))
			}
			prior, err := tfprotov6.NewDynamicValue(typ, tc.prior)
			if err != nil {
				t.Fatal(err)
			}
			planned, err := tfprotov6.NewDynamicValue(typ, tc.planned)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := server.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{
				TypeName: "bkiam_instance_grant", PriorState: &prior, PlannedState: &planned, Config: &planned,
			})
			if err != nil {
				t.Fatal(err)
			}
			got := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice")["view_host"]
			if want := sandboxtest.HostPaths(tc.want...); !slices.Equal(got, want) {
				t.Fatalf("alice holds %v on view_host, want %v (diagnostics: %s)", got, want, testutil.RenderDiags(resp.Diagnostics))
			}
		})
	}
}
