package acctest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// PermissionBase is a grade manager of bk_cmdb whose groups may be granted view_host and edit_host
// on the hosts of business 2 and on host 7, and its group "dev".
const PermissionBase = `
resource "bkiam_grade_manager" "platform" {
  system  = "bk_cmdb"
  name    = "platform"
  members = ["alice"]
  authorization_scopes = [{
    system  = "bk_cmdb"
    actions = ["view_host", "edit_host"]
    resources = [{
      system = "bk_cmdb"
      type   = "host"
      instances = [
        { id = "*", ancestors = [{ system = "bk_cmdb", type = "biz", id = "2" }] },
        { id = "7" },
      ]
    }]
  }]
  subject_scopes = [{ type = "*", id = "*" }]
}

resource "bkiam_group" "dev" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = "dev"
}
`

// PermissionHCL renders a bkiam_group_permission of the dev group on hosts (key → name).
func PermissionHCL(label string, actions []string, hosts map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nresource \"bkiam_group_permission\" %q {\n  system   = \"bk_cmdb\"\n  group_id = bkiam_group.dev.id\n", label)
	fmt.Fprintf(&b, "  actions  = [%s]\n", QuoteAll(actions))
	b.WriteString("  resources = [{\n    system    = \"bk_cmdb\"\n    type      = \"host\"\n    instances = {\n")
	for _, k := range slices.Sorted(maps.Keys(hosts)) {
		fmt.Fprintf(&b, "      %q = %q\n", k, hosts[k])
	}
	b.WriteString("    }\n  }]\n}\n")
	return b.String()
}

func QuoteAll(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// GroupPermissionValidationCases are the configuration mistakes of a bkiam_group_permission, each
// refused at plan time with the attribute and the fix.
func GroupPermissionValidationCases() []PlanTimeCase {
	config := func(group, key, importID string) string {
		imp := ""
		if importID != "" {
			imp = fmt.Sprintf("import {\n  to = bkiam_group_permission.test\n  id = %q\n}\n", importID)
		}
		return imp + fmt.Sprintf(`resource "bkiam_group_permission" "test" {
  system    = "bk_cmdb"
  group_id  = %q
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { %q = "h" } }]
}
`, group, key)
	}
	return []PlanTimeCase{
		{Name: "permission group id not a number", Config: config("dev", "1", ""),
			Want: []string{"Invalid group id", `group_id must be a user group's numeric id, such as bkiam_group.dev.id or "42"; got "dev".`}},
		{Name: "path without its last slash", Config: config("42", "/bk_cmdb,host,1", ""),
			Want: []string{"Invalid path", `The key "/bk_cmdb,host,1" of resources[0].instances begins with "/", so it is a path, but it does not begin and end with "/". Write a path as IAM does: /SYSTEM,TYPE,ID/…/, e.g. /bk_cmdb,biz,2/bk_cmdb,host,*/.`}},
		{Name: "path node without an id", Config: config("42", "/bk_cmdb,biz/bk_cmdb,host,1/", ""),
			Want: []string{"Invalid path", `but its node "bk_cmdb,biz" is not SYSTEM,TYPE,ID.`}},
		{Name: "path node id too long", Config: config("42", "/bk_cmdb,host,"+strings.Repeat("x", 37)+"/", ""),
			Want: []string{"Invalid path", `is longer than IAM's 36 characters.`}},
		{Name: "path repeating a node", Config: config("42", "/bk_cmdb,biz,2/bk_cmdb,biz,2/bk_cmdb,host,1/", ""),
			Want: []string{"Repeated path node", `The path "/bk_cmdb,biz,2/bk_cmdb,biz,2/bk_cmdb,host,1/" of resources[0].instances names the node biz,2 twice. ` +
				`IAM refuses a path that repeats a node above the instance ("nodes must not repeat"); remove the repeated node.`}},
		{Name: "permission import ID of the wrong shape", Config: config("42", "1", "bk_cmdb/42"),
			Want: []string{"Invalid import ID", `Expected SYSTEM/GROUP_ID/ACTION[,ACTION…], e.g. bk_cmdb/42/view_host,edit_host; got "bk_cmdb/42".`}},
	}
}
