package bkiam

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func fixedBackoff(now time.Time) backoff {
	return backoff{now: func() time.Time { return now }, int64: func(n int64) int64 { return n - 1 }} // always the top
}

func TestBackoff(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := fixedBackoff(now)
	minW, maxW := time.Second, 30*time.Second
	tests := []struct {
		name    string
		attempt int
		status  int
		header  string // Retry-After; "" = no response at all
		want    time.Duration
	}{
		{"first retry waits min", 0, 0, "", time.Second},
		{"second retry up to 2*min", 1, 0, "", 2 * time.Second},
		{"fourth retry up to 8*min", 3, 0, "", 8 * time.Second},
		{"capped at max", 10, 0, "", 30 * time.Second},
		{"huge attempt does not overflow", 200, 0, "", 30 * time.Second},
		{"Retry-After seconds", 0, http.StatusTooManyRequests, "7", 7 * time.Second},
		{"Retry-After zero", 3, http.StatusTooManyRequests, "0", 0},
		{"Retry-After seconds capped", 0, http.StatusTooManyRequests, "3600", 30 * time.Second},
		{"Retry-After date", 0, http.StatusTooManyRequests, now.Add(12 * time.Second).Format(http.TimeFormat), 12 * time.Second},
		{"Retry-After date in the past", 0, http.StatusTooManyRequests, now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"Retry-After garbage ignored", 1, http.StatusTooManyRequests, "soon", 2 * time.Second},
		{"Retry-After on 200 (ESB rate limit) honoured", 0, http.StatusOK, "4", 4 * time.Second},
	}
	for _, tt := range tests {
		var resp *http.Response
		if tt.header != "" {
			resp = &http.Response{StatusCode: tt.status, Header: http.Header{"Retry-After": []string{tt.header}}, Body: http.NoBody}
		}
		if got := b.wait(minW, maxW, tt.attempt, resp); got != tt.want {
			t.Errorf("%s: wait = %s, want %s", tt.name, got, tt.want)
		}
	}
	// Full jitter: the real random source stays within [min, min*2^attempt].
	random := newBackoff()
	for i := 0; i < 1000; i++ {
		if d := random.wait(minW, maxW, 2, nil); d < minW || d > 4*minW {
			t.Fatalf("jittered wait %s outside [1s, 4s]", d)
		}
	}
}

func TestRetryThenSuccess(t *testing.T) {
	fs := newFakeServer(t,
		reply(503, `<html>busy</html>`, "Content-Type", "text/html"),
		reply(200, `{"result":false,"code":1306429,"message":"rate limited","request_id":"r1"}`),
		reply(200, okBody))
	got, err := mustClient(t, esbConfig(fs.URL)).BatchInstance(context.Background(), grantReq())
	if err != nil || len(got) != 1 {
		t.Fatalf("got %v, %v", got, err)
	}
	if n := len(fs.requests()); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
}

func TestRetryExhausted(t *testing.T) {
	for _, maxRetries := range []int{0, 1, 4, -3} {
		fs := newFakeServer(t, reply(502, `{"result":false,"code":1650200,"code_name":"BAD_GATEWAY","message":"bad gateway"}`, "X-Bkapi-Error-Code", "1650200"))
		cfg := gatewayConfig(fs.URL)
		cfg.MaxRetries = maxRetries
		_, err := mustClient(t, cfg).BatchInstance(context.Background(), grantReq())
		var e *Error
		want := max(maxRetries, 0) + 1
		if !errors.As(err, &e) || e.Attempts != want || len(fs.requests()) != want {
			t.Errorf("MaxRetries %d: err = %v, attempts = %d, want %d", maxRetries, err, len(fs.requests()), want)
		}
		if !errors.Is(err, ErrTransient) {
			t.Errorf("exhausted 1650200 is not ErrTransient")
		}
	}
}

func TestNoRetryOnValidationOrAuth(t *testing.T) {
	for _, body := range []string{
		`{"result":false,"code":1902412,"message":"x"}`,
		`{"result":false,"code":1902401,"message":"x"}`,
		`{"result":false,"code":1306000,"message":"x"}`,
	} {
		fs := newFakeServer(t, reply(200, body))
		_, _ = mustClient(t, esbConfig(fs.URL)).BatchInstance(context.Background(), grantReq())
		if n := len(fs.requests()); n != 1 {
			t.Errorf("%s: %d attempts, want 1", body, n)
		}
	}
}

