package authz_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// rollingHosts is a workspace with one rolling grant of hosts to alice
// (expires_in "1h", renew_before "59m40s": the window opens 20 seconds
// after the create, and a plan renews from 10 seconds, the margin, on).
type rollingHosts struct {
	t        *testing.T
	sb       *sandboxtest.Sandbox
	w        *acctest.CLIWorkspace
	provider string
}

func newRollingHosts(t *testing.T) *rollingHosts {
	sb := sandboxtest.Start(t)
	return &rollingHosts{t: t, sb: sb, w: acctest.NewCLIWorkspace(t, testutil.BuildProvider(t)),
		provider: acctest.Transports[acctest.GatewayTransport].Block(sb.URL)}
}

// configure grants hosts 0 to n−1.
func (r *rollingHosts) configure(n int) {
	r.w.Configure(r.provider, strings.Replace(acctest.HostGrant{Actions: []string{"view_host"}, Ids: sandboxtest.IDRange(0, n)}.Config(""),
		"\n}\n", "\n  expires_in   = \"1h\"\n  renew_before = \"59m40s\"\n}\n", 1)+
		"\noutput \"expires_at\" {\n  value = bkiam_instance_grant.test.expires_at\n}\n")
}

// create applies the grant of hosts 0 to n−1 and returns the expires_at
// it records.
func (r *rollingHosts) create(n int) time.Time {
	r.t.Helper()
	r.configure(n)
	r.w.MustRun("apply", "-auto-approve")
	return r.recorded()
}

