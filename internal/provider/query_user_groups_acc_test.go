package provider_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// TestAccQueryUserGroups: terraform query adopts people's memberships as
// bkiam_user_groups, and never a membership another resource in state
// claims. Over the adoption guide's site, with bob also in ops and a
// group qa whose members a bkiam_group_members owns: the first query
// (users = ["bob"]) generates bob's memberships in dev and ops, which
// import without a call that changes IAM. The second, given the
// identities in state, generates alice's, carol's and department 2's
// and nothing of bob's or of qa (each left out with a warning), and the
// bkiam_group_members list beside it generates no group that a person's
// resource holds a membership of. Applying imports them, and the plan
// after is empty.
func TestAccQueryUserGroups(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	querier := queryCLI(t)
	sb, site, w := adoptionWorkspace(t)
	ctx := context.Background()
	c := acctest.OutsideClient(t, sb)
	if err := c.AddMembers(ctx, "bk_cmdb", site.Ops, []bkiam.MemberRef{{Type: "user", ID: "bob"}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	qa, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(site.GradeManager), []bkiam.GroupSpec{{Name: "qa"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddMembers(ctx, "bk_cmdb", qa[0], []bkiam.MemberRef{{Type: "user", ID: "dave"}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	applier := w.Terraform
	generated := func(file string) (blocks []string, flat string) {
		raw, err := os.ReadFile(filepath.Join(w.Dir, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "resource ") {
				blocks = append(blocks, strings.TrimSuffix(line, " {"))
			}
		}
		slices.Sort(blocks)
		return blocks, strings.Join(strings.Fields(string(raw)), " ")
	}

	// qa's members, adopted whole.
	w.Write("qa.tf", fmt.Sprintf("import {\n  to = bkiam_group_members.qa\n  id = \"bk_cmdb/%[1]d\"\n}\n\n"+
		"resource \"bkiam_group_members\" \"qa\" {\n  system   = \"bk_cmdb\"\n  group_id = \"%[1]d\"\n  users    = { dave = \"permanent\" }\n}\n", qa[0]))
	gm := fmt.Sprint(site.GradeManager)
	w.Terraform = querier
	w.Write("bob.tfquery.hcl", fmt.Sprintf("list \"bkiam_user_groups\" \"bob\" {\n  provider = bkiam\n  config {\n"+
		"    system           = \"bk_cmdb\"\n    grade_manager_id = %q\n    users            = [\"bob\"]\n  }\n}\n", gm))
	w.MustRun("query", "-generate-config-out=bob.tf")
	w.Remove("bob.tfquery.hcl")
	blocks, flat := generated("bob.tf")
	if !slices.Equal(blocks, []string{`resource "bkiam_user_groups" "bob_0"`}) {
		t.Fatalf("the query of bob's memberships generated %v", blocks)
	}
	for _, want := range []string{`user = "bob"`, fmt.Sprintf(`"%d" = "2031-06-30T00:00:00Z"`, site.Dev), fmt.Sprintf(`"%d" = "permanent"`, site.Ops)} {
		if !strings.Contains(flat, want) {
			t.Errorf("bob's generated memberships have no %s:\n%s", want, flat)
		}
	}
	if strings.Contains(flat, fmt.Sprintf(`"%d"`, qa[0])) {
		t.Errorf("bob's generated memberships name qa, which he is not in:\n%s", flat)
	}
	w.Terraform = applier
	applyImportsOnly(t, w, sb, snapshotIAM(sb), 2)

	// The second query, given what state manages.
	w.Terraform = querier
	w.Write("managed.json", w.MustRun("state", "identities", "-json"))
	w.Write("people.tfquery.hcl", fmt.Sprintf("list \"bkiam_user_groups\" \"people\" {\n  provider = bkiam\n  config {\n"+
		"    system           = \"bk_cmdb\"\n    grade_manager_id = %[1]q\n    managed          = jsondecode(file(\"managed.json\"))\n  }\n}\n\n"+
		"list \"bkiam_group_members\" \"groups\" {\n  provider = bkiam\n  config {\n"+
		"    system           = \"bk_cmdb\"\n    grade_manager_id = %[1]q\n    managed          = jsondecode(file(\"managed.json\"))\n  }\n}\n", gm))
	out := w.MustRun("query", "-generate-config-out=people.tf")
	w.Remove("people.tfquery.hcl")
	blocks, flat = generated("people.tf")
	want := []string{`resource "bkiam_user_groups" "people_0"`, `resource "bkiam_user_groups" "people_1"`, `resource "bkiam_user_groups" "people_2"`}
	if !slices.Equal(blocks, want) {
		t.Fatalf("the second query generated %v, want %v\n%s", blocks, want, out)
	}
	for _, want := range []string{`user = "alice"`, `user = "carol"`, `department = "2"`} {
		if !strings.Contains(flat, want) {
			t.Errorf("the second query's configuration has no %s:\n%s", want, flat)
		}
	}
	for _, absent := range []string{`user = "bob"`, `user = "dave"`} {
		if strings.Contains(flat, absent) {
			t.Errorf("the second query generated %s, whose memberships state manages:\n%s", absent, flat)
		}
	}
	folded := strings.Join(strings.Fields(out), " ")
	for _, warning := range []string{"Left out: group managed whole", "Left out: memberships managed person by person"} {
		if !strings.Contains(folded, warning) {
			t.Errorf("the second query did not warn %q:\n%s", warning, out)
		}
	}
	w.Terraform = applier
	applyImportsOnly(t, w, sb, snapshotIAM(sb), 3)
}
