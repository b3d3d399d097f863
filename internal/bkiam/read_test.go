package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// bothRoutes are the policy lists the sandbox tests read: the default
// (ABAC) one, on the route the SDKs use (the open route cannot be read
// through a real gateway, see the package doc).
var bothRoutes = []struct {
	route PolicyKind
	path  string // the route path, as errors name it
}{
	{PolicyKindABAC, "/api/v1/systems/bk_cmdb/policies"},
}

// sandboxClient is a gateway client of the in-process sandbox's allow-listed app.
func sandboxClient(t *testing.T, base string) *Client {
	t.Helper()
	return mustClient(t, Config{APIGatewayURL: base, AppCode: sandboxtest.AppCode, AppSecret: sandboxtest.AppSecret,
		Timeout: 10 * time.Second, MaxRetries: 2, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond})
}

func grantHosts(t *testing.T, c *Client, subject Subject, action string, hosts ...string) int64 {
	t.Helper()
	var inst []Instance
	for _, h := range hosts {
		inst = append(inst, Instance{ID: h, Name: "host" + h})
	}
	res, err := c.BatchInstance(context.Background(), BatchInstanceRequest{System: "bk_cmdb", Operate: OperationGrant,
		ExpiredAt: PermanentExpiry, Subject: subject, Actions: []Action{{ID: action}},
		Resources: []InstanceResource{{System: "bk_cmdb", Type: "host", Instances: inst}}})
	if err != nil {
		t.Fatalf("grant to %v: %v", subject, err)
	}
	for _, r := range res {
		if r.Action.ID == action {
			return r.PolicyID
		}
	}
	t.Fatalf("grant to %v: no policy for %s in %+v", subject, action, res)
	return 0
}

// sandboxStats reads /_sandbox/stats over HTTP, the interface the contract fixes.
func sandboxStats(t *testing.T, base string) map[string]int {
	t.Helper()
	resp, err := http.Get(base + "/_sandbox/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Requests map[string]int }
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.Requests
}

func TestReadSandboxBothRoutes(t *testing.T) {
	for _, rt := range bothRoutes {
		t.Run(string(rt.route), func(t *testing.T) {
			sb := sandboxtest.Start(t)
			c := sandboxClient(t, sb.URL)
			ctx := context.Background()
			alice, group := Subject{Type: "user", ID: "alice"}, Subject{Type: "group", ID: "2"}
			saasID := grantHosts(t, c, alice, "edit_host", "1", "2")
			grantHosts(t, c, group, "edit_host", "7")
			grantHosts(t, c, Subject{Type: "user", ID: "bob"}, "view_host", "1") // another action: not listed

			page, err := c.ListPolicies(ctx, rt.route, "bk_cmdb", "edit_host", 1, 100, 0)
			if err != nil {
				t.Fatalf("ListPolicies: %v", err)
			}
			if page.Count != 2 || len(page.Results) != 2 || page.Timestamp <= 0 {
				t.Fatalf("page = %+v, want 2 rows and a timestamp", page)
			}
			got := map[Subject]Policy{}
			for _, p := range page.Results {
				got[p.Subject] = p
			}
			a, ok := got[alice]
			if !ok {
				t.Fatalf("alice's grant not listed: %+v", page.Results)
			}
			if a.ID <= 0 || a.ID == saasID {
				t.Errorf("backend id %d must be positive and differ from the SaaS policy_id %d", a.ID, saasID)
			}
			var expr map[string]any
			if err := json.Unmarshal(a.Expression, &expr); err != nil {
				t.Fatalf("expression %s: %v", a.Expression, err)
			}
			if expr["field"] != "host.id" || expr["op"] != "in" || fmt.Sprint(expr["value"]) != "[1 2]" {
				t.Errorf("expression = %s", a.Expression)
			}
			if a.Action != "edit_host" || a.ExpiredAt != PermanentExpiry {
				t.Errorf("row = %+v", a)
			}
			if g := got[group]; string(g.Expression) != `{"field":"host.id","op":"eq","value":"7"}` {
				t.Errorf("group row = %+v (%s)", g, g.Expression)
			}

			// The same through a scan; after the revoke, the scan no longer lists alice.
			all, err := c.ScanPolicies(ctx, rt.route, "bk_cmdb", "edit_host")
			if err != nil || len(all) != 2 {
				t.Fatalf("ScanPolicies = %d rows, %v", len(all), err)
			}
			_, err = c.BatchInstance(ctx, BatchInstanceRequest{System: "bk_cmdb", Operate: OperationRevoke, Subject: alice,
				Actions:   []Action{{ID: "edit_host"}},
				Resources: []InstanceResource{{System: "bk_cmdb", Type: "host", Instances: []Instance{{ID: "1", Name: "h1"}, {ID: "2", Name: "h2"}}}}})
			if err != nil {
				t.Fatalf("revoke: %v", err)
			}
			left, err := c.ScanPolicies(ctx, rt.route, "bk_cmdb", "edit_host")
			if err != nil || len(left) != 1 || left[0].Subject != group {
				t.Fatalf("ScanPolicies after revoke = %+v, %v; want the group's row only", left, err)
			}
			st := sandboxStats(t, sb.URL)
			if st["policy_list"] != 3 || st["policy_get"] != 0 {
				t.Errorf("stats = %v, want 3 policy_list and no policy_get", st)
			}
		})
	}
}

// manyUsersModel is the default model with n extra users, for lists longer than one page.
func manyUsersModel(t *testing.T, n int) *sandbox.Model {
	t.Helper()
	raw, err := json.Marshal(sandbox.DefaultModel())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	users := m["users"].([]any)
	for i := range n {
		users = append(users, fmt.Sprintf("u%04d", i))
	}
	m["users"] = users
	raw, _ = json.Marshal(m)
	model, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatalf("LoadModel: %v", err)
	}
	return model
}

