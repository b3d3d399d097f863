package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// modelCheckCases are the plan-time checks against IAM's model
// (check_model), each refused before any call of an apply goes out. They
// rest on the sandbox's default model.
func modelCheckCases() []planTimeCase {
	grant := func(system, actions, resources string) string {
		return fmt.Sprintf(`
resource "bkiam_instance_grant" "test" {
  system    = %q
  subject   = { type = "user", id = "alice" }
  actions   = [%s]
  resources = [%s]
}
`, system, actions, resources)
	}
	host := `{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }`
	biz := `{ system = "bk_cmdb", type = "biz", instances = { "1" = "biz1" } }`
	creator := func(system, typ, actions string) string {
		return fmt.Sprintf(`
resource "bkiam_creator_grant" "test" {
  system    = %q
  type      = %q
  creator   = "alice"
  actions   = [%s]
  instances = { "i1" = { name = "instance 1" } }
}
`, system, typ, actions)
	}
	scope := func(system, actions, resources string) string {
		return fmt.Sprintf(`
resource "bkiam_grade_manager" "test" {
  system               = "bk_cmdb"
  name                 = "ops"
  members              = ["alice"]
  authorization_scopes = [{ system = %q, actions = [%s], resources = [%s] }]
  subject_scopes       = [{ type = "*", id = "*" }]
}
`, system, actions, resources)
	}
	everyHost := `{ system = "bk_cmdb", type = "host", instances = [{ id = "*" }] }`
	biz2 := `{ system = "bk_cmdb", type = "biz", instances = [{ id = "2" }] }`
	return []planTimeCase{
		{name: "unknown action", config: grant("bk_cmdb", `"veiw_host"`, host),
			want: []string{"Unknown action", `System bk_cmdb has no action "veiw_host" in its IAM model; IAM would refuse the grant. Did you mean "view_host", "edit_host"?`}},
		{name: "resources for an action without resource types", config: grant("bk_cmdb", `"create_biz"`, host),
			want: []string{"Resources for an action without resource types", `Action "create_biz" of system bk_cmdb relates to no resource type: ` +
				`IAM grants it on everything and refuses resources with it. Set resources = [] and grant it in a resource of its own.`}},
		{name: "too few resources for a combined action", config: grant("bk_cmdb", `"edit_biz_host"`, host),
			want: []string{"Resources do not match the action", `Action "edit_biz_host" of system bk_cmdb relates to 2 resource type(s), ` +
				`bk_cmdb/biz, bk_cmdb/host in this order, and resources has 1 entries: give one entry per type, in that order. ` +
				`Actions with other resource types go in resources of their own.`}},
		{name: "combined resources out of order", config: grant("bk_cmdb", `"edit_biz_host"`, host+", "+biz),
			want: []string{"Resource type does not match the action", `Action "edit_biz_host" of system bk_cmdb relates to bk_cmdb/biz, ` +
				`bk_cmdb/host in this order, so resources[0] must be bk_cmdb/biz, got bk_cmdb/host. Reorder the entries to follow the action's resource types.`}},
		{name: "resource of another type", config: grant("bk_cmdb", `"view_host"`, biz),
			want: []string{"Resource type does not match the action", `Action "view_host" of system bk_cmdb relates to bk_cmdb/host in this order, ` +
				`so resources[0] must be bk_cmdb/host, got bk_cmdb/biz.`}},
		{name: "creator type without a creator configuration", config: creator("bk_cmdb", "host", `"view_host"`),
			want: []string{"No creator configuration for the type", `System bk_cmdb registered no resource-creator actions for type "host" in IAM, ` +
				`so IAM would refuse to register a creator of it. It has one for biz.`}},
		{name: "creator action outside the configuration", config: creator("bk_job", "job", `"edit", "veiw"`),
			want: []string{"Action outside the creator configuration", `IAM grants the creator of a job in system bk_job the actions of its ` +
				`creator configuration, edit, list, delete, view, and "veiw" is not one of them. Did you mean "view"?`}},
		{name: "a system IAM does not know", config: grant("bk_nope", `"view_host"`, `{ system = "bk_nope", type = "host", instances = { "1" = "host1" } }`),
			want: []string{"Cannot read the model of system bk_nope", "The plan checks each grant against the model its system registered in IAM, " +
				"and reading the model of bk_nope failed: IAM rejected the model query GET /api/v1/model/systems/bk_nope/query (code 1901404",
				"not found:system(bk_nope) not exists; the action or the system is unknown to IAM: check the ids. Fix the cause, or set " +
					"check_model = false in the provider configuration to plan without the checks (IAM then refuses what the model does not allow at apply)."}},
		{name: "unknown action in a scope", config: scope("bk_cmdb", `"view_host", "veiw_host"`, everyHost),
			want: []string{"Unknown action", `System bk_cmdb has no action "veiw_host" in its IAM model; IAM would refuse the grade manager's scope. Did you mean "view_host", "edit_host"?`}},
		{name: "scope without the action's resource types", config: scope("bk_cmdb", `"view_host"`, ""),
			want: []string{"Resources do not match the action", `Action "view_host" of system bk_cmdb relates to 1 resource type(s), bk_cmdb/host in this order, ` +
				`and authorization_scopes[0].resources has 0 entries: give one entry per type, in that order. Actions with other resource types go in ` +
				`authorization scopes of their own.`}},
		{name: "scope resources for an action without resource types", config: scope("bk_cmdb", `"create_biz"`, everyHost),
			want: []string{"Resources for an action without resource types", `Action "create_biz" of system bk_cmdb relates to no resource type: ` +
				`IAM grants it on everything and refuses resources with it. Set authorization_scopes[0].resources = [] and name it in an authorization scope of its own.`}},
		{name: "scope resource of another type", config: scope("bk_cmdb", `"view_host"`, biz2),
			want: []string{"Resource type does not match the action", `Action "view_host" of system bk_cmdb relates to bk_cmdb/host in this order, ` +
				`so authorization_scopes[0].resources[0] must be bk_cmdb/host, got bk_cmdb/biz.`}},
		{name: "a scope of a system IAM does not know", config: scope("bk_nope", `"view_host"`, everyHost),
			want: []string{"Cannot read the model of system bk_nope", "The plan checks each authorization scope against the model its system registered in IAM, " +
				"and reading the model of bk_nope failed: IAM rejected the model query GET /api/v1/model/systems/bk_nope/query (code 1901404"}},
	}
}

