package provider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccSite_AccessCheck: bkiam_access_check on whatever IAM the tests
// point at (the real one with make testacc-site). A grade manager and a
// group are made by Terraform, the group's member is the profile's
// department (or, when it names none, the second user), and the group is
// granted the second action on the third instance. A check block asserts
// that the department's user (or the member) may do it:
// before the grant the plan warns, after it the plan passes, and after
// the grant is revoked the plan warns again. IAM's backend caches
// policies and memberships, so each step first waits (up to two minutes)
// for IAM's answer to change, then plans.
func TestAccSite_AccessCheck(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	ctx := context.Background()
	// Through the profile's department when it names one, else through
	// the second user as a direct member.
	user, members := p.Users[1], fmt.Sprintf("users = { %q = \"permanent\" }", p.Users[1])
	if p.Department != nil {
		user, members = p.Department.User, fmt.Sprintf("departments = { %q = \"permanent\" }", p.Department.ID)
	}
	action, instance := p.Actions[1], p.Instances[2]
	allowed := func() bool {
		t.Helper()
		a, err := e.Client.AuthByActions(ctx, p.System, bkiam.Subject{Type: "user", ID: user}, []string{action},
			[]bkiam.AuthResource{{System: p.System, Type: p.Type, ID: instance}})
		if err != nil {
			t.Fatal(err)
		}
		return a.Allowed[action]
	}
	if allowed() {
		t.Skipf("%s may already %s %s: the test needs a user who may not", user, action, instance)
	}
	waitFor := func(want bool) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); allowed() != want; {
			if time.Now().After(deadline) {
				t.Fatalf("IAM still answers %t for %s's %s on %s after two minutes", !want, user, action, instance)
			}
			time.Sleep(2 * time.Second)
		}
	}
	base := fmt.Sprintf(`
resource "bkiam_grade_manager" "site" {
  system  = %[1]q
  name    = %[2]q
  members = [%[3]q]
  authorization_scopes = [{
    system    = %[1]q
    actions   = [%[4]q]
    resources = [{ system = %[1]q, type = %[5]q, instances = [{ id = %[6]q }] }]
  }]
  subject_scopes = [{ type = "*", id = "*" }]
}

resource "bkiam_group" "site" {
  system           = %[1]q
  grade_manager_id = bkiam_grade_manager.site.id
  name             = %[7]q
}

resource "bkiam_group_members" "site" {
  system      = %[1]q
  group_id    = bkiam_group.site.id
  %[8]s
}

data "bkiam_access_check" "site" {
  system    = %[1]q
  subject   = { type = "user", id = %[9]q }
  actions   = [%[4]q]
  resources = [{ system = %[1]q, type = %[5]q, id = %[6]q }]
}

check "department_member_may" {
  assert {
    condition     = data.bkiam_access_check.site.all_allowed
    error_message = "IAM does not allow it."
  }
}
`, p.System, "tf-acc-access-"+e.Suffix, p.Users[0], action, p.Type, instance, "tf-acc-access-dev-"+e.Suffix, members, user)
	permission := fmt.Sprintf(`
resource "bkiam_group_permission" "site" {
  system    = %q
  group_id  = bkiam_group.site.id
  actions   = [%q]
  resources = [{ system = %q, type = %q, instances = { %q = %q } }]
}
`, p.System, action, p.System, p.Type, instance, instance)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.SiteSecret()
	t.Cleanup(func() { w.Run("destroy", "-auto-approve") })
	failed := func() bool {
		t.Helper()
		return strings.Contains(strings.Join(strings.Fields(w.MustRun("plan")), " "), "IAM does not allow it.")
	}

	w.Configure(e.Provider, base)
	w.MustRun("apply", "-auto-approve")
	if !failed() {
		t.Error("before the grant the check block does not warn")
	}
	w.Configure(e.Provider, base+permission)
	w.MustRun("apply", "-auto-approve")
	waitFor(true)
	if failed() {
		t.Error("after the group's grant, which the user holds through the department, the check block still warns")
	}
	w.Configure(e.Provider, base)
	w.MustRun("apply", "-auto-approve")
	waitFor(false)
	if !failed() {
		t.Error("after the grant was revoked the check block does not warn")
	}
}