// TestScanPagesSandbox: a list of n policies costs exactly ceil(n/500) calls, each of 500 rows,
// every page after the first cut at the first page's timestamp.
func TestScanPagesSandbox(t *testing.T) {
	const users = 1201
	// A fixed clock: the first page's cut (today 00:00 of the sandbox's clock) is known.
	now := time.Date(2030, 5, 6, 15, 4, 5, 0, time.UTC)
	wantTS := fmt.Sprint(time.Date(2030, 5, 6, 0, 0, 0, 0, time.UTC).Unix())
	sb := sandboxtest.Start(t, sandbox.WithModel(manyUsersModel(t, users)), sandbox.WithNow(func() time.Time { return now }))
	// A recording front: the queries the client sends.
	var mu sync.Mutex
	var queries []url.Values
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/policies") {
			mu.Lock()
			queries = append(queries, r.URL.Query())
			mu.Unlock()
		}
		sb.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	c := sandboxClient(t, front.URL)

	// Grant in parallel: the sandbox serialises per subject only.
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range users {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			grantHosts(t, c, Subject{Type: "user", ID: fmt.Sprintf("u%04d", i)}, "view_host", fmt.Sprint(i))
		}()
	}
	wg.Wait()

	for _, rt := range bothRoutes {
		t.Run(string(rt.route), func(t *testing.T) {
			before := sandboxStats(t, front.URL)["policy_list"]
			mu.Lock()
			queries = nil
			mu.Unlock()
			all, err := c.ScanPolicies(context.Background(), rt.route, "bk_cmdb", "view_host")
			if err != nil {
				t.Fatalf("ScanPolicies: %v", err)
			}
			if len(all) != users {
				t.Fatalf("%d policies, want %d", len(all), users)
			}
			seen := map[string]bool{}
			for _, p := range all {
				seen[p.Subject.ID] = true
			}
			if len(seen) != users {
				t.Errorf("%d distinct subjects, want %d", len(seen), users)
			}
			if got := sandboxStats(t, front.URL)["policy_list"] - before; got != 3 {
				t.Errorf("%d policy_list calls, want ceil(%d/500) = 3", got, users)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(queries) != 3 {
				t.Fatalf("queries = %v", queries)
			}
			if queries[0].Has("timestamp") {
				t.Errorf("first page sent a timestamp: %v", queries[0])
			}
			for i, q := range queries {
				if q.Get("page") != fmt.Sprint(i+1) || q.Get("page_size") != "500" || q.Get("action_id") != "view_host" {
					t.Errorf("query %d = %v", i, q)
				}
				if i > 0 && q.Get("timestamp") != wantTS {
					t.Errorf("page %d timestamp %q, want the first page's %s", i+1, q.Get("timestamp"), wantTS)
				}
			}
		})
	}
}

