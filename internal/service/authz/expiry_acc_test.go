package authz_test

import (
	"context"
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

	acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "alice", []string{"view_host"}, []string{"2"}, bkiam.PermanentExpiry)
	out := w.MustRun("plan")
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{warning, "user alice holds view_host permanent in IAM, recorded until " + until, "No changes"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan after IAM's expiry was raised outside does not say %q:\n%s", want, out)
		}
	}
}

// TestAccExpiredGrantReadBack: with detect_drift, the warning on a user
// grant whose expires_at has passed says for certain what IAM still
// holds. carol's grant expired and nothing else keeps her policy: IAM
// holds none of it. alice's expired too, but a grant made outside, of
// another host and permanent, keeps her view_host policy alive (one
// expiry per user and action): the warning says IAM still holds it, and
// until when. Neither plans a change.
func TestAccExpiredGrantReadBack(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	expires := time.Now().Add(6 * time.Second).UTC().Truncate(time.Second)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	grant := func(user, host string) string {
		return fmt.Sprintf(`
resource "bkiam_instance_grant" %[1]q {
  system     = "bk_cmdb"
  subject    = { type = "user", id = %[1]q }
  actions    = ["view_host"]
  resources  = [{ system = "bk_cmdb", type = "host", instances = { %[2]q = "host%[2]s" } }]
  expires_at = %[3]q
}
`, user, host, expires.Format(time.RFC3339))
	}
	w.Configure(acctest.DriftProvider(sb, ""), grant("alice", "1")+grant("carol", "3"))
	w.MustRun("apply", "-auto-approve")
	acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "alice", []string{"view_host"}, []string{"2"}, bkiam.PermanentExpiry)
	time.Sleep(time.Until(expires) + time.Second)

	out := strings.Join(strings.Fields(w.MustRun("plan")), " ")
	for _, want := range []string{
		"Grant expired, but IAM still holds it",
		"The grant of view_host to user alice in bk_cmdb expired at " + expires.Format(time.RFC3339) + ". IAM still holds it",
		"view_host (permanent)",
		"The grant of view_host to user carol in bk_cmdb expired at " + expires.Format(time.RFC3339) + ". IAM no longer holds any of it (read back with detect_drift)",
		"No changes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan after the grants expired does not say %q:\n%s", want, out)
		}
	}
}

