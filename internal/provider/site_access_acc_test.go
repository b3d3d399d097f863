package provider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/policyexpr"
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
// answer to change, then plans. The checks give the instance's paths as
// [] (no ancestors): users of a real site may hold grants by topology,
// which would leave a check without paths conditional.
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
  # The instance is granted by id, with no ancestors: paths = [] says so,
  # so that a grant of the user's by topology (every instance under some
  # business, which a site may hold) leaves the answer definite.
  resources = [{ system = %[2]q, type = %[5]q, id = %[6]q, paths = [] }]
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

// TestAccSite_AccessCheckPaths: a grant by topology, made outside
// Terraform as IAM's web UI and CMDB make them: the second user is granted
// the second action on every instance of the type under a business of its
// parent type made up for the test (batch_path of [PARENT id, TYPE *], which
// IAM holds as TYPE._bk_iam_path_ starts_with "/PARENT,id/"), expiring in a
// day so that it raises no expiry the user holds. Once IAM answers it, a
// check of an instance that gives the path "/PARENT,id/" is allowed, and one
// that does not is conditional: allowed null, conditional naming the
// action, and the plan warning that the answer depends on the instance's
// path. The grant is revoked afterwards, with what IAM grants beside it on
// the business (the related action on the parent, as the real SaaS does).
func TestAccSite_AccessCheckPaths(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	ctx := context.Background()
	user, action, instance := p.Users[1], p.Actions[1], p.Instances[0]
	parent := e.ParentType(t)
	biz := "tfacc-p" + e.Suffix
	path := fmt.Sprintf("/%s,%s/", parent.ID, biz)
	subject := bkiam.Subject{Type: "user", ID: user}
	resources := []bkiam.PathResource{{System: p.System, Type: p.Type, Paths: [][]bkiam.PathNode{{
		{System: parent.System, Type: parent.ID, ID: biz, Name: biz}, {System: p.System, Type: p.Type, ID: "*"}}}}}
	allowed := func(attribute map[string]any) bool {
		t.Helper()
		a, err := e.Client.AuthByActions(ctx, p.System, subject, []string{action},
			[]bkiam.AuthResource{{System: p.System, Type: p.Type, ID: instance, Attribute: attribute}})
		if err != nil {
			t.Fatal(err)
		}
		return a.Allowed[action]
	}
	under := map[string]any{policyexpr.AttributePath: []string{path}}
	if allowed(under) {
		t.Skipf("%s may already %s %s under %s: the test needs a user who may not", user, action, instance, path)
	}
	t.Cleanup(func() {
		if _, err := e.Client.BatchPath(ctx, bkiam.BatchPathRequest{System: p.System, Operate: bkiam.OperationRevoke, Subject: subject,
			Actions: []bkiam.Action{{ID: action}}, Resources: resources}); err != nil {
			t.Errorf("revoking %s's %s under %s: %v", user, action, path, err)
		}
	})
	if _, err := e.Client.BatchPath(ctx, bkiam.BatchPathRequest{System: p.System, Operate: bkiam.OperationGrant, Subject: subject,
		ExpiredAt: time.Now().Add(24 * time.Hour).Unix(), Actions: []bkiam.Action{{ID: action}}, Resources: resources}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); !allowed(under); {
		if time.Now().After(deadline) {
			t.Fatalf("IAM still does not allow %s's %s on %s under %s two minutes after the grant", user, action, instance, path)
		}
		time.Sleep(2 * time.Second)
	}
	if allowed(nil) {
		t.Errorf("IAM allows %s's %s on %s sent without its path: it does look paths up", user, action, instance)
	}

	cli := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	cli.SiteSecret()
	cli.Configure(e.Provider, fmt.Sprintf(`
data "bkiam_access_check" "host" {
  for_each  = { with_path = [%[5]q], without = null }
  system    = %[1]q
  subject   = { type = "user", id = %[2]q }
  actions   = [%[3]q]
  resources = [{ system = %[1]q, type = %[4]q, id = %[6]q, paths = each.value }]
}

output "answers" {
  value = { for k, c in data.bkiam_access_check.host : k => c.all_allowed == null ? "conditional: ${join(",", c.conditional)}" : tostring(c.all_allowed) }
}
`, p.System, user, action, p.Type, path, instance))
	out := strings.Join(strings.Fields(cli.MustRun("plan")), " ")
	for _, want := range []string{
		`with_path = "true"`,
		fmt.Sprintf(`without = "conditional: %s"`, action),
		fmt.Sprintf("IAM's answer for %s depends on what the configuration does not give", action),
		fmt.Sprintf("IAM answers false for user %s's %s, and the user's policy allows %s on some instances depending on the topology path of %s/%s/%s, "+
			"which resources[0].paths does not give", user, action, action, p.System, p.Type, instance),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan does not show %q:\n%s", want, out)
		}
	}
}
