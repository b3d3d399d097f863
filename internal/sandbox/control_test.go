package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

func control(t *testing.T, h http.Handler, method, path, body string) response {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	return serve(t, h, req)
}

func TestFailFault(t *testing.T) {
	bothTransports(t, func(t *testing.T, tr string) {
		s := newServer(t)
		r := control(t, s, "POST", "/_sandbox/faults", `{"fail":{"after":1,"count":2,"status":500,"code":1902500}}`)
		if r.status != 200 {
			t.Fatalf("set faults: %s", r.raw)
		}
		// A validation failure does not count as a success.
		if r := send(t, s, tr, "batch_instance", "{}"); r.code() != 1902412 {
			t.Fatalf("%s", r.raw)
		}
		wantOK(t, send(t, s, tr, "batch_instance", hostGrant("alice", "1")))
		for i := 0; i < 2; i++ {
			r := send(t, s, tr, "batch_instance", hostGrant("alice", "2"))
			wantSaaSError(t, tr, r, 500, 1902500, "fault injected by the sandbox (SYSTEM_ERROR)")
		}
		wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "edit_host", yearLater, false, "/bk_cmdb,host,1/")+`]}`)
		wantOK(t, send(t, s, tr, "batch_instance", hostGrant("alice", "2")))
		st := s.Stats()
		if st.Total != 5 || st.Errors != 3 || st.Requests["batch_instance:grant"] != 4 || st.MaxInstancesPerCall != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestGatewayCodedFailFault(t *testing.T) {
	s := newServer(t)
	if err := s.SetFaults(sandbox.Faults{Fail: &sandbox.FailFault{Count: 1, Status: 502, Code: 1650200}}); err != nil {
		t.Fatal(err)
	}
	wantGatewayError(t, send(t, s, gw, "batch_instance", hostGrant("alice", "1")), 502, 1650200, "BAD_GATEWAY", "fault injected by the sandbox")
	wantPolicies(t, s, all, noPolicies)
}

func TestRateLimitFault(t *testing.T) {
	s := newServer(t)
	if err := s.SetFaults(sandbox.Faults{RateLimit: &sandbox.RateFault{After: 0, Count: 1, RetryAfterS: 3}}); err != nil {
		t.Fatal(err)
	}
	r := send(t, s, gw, "batch_instance", hostGrant("alice", "1"))
	wantGatewayError(t, r, 429, 1642902, "RATE_LIMITED", "Request rate exceeds the limit of the app [injected by the sandbox]")
	if r.header.Get("Retry-After") != "3" {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "1")))

	_ = s.SetFaults(sandbox.Faults{RateLimit: &sandbox.RateFault{Count: 1, RetryAfterS: 1}})
	r = send(t, s, esb, "batch_instance", hostGrant("alice", "2"))
	wantESBError(t, r, 1306429, "Request rate exceeds the limit of the app [injected by the sandbox]")
	if r.header.Get("Retry-After") != "1" {
		t.Errorf("ESB Retry-After %q", r.header.Get("Retry-After"))
	}
	wantPolicies(t, s, all, `{"policies":[`+policyJSON(1, "user", "alice", "edit_host", yearLater, false, "/bk_cmdb,host,1/")+`]}`)
}

func TestLatencyFaultAndClear(t *testing.T) {
	s := newServer(t)
	if r := control(t, s, "POST", "/_sandbox/faults", `{"latency_ms":30}`); r.status != 200 {
		t.Fatal(r.raw)
	}
	start := time.Now()
	wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "1")))
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("latency not applied: %v", d)
	}
	control(t, s, "POST", "/_sandbox/faults", `{}`)
	start = time.Now()
	wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "1")))
	if d := time.Since(start); d > 25*time.Millisecond {
		t.Fatalf("latency not cleared: %v", d)
	}
	if r := control(t, s, "POST", "/_sandbox/faults", `{"fail":{"count":1,"status":42,"code":1}}`); r.status != 400 {
		t.Fatalf("invalid fault accepted: %s", r.raw)
	}
	if r := control(t, s, "POST", "/_sandbox/faults", `{"latency":5}`); r.status != 400 {
		t.Fatalf("unknown fault field accepted: %s", r.raw)
	}
}

// TestLatencyIsSerialisedPerSubject: like the real server's per-subject
// lock, two calls for one subject take their latency one after the other;
// calls for different subjects overlap.
func TestLatencyIsSerialisedPerSubject(t *testing.T) {
	s := newServer(t)
	const latency = 400 * time.Millisecond
	if r := control(t, s, "POST", "/_sandbox/faults", fmt.Sprintf(`{"latency_ms":%d}`, latency.Milliseconds())); r.status != 200 {
		t.Fatal(r.raw)
	}
	both := func(a, b string) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		responses := make([]response, 2)
		for i, user := range []string{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				responses[i] = send(t, s, gw, "batch_instance", hostGrant(user, "1"))
			}()
		}
		wg.Wait()
		d := time.Since(start)
		for _, r := range responses {
			wantOK(t, r)
		}
		return d
	}
	if d := both("alice", "alice"); d < 2*latency {
		t.Fatalf("two calls for alice took %v together: not serialised", d)
	}
	if d := both("alice", "bob"); d >= 2*latency {
		t.Fatalf("calls for alice and bob took %v together: serialised", d)
	}
}

