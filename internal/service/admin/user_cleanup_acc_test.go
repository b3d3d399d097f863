package admin_test

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// needsActions skips a test on a CLI without actions (Terraform 1.14 and
// later have them; Terraform 1.5.7 and OpenTofu 1.12 do not).
func needsActions(t *testing.T) {
	t.Helper()
	if !acctest.CLI.Terraform(1, 14) {
		t.Skipf("%s has no actions (action blocks, terraform apply -invoke: Terraform 1.14 and later)", acctest.CLI)
	}
}

// cleanupWorkspace serves the provider to the CLI in this process, against sb.
func cleanupWorkspace(t *testing.T, sb *sandboxtest.Sandbox, transport int, actions string) *acctest.CLIWorkspace {
	t.Helper()
	w := acctest.NewAttachedWorkspace(t, acctest.ProtoServer(t))
	w.Configure(acctest.Transports[transport].Block(sb.URL), actions)
	return w
}

// groupMembers lists a management group's members as type:id, sorted.
func groupMembers(sb *sandboxtest.Sandbox, group int64) []string {
	var out []string
	for _, m := range sb.Members(group) {
		out = append(out, m.Type+":"+m.ID)
	}
	slices.Sort(out)
	return out
}

// TestAccUserCleanup: terraform apply -invoke runs IAM's leaver cleanup of
// alice on a site that lets the app call it. The apply ends when IAM has
// queued it and says so; after IAM's delay alice holds no custom policy and
// is no direct member of a group, while her department's membership, and
// bob's policy and membership, stay.
func TestAccUserCleanup(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	needsActions(t)
	sb := acctest.CleanupGranted.Start(t)
	ctx := context.Background()
	client := acctest.OutsideClient(t, sb)
	for _, user := range []string{"alice", "bob"} {
		if _, err := client.BatchInstance(ctx, bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant,
			ExpiredAt: bkiam.PermanentExpiry, Subject: bkiam.Subject{Type: "user", ID: user}, Actions: []bkiam.Action{{ID: "edit_host"}},
			Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: "1", Name: "host1"}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	var groups []int64
	acctest.ManagementCall(t, sb, "POST", "/api/v2/open/management/systems/bk_cmdb/grade_managers/-/groups/",
		`{"groups":[{"name":"ops","description":""}]}`, &groups)
	acctest.ManagementCall(t, sb, "POST", "/api/v2/open/management/systems/bk_cmdb/groups/"+itoa(groups[0])+"/members/",
		`{"members":[{"type":"user","id":"alice"},{"type":"user","id":"bob"},{"type":"department","id":"2"}],"expired_at":4102444800}`, nil)

	w := cleanupWorkspace(t, sb, acctest.GatewayTransport, acctest.UserCleanupHCL("    users = [\"alice\"]\n"))
	out := w.MustRun("apply", "-invoke=action.bkiam_user_cleanup.x", "-auto-approve")
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"asking IAM to clean up 1 user(s): alice", "IAM has queued the cleanup of alice; it runs in the background",
		"bkiam_user_access data source"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the apply did not say %q:\n%s", want, out)
		}
	}
	alice := sandbox.PolicyFilter{SubjectType: "user", SubjectID: "alice"}
	deadline := time.Now().Add(10 * acctest.CleanupDelay)
	for len(sb.Policies(alice).Policies) > 0 && time.Now().Before(deadline) {
		time.Sleep(acctest.CleanupDelay / 10)
	}
	if n := len(sb.Policies(alice).Policies); n != 0 {
		t.Errorf("alice holds %d custom policies after the cleanup", n)
	}
	if n := len(sb.Policies(sandbox.PolicyFilter{SubjectType: "user", SubjectID: "bob"}).Policies); n != 1 {
		t.Errorf("bob holds %d custom policies, want his 1", n)
	}
	if got, want := groupMembers(sb, groups[0]), []string{"department:2", "user:bob"}; !slices.Equal(got, want) {
		t.Errorf("group %d holds %v, want %v: alice's direct membership gone, her department's kept", groups[0], got, want)
	}
}