// recorded is the expires_at the state records.
func (r *rollingHosts) recorded() time.Time {
	r.t.Helper()
	raw, err := os.ReadFile(filepath.Join(r.w.Dir, "terraform.tfstate"))
	if err != nil {
		r.t.Fatal(err)
	}
	var state struct {
		Outputs map[string]struct{ Value string } `json:"outputs"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		r.t.Fatal(err)
	}
	at, err := time.Parse(time.RFC3339, state.Outputs["expires_at"].Value)
	if err != nil {
		r.t.Fatal(err)
	}
	return at
}

// expectHeld fails unless alice's view_host holds n hosts until at.
func (r *rollingHosts) expectHeld(what string, n int, at time.Time) {
	r.t.Helper()
	policies := r.sb.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies
	if len(policies) != 1 || policies[0].ExpiredAt != at.Unix() || len(policies[0].Paths) != n {
		r.t.Fatalf("after %s alice holds %+v, want one policy of %d hosts until %s", what, policies, n, at.Format(time.RFC3339))
	}
}

// TestAccRollingSavedPlanAcrossTheWindow: a plan saved for review just
// before the renewal window opens, which adds a host, is applied after it
// opened (the apply plans again, later, and Terraform requires both plans
// to agree). It succeeds, renews the grant in the same apply, and the
// next plan is empty. Both plans go by the time the state was read; by
// the clock, the apply's plan used to renew what the saved plan kept, and
// Terraform stopped with "Provider produced inconsistent final plan".
func TestAccRollingSavedPlanAcrossTheWindow(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	r := newRollingHosts(t)
	created := r.create(3)

	r.configure(4)
	time.Sleep(time.Until(created.Add(-3590*time.Second + time.Second))) // in the margin, before the window
	out := strings.Join(strings.Fields(r.w.MustRun("plan", "-out=review.tfplan")), " ")
	for _, want := range []string{"Renewing the grant", "(known after apply)", "1 to change"} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan saved before the window does not say %q:\n%s", want, out)
		}
	}
	time.Sleep(time.Until(created.Add(-3580*time.Second + 2*time.Second))) // the window is open
	r.w.MustRun("apply", "review.tfplan")
	renewed := created.Add(time.Hour)
	if got := r.recorded(); !got.Equal(renewed) {
		t.Errorf("after the apply state records expires_at %s, want %s", got, renewed)
	}
	r.expectHeld("the apply", 4, renewed)
	if !r.w.PlanIsEmpty() {
		t.Error("the plan after the saved plan's apply is not empty")
	}
}

// TestAccRollingSavedPlanOlderThanTheMargin: a plan saved right after the
// create, long before the window (more than the margin), which adds a
// host, is applied after the window opened. It succeeds and adds the host
// at the recorded expiry: the plan did not renew, and its apply keeps to
// it. The next plan renews.
func TestAccRollingSavedPlanOlderThanTheMargin(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	r := newRollingHosts(t)
	created := r.create(3)

	r.configure(4)
	out := strings.Join(strings.Fields(r.w.MustRun("plan", "-out=review.tfplan")), " ")
	if strings.Contains(out, "Renewing") || strings.Contains(out, "expires_at") {
		t.Errorf("the plan saved before the margin renews:\n%s", out)
	}
	time.Sleep(time.Until(created.Add(-3580*time.Second + 2*time.Second))) // the window is open
	r.w.MustRun("apply", "review.tfplan")
	if got := r.recorded(); !got.Equal(created) {
		t.Errorf("after the apply state records expires_at %s, want the recorded %s", got, created)
	}
	r.expectHeld("the apply", 4, created)

	out = strings.Join(strings.Fields(r.w.MustRun("plan")), " ")
	if want := fmt.Sprintf(`~ expires_at = "%s" -> (known after apply)`, created.Format(time.RFC3339)); !strings.Contains(out, want) {
		t.Fatalf("the plan after the window opened does not renew (%q):\n%s", want, out)
	}
	r.w.MustRun("apply", "-auto-approve")
	r.expectHeld("the renewal", 4, created.Add(time.Hour))
	if !r.w.PlanIsEmpty() {
		t.Error("the plan after the renewal is not empty")
	}
}

// TestAccRollingGrantRenewedInIAMKept: with detect_drift, a rolling
// grant whose policy IAM raised outside Terraform (a grant of the same
// action with a later expiry, as a renewal in the web UI is) reads the
// later expiry as its expires_at, says so, and plans nothing; an apply of
// another change leaves IAM's later expiry as it is.
func TestAccRollingGrantRenewedInIAMKept(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	r := newRollingHosts(t)
	r.provider = acctest.DriftProvider(r.sb, "")
	created := r.create(3)

	later := created.Add(30 * 24 * time.Hour)
	acctest.ChangeHostsOutside(t, r.sb, bkiam.OperationGrant, "alice", []string{"view_host"}, []string{"0"}, later.Unix())
	out := strings.Join(strings.Fields(r.w.MustRun("plan")), " ")
	if want := fmt.Sprintf("IAM keeps user alice's view_host until %s, later than the recorded expires_at %s.",
		later.Format(time.RFC3339), created.Format(time.RFC3339)); !strings.Contains(out, want) {
		t.Errorf("the plan after a renewal in IAM does not say %q:\n%s", want, out)
	}
	r.configure(4)
	r.w.MustRun("apply", "-auto-approve")
	r.expectHeld("an apply of another change", 4, later)
	if got := r.recorded(); !got.Equal(later) {
		t.Errorf("state records expires_at %s, want IAM's %s", got, later)
	}
	if !r.w.PlanIsEmpty() {
		t.Error("the plan after the apply is not empty")
	}
}

// TestAccRenewalSaysWhatElseItRaises: a renewal is a grant with a later
// expiry, which IAM gives everything the policy holds. Beside alice's
// rolling grant of hosts, her view_host under business 1, granted
// outside Terraform by topology with an earlier expiry, is in the same
// policy: the plan that renews says that grant's expiry is raised with
// it, as the expiry check says of any grant.
func TestAccRenewalSaysWhatElseItRaises(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	r := newRollingHosts(t)
	created := r.create(3)
	acctest.GrantUnderOutside(t, acctest.OutsideClient(t, r.sb), "bk_cmdb", "alice", "view_host", "host",
		created.Add(-30*time.Minute).Unix(), acctest.Biz("1"))
	time.Sleep(time.Until(created.Add(-3590*time.Second + time.Second))) // the margin: the plan renews
	out := strings.Join(strings.Fields(r.w.MustRun("plan")), " ")
	for _, want := range []string{"Renewing the grant", "host under /biz,1/"} {
		if !strings.Contains(out, want) {
			t.Errorf("the renewing plan does not say %q:\n%s", want, out)
		}
	}
}
