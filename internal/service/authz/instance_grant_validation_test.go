package authz_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccInstanceGrant_planTimeValidation: every configuration mistake is
// refused at plan time, before any call, with the attribute and the fix.
// The one warning, for a grant to admin, fails nothing, so ExpectError
// cannot see it: TestInstanceGrantWarnsAboutAdmin covers it.
func TestAccInstanceGrant_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	sb, provider := acctest.Target(t)
	test := acctest.PlanTimeTest(t, provider, acctest.InstanceGrantValidationCases())
	test.CheckDestroy = func(*terraform.State) error {
		if sb == nil {
			return nil
		}
		if n := sb.Stats().Total; n != 0 {
			return fmt.Errorf("refused configurations sent %d requests", n)
		}
		return nil
	}
	resource.Test(t, test)
}

// TestAccInstanceGrant_expiredGrantStays: a user grant whose expiry has
// passed stays in state as it is (IAM may still hold it, when another
// grant of the subject and action keeps the policy alive), and its plan
// stays empty rather than failing; a change that keeps the past expiry is
// refused at plan time, as IAM would refuse it; a later expiry grants it
// again, in place.
func TestAccInstanceGrant_expiredGrantStays(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the provider's reading of an expired policy and its warning")
	acctest.Parallel(t)
	sb, provider := acctest.Target(t)
	calls := acctest.NewCallCounter(sb)
	expiry := time.Now().Add(8 * time.Second).Truncate(time.Second)
	soon := expiry.UTC().Format(time.RFC3339)
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	grant := func(expires string, ids ...string) string {
		return acctest.HostGrant{Actions: []string{"view_host"}, Ids: ids, ExpiresAt: expires}.Config(provider)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: grant(soon, "1"), Check: calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2, Pages: 2}, map[string]int{"batch_instance:grant": 1}))},
			{
				// Expired: no plan fails, nothing is sent.
				PreConfig: func() { time.Sleep(time.Until(expiry) + time.Second) },
				Config:    grant(soon, "1"),
				PlanOnly:  true,
			},
			{
				Config:      grant(soon, "1", "2"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Expiry in the past`),
			},
			{
				// A new expiry: the plan grants it again, in place.
				Config: grant(later, "1"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(acctest.GrantAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					calls.Expect(acctest.ExpiryReads(provider, acctest.ExpiryRead{Queries: 2, Pages: 2}, map[string]int{"batch_instance:grant": 1})), acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"view_host": sandboxtest.HostPaths("1")}),
				),
			},
		},
		CheckDestroy: acctest.CheckNothingHeld(sb),
	})
}

// TestInstanceGrantWarnsAboutAdmin: IAM ignores grants to admin; the plan
// says so on subject.id.
func TestInstanceGrantWarnsAboutAdmin(t *testing.T) {
	ctx := context.Background()
	objType := acctest.ObjectTypeOf("bkiam_instance_grant")
	subjectType := objType.AttributeTypes["subject"].(tftypes.Object)
	resourcesType := objType.AttributeTypes["resources"].(tftypes.List)
	entryType := resourcesType.ElementType.(tftypes.Object)
	instancesType := entryType.AttributeTypes["instances"]
	values := map[string]tftypes.Value{}
	for name, typ := range objType.AttributeTypes {
		values[name] = tftypes.NewValue(typ, nil)
	}
	values["system"] = tftypes.NewValue(tftypes.String, "bk_cmdb")
	values["subject"] = tftypes.NewValue(subjectType, map[string]tftypes.Value{
		"type": tftypes.NewValue(tftypes.String, "user"), "id": tftypes.NewValue(tftypes.String, "Admin"),
	})
	values["actions"] = tftypes.NewValue(objType.AttributeTypes["actions"], []tftypes.Value{tftypes.NewValue(tftypes.String, "view_host")})
	values["resources"] = tftypes.NewValue(resourcesType, []tftypes.Value{tftypes.NewValue(entryType, map[string]tftypes.Value{
		"system":    tftypes.NewValue(tftypes.String, "bk_cmdb"),
		"type":      tftypes.NewValue(tftypes.String, "host"),
		"instances": tftypes.NewValue(instancesType, map[string]tftypes.Value{"1": tftypes.NewValue(tftypes.String, "host1")}),
	})})
	dv, err := tfprotov6.NewDynamicValue(objType, tftypes.NewValue(objType, values))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := acctest.ProtoServer(t).ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "bkiam_instance_grant", Config: &dv})
	if err != nil {
		t.Fatal(err)
	}
	want := tftypes.NewAttributePath().WithAttributeName("subject").WithAttributeName("id")
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Severity != tfprotov6.DiagnosticSeverityWarning ||
		!resp.Diagnostics[0].Attribute.Equal(want) || !strings.Contains(resp.Diagnostics[0].Summary, "IAM ignores grants to admin") {
		t.Fatalf("diagnostics:\n%s", testutil.RenderDiags(resp.Diagnostics))
	}
}

// TestCreatorGrantWarnsAboutAdmin: IAM ignores creator grants to admin;
// the plan says so on creator.
func TestCreatorGrantWarnsAboutAdmin(t *testing.T) {
	ctx := context.Background()
	objType := acctest.ObjectTypeOf("bkiam_creator_grant")
	instancesType := objType.AttributeTypes["instances"]
	values := map[string]tftypes.Value{}
	for name, typ := range objType.AttributeTypes {
		values[name] = tftypes.NewValue(typ, nil)
	}
	values["system"] = tftypes.NewValue(tftypes.String, "bk_job")
	values["type"] = tftypes.NewValue(tftypes.String, "job")
	values["creator"] = tftypes.NewValue(tftypes.String, "ADMIN")
	values["instances"] = tftypes.NewValue(instancesType, map[string]tftypes.Value{"job1": tftypes.NewValue(tftypes.String, "first job")})
	dv, err := tfprotov6.NewDynamicValue(objType, tftypes.NewValue(objType, values))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := acctest.ProtoServer(t).ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "bkiam_creator_grant", Config: &dv})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Severity != tfprotov6.DiagnosticSeverityWarning ||
		!resp.Diagnostics[0].Attribute.Equal(protocol.Root("creator")) || resp.Diagnostics[0].Summary != "IAM ignores creator grants to admin" {
		t.Fatalf("diagnostics:\n%s", testutil.RenderDiags(resp.Diagnostics))
	}
}