// TestAccPlanSaysWhatAGrantDoesToIAMsExpiry: a plan that grants tells
// what the grant does to the one expiry IAM keeps per user and action,
// with detect_drift (from the refresh's scans) and without it (from scans
// of its own). alice holds view_host on host 9 until next week (granted
// outside); a grant of host 1 with the default, permanent, makes host 9
// permanent: the plan says so, naming host 9 and both expiries. carol
// holds view_host permanently (host 90, outside); a grant of host 91
// until next week cannot end sooner: the plan says so. dave holds edit on
// job 7 until next week; registering him as the creator of job 1 makes
// it permanent (IAM grants creators permanently). With expiry_conflicts =
// "error", the same plan fails on all three. Without detect_drift the
// plan asks IAM about each user once and reads what each holds by id,
// and the list only of an action a user holds nothing of (what a grant
// would revive); the plan after the apply, which grants nothing, reads
// none and says nothing.
func TestAccPlanSaysWhatAGrantDoesToIAMsExpiry(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	for _, drift := range []bool{true, false} {
		t.Run(fmt.Sprintf("detect_drift=%t", drift), func(t *testing.T) {
			acctest.Parallel(t)
			sb := sandboxtest.Start(t)
			calls := acctest.NewCallCounter(sb)
			nextWeek := time.Now().Add(7 * 24 * time.Hour).UTC().Truncate(time.Second)
			acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "alice", []string{"view_host"}, []string{"9"}, nextWeek.Unix())
			acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "carol", []string{"view_host"}, []string{"90"}, bkiam.PermanentExpiry)
			if _, err := acctest.OutsideClient(t, sb).BatchInstance(context.Background(), bkiam.BatchInstanceRequest{
				System: "bk_job", Operate: bkiam.OperationGrant, Subject: bkiam.Subject{Type: "user", ID: "dave"},
				Actions:   []bkiam.Action{{ID: "edit"}},
				Resources: []bkiam.InstanceResource{{System: "bk_job", Type: "job", Instances: []bkiam.Instance{{ID: "job7", Name: "job7"}}}},
				ExpiredAt: nextWeek.Unix(),
			}); err != nil {
				t.Fatal(err)
			}
			provider := func(extra string) string {
				if drift {
					return acctest.DriftProvider(sb, extra)
				}
				return strings.Replace(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), "  max_retries = 2\n",
					"  max_retries = 2\n"+extra, 1)
			}
			w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
			grants := fmt.Sprintf(`
resource "bkiam_instance_grant" "alice" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
}

resource "bkiam_instance_grant" "carol" {
  system     = "bk_cmdb"
  subject    = { type = "user", id = "carol" }
  actions    = ["view_host"]
  resources  = [{ system = "bk_cmdb", type = "host", instances = { "91" = "host91" } }]
  expires_at = %q
}

resource "bkiam_creator_grant" "dave" {
  system    = "bk_job"
  type      = "job"
  creator   = "dave"
  instances = { "job1" = "job1" }
}
`, nextWeek.Format(time.RFC3339))

			// With expiry_conflicts = "error", the same plan fails on all three.
			w.Configure(provider("  expiry_conflicts = \"error\"\n"), grants)
			failed, code := w.Run("plan")
			failed = strings.Join(strings.Fields(failed), " ")
			if code == 0 || strings.Count(failed, `The plan fails because the provider sets expiry_conflicts = "error".`) != 3 ||
				!strings.Contains(failed, "Error: Expiry raised beyond this grant") || !strings.Contains(failed, "Error: Expiry cannot take effect") ||
				!strings.Contains(failed, "Error: Creator grant makes a policy permanent") {
				t.Errorf("with expiry_conflicts = \"error\" the plan did not fail on the three conflicts (exit %d):\n%s", code, failed)
			}

			w.Configure(provider(""), grants)
			calls.SinceLast()
			out := strings.Join(strings.Fields(w.MustRun("plan")), " ")
			for _, want := range []string{
				"Expiry raised beyond this grant",
				"user alice's view_host on 1 bk_cmdb/host instances this resource does not manage (9), expiring " + nextWeek.Format(time.RFC3339) + ", becomes permanent.",
				"Expiry cannot take effect",
				"user carol already holds view_host permanent in IAM",
				"this grant, expiring " + nextWeek.Format(time.RFC3339) + ", cannot make it end sooner",
				"Creator grant makes a policy permanent",
				"IAM grants a creator permanently, and keeps one expiry per user and action: registering these instances makes user " +
					"dave's edit on 1 bk_job/job instances this resource does not manage (job7), expiring " + nextWeek.Format(time.RFC3339) + ", permanent.",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("the plan does not say %q:\n%s", want, out)
				}
			}
			if got := calls.SinceLast(); !drift && (got["policy_query_by_actions"] != 3 || got["policy_get"] != 3 || got["policy_list"] != 3) {
				t.Errorf("without detect_drift the plan read %v; want 3 queries, one per user, 3 policies by id (alice's and carol's "+
					"view_host, dave's edit), and 3 pages of lists (dave's other creator actions, of which he holds nothing)", got)
			}
			w.MustRun("apply", "-auto-approve")
			calls.SinceLast()
			if out := w.MustRun("plan"); strings.Contains(out, "Expiry raised beyond this grant") || strings.Contains(out, "Expiry cannot take effect") ||
				!strings.Contains(out, "No changes") {
				t.Errorf("the plan after the apply warns of a grant it does not make:\n%s", out)
			}
			if got := calls.SinceLast(); !drift && got["policy_query_by_actions"]+got["policy_get"]+got["policy_list"] != 0 {
				t.Errorf("without detect_drift a plan with nothing to change read %v, want nothing", got)
			}
			if drift {
				return // a failed read fails detect_drift's refresh first
			}
			// A read IAM refuses (every attempt): the plan goes on, and says
			// it could not check.
			if err := sb.SetFaults(sandbox.Faults{Fail: &sandbox.FailFault{Count: 3, Status: 500, Code: 1902500}}); err != nil {
				t.Fatal(err)
			}
			w.Configure(provider(""), strings.Replace(grants, `instances = { "1" = "host1" }`, `instances = { "1" = "host1", "2" = "host2" }`, 1))
			out = strings.Join(strings.Fields(w.MustRun("plan")), " ")
			if want := "Warning: Cannot read the expiry IAM keeps"; !strings.Contains(out, want) || !strings.Contains(out, "1 to change") {
				t.Errorf("a plan whose read IAM refused does not say %q and plan the change:\n%s", want, out)
			}
		})
	}
}