func TestControlRoutes(t *testing.T) {
	s := newServer(t)
	wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "1", "2")))
	wantOK(t, send(t, s, esb, "batch_path", pathCall("grant", "bob", []string{"1"})))
	wantOK(t, send(t, s, gw, "batch_instance", hostRevoke("bob", "1")))
	wantOK(t, send(t, s, gw, "batch_resource_creator_action", creatorCall(3)))
	send(t, s, gw, "batch_instance", "{")

	r := control(t, s, "GET", "/_sandbox/policies?subject_id=alice&action=edit_host&system=bk_cmdb&subject_type=user", "")
	want := `{"policies":[` + policyJSON(1, "user", "alice", "edit_host", yearLater, false, "/bk_cmdb,host,1/", "/bk_cmdb,host,2/") + `]}`
	if strings.TrimSpace(r.raw) != want {
		t.Fatalf("filtered policies:\n got %s\nwant %s", r.raw, want)
	}
	r = control(t, s, "GET", "/_sandbox/stats", "")
	var st sandbox.Stats
	_ = json.Unmarshal([]byte(r.raw), &st)
	wantStats := sandbox.Stats{Total: 5, Errors: 1, MaxInstancesPerCall: 3, Requests: map[string]int{
		"batch_instance:grant": 1, "batch_instance:revoke": 1, "batch_path:grant": 1, "batch_path:revoke": 0,
		"batch_resource_creator_action": 1, "policy_list": 0, "policy_get": 0, "model_query": 0,
		"policy_auth": 0, "policy_auth_by_actions": 0, "policy_auth_by_resources": 0, "policy_query": 0, "policy_query_by_actions": 0, "user_groups": 0,
		"grade_manager:create": 0, "grade_manager:get": 0, "grade_manager:update": 0, "grade_manager:delete": 0, "grade_manager:list": 0,
		"group_policy:grant": 0, "group_policy:revoke": 0, "group_policy:list": 0, "group_policy:delete": 0, "group_policy:actions": 0,
		"group:create": 0, "group:list": 0, "group:list_v1": 0, "group:update": 0, "group:delete": 0,
		"member:list": 0, "member:add": 0, "member:delete": 0, "member:expiry": 0, "member_groups:details": 0,
		"subject_template:list": 0, "group_subject_template:list": 0, "admin:subject_groups": 0, "admin:cleanup": 0}}
	if !reflect.DeepEqual(st, wantStats) {
		t.Fatalf("stats %+v", st)
	}
	_ = s.SetFaults(sandbox.Faults{LatencyMS: 50})
	if r := control(t, s, "POST", "/_sandbox/reset", ""); r.status != 200 {
		t.Fatal(r.raw)
	}
	wantPolicies(t, s, all, noPolicies)
	if st := s.Stats(); st.Total != 0 || st.Requests["batch_instance:grant"] != 0 {
		t.Fatalf("stats after reset %+v", st)
	}
	start := time.Now()
	r2 := send(t, s, gw, "batch_instance", hostGrant("alice", "1"))
	wantOK(t, r2)
	if time.Since(start) > 40*time.Millisecond {
		t.Fatalf("reset kept the faults")
	}
	if e, _ := findEntry(r2.entries(t), "edit_host"); e.PolicyID != 1 {
		t.Fatalf("ids restart after reset: %s", r2.raw)
	}
	if r := control(t, s, "GET", "/_sandbox/nothing", ""); r.status != 404 {
		t.Fatalf("unknown control route: %s", r.raw)
	}
}

func TestSandboxtestHelper(t *testing.T) {
	sb := sandboxtest.Start(t)
	req, _ := http.NewRequest(http.MethodPost, sb.URL+"/api/v1/open/authorization/batch_instance/", strings.NewReader(hostGrant("alice", "1")))
	req.Header.Set("X-Bkapi-Authorization", sandboxtest.AuthHeader())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	got := sb.Policies(sandbox.PolicyFilter{SubjectID: "alice"})
	if len(got.Policies) != 1 || got.Policies[0].Paths[0] != "/bk_cmdb,host,1/" {
		t.Fatalf("policies %+v", got)
	}
	if sb.Stats().Total != 1 {
		t.Fatalf("stats %+v", sb.Stats())
	}
	if err := sb.Reset(); err != nil || len(sb.Policies(sandbox.PolicyFilter{}).Policies) != 0 {
		t.Fatalf("reset: %v", err)
	}
}

// TestFaultsSpareReads: with spare_reads the injected failure skips the
// policy list, which does not count towards after either, and fails the
// write it was armed for; without it the read takes the failure.
func TestFaultsSpareReads(t *testing.T) {
	for _, tc := range []struct {
		name       string
		spare      bool
		readFails  bool
		grantFails bool
	}{
		{"spare_reads", true, false, true},
		{"reads count", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			fault := fmt.Sprintf(`{"spare_reads":%t,"fail":{"after":0,"count":1,"status":500,"code":1902500}}`, tc.spare)
			if r := control(t, s, "POST", "/_sandbox/faults", fault); r.status != 200 {
				t.Fatalf("set faults: %s", r.raw)
			}
			list := getRead(t, s, "/api/v1/systems/bk_cmdb/policies?action_id=edit_host", goodAuth)
			if failed := list.status != 200 || list.code() != 0; failed != tc.readFails {
				t.Errorf("policy list: HTTP %d %s, want failed=%t", list.status, list.raw, tc.readFails)
			}
			grant := send(t, s, gw, "batch_instance", hostGrant("alice", "1"))
			if failed := grant.code() != 0; failed != tc.grantFails {
				t.Errorf("grant: %s, want failed=%t", grant.raw, tc.grantFails)
			}
		})
	}
}
