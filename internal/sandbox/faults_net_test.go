package sandbox_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// post sends one gateway grant over a real connection, as a client does.
func post(ctx context.Context, url, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/v1/open/authorization/batch_instance/", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Bkapi-Authorization", goodAuth)
	return http.DefaultTransport.RoundTrip(req)
}

// TestHTMLFailFault: a proxy's error page, with no envelope, on both transports.
func TestHTMLFailFault(t *testing.T) {
	bothTransports(t, func(t *testing.T, tr string) {
		s := newServer(t)
		if err := s.SetFaults(sandbox.Faults{Fail: &sandbox.FailFault{Count: 1, Status: 502, Code: 1, Body: "html"}}); err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		body := hostGrant("alice", "1")
		if tr == esb {
			body = withESBCredentials(body)
		}
		req := httptest.NewRequest(http.MethodPost, route(tr, "batch_instance"), strings.NewReader(body))
		req.Header.Set("X-Bkapi-Authorization", goodAuth)
		s.ServeHTTP(rec, req)
		if rec.Code != 502 || rec.Header().Get("Content-Type") != "text/html" || !strings.Contains(rec.Body.String(), "<h1>502 Bad Gateway</h1>") {
			t.Fatalf("answer %d %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		wantPolicies(t, s, all, noPolicies)
		wantOK(t, send(t, s, tr, "batch_instance", hostGrant("alice", "1")))
	})
	if err := newServer(t).SetFaults(sandbox.Faults{Fail: &sandbox.FailFault{Count: 1, Status: 502, Code: 1, Body: "xml"}}); err == nil {
		t.Fatal("an unknown body kind was accepted")
	}
}

// TestDropFault: the connection is reset; a served drop changes the store though the client never
// hears of it, an unserved one changes nothing.
func TestDropFault(t *testing.T) {
	for _, served := range []bool{false, true} {
		s := newServer(t)
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		if err := s.SetFaults(sandbox.Faults{Drop: &sandbox.DropFault{After: 1, Count: 1, Served: served}}); err != nil {
			t.Fatal(err)
		}
		resp, err := post(context.Background(), srv.URL, hostGrant("alice", "1"))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		resp, err = post(context.Background(), srv.URL, hostGrant("alice", "2"))
		if err == nil {
			_ = resp.Body.Close()
		}
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("served=%v: the dropped call got %v, want a connection reset", served, err)
		}
		want := []string{"/bk_cmdb,host,1/"}
		if served {
			want = append(want, "/bk_cmdb,host,2/")
		}
		if got := s.Policies(all).Policies; len(got) != 1 || strings.Join(got[0].Paths, " ") != strings.Join(want, " ") {
			t.Fatalf("served=%v: the store holds %+v, want %v", served, got, want)
		}
		// The fault is spent: the next call is answered.
		resp, err = post(context.Background(), srv.URL, hostGrant("alice", "3"))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("after the drop: %v %v", resp, err)
		}
		_ = resp.Body.Close()
	}
}

// TestSlowFault: a client that gives up on a slow call does not undo it: the server carries it out
// after the delay, as a real one does.
func TestSlowFault(t *testing.T) {
	s := newServer(t)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	if err := s.SetFaults(sandbox.Faults{Slow: &sandbox.SlowFault{Count: 1, DelayMS: 300}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	resp, err := post(ctx, srv.URL, hostGrant("alice", "1"))
	if err == nil {
		_ = resp.Body.Close()
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the slow call answered within its timeout: %v", err)
	}
	wantPolicies(t, s, all, noPolicies)
	deadline := time.Now().Add(5 * time.Second)
	for len(s.Policies(all).Policies) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned slow call was never carried out")
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	resp, err = post(context.Background(), srv.URL, hostGrant("alice", "2"))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Fatalf("the fault is spent, but the next call took %v", d)
	}
}

// TestWaitIdleWaitsForAbandonedCalls: WaitIdle returns only once a slow
// call whose client gave up has been carried out, and at once when
// nothing is being served.
func TestWaitIdleWaitsForAbandonedCalls(t *testing.T) {
	s := newServer(t)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	if err := s.WaitIdle(context.Background()); err != nil {
		t.Fatalf("WaitIdle with nothing served: %v", err)
	}
	if err := s.SetFaults(sandbox.Faults{Slow: &sandbox.SlowFault{Count: 1, DelayMS: 300}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if resp, err := post(ctx, srv.URL, hostGrant("alice", "1")); err == nil {
		_ = resp.Body.Close()
		t.Fatal("the slow call answered within its timeout")
	}
	short, cancelShort := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancelShort()
	if err := s.WaitIdle(short); err == nil {
		t.Fatal("WaitIdle returned while the abandoned call was still being served")
	}
	if err := s.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(s.Policies(all).Policies) == 0 {
		t.Fatal("WaitIdle returned before the abandoned call was carried out")
	}
}