// pageBody is a backend list answer.
func pageBody(count int, ts int64, rows ...string) string {
	results := "null"
	if rows != nil {
		results = "[" + strings.Join(rows, ",") + "]"
	}
	return fmt.Sprintf(`{"code":0,"message":"ok","data":{"metadata":{"system":"bk_cmdb","action":{"id":"edit_host"},"timestamp":%d},"count":%d,"results":%s}}`,
		ts, count, results)
}

func row(id int64, user string, expiredAt int64) string {
	return fmt.Sprintf(`{"version":"1","id":%d,"subject":{"type":"user","id":%q,"name":%q},"expression":{"field":"host.id","op":"eq","value":"1"},"expired_at":%d}`,
		id, user, user, expiredAt)
}

func rows(from, n int) []string {
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, row(int64(from+i), fmt.Sprintf("u%d", from+i), PermanentExpiry))
	}
	return out
}

// TestScanPagingFake covers the paging rules against scripted answers: the count, not the length
// of a page, ends the list; every later page reuses the first page's timestamp.
func TestScanPagingFake(t *testing.T) {
	const ts = 1593273600
	tests := []struct {
		name     string
		pages    []string
		wantRows int
	}{
		{"empty list: results null", []string{pageBody(0, ts)}, 0},
		{"one short page", []string{pageBody(3, ts, rows(1, 3)...)}, 3},
		{"exactly one full page", []string{pageBody(500, ts, rows(1, 500)...)}, 500},
		// Unresolvable subjects are skipped but counted: short pages before the end.
		{"short pages", []string{pageBody(1100, ts, rows(1, 498)...), pageBody(1100, ts, rows(1000, 3)...), pageBody(1100, ts, rows(2000, 1)...)}, 502},
		// A page made only of unresolvable subjects is null, yet the list goes on.
		{"null page before the end", []string{pageBody(1100, ts, rows(1, 500)...), pageBody(1100, ts), pageBody(1100, ts, rows(2000, 2)...)}, 502},
		// Policies deleted while scanning shift rows: a row seen twice is kept once.
		{"row repeated across pages", []string{pageBody(600, ts, rows(1, 500)...), pageBody(600, ts, rows(500, 3)...)}, 502},
		// The list shrank under the scan: the later page's count ends it.
		{"count shrinks", []string{pageBody(1100, ts, rows(1, 500)...), pageBody(900, ts, rows(600, 400)...)}, 900},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hs []http.HandlerFunc
			for _, p := range tt.pages {
				hs = append(hs, reply(200, p))
			}
			hs = append(hs, reply(500, `{"code":1,"message":"scanned past the end"}`))
			var ql queryLog
			fs := newFakeServer(t, ql.wrap(hs...)...)
			c := mustClient(t, gatewayConfig(fs.URL))
			got, err := c.ScanPolicies(context.Background(), PolicyKindABAC, "bk_cmdb", "edit_host")
			if err != nil {
				t.Fatalf("ScanPolicies: %v", err)
			}
			if len(got) != tt.wantRows {
				t.Errorf("%d rows, want %d", len(got), tt.wantRows)
			}
			reqs := fs.requests()
			if len(reqs) != len(tt.pages) {
				t.Fatalf("%d requests, want %d", len(reqs), len(tt.pages))
			}
			qs := ql.all()
			for i, r := range reqs {
				q := qs[i]
				wantTS := fmt.Sprint(ts)
				if i == 0 {
					wantTS = "" // the server's default cut for the first page
				}
				if r.Method != http.MethodGet || r.Path != "/api/bk-iam/prod/api/v1/systems/bk_cmdb/policies" ||
					q.Get("page") != fmt.Sprint(i+1) || q.Get("page_size") != "500" || q.Get("timestamp") != wantTS {
					t.Errorf("request %d: %s %s ?%v", i, r.Method, r.Path, q)
				}
			}
		})
	}
}

// queryLog records the queries a fake server receives (fakeServer keeps the path only).
type queryLog struct {
	mu sync.Mutex
	qs []url.Values
}

