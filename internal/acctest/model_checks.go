package acctest

import (
	"fmt"
)

// ModelCheckCases are the plan-time checks against IAM's model
// (check_model), each refused before any call of an apply goes out. They
// rest on the sandbox's default model.
func ModelCheckCases() []PlanTimeCase {
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
  instances = { "i1" = "instance 1" }
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
	return []PlanTimeCase{
		{Name: "unknown action", Config: grant("bk_cmdb", `"veiw_host"`, host),
			Want: []string{"Unknown action", `System bk_cmdb has no action "veiw_host" in its IAM model; IAM would refuse the grant. Did you mean "view_host", "edit_host"?`}},
		{Name: "resources for an action without resource types", Config: grant("bk_cmdb", `"create_biz"`, host),
			Want: []string{"Resources for an action without resource types", `Action "create_biz" of system bk_cmdb relates to no resource type: ` +
				`IAM grants it on everything and refuses resources with it. Set resources = [] and grant it in a resource of its own.`}},
		{Name: "too few resources for a combined action", Config: grant("bk_cmdb", `"edit_biz_host"`, host),
			Want: []string{"Resources do not match the action", `Action "edit_biz_host" of system bk_cmdb relates to 2 resource type(s), ` +
				`bk_cmdb/biz, bk_cmdb/host in this order, and resources has 1 entries: give one entry per type, in that order. ` +
				`Actions with other resource types go in resources of their own.`}},
		{Name: "combined resources out of order", Config: grant("bk_cmdb", `"edit_biz_host"`, host+", "+biz),
			Want: []string{"Resource type does not match the action", `Action "edit_biz_host" of system bk_cmdb relates to bk_cmdb/biz, ` +
				`bk_cmdb/host in this order, so resources[0] must be bk_cmdb/biz, got bk_cmdb/host. Reorder the entries to follow the action's resource types.`}},
		{Name: "resource of another type", Config: grant("bk_cmdb", `"view_host"`, biz),
			Want: []string{"Resource type does not match the action", `Action "view_host" of system bk_cmdb relates to bk_cmdb/host in this order, ` +
				`so resources[0] must be bk_cmdb/host, got bk_cmdb/biz.`}},
		{Name: "creator type without a creator configuration", Config: creator("bk_cmdb", "host", `"view_host"`),
			Want: []string{"No creator configuration for the type", `System bk_cmdb registered no resource-creator actions for type "host" in IAM, ` +
				`so IAM would refuse to register a creator of it. It has one for biz.`}},
		{Name: "creator action outside the configuration", Config: creator("bk_job", "job", `"edit", "veiw"`),
			Want: []string{"Action outside the creator configuration", `IAM grants the creator of a job in system bk_job the actions of its ` +
				`creator configuration, edit, list, delete, view, and "veiw" is not one of them. Did you mean "view"?`}},
		{Name: "a system IAM does not know", Config: grant("bk_nope", `"view_host"`, `{ system = "bk_nope", type = "host", instances = { "1" = "host1" } }`),
			Want: []string{"Cannot read the model of system bk_nope", "The plan checks each grant against the model its system registered in IAM, " +
				"and reading the model of bk_nope failed: IAM rejected the model query GET /api/v1/model/systems/bk_nope/query (code 1901404",
				"not found:system(bk_nope) not exists; the action or the system is unknown to IAM: check the ids. Fix the cause, or set " +
					"check_model = false in the provider configuration to plan without the checks (IAM then refuses what the model does not allow at apply)."}},
		{Name: "unknown action in a scope", Config: scope("bk_cmdb", `"view_host", "veiw_host"`, everyHost),
			Want: []string{"Unknown action", `System bk_cmdb has no action "veiw_host" in its IAM model; IAM would refuse the grade manager's scope. Did you mean "view_host", "edit_host"?`}},
		{Name: "scope without the action's resource types", Config: scope("bk_cmdb", `"view_host"`, ""),
			Want: []string{"Resources do not match the action", `Action "view_host" of system bk_cmdb relates to 1 resource type(s), bk_cmdb/host in this order, ` +
				`and authorization_scopes[0].resources has 0 entries: give one entry per type, in that order. Actions with other resource types go in ` +
				`authorization scopes of their own.`}},
		{Name: "scope resources for an action without resource types", Config: scope("bk_cmdb", `"create_biz"`, everyHost),
			Want: []string{"Resources for an action without resource types", `Action "create_biz" of system bk_cmdb relates to no resource type: ` +
				`IAM grants it on everything and refuses resources with it. Set authorization_scopes[0].resources = [] and name it in an authorization scope of its own.`}},
		{Name: "scope resource of another type", Config: scope("bk_cmdb", `"view_host"`, biz2),
			Want: []string{"Resource type does not match the action", `Action "view_host" of system bk_cmdb relates to bk_cmdb/host in this order, ` +
				`so authorization_scopes[0].resources[0] must be bk_cmdb/host, got bk_cmdb/biz.`}},
		{Name: "a scope of a system IAM does not know", Config: scope("bk_nope", `"view_host"`, everyHost),
			Want: []string{"Cannot read the model of system bk_nope", "The plan checks each authorization scope against the model its system registered in IAM, " +
				"and reading the model of bk_nope failed: IAM rejected the model query GET /api/v1/model/systems/bk_nope/query (code 1901404"}},
	}
}
