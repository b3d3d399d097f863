package bkiam

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordingIAM answers batch_instance calls like IAM, records the
// instances of every call, and rejects any call naming instance "bad".
type recordingIAM struct {
	// delay is IAM's own time per call, during which others queue.
	delay time.Duration
	mu    sync.Mutex
	calls [][]string
}

func (r *recordingIAM) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Actions   []Action           `json:"actions"`
		Resources []InstanceResource `json:"resources"`
	}
	_ = json.NewDecoder(req.Body).Decode(&body)
	var ids []string
	for _, in := range body.Resources[0].Instances {
		ids = append(ids, in.ID)
	}
	r.mu.Lock()
	r.calls = append(r.calls, ids)
	r.mu.Unlock()
	time.Sleep(r.delay)
	w.Header().Set("Content-Type", "application/json")
	for _, id := range ids {
		if id == "bad" {
			_, _ = w.Write([]byte(`{"result":false,"code":1902412,"message":"{\"resources\": [\"bad instance\"]}","data":null}`))
			return
		}
	}
	_, _ = fmt.Fprintf(w, `{"result":true,"code":0,"message":"OK","data":[{"action":{"id":%q},"policy_id":7,"statistics":{"instance_count":%d}}]}`,
		body.Actions[0].ID, len(ids))
}

func (r *recordingIAM) snapshot() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]string(nil), r.calls...)
}

func newCoalescerForTest(t *testing.T, window time.Duration, grantLimit int) (*Coalescer, *recordingIAM) {
	t.Helper()
	iam := &recordingIAM{delay: 20 * time.Millisecond}
	srv := httptest.NewServer(iam)
	t.Cleanup(srv.Close)
	client, err := New(Config{APIGatewayURL: srv.URL, AppCode: "app", AppSecret: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	return NewCoalescer(client, window, grantLimit, 1000), iam
}

func hostGrant(action string, ids ...string) BatchInstanceRequest {
	req := BatchInstanceRequest{System: "bk_cmdb", Operate: OperationGrant, ExpiredAt: PermanentExpiry,
		Subject: Subject{Type: "user", ID: "alice"}, Actions: []Action{{ID: action}}}
	res := InstanceResource{System: "bk_cmdb", Type: "host"}
	for _, id := range ids {
		res.Instances = append(res.Instances, Instance{ID: id, Name: "host " + id})
	}
	req.Resources = []InstanceResource{res}
	return req
}

// concurrently sends reqs at once and returns each one's error.
func concurrently(c *Coalescer, reqs []BatchInstanceRequest) []error {
	errs := make([]error, len(reqs))
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			policies, err := c.BatchInstance(context.Background(), req)
			if err == nil && (len(policies) != 1 || policies[0].PolicyID != 7) {
				err = fmt.Errorf("request %d got %+v", i, policies)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	return errs
}

func TestCoalescerMergesConcurrentRequests(t *testing.T) {
	// A wide window, so that goroutines started under -race on a loaded
	// machine still arrive together.
	c, iam := newCoalescerForTest(t, 200*time.Millisecond, 200)
	var reqs []BatchInstanceRequest
	for i := 0; i < 10; i++ {
		reqs = append(reqs, hostGrant("view_host", fmt.Sprint(i)))
	}
	for i, err := range concurrently(c, reqs) {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	calls := iam.snapshot()
	total := 0
	for _, ids := range calls {
		total += len(ids)
	}
	// The first leaves alone (nothing was coming before it); the rest
	// leave in halves of the ten that were in flight at once.
	if len(calls) > 3 || total != 10 {
		t.Fatalf("10 concurrent requests took %d calls carrying %d instances: %v", len(calls), total, calls)
	}
}

// TestCoalescerSendsALoneRequestAtOnce: a single resource's apply never
// waits for companions, however long the window.
func TestCoalescerSendsALoneRequestAtOnce(t *testing.T) {
	c, iam := newCoalescerForTest(t, time.Hour, 200)
	done := make(chan error, 1)
	go func() {
		_, err := c.BatchInstance(context.Background(), hostGrant("view_host", "1"))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a lone request waited for companions")
	}
	if n := len(iam.snapshot()); n != 1 {
		t.Fatalf("one request took %d calls", n)
	}
}

// TestCoalescerMergesAStream: requests handed over one by one, as
// Terraform does at scale, ride together, and the last ones leave when
// the stream ends, not when the (hour-long) window does.
func TestCoalescerMergesAStream(t *testing.T) {
	c, iam := newCoalescerForTest(t, time.Hour, 200)
	iam.delay = 0 // only waiting for companions can merge requests
	const n = 20
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := c.BatchInstance(context.Background(), hostGrant("view_host", fmt.Sprint(i)))
			errs <- err
		}()
		time.Sleep(5 * time.Millisecond)
	}
	for range n {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			t.Fatal("requests still waiting after the stream ended")
		}
	}
	calls := iam.snapshot()
	total := 0
	for _, ids := range calls {
		total += len(ids)
	}
	if total != n || len(calls) > n/2 {
		t.Fatalf("%d requests, 5 ms apart, took %d calls carrying %d instances: %v", n, len(calls), total, calls)
	}
}

func TestCoalescerRespectsTheLimit(t *testing.T) {
	c, iam := newCoalescerForTest(t, 10*time.Millisecond, 100)
	var reqs []BatchInstanceRequest
	for i := 0; i < 10; i++ {
		var ids []string
		for j := 0; j < 30; j++ {
			ids = append(ids, fmt.Sprintf("%d-%d", i, j))
		}
		reqs = append(reqs, hostGrant("view_host", ids...))
	}
	for i, err := range concurrently(c, reqs) {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	total := 0
	for _, ids := range iam.snapshot() {
		if len(ids) > 100 {
			t.Fatalf("a merged call carries %d instances, over the limit 100", len(ids))
		}
		total += len(ids)
	}
	if total != 300 {
		t.Fatalf("the calls carried %d instances, want 300", total)
	}
}

func TestCoalescerIsolatesAFailingRequest(t *testing.T) {
	c, _ := newCoalescerForTest(t, 20*time.Millisecond, 200)
	reqs := []BatchInstanceRequest{hostGrant("view_host", "1"), hostGrant("view_host", "bad"), hostGrant("view_host", "3")}
	errs := concurrently(c, reqs)
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("good requests failed: %v, %v", errs[0], errs[2])
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "bad instance") {
		t.Fatalf("the bad request got %v", errs[1])
	}
}

func TestCoalescerKeepsDifferentRequestsApart(t *testing.T) {
	c, iam := newCoalescerForTest(t, 20*time.Millisecond, 200)
	reqs := []BatchInstanceRequest{hostGrant("view_host", "1"), hostGrant("edit_host", "2")}
	for _, err := range concurrently(c, reqs) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, ids := range iam.snapshot() {
		if len(ids) != 1 {
			t.Fatalf("requests for different actions were merged: %v", iam.snapshot())
		}
	}
}

func TestCoalescerOffSendsDirectly(t *testing.T) {
	c, iam := newCoalescerForTest(t, 0, 200)
	var reqs []BatchInstanceRequest
	for i := 0; i < 5; i++ {
		reqs = append(reqs, hostGrant("view_host", fmt.Sprint(i)))
	}
	for _, err := range concurrently(c, reqs) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(iam.snapshot()); n != 5 {
		t.Fatalf("with the window off, 5 requests took %d calls", n)
	}
}
