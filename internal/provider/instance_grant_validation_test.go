package provider

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
)

// TestAccInstanceGrant_planTimeValidation: every configuration mistake is
// refused at plan time, before any call, with the attribute and the fix.
func TestAccInstanceGrant_planTimeValidation(t *testing.T) {
	sb, provider := target(t)
	grant := func(body string) string {
		return provider + "resource \"bkiam_instance_grant\" \"test\" {\n" + body + "\n}\n"
	}
	valid := map[string]string{
		"system":     `"bk_cmdb"`,
		"subject":    `{ type = "user", id = "alice" }`,
		"actions":    `["view_host"]`,
		"resources":  `[{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]`,
		"expires_at": "",
		"timeouts":   "",
	}
	with := func(changes map[string]string) string {
		var b strings.Builder
		for _, k := range []string{"system", "subject", "actions", "resources", "expires_at", "timeouts"} {
			v := valid[k]
			if c, ok := changes[k]; ok {
				v = c
			}
			if v != "" {
				fmt.Fprintf(&b, "  %s = %s\n", k, v)
			}
		}
		return grant(b.String())
	}
	var tooMany strings.Builder
	for i := 0; i <= maxPolicyInstances; i++ {
		fmt.Fprintf(&tooMany, "%q = \"h\", ", fmt.Sprint(i))
	}
	cases := []struct {
		name    string
		changes map[string]string
		want    string
	}{
		{"blank system", map[string]string{"system": `" "`}, `system must not be empty or blank`},
		{"unknown subject type", map[string]string{"subject": `{ type = "robot", id = "r2" }`}, `subject.type.*value must be one of`},
		{"blank subject id", map[string]string{"subject": `{ type = "user", id = "" }`}, `subject.id must not be empty`},
		{"non-numeric group", map[string]string{"subject": `{ type = "group", id = "ops" }`}, `Group IDs are numeric.*subject.id must be the numeric ID`},
		{"no actions", map[string]string{"actions": `[]`}, `actions set must contain at least 1`},
		{"blank action", map[string]string{"actions": `["view_host", ""]`}, `must not be empty or blank`},
		{"empty instances", map[string]string{"resources": `[{ system = "bk_cmdb", type = "host", instances = {} }]`}, `resources\[0\].instances map must contain at least 1`},
		{"blank instance name", map[string]string{"resources": `[{ system = "bk_cmdb", type = "host", instances = { "1" = " " } }]`}, `must not be empty or blank`},
		{"blank instance id", map[string]string{"resources": `[{ system = "bk_cmdb", type = "host", instances = { "" = "x" } }]`}, `instance IDs \(keys\) of resources\[0\].instances must not be empty or blank`},
		{"blank resource type", map[string]string{"resources": `[{ system = "bk_cmdb", type = "", instances = { "1" = "x" } }]`}, `resources\[0\].type must not be empty`},
		{"over 10000 instances", map[string]string{"resources": `[{ system = "bk_cmdb", type = "host", instances = {` + tooMany.String() + `} }]`}, `at most 10000 elements, got: 10001`},
		{"expiry not RFC 3339", map[string]string{"expires_at": `"next tuesday"`}, `RFC\s*3339`},
		{"expiry in the past", map[string]string{"expires_at": `"2020-01-01T00:00:00Z"`}, `Expiry in the past.*has passed`},
		{"expiry past 2100", map[string]string{"expires_at": `"2100-01-01T00:00:01Z"`}, `Expiry too late.*no later than\s+2100-01-01T00:00:00Z`},
		{"timeout not a duration", map[string]string{"timeouts": `{ create = "soon" }`}, `timeouts.create must be a positive duration`},
		{"negative timeout", map[string]string{"timeouts": `{ delete = "-1m" }`}, `timeouts.delete must be a positive duration`},
		{"expiry for a group", map[string]string{"subject": `{ type = "group", id = "1" }`, "expires_at": `"2099-01-01T00:00:00Z"`}, `Group grants do not expire`},
	}
	var steps []resource.TestStep
	for _, tc := range cases {
		steps = append(steps, resource.TestStep{
			Config:      with(tc.changes),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)` + strings.ReplaceAll(tc.want, " ", `\s+`)),
		})
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps:                    steps,
		CheckDestroy: func(*terraform.State) error {
			if sb == nil {
				return nil
			}
			if n := sb.Stats().Total; n != 0 {
				return fmt.Errorf("refused configurations sent %d requests", n)
			}
			return nil
		},
	})
}

// TestAccInstanceGrant_expiredGrantLeavesState: Read notices a user grant
// whose expiry has passed and drops it from state, so the plan shows it
// must be granted again; a configuration that still names the past expiry
// is refused at plan time, as IAM would refuse it.
func TestAccInstanceGrant_expiredGrantLeavesState(t *testing.T) {
	sb, provider := target(t)
	calls := newCallCounter(sb)
	expiry := time.Now().Add(8 * time.Second).Truncate(time.Second)
	soon := expiry.UTC().Format(time.RFC3339)
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	grant := func(expires string) string {
		return hostGrant{actions: []string{"view_host"}, ids: []string{"1"}, expiresAt: expires}.config(provider)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: grant(soon), Check: calls.expect(map[string]int{"batch_instance:grant": 1})},
			{
				PreConfig:   func() { time.Sleep(time.Until(expiry) + time.Second) },
				Config:      grant(soon),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Expiry in the past`),
			},
			{
				// A new expiry: the plan creates the grant again.
				Config: grant(later),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(grantAddr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: calls.expect(map[string]int{"batch_instance:grant": 1}),
			},
		},
	})
}

// TestInstanceGrantWarnsAboutAdmin: IAM ignores grants to admin; the plan
// says so on subject.id.
func TestInstanceGrantWarnsAboutAdmin(t *testing.T) {
	ctx := context.Background()
	objType, ok := instanceGrantSchema(ctx).Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		t.Fatal("schema is not an object")
	}
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
	resp, err := protoServer(t).ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "bkiam_instance_grant", Config: &dv})
	if err != nil {
		t.Fatal(err)
	}
	want := tftypes.NewAttributePath().WithAttributeName("subject").WithAttributeName("id")
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Severity != tfprotov6.DiagnosticSeverityWarning ||
		!resp.Diagnostics[0].Attribute.Equal(want) || !strings.Contains(resp.Diagnostics[0].Summary, "IAM ignores grants to admin") {
		t.Fatalf("diagnostics:\n%s", renderDiags(resp.Diagnostics))
	}
}
