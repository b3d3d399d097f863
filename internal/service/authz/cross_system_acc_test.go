package authz_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// The expiry check and the creator grants on the systems a real site
// runs (acctest.BlueKingSandbox): most bk_job actions relate to bk_cmdb's
// biz and host, resource types of another system, which IAM's batch
// policy query refuses to answer without resources. Before issue 61 every
// plan of such a grant said "Cannot read the expiry IAM keeps" instead of
// what the grant does to IAM's expiry, and failed with expiry_conflicts =
// "error".

// cannotRead is the warning of an expiry check that could not read IAM.
const cannotRead = "Cannot read the expiry IAM keeps"

// errorMode is provider with expiry_conflicts = "error".
func errorMode(provider string) string {
	return strings.Replace(provider, "provider \"bkiam\" {\n", "provider \"bkiam\" {\n  expiry_conflicts = \"error\"\n", 1)
}

// TestAccCrossSystem_planTimeValidation: on the BlueKing model, a
// resource of bk_cmdb's type written under bk_job's system (access_business
// on "bk_job"/"biz", execute_script's host under bk_job), and a creator's
// ancestor so written, fail the plan before any call, saying that the
// entry goes under the system of its type; as does an ancestor type the
// system has not, with the types it has above the instance's.
func TestAccCrossSystem_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := acctest.BlueKingSandbox(t)
	test := acctest.PlanTimeTest(t, acctest.Transports[acctest.GatewayTransport].Block(sb.URL), acctest.BlueKingModelCheckCases())
	test.CheckDestroy = func(*terraform.State) error {
		if n := acctest.IAMCalls(sb); n != 0 {
			return fmt.Errorf("refused plans sent %d requests besides model reads: %v", n, sb.Stats().Requests)
		}
		return nil
	}
	resource.Test(t, test)
}

