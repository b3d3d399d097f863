package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// identityConfig is one resource of every kind: the grade manager and
// group of permissionBase, the group's members and a permission of it, a
// user's instance grant with actions, and a creator grant. Instance names
// are the ids, as an import reads them (IAM keeps no names).
func identityConfig(provider, grantActions, members string) string {
	return provider + acctest.PermissionBase + `
resource "bkiam_group_members" "dev" {
  system   = "bk_cmdb"
  group_id = bkiam_group.dev.id
  users    = { ` + members + ` }
}
` + acctest.PermissionHCL("editors", []string{"edit_host"}, map[string]string{"7": "7"}) + `
resource "bkiam_instance_grant" "bob" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "bob" }
  actions   = [` + grantActions + `]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "1", "2" = "2" } }]
}

resource "bkiam_creator_grant" "jobs" {
  system    = "bk_sops"
  type      = "mini_app"
  creator   = "alice"
  actions   = ["mini_app_edit", "mini_app_view"]
  instances = { "/bk_sops,project,project1/bk_sops,mini_app,m1/" = "m1" }
}
`
}

func strs(items ...string) knownvalue.Check {
	checks := make([]knownvalue.Check, len(items))
	for i, s := range items {
		checks[i] = knownvalue.StringExact(s)
	}
	return knownvalue.ListExact(checks)
}

// identityChecks are the identities of identityConfig's resources, with
// the instance grant's actions.
func identityChecks(actions ...string) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectIdentity("bkiam_instance_grant.bob", map[string]knownvalue.Check{
			"system": knownvalue.StringExact("bk_cmdb"), "subject_type": knownvalue.StringExact("user"),
			"subject_id": knownvalue.StringExact("bob"), "actions": strs(actions...), "resource_types": strs("bk_cmdb/host"),
		}),
		statecheck.ExpectIdentity("bkiam_creator_grant.jobs", map[string]knownvalue.Check{
			"system": knownvalue.StringExact("bk_sops"), "type": knownvalue.StringExact("mini_app"), "creator": knownvalue.StringExact("alice"),
		}),
		statecheck.ExpectIdentity("bkiam_group_permission.editors", map[string]knownvalue.Check{
			"system": knownvalue.StringExact("bk_cmdb"), "group_id": knownvalue.NotNull(), "actions": strs("edit_host"),
		}),
		statecheck.ExpectIdentityValueMatchesState("bkiam_group_permission.editors", tfjsonpath.New("group_id")),
		statecheck.ExpectIdentity("bkiam_group_members.dev", map[string]knownvalue.Check{
			"system": knownvalue.StringExact("bk_cmdb"), "group_id": knownvalue.NotNull(),
		}),
		statecheck.ExpectIdentityValueMatchesState("bkiam_group_members.dev", tfjsonpath.New("group_id")),
		statecheck.ExpectIdentity("bkiam_grade_manager.platform", map[string]knownvalue.Check{
			"system": knownvalue.StringExact("bk_cmdb"), "id": knownvalue.NotNull(),
		}),
		statecheck.ExpectIdentityValueMatchesState("bkiam_grade_manager.platform", tfjsonpath.New("id")),
		statecheck.ExpectIdentity("bkiam_group.dev", map[string]knownvalue.Check{
			"system": knownvalue.StringExact("bk_cmdb"), "grade_manager_id": knownvalue.NotNull(), "id": knownvalue.NotNull(),
		}),
		statecheck.ExpectIdentityValueMatchesState("bkiam_group.dev", tfjsonpath.New("id")),
		statecheck.ExpectIdentityValueMatchesState("bkiam_group.dev", tfjsonpath.New("grade_manager_id")),
	}
}

// TestAccIdentity: every resource has its identity after create, keeps
// it through an update (the instance grant's follows its actions, which
// change in place), and imports by it with `import { identity = {…} }`
// to the same state: a no-op import where IAM can read the object back
// whole, and otherwise the update the resource's import documents (a
// grade manager's scopes, a creator grant's instances). Terraform and
// OpenTofu 1.12 and later.
func TestAccIdentity(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	if !acctest.CLI.AtLeast(1, 12) {
		t.Skipf("%s has no resource identity (Terraform and OpenTofu 1.12)", acctest.CLI)
	}
	sb := sandboxtest.Start(t)
	provider := acctest.DriftProvider(sb, "")
	step1 := identityConfig(provider, `"view_host"`, `alice = "permanent"`)
	// The grant's actions and the group's members change in place.
	step2 := identityConfig(provider, `"view_host", "edit_host"`, `alice = "permanent", bob = "permanent"`)
	importByIdentity := func(addr string, changes bool) resource.TestStep {
		return resource.TestStep{Config: step2, ResourceName: addr, ImportState: true,
			ImportStateKind: resource.ImportBlockWithResourceIdentity, ExpectNonEmptyPlan: changes}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: step1, ConfigStateChecks: identityChecks("view_host")},
			{Config: step2, ConfigStateChecks: identityChecks("edit_host", "view_host")},
			importByIdentity("bkiam_instance_grant.bob", false),
			importByIdentity("bkiam_group_permission.editors", false),
			importByIdentity("bkiam_group_members.dev", false),
			importByIdentity("bkiam_group.dev", false),
			// IAM cannot read these back whole (their import docs say so).
			importByIdentity("bkiam_grade_manager.platform", true),
			importByIdentity("bkiam_creator_grant.jobs", true),
		},
	})
}

// TestAccIdentity_planTimeValidation: a wrong import identity is refused
// at plan, before any call.
func TestAccIdentity_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	if !acctest.CLI.AtLeast(1, 12) {
		t.Skipf("%s has no resource identity (Terraform and OpenTofu 1.12)", acctest.CLI)
	}
	sb, provider := acctest.Target(t)
	test := acctest.PlanTimeTest(t, provider, acctest.IdentityValidationCases())
	resource.Test(t, test)
	if n := acctest.IAMCalls(sb); n != 0 {
		t.Errorf("refused import identities sent %d requests", n)
	}
}