// TestAccUserCleanupRefusedAtPlan: each plan-time error of
// bkiam_user_cleanup (acctest.UserCleanupCases), through terraform plan
// -invoke: a site whose gateway does not carry the route, or does not
// grant it, or whose IAM does not allow-list the app, fails the plan
// naming the gateway resource and the allow-list entry; the probe that
// tells cleans nothing.
func TestAccUserCleanupRefusedAtPlan(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	needsActions(t)
	for _, tc := range acctest.UserCleanupCases() {
		t.Run(tc.Name, func(t *testing.T) {
			acctest.Parallel(t)
			sb := tc.Site.Start(t)
			if _, err := acctest.OutsideClient(t, sb).BatchInstance(context.Background(), bkiam.BatchInstanceRequest{System: "bk_cmdb",
				Operate: bkiam.OperationGrant, ExpiredAt: bkiam.PermanentExpiry, Subject: bkiam.Subject{Type: "user", ID: "alice"},
				Actions:   []bkiam.Action{{ID: "edit_host"}},
				Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: "1", Name: "host1"}}}}}); err != nil {
				t.Fatal(err)
			}
			transport := acctest.GatewayTransport
			if tc.ESB {
				transport = acctest.ESBTransport
			}
			w := cleanupWorkspace(t, sb, transport, tc.Config)
			out, code := w.Run("plan", "-invoke=action.bkiam_user_cleanup.x")
			if code == 0 {
				t.Fatalf("the plan succeeded, want %q:\n%s", tc.Want, out)
			}
			if !acctest.PlanErrorPattern(tc.Want...).MatchString(out) {
				t.Fatalf("the plan failed otherwise, want %q:\n%s", tc.Want, out)
			}
			time.Sleep(2 * acctest.CleanupDelay)
			if n := len(sb.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies); n != 1 {
				t.Errorf("alice holds %d policies after a refused plan, want her 1", n)
			}
		})
	}
}