// TestAccExpiryCheckCrossSystem: the plan's expiry check on bk_job's
// actions scoped to bk_cmdb's types. Outside Terraform, until next week:
// alice holds access_business (bk_job, on bk_cmdb's biz) on business 3;
// bob execute_script on bk_job's script s9 with bk_cmdb's host 9 (a
// combined resource of two systems); carol quick_execute_script on every
// host under business 3 (batch_path, a topology grant). Permanent grants
// of business 2, of (s1, host 1) and of host 1 raise each expiry: the plan
// says so of each, naming the other business, the other combination and
// the path, and never that it cannot read IAM; IAM refuses none of its
// queries. With expiry_conflicts = "error" the plan fails on the three
// and sends IAM nothing. The apply grants each resource's instances under
// their own system, and a plan with detect_drift then reads them back
// unchanged.
func TestAccExpiryCheckCrossSystem(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := acctest.BlueKingSandbox(t)
	c := acctest.OutsideClient(t, sb)
	nextWeek := time.Now().Add(7 * 24 * time.Hour).UTC().Truncate(time.Second)
	acctest.GrantOutside(t, c, "bk_job", "alice", "access_business", nextWeek.Unix(), acctest.Instances("bk_cmdb", "biz", "3"))
	acctest.GrantOutside(t, c, "bk_job", "bob", "execute_script", nextWeek.Unix(),
		acctest.Instances("bk_job", "script", "s9"), acctest.Instances("bk_cmdb", "host", "9"))
	if _, err := c.BatchPath(context.Background(), bkiam.BatchPathRequest{System: "bk_job", Operate: bkiam.OperationGrant,
		ExpiredAt: nextWeek.Unix(), Subject: bkiam.Subject{Type: bkiam.SubjectUser, ID: "carol"},
		Actions: []bkiam.Action{{ID: "quick_execute_script"}}, Resources: acctest.Under("bk_cmdb", "host", acctest.Biz("3"))}); err != nil {
		t.Fatal(err)
	}
	const config = `
resource "bkiam_instance_grant" "alice" {
  system    = "bk_job"
  subject   = { type = "user", id = "alice" }
  actions   = ["access_business"]
  resources = [{ system = "bk_cmdb", type = "biz", instances = { "2" = "biz2" } }]
}

resource "bkiam_instance_grant" "bob" {
  system  = "bk_job"
  subject = { type = "user", id = "bob" }
  actions = ["execute_script"]
  resources = [
    { system = "bk_job", type = "script", instances = { "s1" = "s1" } },
    { system = "bk_cmdb", type = "host", instances = { "1" = "host1" } },
  ]
}

resource "bkiam_instance_grant" "carol" {
  system    = "bk_job"
  subject   = { type = "user", id = "carol" }
  actions   = ["quick_execute_script"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
}
`
	const raised = "Expiry raised beyond this grant"
	until := nextWeek.Format(time.RFC3339)
	want := map[string]string{
		"bkiam_instance_grant.alice": "user alice's access_business on 1 bk_cmdb/biz instances this resource does not manage (3), expiring " + until +
			", becomes permanent.",
		"bkiam_instance_grant.bob":   "user bob's execute_script on script s9 and host 9, expiring " + until + ", becomes permanent.",
		"bkiam_instance_grant.carol": "user carol's quick_execute_script on host under /biz,3/, expiring " + until + ", becomes permanent.",
	}
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))

	w.Configure(errorMode(provider), config)
	writes := acctest.IAMWrites(sb)
	diags, code := w.Diagnostics("plan")
	for address, detail := range want {
		if got := acctest.DiagnosticsAbout(diags, raised, address); !strings.Contains(got, "error: ") || !strings.Contains(got, detail) ||
			!strings.HasSuffix(got, `The plan fails because the provider sets expiry_conflicts = "error".`) {
			t.Errorf("with expiry_conflicts = \"error\" the plan does not fail on %s with %q: %q", address, detail, got)
		}
	}
	if code == 0 || acctest.IAMWrites(sb) != writes {
		t.Errorf("with expiry_conflicts = \"error\" the plan exited %d and sent %d writes, want a failure and none: %v",
			code, acctest.IAMWrites(sb)-writes, diags)
	}

	w.Configure(provider, config)
	refused := sb.Stats().Errors
	diags, code = w.Diagnostics("plan")
	if code != 0 {
		t.Fatalf("the plan exited %d: %v", code, diags)
	}
	for address, detail := range want {
		if got := acctest.DiagnosticsAbout(diags, raised, address); !strings.Contains(got, "warning: ") || !strings.Contains(got, detail) {
			t.Errorf("the plan does not warn of %s %q: it says %q", address, detail, got)
		}
		if got := acctest.DiagnosticsAbout(diags, cannotRead, address); got != "" {
			t.Errorf("the plan says of %s %q: %s", address, cannotRead, got)
		}
	}
	if n := sb.Stats().Errors - refused; n != 0 {
		t.Errorf("IAM refused %d of the plan's calls, want none (%v)", n, sb.Stats().Requests)
	}

	w.MustRun("apply", "-auto-approve")
	held := map[string]map[string][]string{}
	for _, user := range []string{"alice", "bob", "carol"} {
		held[user] = sandboxtest.HeldPaths(sb, "bk_job", "user", user)
	}
	wantHeld := map[string]map[string][]string{
		"alice": {"access_business": {"/bk_cmdb,biz,2/", "/bk_cmdb,biz,3/"}},
		"bob":   {"execute_script": {"/bk_cmdb,host,1/ & /bk_job,script,s1/", "/bk_cmdb,host,9/ & /bk_job,script,s9/"}},
		"carol": {"quick_execute_script": {"/bk_cmdb,biz,3/bk_cmdb,host,*/", "/bk_cmdb,host,1/"}},
	}
	if !reflect.DeepEqual(held, wantHeld) {
		t.Errorf("after the apply IAM holds %v, want %v", held, wantHeld)
	}
	w.Configure(acctest.DriftProvider(sb, ""), config)
	if out := w.MustRun("plan"); !strings.Contains(out, "No changes") || strings.Contains(out, "Warning: Grants revoked outside Terraform") {
		t.Errorf("with detect_drift the plan after the apply does not read the grants back unchanged:\n%s", out)
	}
}