// TestAccModelChecks: each check refuses its configuration at plan time,
// naming the attribute and the fix, and no refused plan sends IAM anything
// but model reads.
func TestAccModelChecks(t *testing.T) {
	needsSandbox(t)
	sb := sandboxtest.Start(t)
	test := planTimeTest(t, transports[gatewayTransport].block(sb.URL), modelCheckCases())
	test.CheckDestroy = func(*terraform.State) error {
		if n := iamCalls(sb); n != 0 {
			return fmt.Errorf("refused plans sent %d requests besides model reads: %v", n, sb.Stats().Requests)
		}
		if sb.Stats().Requests["model_query"] == 0 {
			return fmt.Errorf("no model was read: the checks did not run")
		}
		return nil
	}
	resource.Test(t, test)
}

// TestAccModelChecksOff: with check_model = false the plan reads no model
// and IAM's own answer refuses the apply.
func TestAccModelChecksOff(t *testing.T) {
	needsSandbox(t)
	sb := sandboxtest.Start(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      noModelChecks(transports[gatewayTransport].block(sb.URL)) + modelCheckCases()[0].config,
			ExpectError: regexp.MustCompile(`(?s)IAM call failed.*veiw_host`),
		}},
		CheckDestroy: func(*terraform.State) error {
			if n := sb.Stats().Requests["model_query"]; n != 0 {
				return fmt.Errorf("%d model reads with check_model = false", n)
			}
			return nil
		},
	})
}

// TestAccModelReadFails: a model read that fails after the retries fails
// the plan with the route, the code and the request id, and says how to
// turn the checks off; the plan sends nothing else.
func TestAccModelReadFails(t *testing.T) {
	needsSandbox(t)
	sb := sandboxtest.Start(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			PreConfig: func() {
				if err := sb.SetFaults(sandbox.Faults{ModelFail: &sandbox.FailFault{Count: 100, Status: 503, Code: 1902500}}); err != nil {
					t.Fatal(err)
				}
			},
			Config: transports[gatewayTransport].block(sb.URL) + hostGrant{actions: []string{"view_host"}, ids: []string{"1"}}.config(""),
			ExpectError: regexp.MustCompile(`(?s)Cannot read the model of system bk_cmdb.*GET\s+/api/v1/model/systems/bk_cmdb/query.*HTTP\s+503.*` +
				`code\s+1902500.*request\s+[0-9a-f]{32}.*after\s+3\s+attempts.*set\s+check_model\s+=\s+false`),
		}},
		CheckDestroy: func(*terraform.State) error {
			if n := iamCalls(sb); n != 0 {
				return fmt.Errorf("the failed plan sent %d other requests", n)
			}
			return nil
		},
	})
}

// TestModelReadsPerCommand pins the cost: a plan of 201 resources across three
// systems reads each system's model once, and a plan of an unchanged
// configuration reads no model and calls nothing.
func TestModelReadsPerCommand(t *testing.T) {
	needsSandbox(t)
	sb := sandboxtest.Start(t)
	w := newCLIWorkspace(t, testutil.BuildProvider(t))
	var b strings.Builder
	for i := range 67 {
		fmt.Fprintf(&b, `
resource "bkiam_instance_grant" "cmdb%d" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "%d" = "host%d" } }]
}
resource "bkiam_instance_grant" "job%d" {
  system    = "bk_job"
  subject   = { type = "user", id = "bob" }
  actions   = ["view"]
  resources = [{ system = "bk_job", type = "job", instances = { "%d" = "job%d" } }]
}
resource "bkiam_creator_grant" "sops%d" {
  system    = "bk_sops"
  type      = "project"
  creator   = "carol"
  instances = { "p%d" = { name = "project %d" } }
}
`, i, i, i, i, i, i, i, i, i)
	}
	w.configure(transports[gatewayTransport].block(sb.URL), b.String())
	reads := func() int { return sb.Stats().Requests["model_query"] }
	w.mustRun("plan", "-out=tfplan")
	if n := reads(); n != 3 {
		t.Fatalf("a plan of 201 resources in 3 systems read %d models, want 3", n)
	}
	if n := iamCalls(sb); n != 0 {
		t.Fatalf("the plan sent %d other requests", n)
	}
	w.mustRun("apply", "tfplan")
	before, calls := reads(), iamCalls(sb)
	if !w.planIsEmpty() {
		t.Fatal("the plan after the apply is not empty")
	}
	if n := reads() - before; n != 0 {
		t.Fatalf("a plan of the unchanged configuration read %d models", n)
	}
	if n := iamCalls(sb) - calls; n != 0 {
		t.Fatalf("a plan of the unchanged configuration sent %d requests", n)
	}
}
