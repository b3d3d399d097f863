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

// TestAccRollingExpiryRenewsInTheWindow: a grant of 450 hosts for two
// actions with expires_in = "1h" and renew_before = "59m50s". The create
// records expires_at about an hour on, and IAM holds it; the plans before
// the window are empty. Ten seconds on, inside the window, a plan (saved,
// then applied, so the date must be the same in the plan and the apply's
// own plan) renews it to the recorded date plus an hour and says so; the
// apply sends one grant, of one instance for both actions, which raises
// their whole policies, and revokes nothing; the plan after is empty, with
// -refresh=false too. A shorter expires_in warns that the apply lowers the
// expiry by revoking and granting again, and does.
func TestAccRollingExpiryRenewsInTheWindow(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	calls := acctest.NewCallCounter(sb)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	ids := sandboxtest.IDRange(0, 450)
	config := func(expiresIn, renewBefore string) string {
		return strings.Replace(acctest.HostGrant{Actions: []string{"edit_host", "view_host"}, Ids: ids}.Config(""),
			"\n}\n", fmt.Sprintf("\n  expires_in   = %q\n  renew_before = %q\n}\n", expiresIn, renewBefore), 1) +
			"\noutput \"expires_at\" {\n  value = bkiam_instance_grant.test.expires_at\n}\n"
	}
	expiresAt := func() time.Time {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(w.Dir, "terraform.tfstate"))
		if err != nil {
			t.Fatal(err)
		}
		var state struct {
			Outputs map[string]struct{ Value string } `json:"outputs"`
		}
		if err := json.Unmarshal(raw, &state); err != nil {
			t.Fatal(err)
		}
		at, err := time.Parse(time.RFC3339, state.Outputs["expires_at"].Value)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	held := func() int64 {
		t.Helper()
		var at int64
		for _, p := range sb.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies {
			if at != 0 && p.ExpiredAt != at {
				t.Fatalf("alice's policies expire at %d and %d", at, p.ExpiredAt)
			}
			at = p.ExpiredAt
		}
		return at
	}

	w.Configure(provider, config("1h", "59m50s"))
	before := time.Now()
	w.MustRun("apply", "-auto-approve")
	created := expiresAt()
	if lo, hi := before.Add(time.Hour).Add(-time.Second), time.Now().Add(time.Hour); created.Before(lo) || created.After(hi) {
		t.Fatalf("the create recorded expires_at %s, want an hour after the apply (%s to %s)", created, lo, hi)
	}
	if held() != created.Unix() {
		t.Fatalf("IAM holds expiry %d, state %s", held(), created)
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan before the renewal window is not empty")
	}

	time.Sleep(time.Until(created.Add(-time.Hour + 11*time.Second)))
	calls.SinceLast()
	renewed := created.Add(time.Hour)
	out := strings.Join(strings.Fields(w.MustRun("plan", "-out=renew.tfplan")), " ")
	for _, want := range []string{
		"Renewing the grant",
		fmt.Sprintf("or will be within 5s: the apply renews user alice's edit_host, view_host on 450 bk_cmdb/host instances, from %s "+
			"until %s, the recorded expiry plus expires_in (1h); an apply after %s renews it a period further. It sends one grant "+
			"of one of them: IAM raises the expiry of everything a policy holds on any grant into it.",
			created.Format(time.RFC3339), renewed.Format(time.RFC3339), renewed.Add(-3595*time.Second).Format(time.RFC3339)),
		fmt.Sprintf(`~ expires_at = "%s" -> (known after apply)`, created.Format(time.RFC3339)),
		"1 to change",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan in the window does not say %q:\n%s", want, out)
		}
	}
	time.Sleep(time.Second) // the apply's own plan, a second later, must agree
	w.MustRun("apply", "renew.tfplan")
	if got := calls.SinceLast(); got["batch_instance:grant"] != 1 || got["batch_instance:revoke"] != 0 {
		t.Errorf("the renewal sent %v, want 1 grant and no revoke", got)
	}
	if got := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice"); len(got["edit_host"]) != len(ids) || len(got["view_host"]) != len(ids) {
		t.Errorf("after the renewal alice holds %d and %d hosts, want %d of each", len(got["edit_host"]), len(got["view_host"]), len(ids))
	}
	if got := expiresAt(); !got.Equal(renewed) || held() != renewed.Unix() {
		t.Errorf("after the renewal state says %s and IAM holds %d, want %s", got, held(), renewed)
	}
	for _, args := range [][]string{{"plan", "-detailed-exitcode"}, {"plan", "-detailed-exitcode", "-refresh=false"}} {
		if out, code := w.Run(args...); code != 0 {
			t.Errorf("terraform %s after the renewal exited %d, want an empty plan:\n%s", strings.Join(args, " "), code, out)
		}
	}

	// A shorter expires_in: lowered by revoking and granting again.
	w.Configure(provider, config("30m", "10m"))
	out = strings.Join(strings.Fields(w.MustRun("plan")), " ")
	if want := "Expiry lowered by revoking and granting again"; !strings.Contains(out, want) {
		t.Errorf("a shorter expires_in does not warn %q:\n%s", want, out)
	}
	calls.SinceLast()
	w.MustRun("apply", "-auto-approve")
	if got := calls.SinceLast(); got["batch_instance:revoke"] == 0 {
		t.Errorf("the lowering sent %v, want a revoke before the grants", got)
	}
	if got := expiresAt(); got.After(time.Now().Add(30*time.Minute)) || held() != got.Unix() {
		t.Errorf("after the lowering state says %s and IAM holds %d", got, held())
	}
	if !w.PlanIsEmpty() {
		t.Error("the plan after the lowering is not empty")
	}
}

// TestAccExpiresAtRemovedMeansPermanent: removing expires_at from a grant
// makes it permanent, as the docs say, whatever else changes. expires_at
// is computed (a rolling expiry records its date there), so Terraform
// proposes the recorded date when the configuration drops it, and the
// plan used to be empty: the grant then lapsed on the date the
// configuration no longer named. Now the plan shows expires_at going to
// null, with or without refresh, the apply makes IAM's policy permanent,
// and the plan after is empty.
func TestAccExpiresAtRemovedMeansPermanent(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	nextWeek := time.Now().Add(7 * 24 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	config := func(expiry string) string {
		return fmt.Sprintf(`
resource "bkiam_instance_grant" "alice" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
%s}
`, expiry)
	}
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	w.Configure(provider, config(fmt.Sprintf("  expires_at = %q\n", nextWeek)))
	w.MustRun("apply", "-auto-approve")
	w.Configure(provider, config(""))
	for _, args := range [][]string{{"plan"}, {"plan", "-refresh=false"}} {
		out := strings.Join(strings.Fields(w.MustRun(args...)), " ")
		if !strings.Contains(out, fmt.Sprintf("- expires_at = %q -> null", nextWeek)) || !strings.Contains(out, "1 to change") {
			t.Errorf("terraform %s after expires_at was removed does not plan it permanent:\n%s", strings.Join(args, " "), out)
		}
	}
	w.MustRun("apply", "-auto-approve")
	for _, p := range sb.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies {
		if p.ExpiredAt != bkiam.PermanentExpiry {
			t.Errorf("after the apply alice's %s expires at %d, want permanent", p.Action, p.ExpiredAt)
		}
	}
	if !w.PlanIsEmpty() {
		t.Error("the plan after the apply is not empty")
	}
}
