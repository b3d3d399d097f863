package provider_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccSite_SyncGroupRename: on whatever IAM the tests point at, a
// grade manager with sync_perm and no group_name is renamed: the plan says
// its sync group is renamed along, and IAM's group list then names the
// sync group by IAM's default for the new name, by which the lists tell it
// where they cannot read IAM's mark (IAM keeps the old name unless the
// update sends group_name).
func TestAccSite_SyncGroupRename(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	config := func(name string) string {
		return e.Provider + e.GradeManagerHCL(name, p.Actions[0], "  sync_perm      = true\n", p.Instances[0]) + `
output "grade_manager_id" {
  value = bkiam_grade_manager.site.id
}
`
	}
	first, second := "tf-acc-sync-"+e.Suffix, "tf-acc-sync2-"+e.Suffix
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.SiteSecret()
	t.Cleanup(func() { w.Run("destroy", "-auto-approve") })
	w.Configure("", config(first))
	w.MustRun("apply", "-auto-approve")
	id, err := strconv.ParseInt(strings.TrimSpace(w.MustRun("output", "-raw", "grade_manager_id")), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	groups := func() []string {
		t.Helper()
		gs, err := e.Client.ListGroups(context.Background(), p.System, id, bkiam.GroupFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, g := range gs {
			names = append(names, g.Name)
		}
		return names
	}
	if got := groups(); !slices.Equal(got, []string{first + " administrator group"}) {
		t.Fatalf("after the create IAM lists the groups %q, want the sync group %q", got, first+" administrator group")
	}
	w.Configure("", config(second))
	if out := w.MustRun("plan"); !strings.Contains(strings.Join(strings.Fields(out), " "), "Sync group renamed with the grade manager") {
		t.Errorf("the rename's plan does not say the sync group is renamed:\n%s", out)
	}
	w.MustRun("apply", "-auto-approve")
	if got := groups(); !slices.Equal(got, []string{second + " administrator group"}) {
		t.Errorf("after the rename IAM lists the groups %q, want the sync group %q", got, second+" administrator group")
	}
	if !w.PlanIsEmpty() {
		t.Error("the plan after the rename is not empty")
	}
}