// TestAccCreatorGrantCrossSystem: a creator of a bk_job script, whose
// parent is bk_cmdb's business (the script's key names the ancestor by
// its own system, /bk_cmdb,biz,2/bk_job,script,s1/), beside the grant of
// access_business on that business that a script's author needs. dave
// holds, outside Terraform and until next week, view_script on script s7
// and access_business on business 3. The plan says that registering the
// creator makes view_script permanent (IAM grants creators permanently),
// naming s7, and that the grant of business 2 makes business 3 permanent;
// never that it cannot read IAM. With expiry_conflicts = "error" it fails
// on both and sends nothing. The apply registers the creator of s1 under
// business 2 (view_script and manage_script, the creator configuration of
// script); the plan after it, with detect_drift, changes nothing; the
// destroy revokes what the two resources granted and leaves s7 and
// business 3.
func TestAccCreatorGrantCrossSystem(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := acctest.BlueKingSandbox(t)
	c := acctest.OutsideClient(t, sb)
	nextWeek := time.Now().Add(7 * 24 * time.Hour).UTC().Truncate(time.Second)
	acctest.GrantOutside(t, c, "bk_job", "dave", "view_script", nextWeek.Unix(), acctest.Instances("bk_job", "script", "s7"))
	acctest.GrantOutside(t, c, "bk_job", "dave", "access_business", nextWeek.Unix(), acctest.Instances("bk_cmdb", "biz", "3"))
	const config = `
resource "bkiam_creator_grant" "script" {
  system    = "bk_job"
  type      = "script"
  creator   = "dave"
  instances = { "/bk_cmdb,biz,2/bk_job,script,s1/" = "deploy.sh" }
}

resource "bkiam_instance_grant" "business" {
  system    = "bk_job"
  subject   = { type = "user", id = "dave" }
  actions   = ["access_business"]
  resources = [{ system = "bk_cmdb", type = "biz", instances = { "2" = "蓝鲸" } }]
}
`
	until := nextWeek.Format(time.RFC3339)
	want := []struct{ summary, address, detail string }{
		{"Creator grant makes a policy permanent", "bkiam_creator_grant.script",
			"registering these instances makes user dave's view_script on 1 bk_job/script instances this resource does not manage (s7), expiring " +
				until + ", permanent."},
		{"Expiry raised beyond this grant", "bkiam_instance_grant.business",
			"user dave's access_business on 1 bk_cmdb/biz instances this resource does not manage (3), expiring " + until + ", becomes permanent."},
	}
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))

	w.Configure(errorMode(provider), config)
	writes := acctest.IAMWrites(sb)
	diags, code := w.Diagnostics("plan")
	for _, c := range want {
		if got := acctest.DiagnosticsAbout(diags, c.summary, c.address); !strings.Contains(got, "error: ") || !strings.Contains(got, c.detail) {
			t.Errorf("with expiry_conflicts = \"error\" the plan does not fail on %s with %q: %q", c.address, c.detail, got)
		}
	}
	if code == 0 || acctest.IAMWrites(sb) != writes {
		t.Errorf("with expiry_conflicts = \"error\" the plan exited %d and sent %d writes, want a failure and none: %v",
			code, acctest.IAMWrites(sb)-writes, diags)
	}

	w.Configure(provider, config)
	diags, code = w.Diagnostics("plan")
	if code != 0 {
		t.Fatalf("the plan exited %d: %v", code, diags)
	}
	for _, c := range want {
		if got := acctest.DiagnosticsAbout(diags, c.summary, c.address); !strings.Contains(got, "warning: ") || !strings.Contains(got, c.detail) {
			t.Errorf("the plan does not warn of %s %q: it says %q", c.address, c.detail, got)
		}
	}
	for _, d := range diags {
		if d.Summary == cannotRead {
			t.Errorf("the plan says %v", d)
		}
	}

	w.MustRun("apply", "-auto-approve")
	const s1 = "/bk_cmdb,biz,2/bk_job,script,s1/"
	wantHeld := map[string][]string{"view_script": {s1, "/bk_job,script,s7/"}, "manage_script": {s1},
		"access_business": {"/bk_cmdb,biz,2/", "/bk_cmdb,biz,3/"}}
	if held := sandboxtest.HeldPaths(sb, "bk_job", "user", "dave"); !reflect.DeepEqual(held, wantHeld) {
		t.Errorf("after the apply IAM holds %v, want %v", held, wantHeld)
	}
	w.Configure(acctest.DriftProvider(sb, ""), config)
	if out := w.MustRun("plan"); !strings.Contains(out, "No changes") {
		t.Errorf("with detect_drift the plan after the apply changes something:\n%s", out)
	}
	w.MustRun("destroy", "-auto-approve")
	wantHeld = map[string][]string{"view_script": {"/bk_job,script,s7/"}, "access_business": {"/bk_cmdb,biz,3/"}}
	if held := sandboxtest.HeldPaths(sb, "bk_job", "user", "dave"); !reflect.DeepEqual(held, wantHeld) {
		t.Errorf("after the destroy IAM holds %v, want %v", held, wantHeld)
	}
}
