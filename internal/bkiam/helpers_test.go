package bkiam

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	testAppCode   = "my-app"
	testAppSecret = "s3cr3t-APP-v4lue-0123"
	testBKToken   = "tok3n-BK-v4lue-4567"
	testUser      = "alice"
)

// recorded is one request as the fake server saw it.
type recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   map[string]any
	Raw    string
}

// fakeServer answers with the responses in order (the last one repeats) and records requests.
type fakeServer struct {
	*httptest.Server
	mu       sync.Mutex
	reqs     []recorded
	handlers []http.HandlerFunc
}

func newFakeServer(t *testing.T, handlers ...http.HandlerFunc) *fakeServer {
	t.Helper()
	fs := &fakeServer{handlers: handlers}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		fs.mu.Lock()
		n := len(fs.reqs)
		fs.reqs = append(fs.reqs, recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: string(raw)})
		h := fs.handlers[min(n, len(fs.handlers)-1)]
		fs.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(raw))) // handlers may read it again
		h(w, r)
	}))
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fakeServer) requests() []recorded {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]recorded(nil), fs.reqs...)
}

// reply writes a JSON body with the given status and headers.
func reply(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

const okBody = `{"result":true,"code":0,"message":"OK","data":[{"action":{"id":"edit_host"},"policy_id":12,"statistics":{"instance_count":2}}]}`

func gatewayConfig(url string) Config {
	return Config{
		APIGatewayURL: url + "/api/bk-iam/prod/",
		AppCode:       testAppCode, AppSecret: testAppSecret,
		TenantID: "tenant-a", UserAgent: "terraform-provider-bkiam/test",
		Timeout: 5 * time.Second, MaxRetries: 2,
		RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond,
	}
}

func esbConfig(url string) Config {
	return Config{
		ESBURL:  url,
		AppCode: testAppCode, AppSecret: testAppSecret,
		Username: testUser, BKToken: testBKToken,
		UserAgent: "terraform-provider-bkiam/test",
		Timeout:   5 * time.Second, MaxRetries: 2,
		RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond,
	}
}

func mustClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func grantReq() BatchInstanceRequest {
	return BatchInstanceRequest{
		System: "bk_cmdb", Operate: OperationGrant, ExpiredAt: PermanentExpiry,
		Subject: Subject{Type: "user", ID: "bob"},
		Actions: []Action{{ID: "edit_host"}},
		Resources: []InstanceResource{{System: "bk_cmdb", Type: "host",
			Instances: []Instance{{ID: "1", Name: "host1"}, {ID: "2", Name: "host2"}}}},
	}
}

// bodyOf reads the request body inside a handler.
func bodyOf(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}
