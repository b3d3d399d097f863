package authz

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/applyrun"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

func testRunner(t *testing.T, sb *sandboxtest.Sandbox, timeout time.Duration) *instanceGrantRunner {
	t.Helper()
	client, err := bkiam.New(bkiam.Config{APIGatewayURL: sb.URL, AppCode: sandboxtest.AppCode, AppSecret: sandboxtest.AppSecret,
		Timeout: timeout, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return &instanceGrantRunner{client: client, system: "bk_cmdb", subject: bkiam.Subject{Type: "user", ID: "alice"},
		held: grantplan.Holdings{}, policies: map[string]int64{}}
}

func hostGrantPlan(t *testing.T, n int) (grantplan.Grant, []grantplan.Call) {
	t.Helper()
	g := grantplan.Grant{Actions: []string{"view_host"}, ExpiresAt: bkiam.PermanentExpiry,
		Resources: []grantplan.Resource{{System: "bk_cmdb", Type: "host", Instances: map[string]string{}}}}
	for _, id := range sandboxtest.IDRange(0, n) {
		g.Resources[0].Instances[id] = sandboxtest.HostName(id)
	}
	calls, err := grantplan.Plan(nil, &g, grantplan.Limits{Grant: 200, Revoke: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return g, calls
}

// heldIDs renders a holding's ids as sandbox paths, for comparison.
func heldIDs(h grantplan.Holdings, action string) []string {
	held, ok := h[action]
	if !ok {
		return nil
	}
	var ids []string
	for id := range held.Resources[0].Instances {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return sandboxtest.HostPaths(ids...)
}

// TestRunnerStopsBetweenCallsWhenCancelled: Ctrl-C during a call lets that
// call finish, stops before the next, and the record equals what IAM holds.
func TestRunnerStopsBetweenCallsWhenCancelled(t *testing.T) {
	sb := sandboxtest.Start(t)
	if err := sb.SetFaults(sandbox.Faults{LatencyMS: 300}); err != nil {
		t.Fatal(err)
	}
	runner := testRunner(t, sb, 10*time.Second)
	_, calls := hostGrantPlan(t, 450)

	// Ctrl-C arrives while the first call is in flight.
	ctx, cancel := context.WithCancel(context.Background())
	runner.client = cancelDuringFirstCall{runner.client, cancel, new(bool)}
	err := runner.run(ctx, calls)
	if !applyrun.IsStop(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("run = %v, want a stop", err)
	}
	if !strings.Contains(err.Error(), "Stopped before call 2 of 3") {
		t.Errorf("error %q does not say where it stopped", err)
	}
	got := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice")["view_host"]
	if len(got) != 200 || !slices.Equal(got, heldIDs(runner.held, "view_host")) {
		t.Fatalf("the sandbox holds %d paths, the record %d: they must be the same 200", len(got), len(heldIDs(runner.held, "view_host")))
	}
	if sb.Stats().Requests["batch_instance:grant"] != 1 {
		t.Fatalf("calls after the cancel: %v", sb.Stats().Requests)
	}
}

// cancelDuringFirstCall cancels the run's context as its first call starts.
type cancelDuringFirstCall struct {
	next    conns.InstanceCaller
	cancel  context.CancelFunc
	started *bool
}

func (c cancelDuringFirstCall) BatchInstance(ctx context.Context, req bkiam.BatchInstanceRequest) ([]bkiam.PolicyResult, error) {
	if !*c.started {
		*c.started = true
		c.cancel()
	}
	return c.next.BatchInstance(ctx, req)
}

// TestRunnerRecordsUnansweredGrantAsHeldAndInDoubt: a grant that timed out
// may or may not have been applied; the record counts it as held (a
// destroy revokes it) and in doubt (the next run sends it again), and the
// next run converges.
func TestRunnerRecordsUnansweredGrantAsHeldAndInDoubt(t *testing.T) {
	sb := sandboxtest.Start(t)
	runner := testRunner(t, sb, 200*time.Millisecond)
	next, calls := hostGrantPlan(t, 450)

	if err := sb.SetFaults(sandbox.Faults{LatencyMS: 1000}); err != nil {
		t.Fatal(err)
	}
	err := runner.run(context.Background(), calls)
	if err == nil || !bkiam.OutcomeUnknown(errors.Unwrap(err)) {
		t.Fatalf("run = %v, want a call with unknown outcome", err)
	}
	if !strings.Contains(err.Error(), "may or may not have carried out") {
		t.Errorf("error %q does not say the outcome is unknown", err)
	}
	held := runner.held["view_host"]
	if !held.Partial || len(held.Resources[0].Instances) != 200 {
		t.Fatalf("record after the unanswered grant: %+v", held)
	}

	if err := sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	again, err := grantplan.Plan(runner.held, &next, grantplan.Limits{Grant: 200, Revoke: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.run(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	if got := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice")["view_host"]; len(got) != 450 {
		t.Fatalf("after the second run the sandbox holds %d paths, want 450", len(got))
	}
}
