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
// group are made by Terraform; the group's members are the second user
// and, when the profile names one, a department, and the group is
// granted the second action on the third instance. One check block per
// way in asserts that the member, and the department's user, may do it:
// before the grant both warn, after it the plan passes, and after the
// grant is revoked both warn again. IAM's backend caches policies and
// memberships, so each step first waits (up to two minutes) for IAM's
// answer to change, then plans.
func TestAccSite_AccessCheck(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	ctx := context.Background()
	action, instance := p.Actions[1], p.Instances[2]
	type way struct{ name, user string }
	ways := []way{{"member", p.Users[1]}}
	members := fmt.Sprintf("users = { %q = \"permanent\" }", p.Users[1])
	if d := p.Department; d != nil {
		if d.User == p.Users[1] {
			t.Fatalf("BKIAM_ACC_SITE: department.user must not be the second user (%s), who is a direct member", d.User)
		}
		ways = append(ways, way{"department", d.User})
		members += fmt.Sprintf("\n  departments = { %q = \"permanent\" }", d.ID)
	}
	allowed := func(user string) bool {
		t.Helper()
		a, err := e.Client.AuthByActions(ctx, p.System, bkiam.Subject{Type: "user", ID: user}, []string{action},
			[]bkiam.AuthResource{{System: p.System, Type: p.Type, ID: instance}})
		if err != nil {
			t.Fatal(err)
		}
		return a.Allowed[action]
	}
	for _, w := range ways {
		if allowed(w.user) {
			t.Skipf("%s may already %s %s: the test needs users who may not", w.user, action, instance)
		}
	}
	waitFor := func(want bool) {
		t.Helper()
		for _, w := range ways {
			for deadline := time.Now().Add(2 * time.Minute); allowed(w.user) != want; {
				if time.Now().After(deadline) {
					t.Fatalf("IAM still answers %t for %s's %s on %s after two minutes", !want, w.user, action, instance)
				}
				time.Sleep(2 * time.Second)
			}
		}
	}
	base := e.GroupBase("access", action, instance) + fmt.Sprintf(`
resource "bkiam_group_members" "site" {
  system      = %q
  group_id    = bkiam_group.site.id
  %s
}
`, p.System, members)
	for _, w := range ways {
		base += fmt.Sprintf(`
data "bkiam_access_check" %[1]q {
  system    = %[2]q
  subject   = { type = "user", id = %[3]q }
  actions   = [%[4]q]
  resources = [{ system = %[2]q, type = %[5]q, id = %[6]q }]
}

check "%[1]s_may" {
  assert {
    condition     = data.bkiam_access_check.%[1]s.all_allowed
    error_message = "IAM does not allow the %[1]s."
  }
}
`, w.name, p.System, w.user, action, p.Type, instance)
	}
	permission := fmt.Sprintf(`
resource "bkiam_group_permission" "site" {
  system    = %q
  group_id  = bkiam_group.site.id
  actions   = [%q]
  resources = [{ system = %q, type = %q, instances = { %q = %q } }]
}
`, p.System, action, p.System, p.Type, instance, instance)
	cli := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	cli.SiteSecret()
	t.Cleanup(func() { cli.Run("destroy", "-auto-approve") })
	// warned says, per way in, whether the plan's check block warns.
	warned := func() map[string]bool {
		t.Helper()
		out := strings.Join(strings.Fields(cli.MustRun("plan")), " ")
		got := map[string]bool{}
		for _, w := range ways {
			got[w.name] = strings.Contains(out, "IAM does not allow the "+w.name+".")
		}
		return got
	}
	expect := func(step string, want bool) {
		t.Helper()
		for name, warns := range warned() {
			if warns != want {
				t.Errorf("%s: the check of the %s warns: %t, want %t", step, name, warns, want)
			}
		}
	}

	cli.Configure(e.Provider, base)
	cli.MustRun("apply", "-auto-approve")
	expect("before the group's grant", true)
	cli.Configure(e.Provider, base+permission)
	cli.MustRun("apply", "-auto-approve")
	waitFor(true)
	expect("after the group's grant", false)
	cli.Configure(e.Provider, base)
	cli.MustRun("apply", "-auto-approve")
	waitFor(false)
	expect("after the grant was revoked", true)
}
