package authz_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccRefreshSaysIAMKeepsAnotherExpiry: IAM keeps one expiry per user
// and action and only raises it, so a grant made outside Terraform can
// make the configured expires_at meaningless. alice is granted view_host
// on host 1 until a date; a grant of host 2 made outside, permanent,
// makes her whole policy permanent. With detect_drift, the next plan says
// so, naming the action and both expiries, and changes nothing (recording
// IAM's expiry would plan a change whose apply lowers it by revoke and
// grant). Before the outside grant, no plan says it.
func TestAccRefreshSaysIAMKeepsAnotherExpiry(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	until := time.Now().Add(10 * 24 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.DriftProvider(sb, ""), fmt.Sprintf(`
resource "bkiam_instance_grant" "alice" {
  system     = "bk_cmdb"
  subject    = { type = "user", id = "alice" }
  actions    = ["view_host"]
  resources  = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
  expires_at = %q
}
`, until))
	w.MustRun("apply", "-auto-approve")
	const warning = "IAM keeps another expiry"
	if out := w.MustRun("plan"); strings.Contains(out, warning) || !strings.Contains(out, "No changes") {
		t.Fatalf("the plan after the apply is not quiet:\n%s", out)
	}

	changeOutside(t, sb, bkiam.OperationGrant, "alice", []string{"view_host"}, []string{"2"}, bkiam.PermanentExpiry)
	out := w.MustRun("plan")
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{warning, "user alice holds view_host permanent in IAM, recorded until " + until, "No changes"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan after IAM's expiry was raised outside does not say %q:\n%s", want, out)
		}
	}
}