func (ql *queryLog) wrap(hs ...http.HandlerFunc) []http.HandlerFunc {
	out := make([]http.HandlerFunc, len(hs))
	for i, h := range hs {
		out[i] = func(w http.ResponseWriter, r *http.Request) {
			ql.mu.Lock()
			ql.qs = append(ql.qs, r.URL.Query())
			ql.mu.Unlock()
			h(w, r)
		}
	}
	return out
}

func (ql *queryLog) all() []url.Values {
	ql.mu.Lock()
	defer ql.mu.Unlock()
	return append([]url.Values(nil), ql.qs...)
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name     string
		handlers []http.HandlerFunc
		wantIs   error
		wantCode int
		want     []string // in the message
		wantReqs int
	}{
		{name: "not a client of the system",
			handlers: []http.HandlerFunc{reply(200, `{"code":1901401,"message":"unauthorized:app(my-app) is not allowed to call system (bk_cmdb) api","data":{}}`)},
			wantIs:   ErrForbidden, wantCode: 1901401, wantReqs: 1,
			want: []string{"GET /api/v1/systems/bk_cmdb/policies", "code 1901401", "not a client of system bk_cmdb", "registered as a client"}},
		{name: "another system's policy",
			handlers: []http.HandlerFunc{reply(200, `{"code":1901403,"message":"no permission:system(bk_cmdb) can't access system(bk_job)'s policy","data":{}}`)},
			wantIs:   ErrForbidden, wantCode: 1901403, wantReqs: 1,
			want: []string{"GET /api/v1/systems/bk_cmdb/policies", "code 1901403", "can't access system(bk_job)"}},
		{name: "unknown action",
			handlers: []http.HandlerFunc{reply(200, `{"code":1901404,"message":"not found:action(edit_host) of system(bk_cmdb) not exists","data":{}}`)},
			wantIs:   ErrNotFound, wantCode: 1901404, wantReqs: 1,
			want: []string{"GET /api/v1/systems/bk_cmdb/policies", "code 1901404", "action(edit_host)"}},
		{name: "legacy route redirected",
			handlers: []http.HandlerFunc{reply(302, "", "Location", "/elsewhere/policies")},
			wantIs:   ErrUnexpectedResponse, wantReqs: 1,
			want: []string{"GET /api/v1/systems/bk_cmdb/policies", "HTTP 302", "not followed", "apigw_url"}},
		{name: "gateway rejects the app",
			handlers: []http.HandlerFunc{reply(403, `{"result":false,"code":1640301,"code_name":"APP_NO_PERMISSION","message":"App has no permission","data":null}`,
				"X-Bkapi-Error-Code", "1640301", "X-Bkapi-Request-Id", "gw-req-1")},
			wantIs: ErrForbidden, wantCode: 1640301, wantReqs: 1,
			want: []string{"API gateway", "code 1640301", "gw-req-1", "GET /api/v1/systems/bk_cmdb/policies"}},
		{name: "HTML 502 retried until the end",
			handlers: []http.HandlerFunc{reply(502, "<html><body>Bad Gateway</body></html>", "Content-Type", "text/html")},
			wantIs:   ErrTransient, wantReqs: 3,
			want: []string{"HTTP 502", "non-JSON", "after 3 attempts", "GET /api/v1/systems/bk_cmdb/policies"}},
		{name: "row without subject",
			handlers: []http.HandlerFunc{reply(200, pageBody(1, 1, `{"id":3,"expression":{},"expired_at":1}`))},
			wantIs:   ErrUnexpectedResponse, wantReqs: 1,
			want: []string{"malformed", "policy 3 without a subject"}},
		{name: "no data",
			handlers: []http.HandlerFunc{reply(200, `{"code":0,"message":"ok","data":null}`)},
			wantIs:   ErrUnexpectedResponse, wantReqs: 1, want: []string{"no data"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, tt.handlers...)
			c := mustClient(t, gatewayConfig(fs.URL))
			_, err := c.ListPolicies(context.Background(), PolicyKindABAC, "bk_cmdb", "edit_host", 1, 500, 0)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want an *Error", err, err)
			}
			if !errors.Is(err, tt.wantIs) || e.Code != tt.wantCode {
				t.Errorf("err = %v; want Is(%v), code %d", err, tt.wantIs, tt.wantCode)
			}
			reqs := fs.requests()
			msg := err.Error()
			if e.RequestID == "" || !strings.Contains(msg, "request "+e.RequestID) || e.RequestID != reqs[len(reqs)-1].Header.Get("X-Request-Id") {
				t.Errorf("request id %q not the last attempt's or not in %q", e.RequestID, msg)
			}
			for _, w := range append(tt.want, "GET /api/v1/") {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q: %s", w, msg)
				}
			}
			if strings.Contains(msg, testAppSecret) {
				t.Errorf("message contains the secret: %s", msg)
			}
			// Redirect targets are never requested: only our own paths reach the server.
			if len(reqs) != tt.wantReqs {
				t.Errorf("%d requests, want %d", len(reqs), tt.wantReqs)
			}
			for _, r := range reqs {
				if strings.Contains(r.Path, "elsewhere") || r.Method != http.MethodGet {
					t.Errorf("unexpected request %s %s", r.Method, r.Path)
				}
			}
		})
	}
}

