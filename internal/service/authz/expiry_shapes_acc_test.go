package authz_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// rawGrant posts a batch_instance grant as a script would, resources as
// given: IAM reads an empty instance list as every instance, which the
// provider's client refuses to send.
func rawGrant(t *testing.T, sb *sandboxtest.Sandbox, user, action, resources string, expiresAt int64) {
	t.Helper()
	acctest.ManagementCall(t, sb, "POST", "/api/v1/open/authorization/batch_instance/", fmt.Sprintf(
		`{"system":"bk_cmdb","operate":"grant","subject":{"type":"user","id":%q},"actions":[{"id":%q}],"resources":%s,"expired_at":%d}`,
		user, action, resources, expiresAt), nil)
}

// TestAccExpiryCheckSeesEveryShape: the plan's expiry check reads a
// policy as IAM holds it, in every shape the web UI, scripts and CMDB
// grant, and names what a grant changes the expiry of, or brings back:
//
//   - alice holds view_host on every host under business 1 until the day
//     after tomorrow (batch_path): a permanent grant of host 1 makes all
//     of them permanent;
//   - bob holds view_host on every host (an empty instance list) until
//     next week: the same;
//   - dave holds edit_biz_host on (biz 2, host 9) until next week: a
//     permanent grant of (biz 1, host 1) makes that pair permanent;
//   - dave holds delete_host on every host whose os is linux until next
//     week (an attribute condition, as the web UI grants it): a permanent
//     grant of host 5 makes it permanent;
//   - carol's view_host on host 7 and every host under business 3 expired
//     seconds ago (IAM keeps it a year): a grant of host 8 revives it all;
//   - dave holds bk_job's edit on job7 until next week: registering him as
//     the creator of job1, with actions = ["view"], makes it permanent
//     (IAM grants every creator action of the type, whatever actions says);
//   - alice holds bk_sops' mini_app_edit on every mini app under project2
//     until next week: registering her as the creator of a mini app under
//     project1 makes them permanent.
//
// Before issue 51 the check read ids only and the configured creator
// actions: it said nothing of any of these. With expiry_conflicts =
// "error" the plan fails on each, and sends IAM nothing.
func TestAccExpiryCheckSeesEveryShape(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	now := time.Now().UTC().Truncate(time.Second)
	dayAfter, nextWeek := now.Add(48*time.Hour), now.Add(7*24*time.Hour)
	acctest.GrantUnderOutside(t, acctest.OutsideClient(t, sb), "bk_cmdb", "alice", "view_host", "host", dayAfter.Unix(), acctest.Biz("1"))
	rawGrant(t, sb, "bob", "view_host", `[{"system":"bk_cmdb","type":"host","instances":[]}]`, nextWeek.Unix())
	rawGrant(t, sb, "dave", "edit_biz_host", `[{"system":"bk_cmdb","type":"biz","instances":[{"id":"2","name":"biz2"}]},`+
		`{"system":"bk_cmdb","type":"host","instances":[{"id":"9","name":"host9"}]}]`, nextWeek.Unix())
	expiring := time.Now().Add(3 * time.Second)
	acctest.GrantUnderOutside(t, acctest.OutsideClient(t, sb), "bk_cmdb", "carol", "view_host", "host", expiring.Unix(), acctest.Biz("3"))
	acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "carol", []string{"view_host"}, []string{"7"}, expiring.Unix())
	if _, err := acctest.OutsideClient(t, sb).BatchInstance(context.Background(), bkiam.BatchInstanceRequest{
		System: "bk_job", Operate: bkiam.OperationGrant, Subject: bkiam.Subject{Type: "user", ID: "dave"},
		Actions:   []bkiam.Action{{ID: "edit"}},
		Resources: []bkiam.InstanceResource{{System: "bk_job", Type: "job", Instances: []bkiam.Instance{{ID: "job7", Name: "job7"}}}},
		ExpiredAt: nextWeek.Unix(),
	}); err != nil {
		t.Fatal(err)
	}
	acctest.GrantUnderOutside(t, acctest.OutsideClient(t, sb), "bk_sops", "alice", "mini_app_edit", "mini_app", nextWeek.Unix(),
		bkiam.PathNode{System: "bk_sops", Type: "project", ID: "project2", Name: "Project Two"})
	// An attribute condition, as IAM's web UI grants one.
	if _, err := sb.AddExpressionPolicy("bk_cmdb", sandbox.ExpressionPolicy{Subject: sandbox.Subject{Type: "user", ID: "dave"},
		Action: "delete_host", Expression: json.RawMessage(`{"field":"host.os","op":"eq","value":"linux"}`), ExpiredAt: nextWeek.Unix()}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(expiring) + time.Second) // carol's policy has expired

	grant := func(name, user, action, resources string) string {
		return fmt.Sprintf(`
resource "bkiam_instance_grant" %q {
  system    = "bk_cmdb"
  subject   = { type = "user", id = %q }
  actions   = [%q]
  resources = %s
}
`, name, user, action, resources)
	}
	host := func(id string) string {
		return fmt.Sprintf(`[{ system = "bk_cmdb", type = "host", instances = { %q = "host%s" } }]`, id, id)
	}
	config := grant("alice", "alice", "view_host", host("1")) + grant("bob", "bob", "view_host", host("1")) +
		grant("dave", "dave", "edit_biz_host", `[{ system = "bk_cmdb", type = "biz", instances = { "1" = "biz1" } },
               { system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]`) +
		grant("carol", "carol", "view_host", host("8")) + grant("dave_delete", "dave", "delete_host", host("5")) + `
resource "bkiam_creator_grant" "dave" {
  system    = "bk_job"
  type      = "job"
  creator   = "dave"
  actions   = ["view"]
  instances = { "job1" = "job1" }
}

resource "bkiam_creator_grant" "alice" {
  system    = "bk_sops"
  type      = "mini_app"
  creator   = "alice"
  instances = { "/bk_sops,project,project1/bk_sops,mini_app,m1/" = "m1" }
}
`
	provider := func(extra string) string {
		return strings.Replace(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), "  max_retries = 2\n", "  max_retries = 2\n"+extra, 1)
	}
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(provider(""), config)
	diags, code := w.Diagnostics("plan")
	if code != 0 {
		t.Fatalf("the plan exited %d: %v", code, diags)
	}
	at := func(t time.Time) string { return t.Format(time.RFC3339) }
	for _, want := range []struct{ summary, address, detail string }{
		{"Expiry raised beyond this grant", "bkiam_instance_grant.alice",
			"user alice's view_host on host under /biz,1/, expiring " + at(dayAfter) + ", becomes permanent."},
		{"Expiry raised beyond this grant", "bkiam_instance_grant.bob",
			"user bob's view_host on every host, expiring " + at(nextWeek) + ", becomes permanent."},
		{"Expiry raised beyond this grant", "bkiam_instance_grant.dave",
			"user dave's edit_biz_host on biz 2 and host 9, expiring " + at(nextWeek) + ", becomes permanent."},
		{"Expiry raised beyond this grant", "bkiam_instance_grant.dave_delete",
			"user dave's delete_host on host.os eq linux, expiring " + at(nextWeek) + ", becomes permanent."},
		{"Grant revives an expired policy", "bkiam_instance_grant.carol",
			"user carol's view_host expired at " + at(time.Unix(expiring.Unix(), 0).UTC()) + ", and IAM keeps an expired policy (a year)"},
		{"Grant revives an expired policy", "bkiam_instance_grant.carol",
			"including what this resource does not grant: 1 bk_cmdb/host instances this resource does not manage (7); host under /biz,3/."},
		{"Creator grant makes a policy permanent", "bkiam_creator_grant.dave",
			"registering these instances makes user dave's edit on 1 bk_job/job instances this resource does not manage (job7), expiring " +
				at(nextWeek) + ", permanent."},
		{"Creator grant makes a policy permanent", "bkiam_creator_grant.alice",
			"registering these instances makes user alice's mini_app_edit on mini_app under /project,project2/, expiring " +
				at(nextWeek) + ", permanent."},
	} {
		if got := acctest.DiagnosticsAbout(diags, want.summary, want.address); !strings.Contains(got, want.detail) {
			t.Errorf("the plan does not say of %s %q: %q; it says %q", want.address, want.summary, want.detail, got)
		}
	}

	writes := acctest.IAMWrites(sb)
	w.Configure(provider("  expiry_conflicts = \"error\"\n"), config)
	diags, code = w.Diagnostics("plan")
	failed := map[string]bool{}
	for _, d := range diags {
		if d.Severity == "error" && strings.HasSuffix(d.Detail, `The plan fails because the provider sets expiry_conflicts = "error".`) {
			failed[d.Address] = true
		}
	}
	if code == 0 || len(failed) != 7 {
		t.Errorf("with expiry_conflicts = \"error\" the plan exited %d, failing on %v; want all seven resources: %v", code, failed, diags)
	}
	if n := acctest.IAMWrites(sb) - writes; n != 0 {
		t.Errorf("the refused plan sent %d writes: %v", n, sb.Stats().Requests)
	}
}

