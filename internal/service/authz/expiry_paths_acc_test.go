package authz_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccExpiryCheckOffTheMainPath: the expiry check tells what a grant
// does to IAM's one expiry on every path a CLI takes, not only a plain
// plan. alice's grant of host 1 until next week is in state, and she holds
// view_host on every host under business 1 until the day after tomorrow
// (granted outside, so IAM's one policy expires next week); moving her
// grant to next month moves the path grant with it, which a plan without
// refresh (detect_drift's scans then are not there to reuse), a targeted
// plan and a plan that also replaces the grant each say. A plan saved
// while carol held nothing, applied after an outside grant by topology
// gave her something that expires, says it at apply; with expiry_conflicts
// = "error" that apply fails and sends IAM nothing.
func TestAccExpiryCheckOffTheMainPath(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	outside := acctest.OutsideClient(t, sb)
	dayAfter := time.Now().Add(48 * time.Hour).Unix()
	nextWeek := time.Now().Add(7 * 24 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	nextMonth := time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	// grant is user's grant of view_host on host 1, until expiresAt ("":
	// permanent).
	grant := func(user, expiresAt string) string {
		expiry := ""
		if expiresAt != "" {
			expiry = fmt.Sprintf("  expires_at = %q\n", expiresAt)
		}
		return fmt.Sprintf(`
resource "bkiam_instance_grant" %[1]q {
  system    = "bk_cmdb"
  subject   = { type = "user", id = %[1]q }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
%[2]s}
`, user, expiry)
	}
	const raised = "Expiry raised beyond this grant"
	says := func(what, out, user string) {
		t.Helper()
		out = strings.Join(strings.Fields(out), " ")
		if !strings.Contains(out, raised) || !strings.Contains(out, "user "+user+"'s view_host on host under /biz,1/") {
			t.Errorf("%s does not say %q of %s's grant by topology:\n%s", what, raised, user, out)
		}
	}

	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	provider := acctest.DriftProvider(sb, "")
	w.Configure(provider, grant("alice", nextWeek)+grant("bob", ""))
	w.MustRun("apply", "-auto-approve")
	acctest.GrantUnderOutside(t, outside, "bk_cmdb", "alice", "view_host", "host", dayAfter, acctest.Biz("1"))
	w.Configure(provider, grant("alice", nextMonth)+grant("bob", ""))
	says("a plan without refresh", w.MustRun("plan", "-refresh=false"), "alice")
	says("a targeted plan", w.MustRun("plan", "-target=bkiam_instance_grant.alice"), "alice")
	says("a plan replacing the grant", w.MustRun("plan", "-replace=bkiam_instance_grant.alice"), "alice")

	for _, mode := range []string{"warn", "error"} {
		t.Run(mode, func(t *testing.T) {
			sb := sandboxtest.Start(t)
			w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
			w.Configure(acctest.DriftProvider(sb, fmt.Sprintf("  expiry_conflicts = %q\n", mode)), grant("carol", ""))
			if out := w.MustRun("plan", "-out=carol.tfplan"); strings.Contains(out, raised) {
				t.Fatalf("carol holds nothing, yet the plan says %q:\n%s", raised, out)
			}
			acctest.GrantUnderOutside(t, acctest.OutsideClient(t, sb), "bk_cmdb", "carol", "view_host", "host", dayAfter, acctest.Biz("1"))
			before := acctest.IAMWrites(sb)
			out, code := w.Run("apply", "carol.tfplan")
			says("the saved plan's apply after the outside grant", out, "carol")
			held := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "carol")
			switch {
			case mode == "warn" && (code != 0 || acctest.IAMWrites(sb) == before):
				t.Errorf("in warn mode the apply did not grant (exit %d, held %v):\n%s", code, held, out)
			case mode == "error" && (code == 0 || acctest.IAMWrites(sb) != before):
				t.Errorf("in error mode the apply did not fail before writing (exit %d, %d writes, held %v):\n%s",
					code, acctest.IAMWrites(sb)-before, held, out)
			}
			if mode == "error" && !strings.Contains(out, "Error: "+raised) {
				t.Errorf("in error mode the apply's %q is not an error:\n%s", raised, out)
			}
		})
	}
}