// TestAccUserCleanupProbeCleansNothing: on a site that lets the app call the
// cleanup, a plan of the action probes the route and cleans nothing.
func TestAccUserCleanupProbeCleansNothing(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	needsActions(t)
	sb := acctest.CleanupGranted.Start(t)
	if _, err := acctest.OutsideClient(t, sb).BatchInstance(context.Background(), bkiam.BatchInstanceRequest{System: "bk_cmdb",
		Operate: bkiam.OperationGrant, ExpiredAt: bkiam.PermanentExpiry, Subject: bkiam.Subject{Type: "user", ID: "alice"},
		Actions:   []bkiam.Action{{ID: "edit_host"}},
		Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: "1", Name: "host1"}}}}}); err != nil {
		t.Fatal(err)
	}
	w := cleanupWorkspace(t, sb, acctest.GatewayTransport, acctest.UserCleanupHCL("    users = [\"alice\"]\n"))
	out := w.MustRun("plan", "-invoke=action.bkiam_user_cleanup.x")
	if !regexp.MustCompile(`action\.bkiam_user_cleanup\.x`).MatchString(out) {
		t.Errorf("the plan does not show the action:\n%s", out)
	}
	if n := sb.Stats().Requests["admin:cleanup"]; n == 0 {
		t.Errorf("the plan did not probe the cleanup route")
	}
	time.Sleep(2 * acctest.CleanupDelay)
	if n := len(sb.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies); n != 1 {
		t.Errorf("alice holds %d policies after a plan, want her 1", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestAccUserCleanupCheckedByUserAccess: the offboarding guide's check that
// the cleanup finished. After terraform apply -invoke of alice's cleanup,
// an apply of the configuration, whose check block asserts
// bkiam_user_access's holds_nothing, warns with the check's message (what
// alice still holds) while IAM has not carried the cleanup out; once the
// sandbox's cleanup delay has passed (on its clock, moved on), the same
// apply passes the check, and holds_nothing is true although alice still
// reaches the group through her department (department_only_groups 1).
// The sandbox plays a 2026 gateway granting the cleanup and the admin
// API's subject groups.
func TestAccUserCleanupCheckedByUserAccess(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	needsActions(t)
	var later atomic.Int64 // how far the sandbox's clock is ahead
	sb := acctest.CleanupChecked.Start(t, sandbox.WithCleanupDelay(time.Hour),
		sandbox.WithNow(func() time.Time { return time.Now().Add(time.Duration(later.Load())) }))
	ctx := context.Background()
	client := acctest.OutsideClient(t, sb)
	if _, err := client.BatchInstance(ctx, bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant,
		ExpiredAt: bkiam.PermanentExpiry, Subject: bkiam.Subject{Type: "user", ID: "alice"}, Actions: []bkiam.Action{{ID: "edit_host"}},
		Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: "1", Name: "host1"}}}}}); err != nil {
		t.Fatal(err)
	}
	var groups []int64
	acctest.ManagementCall(t, sb, "POST", "/api/v2/open/management/systems/bk_cmdb/grade_managers/-/groups/",
		`{"groups":[{"name":"ops","description":""}]}`, &groups)
	acctest.ManagementCall(t, sb, "POST", "/api/v2/open/management/systems/bk_cmdb/groups/"+itoa(groups[0])+"/members/",
		`{"members":[{"type":"user","id":"alice"},{"type":"department","id":"2"}],"expired_at":4102444800}`, nil)

	w := cleanupWorkspace(t, sb, acctest.GatewayTransport, acctest.UserCleanupHCL("    users = [\"alice\"]\n")+`
data "bkiam_user_access" "alice" {
  system  = "bk_cmdb"
  user    = "alice"
  actions = ["edit_host"]
}

check "alice_cleaned_up" {
  assert {
    condition = data.bkiam_user_access.alice.holds_nothing
    error_message = "alice still holds: ${join(", ", concat(
      [for id, g in data.bkiam_user_access.alice.groups : "group ${g.name}" if g.direct],
      [for action, p in data.bkiam_user_access.alice.policies : action],
    ))}"
  }
}

output "holds_nothing" {
  value = data.bkiam_user_access.alice.holds_nothing
}

output "department_only_groups" {
  value = data.bkiam_user_access.alice.department_only_groups
}
`)
	w.MustRun("apply", "-invoke=action.bkiam_user_cleanup.x", "-auto-approve")
	// warnings counts the warnings of a run but the CLI's own about the
	// provider served from the test.
	warnings := func(out string) int {
		return strings.Count(out, "Warning:") - strings.Count(out, "Warning: Provider development overrides are in effect")
	}
	outputs := func() string {
		t.Helper()
		return strings.Join(strings.Fields(w.MustRun("output")), " ")
	}

	// IAM has queued the cleanup: the check warns, naming what alice holds.
	out := w.MustRun("apply", "-auto-approve")
	if warnings(out) != 1 {
		t.Errorf("the apply before the cleanup ran gave other warnings than the check's:\n%s", out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Warning: Check block assertion failed", "alice still holds: group ops, edit_host"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the apply before the cleanup ran did not warn %q:\n%s", want, out)
		}
	}
	if got := outputs(); !strings.Contains(got, "holds_nothing = false") {
		t.Errorf("before the cleanup ran: %s, want holds_nothing = false", got)
	}

	// The cleanup's delay has passed: the check passes.
	later.Store(int64(2 * time.Hour))
	out = w.MustRun("apply", "-auto-approve")
	if warnings(out) != 0 {
		t.Errorf("the apply after the cleanup ran warns:\n%s", out)
	}
	if got := outputs(); got != "department_only_groups = 1 holds_nothing = true" {
		t.Errorf("after the cleanup ran: %s, want department_only_groups = 1 holds_nothing = true", got)
	}
}
