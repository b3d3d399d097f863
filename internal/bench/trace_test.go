package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestParseTrace reads a provider's log as Terraform 1.16 wrote it under
// RunTrace's settings: the ApplyResourceChange calls' times (and not the
// other calls'), and the coalescer's calls weighted by their requests, so
// that a request's wait and call are averaged over the requests, as the
// apply's time is.
func TestParseTrace(t *testing.T) {
	log := `2026-11-29T07:40:04.342Z [TRACE] provider.terraform-provider-bkiam: Received downstream response: tf_proto_version=6.11 tf_provider_addr=registry.terraform.io/bkiam/bkiam tf_req_duration_ms=70 tf_req_id=1 @module=sdk.proto tf_resource_type=bkiam_instance_grant tf_rpc=PlanResourceChange
2026-11-29T07:40:04.536Z [DEBUG] provider.terraform-provider-bkiam: sending planned IAM call: tf_rpc=ApplyResourceChange
2026-11-29T07:40:04.538Z [DEBUG] provider.terraform-provider-bkiam: IAM call of merged requests answered: waited_ms_mean=0.5 @caller=/x/coalesce.go:246 operation=grant tf_rpc=ApplyResourceChange @module=bkiam call_ms=21 requests=1 tf_req_id=2 waited_ms_max=0.5 timestamp=2026-11-29T07:40:04.536Z
2026-11-29T07:40:04.538Z [TRACE] provider.terraform-provider-bkiam: Received downstream response: diagnostic_error_count=0 diagnostic_warning_count=0 tf_req_duration_ms=22 tf_req_id=2 @module=sdk.proto tf_resource_type=bkiam_instance_grant tf_rpc=ApplyResourceChange timestamp=2026-11-29T07:40:04.537Z
2026-11-29T07:40:04.558Z [DEBUG] provider.terraform-provider-bkiam: IAM call of merged requests answered: requests=3 operation=grant tf_rpc=ApplyResourceChange waited_ms_mean=40 @module=bkiam call_ms=20 waited_ms_max=61 timestamp=2026-11-29T07:40:04.558Z
2026-11-29T07:40:04.559Z [TRACE] provider.terraform-provider-bkiam: Received downstream response: tf_req_duration_ms=62 tf_req_id=3 tf_rpc=ApplyResourceChange
2026-11-29T07:40:04.559Z [TRACE] provider.terraform-provider-bkiam: Received downstream response: tf_req_duration_ms=84 tf_req_id=4 tf_rpc=ApplyResourceChange
2026-11-29T07:40:04.559Z [TRACE] provider.terraform-provider-bkiam: Received downstream response: tf_req_duration_ms=24 tf_req_id=5 tf_rpc=ApplyResourceChange
`
	got, err := parseTrace(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	// The logged whole milliseconds are counted as their middle.
	want := Trace{Applies: 4, Median: 62500 * time.Microsecond, Mean: 48500 * time.Microsecond, Requests: 4, Calls: 2,
		Wait: time.Duration(30.125 * float64(ms)), Call: time.Duration(20.25 * float64(ms))}
	if got != want {
		t.Fatalf("parseTrace = %+v,\nwant %+v", got, want)
	}
	if rest := got.Rest(); rest != time.Duration(48.5*float64(ms)-30.125*float64(ms)-20.25*float64(ms)) {
		t.Errorf("Rest() = %v", rest)
	}

	if _, err := parseTrace(strings.NewReader("x [DEBUG] p: IAM call of merged requests answered: requests=2 call_ms=3\n")); err == nil ||
		!strings.Contains(err.Error(), "waited_ms_mean") {
		t.Errorf("a coalescer line without its wait: %v, want an error naming waited_ms_mean", err)
	}

	var out bytes.Buffer
	PrintTrace(&out, Scenario{Name: "s"}, "Terraform v1.16.4", []Result{
		{Step: StepCreatePlan, Trace: &Trace{}},
		{Step: StepCreateApply, Provider: 13 * time.Second, Trace: &got},
	})
	const row = "| create apply | 4 | 62.5 ms | 48.5 ms | 30.1 ms | 20.2 ms | -1.9 ms | 2 | 2.0 | 13.00 s |"
	if !strings.Contains(out.String(), row) || strings.Contains(out.String(), "| create plan |") {
		t.Errorf("PrintTrace wrote\n%s\nwant the create apply's row %q and no row for the plan, which applied nothing", out.String(), row)
	}
}

// TestAccTrace traces ManyGrants at 10 resources through the CLI under
// test: every resource's ApplyResourceChange is read from the provider's
// log, on create and on destroy, and every request the coalescer sent is
// counted once, in as many calls as IAM was sent grants (or revokes).
func TestAccTrace(t *testing.T) {
	opts := Options{Terraform: testutil.Terraform(t), ProviderDir: testutil.BuildProvider(t), Parallelism: 10, LatencyMS: 20}
	results, err := RunTrace(context.Background(), opts, ManyGrants(10, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		kind := map[string]string{StepCreateApply: "batch_instance:grant", StepDestroy: "batch_instance:revoke"}[r.Step]
		if kind == "" {
			continue
		}
		tr := r.Trace
		if tr == nil || tr.Applies != 10 || tr.Requests != 10 || tr.Calls != r.Calls[kind] || tr.Median <= 0 || tr.Call < 20*time.Millisecond {
			t.Errorf("%s: trace %+v with IAM calls %v, want 10 applies, 10 requests in the %s calls, each call 20 ms or more", r.Step, tr, r.Calls, kind)
		}
	}
}
