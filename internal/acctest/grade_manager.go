package acctest

import (
	"fmt"
	"strings"
)

// GradeManagerHCL renders the platform team's grade manager of bk_cmdb.
func GradeManagerHCL(name, description string, members []string, syncPerm bool) string {
	return fmt.Sprintf(`
resource "bkiam_grade_manager" "platform" {
  system      = "bk_cmdb"
  name        = %q
  description = %q
  members     = %s
  authorization_scopes = [{
    system  = "bk_cmdb"
    actions = ["view_host", "edit_host"]
    resources = [{
      system    = "bk_cmdb"
      type      = "host"
      instances = [{ id = "*", ancestors = [{ system = "bk_cmdb", type = "biz", id = "2" }] }]
    }]
  }]
  subject_scopes = [{ type = "*", id = "*" }]
  sync_perm      = %t
  group_name     = "platform-admins"
}
`, name, description, HCLList(members), syncPerm)
}

// GradeManagerWithoutScopesHCL renders a grade manager of bk_cmdb as
// terraform query generates it: without the scopes IAM cannot read back.
// importID, unless empty, adds the import block that adopts it.
func GradeManagerWithoutScopesHCL(name, importID string) string {
	imp := ""
	if importID != "" {
		imp = fmt.Sprintf("\nimport {\n  to = bkiam_grade_manager.platform\n  id = %q\n}\n", importID)
	}
	return imp + fmt.Sprintf(`
resource "bkiam_grade_manager" "platform" {
  system  = "bk_cmdb"
  name    = %q
  members = ["alice"]
}
`, name)
}

// GroupsHCL renders groups of the platform grade manager: label, name,
// description each. (terraform-plugin-testing cannot read back the state
// of a for_each: TestAccGroupsForEach drives the CLI itself.)
func GroupsHCL(groups ...[3]string) string {
	var b strings.Builder
	for _, g := range groups {
		fmt.Fprintf(&b, "\nresource \"bkiam_group\" %q {\n  system           = \"bk_cmdb\"\n  grade_manager_id = bkiam_grade_manager.platform.id\n  name             = %q\n  description      = %q\n}\n", g[0], g[1], g[2])
	}
	return b.String()
}

// ManagementValidationCases are the configuration mistakes of
// bkiam_grade_manager, bkiam_group and the bkiam_group data source, each
// refused at plan time with the attribute and the fix.
func ManagementValidationCases() []PlanTimeCase {
	gm := func(subject, importID string) string {
		imp := ""
		if importID != "" {
			imp = fmt.Sprintf("import {\n  to = bkiam_grade_manager.platform\n  id = %q\n}\n", importID)
		}
		return imp + strings.Replace(GradeManagerHCL("platform", "", []string{"alice"}, false),
			`subject_scopes = [{ type = "*", id = "*" }]`, "subject_scopes = ["+subject+"]", 1)
	}
	group := func(gradeManager, importID string) string {
		imp := ""
		if importID != "" {
			imp = fmt.Sprintf("import {\n  to = bkiam_group.dev\n  id = %q\n}\n", importID)
		}
		return imp + fmt.Sprintf("resource \"bkiam_group\" \"dev\" {\n  system           = \"bk_cmdb\"\n  grade_manager_id = %q\n  name             = \"dev\"\n}\n", gradeManager)
	}
	return []PlanTimeCase{
		{Name: "subject scope of everyone with an id", Config: gm(`{ type = "*", id = "alice" }`, ""),
			Want: []string{"Invalid subject scope", `subject_scopes[0] is { type = "*", id = "alice" }: everyone is { type = "*", id = "*" }, and the id "*" goes with no other type.`}},
		{Name: "subject scope department not numeric", Config: gm(`{ type = "department", id = "ops" }`, ""),
			Want: []string{"Invalid department id", `subject_scopes[0].id: department ids are the numeric ids of IAM's organisation, such as "12"; got "ops".`}},
		{Name: "grade manager import ID of the wrong shape", Config: gm(`{ type = "*", id = "*" }`, "bk_cmdb"),
			Want: []string{"Invalid import ID", `Expected SYSTEM/GRADE_MANAGER_ID, e.g. bk_cmdb/12; got "bk_cmdb".`}},
		{Name: "group import ID of the wrong shape", Config: group("12", "bk_cmdb/12"),
			Want: []string{"Invalid import ID", `Expected SYSTEM/GRADE_MANAGER_ID/GROUP_ID, e.g. bk_cmdb/12/345; got "bk_cmdb/12".`}},
		{Name: "grade manager name with surrounding white space", Config: strings.Replace(gm(`{ type = "*", id = "*" }`, ""),
			`name        = "platform"`, `name        = " platform"`, 1),
			Want: []string{"Surrounding white space", `name is " platform". IAM stores names and descriptions without the white space ` +
				`around them, so it would read back "platform" and every plan would show a change: write "platform".`}},
		{Name: "group description with surrounding white space", Config: strings.Replace(group("12", ""), `name             = "dev"`,
			`name             = "dev"`+"\n  description      = \"devs \"", 1),
			Want: []string{"Surrounding white space", `description is "devs ".`}},
		{Name: "all_instances beside instances", Config: strings.Replace(gm(`{ type = "*", id = "*" }`, ""),
			`      type      = "host"`, `      type      = "host"`+"\n      all_instances = true", 1),
			Want: []string{"Both all_instances and instances", "authorization_scopes[0].resources[0] sets all_instances = true and instances: " +
				"the unlimited scope already holds every instance. Remove instances, or all_instances."}},
		{Name: "a scope type without instances", Config: strings.Replace(gm(`{ type = "*", id = "*" }`, ""),
			`      instances = [{ id = "*", ancestors = [{ system = "bk_cmdb", type = "biz", id = "2" }] }]`, `      all_instances = false`, 1),
			Want: []string{"No instances", "authorization_scopes[0].resources[0] names no instances: list the instances the grade manager " +
				"may grant, or set all_instances = true for every instance of the type."}},
		{Name: "a scope instance under an ancestor *", Config: strings.Replace(gm(`{ type = "*", id = "*" }`, ""),
			`type = "biz", id = "2" }`, `type = "biz", id = "*" }`, 1),
			Want: []string{"An ancestor * is no wildcard", `IAM compares a grant's path with a scope's by string prefix, and only a * in the ` +
				`last node (the instance's id) stands for any id there: a * above it is the literal id "*", so this scope instance would ` +
				`admit no real grant. Give the ancestor's id (one scope instance per ancestor), drop the ancestors for instances given by ` +
				`their id alone, or set all_instances = true for every host.`}},
		{Name: "grade manager created without its scopes", Config: GradeManagerWithoutScopesHCL("platform", ""),
			Want: []string{"Scopes needed to create a grade manager", "authorization_scopes is not set, and IAM creates a grade " +
				"manager only with both authorization_scopes and subject_scopes: write them. (Leaving them out is for a grade " +
				"manager that exists, imported: IAM then keeps what it holds.)"}},
		{Name: "import of a system manager's group", Config: group("-", "bk_cmdb/-/345"),
			Want: []string{"Cannot import a system manager's group", `IAM's management API lists the groups of grade managers only, so a group under the system manager ("-") cannot be read back to import. Declare it in the configuration, or recreate it under a grade manager.`}},
	}
}