// TestAccExpiryLoweringBesideAPath: a lowered expires_at takes effect
// only when the policy holds nothing but what the grant revokes and
// grants again. bob's grant of edit_host on host 1 ends in a month; a
// script then grants him every host under business 1 (batch_path,
// permanent): lowering expires_at to ten days cannot take effect, and the
// plan says so, naming the path. Before issue 51 the check read ids only,
// judged that the lowering takes effect, and said nothing.
func TestAccExpiryLoweringBesideAPath(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	now := time.Now().UTC().Truncate(time.Second)
	month, tenDays := now.Add(30*24*time.Hour), now.Add(10*24*time.Hour)
	config := func(until time.Time) string {
		return fmt.Sprintf(`
resource "bkiam_instance_grant" "bob" {
  system     = "bk_cmdb"
  subject    = { type = "user", id = "bob" }
  actions    = ["edit_host"]
  resources  = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
  expires_at = %q
}
`, until.Format(time.RFC3339))
	}
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), config(month))
	w.MustRun("apply", "-auto-approve")
	// Alone in its policy, a lowering takes effect: no warning.
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), config(tenDays))
	if out := w.MustRun("plan"); strings.Contains(out, "Expiry cannot take effect") {
		t.Errorf("a lowering alone in its policy is said not to take effect:\n%s", out)
	}
	acctest.GrantUnderOutside(t, acctest.OutsideClient(t, sb), "bk_cmdb", "bob", "edit_host", "host", bkiam.PermanentExpiry,
		acctest.Biz("1"))
	out := strings.Join(strings.Fields(w.MustRun("plan")), " ")
	for _, want := range []string{
		"Warning: Expiry cannot take effect",
		"user bob already holds edit_host permanent in IAM",
		"The policy also holds what this resource does not grant: host under /biz,1/.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan lowering beside a path grant does not say %q:\n%s", want, out)
		}
	}
}

