package sandbox_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

const (
	gw  = "gateway"
	esb = "esb"

	goodAuth = `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret"}`
)

// fixedNow is the clock of most tests: 2026-01-01T00:00:00Z.
var fixedNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newServer(t testing.TB, opts ...sandbox.Option) *sandbox.Server {
	t.Helper()
	opts = append([]sandbox.Option{sandbox.WithNow(func() time.Time { return fixedNow })}, opts...)
	s, err := sandbox.New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (r response) code() int {
	n, _ := r.body["code"].(float64)
	return int(n)
}

func (r response) message() string {
	s, _ := r.body["message"].(string)
	return s
}

// data returns the answer's data as a list of {action, policy_id, statistics}.
func (r response) entries(t testing.TB) []entry {
	t.Helper()
	var env struct {
		Data []entry `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.raw), &env); err != nil {
		t.Fatalf("decode data: %v\n%s", err, r.raw)
	}
	return env.Data
}

type entry struct {
	Action struct {
		ID string `json:"id"`
	} `json:"action"`
	PolicyID   int64 `json:"policy_id"`
	Statistics *struct {
		InstanceCount int `json:"instance_count"`
	} `json:"statistics"`
}

func (e entry) count() int {
	if e.Statistics == nil {
		return -1
	}
	return e.Statistics.InstanceCount
}

func findEntry(es []entry, action string) (entry, bool) {
	for _, e := range es {
		if e.Action.ID == action {
			return e, true
		}
	}
	return entry{}, false
}

// path maps a transport and endpoint name to its route.
func route(tr, ep string) string {
	if tr == esb {
		return "/api/c/compapi/v2/iam/authorization/" + ep + "/"
	}
	return "/api/v1/open/authorization/" + ep + "/"
}

// send posts body to ep through tr with the default app's credentials (ESB: in the body, with
// bk_username admin, unless the body already has credentials). Extra headers are key, value pairs.
func send(t testing.TB, h http.Handler, tr, ep, body string, headers ...string) response {
	t.Helper()
	if tr == esb && !hasHeader(headers, "X-Bkapi-Authorization") {
		body = withESBCredentials(body)
	}
	req := httptest.NewRequest(http.MethodPost, route(tr, ep), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if tr == gw {
		req.Header.Set("X-Bkapi-Authorization", goodAuth)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	return serve(t, h, req)
}

func serve(t testing.TB, h http.Handler, req *http.Request) response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	r := response{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	if err := json.Unmarshal(rec.Body.Bytes(), &r.body); err != nil {
		t.Fatalf("answer is not a JSON object: %v\n%s", err, r.raw)
	}
	return r
}

func withESBCredentials(body string) string {
	var m map[string]any
	if json.Unmarshal([]byte(body), &m) != nil || m == nil {
		return body
	}
	for _, k := range []string{"bk_app_code", "bk_app_secret", "bk_username", "bk_token"} {
		if _, ok := m[k]; ok {
			return body
		}
	}
	m["bk_app_code"], m["bk_app_secret"], m["bk_username"] = "bkiam-sandbox", "sandbox-secret", "admin"
	b, _ := json.Marshal(m)
	return string(b)
}

// wantOK asserts a successful answer.
func wantOK(t testing.TB, r response) {
	t.Helper()
	if r.status != http.StatusOK || r.code() != 0 || r.body["result"] != true || r.message() != "OK" {
		t.Fatalf("want success, got HTTP %d: %s", r.status, r.raw)
	}
}

// wantSaaSError asserts a SaaS-layer error on either transport: the SaaS status on the gateway (200
// on ESB, plus request_id), the code and the exact message.
func wantSaaSError(t testing.TB, tr string, r response, status, code int, message string) {
	t.Helper()
	if tr == esb {
		status = http.StatusOK
		if id, _ := r.body["request_id"].(string); len(id) != 32 {
			t.Errorf("ESB answer without a 32-char request_id: %s", r.raw)
		}
	} else if _, ok := r.body["request_id"]; ok {
		t.Errorf("gateway SaaS answer carries request_id: %s", r.raw)
	}
	if r.status != status || r.code() != code || r.body["result"] != false || r.message() != message {
		t.Fatalf("want HTTP %d code %d message %q, got HTTP %d: %s", status, code, message, r.status, r.raw)
	}
	if _, ok := r.body["code_name"]; ok {
		t.Errorf("SaaS error carries the gateway's code_name: %s", r.raw)
	}
	if r.header.Get("X-Bkapi-Error-Code") != "" {
		t.Errorf("SaaS error carries X-Bkapi-Error-Code")
	}
}

// wantGatewayError asserts a gateway-layer error.
func wantGatewayError(t testing.TB, r response, status, code int, codeName, message string) {
	t.Helper()
	if r.status != status || r.code() != code || r.body["code_name"] != codeName || r.message() != message ||
		r.body["result"] != false || r.body["data"] != nil {
		t.Fatalf("want gateway HTTP %d code %d %s %q, got HTTP %d: %s", status, code, codeName, message, r.status, r.raw)
	}
	if got := r.header.Get("X-Bkapi-Error-Code"); got != itoa(code) {
		t.Errorf("X-Bkapi-Error-Code = %q, want %d", got, code)
	}
	if got := r.header.Get("X-Bkapi-Error-Message"); got != message {
		t.Errorf("X-Bkapi-Error-Message = %q", got)
	}
	if r.header.Get("X-Bkapi-Request-Id") == "" {
		t.Errorf("no X-Bkapi-Request-Id")
	}
}

// wantESBError asserts an error of ESB's own checks.
func wantESBError(t testing.TB, r response, code int, message string) {
	t.Helper()
	if id, _ := r.body["request_id"].(string); r.status != http.StatusOK || r.code() != code || r.message() != message || len(id) != 32 {
		t.Fatalf("want ESB HTTP 200 code %d %q with request_id, got HTTP %d: %s", code, message, r.status, r.raw)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// policies returns the stored policies of a filter, marshalled the way /_sandbox/policies answers.
func policies(t testing.TB, s *sandbox.Server, f sandbox.PolicyFilter) string {
	t.Helper()
	b, err := json.Marshal(s.Policies(f))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantPolicies compares the stored policies with the expected JSON (order-insensitive on keys).
func wantPolicies(t testing.TB, s *sandbox.Server, f sandbox.PolicyFilter, want string) {
	t.Helper()
	got := policies(t, s, f)
	var g, w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expected JSON: %v", err)
	}
	_ = json.Unmarshal([]byte(got), &g)
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("stored policies:\n got %s\nwant %s", got, want)
	}
}

const noPolicies = `{"policies":[]}`

var all = sandbox.PolicyFilter{}

func bothTransports(t *testing.T, f func(t *testing.T, tr string)) {
	for _, tr := range []string{gw, esb} {
		t.Run(tr, func(t *testing.T) { f(t, tr) })
	}
}

func loadModel(t testing.TB, js string) *sandbox.Model {
	t.Helper()
	m, err := sandbox.LoadModel([]byte(js))
	if err != nil {
		t.Fatalf("LoadModel: %v", err)
	}
	return m
}

func withModel(m *sandbox.Model) sandbox.Option { return sandbox.WithModel(m) }

func withMaxBody(n int64) sandbox.Option { return sandbox.WithMaxBodyBytes(n) }

func hasHeader(headers []string, name string) bool {
	for i := 0; i < len(headers); i += 2 {
		if strings.EqualFold(headers[i], name) {
			return true
		}
	}
	return false
}
