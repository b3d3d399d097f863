package provider_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/heldpolicy"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// heldByAction reads what subject holds of every action of the system
// directly (its own rows, not its groups'): each action's expression in
// canonical form, "" for none. It reads the subject alone (the backend's
// policy query, then each row by id), never a whole list.
func heldByAction(t *testing.T, e *acctest.SiteEnv, subject bkiam.Subject, actions []string) map[string]string {
	t.Helper()
	src := heldpolicy.NewClientSource(e.Client, bkiam.NewScanCache(e.Client, time.Now), nil)
	held, _, err := heldpolicy.NewLiveReader(src).Read(context.Background(), e.P.System, subject, actions, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, a := range actions {
		out[a] = ""
		if p := held[a].Live; p != nil {
			b, err := p.Expr.Canonical()
			if err != nil {
				t.Fatal(err)
			}
			out[a] = string(b)
		}
	}
	return out
}

// changed returns the actions whose expression differs between two reads.
func changed(before, after map[string]string) []string {
	var out []string
	for _, a := range slices.Sorted(maps.Keys(after)) {
		if before[a] != after[a] {
			out = append(out, a)
		}
	}
	return out
}

// TestAccSite_NothingGrantedBeside: each way the provider sends IAM a path
// grants what it names and nothing more, on whatever IAM the tests point
// at (issue 51, item 7). A web UI grant by topology can carry its related
// actions (依赖操作), which the web UI adds; the authorization and
// management APIs add none. A user is granted an action by id
// (bkiam_instance_grant) and registered as the creator of an instance
// under its parent (bkiam_creator_grant: IAM grants every creator action
// of the type, as documented); a group is granted an action on an
// instance named by its path (bkiam_group_permission). Every action of the
// system is read for the user and the group before and after: the apply
// changes exactly the configured actions (and the type's creator
// actions), and the destroy leaves both as they were.
func TestAccSite_NothingGrantedBeside(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p, c := e.P, e.P.Creator
	ctx := context.Background()
	model, err := e.Client.SystemModel(ctx, p.System)
	if err != nil {
		t.Fatal(err)
	}
	// The group is granted an instance of the profile's type by its path
	// under a parent: the creator's parent where the profile names one for
	// that type (a real site's callback knows it), else the model's.
	parentType, parentID := c.ParentType, c.ParentID
	if parentType == "" || c.Type != p.Type {
		parentType, parentID = e.ParentType(t).ID, "1"
	}
	var all []string
	for _, a := range model.Actions {
		all = append(all, a.ID)
	}
	creatorActions := []string{}
	if node := model.CreatorNode(c.Type); node != nil {
		for _, a := range node.Actions {
			creatorActions = append(creatorActions, a.ID)
		}
	}
	user := bkiam.Subject{Type: "user", ID: p.Users[1]}
	path := func(id string) string {
		return fmt.Sprintf("/%s,%s,%s/%s,%s,%s/", p.System, parentType, parentID, p.System, p.Type, id)
	}
	// The creator's instance, under its parent where the profile names one.
	creatorKey := c.Instances[0]
	if c.ParentType != "" {
		creatorKey = fmt.Sprintf("/%s,%s,%s/%s,%s,%s/", p.System, c.ParentType, c.ParentID, p.System, c.Type, c.Instances[0])
	}
	config := e.Provider + fmt.Sprintf(`
resource "bkiam_grade_manager" "site" {
  system  = %[1]q
  name    = %[2]q
  members = [%[3]q]
  authorization_scopes = [{
    system    = %[1]q
    actions   = [%[4]q]
    resources = [{ system = %[1]q, type = %[5]q, all_instances = true }]
  }]
  subject_scopes = [{ type = "*", id = "*" }]
}

resource "bkiam_group" "site" {
  system           = %[1]q
  grade_manager_id = bkiam_grade_manager.site.id
  name             = %[6]q
}

resource "bkiam_group_permission" "by_path" {
  system    = %[1]q
  group_id  = bkiam_group.site.id
  actions   = [%[4]q]
  resources = [{ system = %[1]q, type = %[5]q, instances = { %[7]q = %[8]q } }]
}

resource "bkiam_instance_grant" "by_id" {
  system    = %[1]q
  subject   = { type = "user", id = %[9]q }
  actions   = [%[10]q]
  resources = [{ system = %[1]q, type = %[5]q, instances = { %[8]q = %[8]q } }]
}

resource "bkiam_creator_grant" "under_parent" {
  system    = %[1]q
  type      = %[13]q
  creator   = %[9]q
  instances = { %[11]q = %[12]q }
}
`, p.System, "tf-acc-beside-"+e.Suffix, p.Users[0], p.Actions[0], p.Type, "tf-acc-beside-dev-"+e.Suffix, path(p.Instances[1]),
		p.Instances[1], user.ID, p.Actions[1], creatorKey, c.Instances[0], c.Type)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.SiteSecret()
	w.Configure("", config)
	t.Cleanup(func() { w.Run("destroy", "-auto-approve") })

	userBefore := heldByAction(t, e, user, all)
	w.MustRun("apply", "-auto-approve")
	group := bkiam.Subject{Type: "group", ID: stateAttr(t, w, "bkiam_group.site", "id")}
	want := []string{p.Actions[1]}
	want = append(want, creatorActions...)
	slices.Sort(want)
	want = slices.Compact(want)
	userAfter := heldByAction(t, e, user, all)
	for _, a := range changed(userBefore, userAfter) {
		if !slices.Contains(want, a) {
			t.Errorf("the apply changed %s's %s, which nothing configured grants: %q, then %q", user.ID, a, userBefore[a], userAfter[a])
		}
	}
	if got := changed(map[string]string{}, heldByAction(t, e, group, all)); !slices.Equal(got, []string{p.Actions[0]}) {
		t.Errorf("the new group holds %v after the apply, want [%s] alone", got, p.Actions[0])
	}
	w.MustRun("destroy", "-auto-approve")
	if got := changed(userBefore, heldByAction(t, e, user, all)); len(got) > 0 {
		t.Errorf("after the destroy %s's %v differ from before the apply", user.ID, got)
	}
}

// TestAccSite_GroupGrantWidensScope: what IAM changes beside a grant to a
// group through the authorization API (bkiam_instance_grant), on whatever
// IAM the tests point at. A grade manager admits its first action on the
// first instance only: the management API refuses the second instance to
// its groups. After a bkiam_instance_grant of the second instance to one
// group (whose plan says that the scope widens), the management API grants
// it to the other group too: IAM widened the grade manager's scope, and
// the grant's destroy does not narrow it back.
func TestAccSite_GroupGrantWidensScope(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	ctx := context.Background()
	base := e.Provider + e.GroupBase("widen", p.Actions[0], p.Instances[0]) + fmt.Sprintf(`
resource "bkiam_group" "other" {
  system           = %q
  grade_manager_id = bkiam_grade_manager.site.id
  name             = %q
}
`, p.System, "tf-acc-widen-other-"+e.Suffix)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.SiteSecret()
	w.Configure("", base)
	t.Cleanup(func() { w.Run("destroy", "-auto-approve") })
	w.MustRun("apply", "-auto-approve")
	other, err := strconv.ParseInt(stateAttr(t, w, "bkiam_group.other", "id"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	grantOther := func() error {
		return e.Client.GrantGroupPolicies(ctx, p.System, other, bkiam.GroupPolicyRequest{System: p.System, Actions: []bkiam.Action{{ID: p.Actions[0]}},
			Resources: []bkiam.PathResource{{System: p.System, Type: p.Type, Paths: [][]bkiam.PathNode{{{System: p.System, Type: p.Type, ID: p.Instances[1], Name: p.Instances[1]}}}}}})
	}
	if err := grantOther(); err == nil {
		t.Fatalf("the management API granted %s on %s outside the grade manager's scope", p.Actions[0], p.Instances[1])
	}
	w.Configure("", base+fmt.Sprintf(`
resource "bkiam_instance_grant" "site" {
  system    = %[1]q
  subject   = { type = "group", id = bkiam_group.site.id }
  actions   = [%[2]q]
  resources = [{ system = %[1]q, type = %[3]q, instances = { %[4]q = %[4]q } }]
}
`, p.System, p.Actions[0], p.Type, p.Instances[1]))
	if out := strings.Join(strings.Fields(w.MustRun("plan")), " "); !strings.Contains(out, "Group grant widens its grade manager's scope") {
		t.Errorf("the plan of a group grant outside its grade manager's scope does not say it widens it:\n%s", out)
	}
	w.MustRun("apply", "-auto-approve")
	w.Configure("", base)
	w.MustRun("apply", "-auto-approve") // the grant's destroy
	if err := grantOther(); err != nil {
		t.Errorf("after the group grant and its revoke, the management API still refuses %s on %s to the grade manager's "+
			"other group (%v): IAM did not widen the scope as the plan says", p.Actions[0], p.Instances[1], err)
	}
}