// TestAccExpiryCreatorBesideGrant: a creator grant makes every action of
// the type's creator configuration permanent, whichever it names, so an
// instance grant of another of them with an expiry, in the same
// configuration, never expires: the plan says so before anything is
// granted (with expiry_conflicts = "error" it fails, and sends nothing).
// Before issue 51 neither resource saw the other (the creator grant
// claimed only view), and with expiry_conflicts = "error" the apply of
// the instance grant, re-planned after the creator grant's write, failed
// half way where its plan had passed.
func TestAccExpiryCreatorBesideGrant(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	nextWeek := time.Now().Add(7 * 24 * time.Hour).UTC().Truncate(time.Second)
	config := fmt.Sprintf(`
resource "bkiam_creator_grant" "dave" {
  system    = "bk_job"
  type      = "job"
  creator   = "dave"
  actions   = ["view"]
  instances = { "job1" = "job1" }
}

resource "bkiam_instance_grant" "dave" {
  system     = "bk_job"
  subject    = { type = "user", id = "dave" }
  actions    = ["edit"]
  resources  = [{ system = "bk_job", type = "job", instances = { "job5" = "job5" } }]
  expires_at = %q
  depends_on = [bkiam_creator_grant.dave]
}
`, nextWeek.Format(time.RFC3339))
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.DriftProvider(sb, "  expiry_conflicts = \"error\"\n"), config)
	out, code := w.Run("apply", "-auto-approve")
	out = strings.Join(strings.Fields(out), " ")
	if code == 0 || !strings.Contains(out, "Error: One expiry per subject and action") ||
		!strings.Contains(out, "edit: "+nextWeek.Format(time.RFC3339)+` here, permanent in bkiam_creator_grant "bk_job/job/dave"`) {
		t.Errorf("with expiry_conflicts = \"error\" the plan did not fail on the creator grant's permanent edit (exit %d):\n%s", code, out)
	}
	if n := acctest.IAMWrites(sb); n != 0 {
		t.Errorf("the refused apply sent %d writes: %v", n, sb.Stats().Requests)
	}
	w.Configure(acctest.DriftProvider(sb, ""), config)
	out = strings.Join(strings.Fields(w.MustRun("apply", "-auto-approve")), " ")
	if !strings.Contains(out, "Warning: One expiry per subject and action") {
		t.Errorf("the apply does not warn that the creator grant makes edit permanent:\n%s", out)
	}
}