func TestRetryAfterHonouredEndToEnd(t *testing.T) {
	// Without Retry-After the first backoff is exactly RetryWaitMin (1ms); with "Retry-After: 1"
	// capped at RetryWaitMax it is 60ms. Timers never fire early, so a lower bound is safe.
	fs := newFakeServer(t, reply(429, `{"result":false,"code":1642903,"message":"slow down"}`,
		"X-Bkapi-Error-Code", "1642903", "Retry-After", "1"), reply(200, okBody))
	cfg := gatewayConfig(fs.URL)
	cfg.RetryWaitMax = 60 * time.Millisecond
	start := time.Now()
	if _, err := mustClient(t, cfg).BatchInstance(context.Background(), grantReq()); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 60*time.Millisecond {
		t.Fatalf("finished after %s: Retry-After not honoured", el)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	got := make(chan struct{}, 10)
	fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		reply(503, `busy`)(w, r)
	})
	cfg := gatewayConfig(fs.URL)
	cfg.RetryWaitMin, cfg.RetryWaitMax = time.Minute, time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-got
		time.Sleep(50 * time.Millisecond) // let the client enter its backoff
		cancel()
	}()
	start := time.Now()
	_, err := mustClient(t, cfg).BatchInstance(ctx, grantReq())
	if time.Since(start) > 10*time.Second {
		t.Fatalf("cancellation took %s", time.Since(start))
	}
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, context.Canceled) || e.Layer != LayerNetwork {
		t.Fatalf("err = %v", err)
	}
	if errors.Is(err, ErrTransient) || e.Attempts != 1 || len(fs.requests()) != 1 {
		t.Errorf("transient=%v attempts=%d requests=%d", errors.Is(err, ErrTransient), e.Attempts, len(fs.requests()))
	}
	if !strings.HasPrefix(err.Error(), "the grant was cancelled before the API gateway answered (request "+e.RequestID) {
		t.Errorf("error text = %q", err.Error())
	}
}

func TestContextDeadline(t *testing.T) {
	fs := newFakeServer(t, reply(503, `busy`))
	cfg := gatewayConfig(fs.URL)
	cfg.RetryWaitMin, cfg.RetryWaitMax = time.Minute, time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := mustClient(t, cfg).BatchInstance(ctx, grantReq())
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTransient) {
		t.Fatalf("err = %v", err)
	}
}

func TestPerAttemptTimeoutRetried(t *testing.T) {
	fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		select { // hang until the client gives up on this attempt
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}, reply(200, okBody))
	cfg := gatewayConfig(fs.URL)
	cfg.Timeout = 100 * time.Millisecond
	if _, err := mustClient(t, cfg).BatchInstance(context.Background(), grantReq()); err != nil {
		t.Fatalf("err = %v", err)
	}
	if n := len(fs.requests()); n != 2 {
		t.Fatalf("%d attempts, want 2", n)
	}
}

func TestNetworkErrorExhausted(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // connection refused from now on
	_, err := mustClient(t, gatewayConfig(url)).BatchInstance(context.Background(), grantReq())
	var e *Error
	if !errors.As(err, &e) || e.Layer != LayerNetwork || !errors.Is(err, ErrTransient) || e.Attempts != 3 {
		t.Fatalf("err = %#v", err)
	}
	if !hex32.MatchString(e.RequestID) || !strings.HasPrefix(err.Error(), "could not reach the API gateway for the grant (request "+e.RequestID+", after 3 attempts): ") {
		t.Errorf("error text = %q", err.Error())
	}
}

func TestTLSVerifiedByDefaultAndBaseClientReused(t *testing.T) {
	srv := httptest.NewUnstartedServer(reply(200, okBody))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the rejected handshake is expected
	srv.StartTLS()
	defer srv.Close()

	// Default client: the test certificate is unknown, which no retry can fix.
	_, err := mustClient(t, gatewayConfig(srv.URL)).BatchInstance(context.Background(), grantReq())
	var e *Error
	if !errors.As(err, &e) || e.Layer != LayerNetwork || e.Attempts != 1 || errors.Is(err, ErrTransient) {
		t.Fatalf("err = %v (attempts %d)", err, e.Attempts)
	}

	// The caller's client (trusting the test CA) is reused, and not modified.
	base := srv.Client()
	cfg := gatewayConfig(srv.URL)
	cfg.HTTPClient = base
	if _, err := mustClient(t, cfg).BatchInstance(context.Background(), grantReq()); err != nil {
		t.Fatalf("with base client: %v", err)
	}
	if base.CheckRedirect != nil || base.Timeout != 0 {
		t.Errorf("caller's http.Client was modified")
	}
}
