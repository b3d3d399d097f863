package acctest

import (
	"fmt"
	"time"
)

const UserGroupsAddr = "bkiam_user_groups.test"

// UserGroupsValidationCases are bkiam_user_groups' plan-time refusals,
// among them the ownership conflict with a bkiam_group_members, each
// way round: depends_on orders the two plans, so that the second is the
// one refused.
func UserGroupsValidationCases() []PlanTimeCase {
	config := func(person, groups, extra, importID string) string {
		imp := ""
		if importID != "" {
			imp = fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n", UserGroupsAddr, importID)
		}
		return imp + fmt.Sprintf("resource \"bkiam_user_groups\" \"test\" {\n  system = \"bk_cmdb\"\n%s  groups = %s\n%s}\n", person, groups, extra)
	}
	alice := "  user = \"alice\"\n"
	in42 := `{ "42" = "permanent" }`
	members := func(extra string) string {
		return "resource \"bkiam_group_members\" \"team\" {\n  system   = \"bk_cmdb\"\n  group_id = \"42\"\n  users    = { bob = \"permanent\" }\n" + extra + "}\n"
	}
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	return []PlanTimeCase{
		{Name: "user groups of a group whose members another resource owns", Config: members("") +
			config(alice, in42, "  depends_on = [bkiam_group_members.team]\n", ""),
			Want: []string{"Owned by another resource", `This resource owns user alice's membership in group 42, and bkiam_group_members "bk_cmdb/42" ` +
				`of this configuration owns the members of group 42 whole: it would remove a member it does not declare on every apply. ` +
				`Keep the membership in one of them: list user alice in that resource, or leave the group out of this one. To let one go without ` +
				`changing IAM, replace its block with a removed block (lifecycle { destroy = false }).`}},
		{Name: "group members of a group a user groups lists", Config: members("  depends_on = [bkiam_user_groups.test]\n") +
			config(alice, in42, "", ""),
			Want: []string{"Owned by another resource", `This resource owns the members of group 42 whole, and bkiam_user_groups "bk_cmdb/user/alice" ` +
				`of this configuration owns user alice's membership in it: this resource would remove that member on every apply, and the ` +
				`other add it again. Keep the membership in one of them: list user alice in this resource, or leave the group out of the other.`}},
		{Name: "two user groups own one membership", Config: config(alice, in42, "", "") +
			"resource \"bkiam_user_groups\" \"again\" {\n  system = \"bk_cmdb\"\n  user = \"alice\"\n  groups = { \"42\" = \"2030-01-01T00:00:00Z\" }\n  depends_on = [bkiam_user_groups.test]\n}\n",
			Want: []string{"Owned by another resource", `This resource owns user alice's membership in group 42, and so does bkiam_user_groups ` +
				`"bk_cmdb/user/alice" of this configuration: each would undo the other's expiry on every apply. Keep one resource per membership.`}},
		{Name: "user groups of nobody", Config: config("", in42, "", ""),
			Want: []string{"Whose memberships", `Set user (a username, e.g. "alice") or department (a department id, e.g. "12"): the person whose memberships these are.`}},
		{Name: "user groups of a user and a department", Config: config(alice+"  department = \"12\"\n", in42, "", ""),
			Want: []string{"Both user and department", "user and department are both set; a bkiam_user_groups is one person's memberships. Keep one, " +
				"and write the other's memberships in a resource of its own."}},
		{Name: "user groups of admin", Config: config("  user = \"admin\"\n", in42, "", ""),
			Want: []string{"IAM does not add admin to groups", "admin is IAM's super user"}},
		{Name: "user groups of a department that is not a number", Config: config("  department = \"ops\"\n", in42, "", ""),
			Want: []string{"Invalid department id", `department: department ids are the numeric ids of IAM's organisation, such as "12"; got "ops".`}},
		{Name: "user groups with a group id that is not a number", Config: config(alice, `{ dev = "permanent" }`, "", ""),
			Want: []string{"Invalid group id", `groups["dev"]: the keys of groups are user groups' numeric ids, such as bkiam_group.dev.id or "42"; got "dev".`}},
		{Name: "user groups with an expiry in the past", Config: config(alice, fmt.Sprintf(`{ "42" = %q }`, past), "", ""),
			Want: []string{"Expiry in the past", fmt.Sprintf(`groups["42"] is %s, which has passed; IAM adds members only with an expiry in the future.`, past)}},
		{Name: "user groups following an unset expires_in", Config: config(alice, `{ "42" = "expires_in", "43" = "expires_in" }`, "", ""),
			Want: []string{"Group follows an unset expires_in", `groups["42"] (and 1 other groups) is "expires_in", which follows the resource's ` +
				`rolling expiry, but expires_in is not set. Set expires_in (for example "90d"), or give the group "permanent" or an RFC 3339 time.`}},
		{Name: "user groups import ID of the wrong shape", Config: config(alice, in42, "", "bk_cmdb/alice"),
			Want: []string{"Invalid import ID", `Expected SYSTEM/user/USERNAME/GROUP_ID,GROUP_ID… or SYSTEM/department/DEPARTMENT_ID/GROUP_ID,…, ` +
				`e.g. bk_cmdb/user/alice/42,43: the resource holds only the groups it lists, so the import names them; got "bk_cmdb/alice".`}},
	}
}