// TestRead502RetriedThenServed: a transient gateway failure is retried (reads are safe to repeat).
func TestRead502RetriedThenServed(t *testing.T) {
	fs := newFakeServer(t, reply(502, "<html>Bad Gateway</html>", "Content-Type", "text/html"), reply(200, pageBody(1, 5, row(9, "alice", PermanentExpiry))))
	c := mustClient(t, gatewayConfig(fs.URL))
	p, err := c.ListPolicies(context.Background(), PolicyKindABAC, "bk_cmdb", "edit_host", 1, 100, 0)
	if err != nil || len(p.Results) != 1 || p.Results[0].ID != 9 || p.Timestamp != 5 {
		t.Fatalf("ListPolicies = %+v, %v", p, err)
	}
	reqs := fs.requests()
	if len(reqs) != 2 || reqs[0].Header.Get("X-Request-Id") == reqs[1].Header.Get("X-Request-Id") {
		t.Errorf("want 2 attempts with distinct request ids, got %d", len(reqs))
	}
	for _, r := range reqs {
		if r.Path != "/api/bk-iam/prod/api/v1/systems/bk_cmdb/policies" || r.Header.Get("X-Bkapi-Authorization") == "" {
			t.Errorf("request %s without auth or on the wrong path", r.Path)
		}
	}
}

func TestReadRefusedLocally(t *testing.T) {
	fs := newFakeServer(t, reply(200, pageBody(0, 1)))
	esb := mustClient(t, esbConfig(fs.URL))
	gw := mustClient(t, gatewayConfig(fs.URL))
	ctx := context.Background()
	tests := []struct {
		name   string
		call   func() error
		wantIs error
		want   string
	}{
		{"esb list", func() error {
			_, err := esb.ListPolicies(ctx, PolicyKindABAC, "bk_cmdb", "edit_host", 1, 100, 0)
			return err
		}, ErrReadNeedsGateway, "apigw_url"},
		{"esb scan", func() error { _, err := esb.ScanPolicies(ctx, PolicyKindABAC, "bk_cmdb", "edit_host"); return err }, ErrReadNeedsGateway, "drift detection"},
		{"bad kind", func() error { _, err := gw.ListPolicies(ctx, "v3", "bk_cmdb", "edit_host", 1, 100, 0); return err }, ErrValidation, "kind"},
		{"page size", func() error {
			_, err := gw.ListPolicies(ctx, PolicyKindABAC, "bk_cmdb", "edit_host", 1, 501, 0)
			return err
		}, ErrValidation, "page size"},
		{"page 0", func() error {
			_, err := gw.ListPolicies(ctx, PolicyKindABAC, "bk_cmdb", "edit_host", 0, 100, 0)
			return err
		}, ErrValidation, "page"},
		{"no action", func() error { _, err := gw.ListPolicies(ctx, PolicyKindABAC, "bk_cmdb", " ", 1, 100, 0); return err }, ErrValidation, "action"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, tt.wantIs) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want Is(%v) mentioning %q", err, tt.wantIs, tt.want)
			}
		})
	}
	if n := len(fs.requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
