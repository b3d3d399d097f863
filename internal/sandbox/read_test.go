package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func getRead(t *testing.T, h http.Handler, path, auth string) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if auth != "" {
		req.Header.Set("X-Bkapi-Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	r := response{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	_ = json.Unmarshal(rec.Body.Bytes(), &r.body)
	return r
}

// listData decodes a policy list answer.
type listData struct {
	Code int `json:"code"`
	Data struct {
		Metadata struct {
			System    string `json:"system"`
			Action    struct{ ID string }
			Timestamp int64 `json:"timestamp"`
		} `json:"metadata"`
		Count   int `json:"count"`
		Results []struct {
			Version   string         `json:"version"`
			ID        int64          `json:"id"`
			Subject   map[string]any `json:"subject"`
			Expr      any            `json:"expression"`
			ExpiredAt int64          `json:"expired_at"`
		} `json:"results"`
	} `json:"data"`
}

func mustJSON(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(err)
	}
	return v
}

func TestPolicyListExpressions(t *testing.T) {
	s := newServer(t)
	p1m1 := "[" + sopsNode("project", "p1") + "," + sopsNode("mini_app", "m1") + "]"
	cases := []struct {
		name, ep, body, action, want string
	}{
		{"one instance", "batch_instance", hostGrant("alice", "1"), "edit_host", `{"field":"host.id","op":"eq","value":"1"}`},
		{"two instances", "batch_instance", instBody("grant", "user", "bob", []string{"view_host"}, "host", []string{"2", "1"}, ""), "view_host",
			`{"field":"host.id","op":"in","value":["1","2"]}`},
		{"path with ancestor", "batch_path", pathBody("grant", "alice", "mini_app_edit", "mini_app", p1m1), "mini_app_edit",
			`{"op":"AND","content":[{"field":"mini_app.id","op":"eq","value":"m1"},{"field":"mini_app._bk_iam_path_","op":"starts_with","value":"/project,p1/"}]}`},
		{"ignore_iam_path collapse for a user", "batch_path", pathBody("grant", "alice", "mini_app_view", "mini_app", p1m1), "mini_app_view",
			`{"field":"mini_app.id","op":"eq","value":"m1"}`},
		{"path ending at an ancestor", "batch_path", `{"system":"bk_cmdb","operate":"grant","subject":{"type":"user","id":"carol"},"actions":[{"id":"delete_host"}],"resources":[{"system":"bk_cmdb","type":"host","paths":[[{"system":"bk_cmdb","type":"biz","id":"1","name":"b"}]]}]}`,
			"delete_host", `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}`},
		{"any", "batch_instance", instBody("grant", "user", "alice", []string{"view_biz"}, "biz", nil, ""), "view_biz", `{"field":"biz.id","op":"any","value":[]}`},
		// A lone "*" is the literal id "*" to IAM's translator, not every instance (internal/bkiam's
		// package doc, "The management API"). A group can be granted it; a user cannot
		// (TestUserGrantOfTheLoneStar).
		{"a lone * is the literal id", "batch_instance", instBody("grant", "group", "1", []string{"edit_biz"}, "biz", []string{"*"}, ""), "edit_biz",
			`{"field":"biz.id","op":"eq","value":"*"}`},
		{"no resource type", "batch_instance", instBody("grant", "user", "alice", []string{"create_biz"}, "", nil, ""), "create_biz", `{"field":"","op":"any","value":[]}`},
		{"combined", "batch_instance", combinedBody("grant", "alice", []string{"1"}, []string{"7"}), "edit_biz_host",
			`{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"eq","value":"7"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantOK(t, send(t, s, gw, tc.ep, tc.body))
			sys := "bk_cmdb"
			if tc.ep == "batch_path" && tc.action[:4] == "mini" {
				sys = "bk_sops"
			}
			r := getRead(t, s, "/api/v1/systems/"+sys+"/policies?action_id="+tc.action, goodAuth)
			var ld listData
			if err := json.Unmarshal([]byte(r.raw), &ld); err != nil || ld.Code != 0 || ld.Data.Count != 1 || len(ld.Data.Results) != 1 {
				t.Fatalf("list: %v %s", err, r.raw)
			}
			if got := ld.Data.Results[0].Expr; !reflect.DeepEqual(got, mustJSON(tc.want)) {
				b, _ := json.Marshal(got)
				t.Fatalf("expression %s, want %s", b, tc.want)
			}
		})
	}
	// A second combined grant: OR of ANDs.
	wantOK(t, send(t, s, gw, "batch_instance", combinedBody("grant", "alice", []string{"2"}, []string{"8", "9"})))
	r := getRead(t, s, "/api/v1/systems/bk_cmdb/policies?action_id=edit_biz_host", goodAuth)
	var ld listData
	_ = json.Unmarshal([]byte(r.raw), &ld)
	want := mustJSON(`{"op":"OR","content":[{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"eq","value":"7"}]},
		{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"2"},{"field":"host.id","op":"in","value":["8","9"]}]}]}`)
	if len(ld.Data.Results) != 1 || !reflect.DeepEqual(ld.Data.Results[0].Expr, want) {
		t.Fatalf("combined OR: %s", r.raw)
	}
	// A partial revoke writes full paths again for the collapsed action.
	p1m2 := "[" + sopsNode("project", "p1") + "," + sopsNode("mini_app", "m2") + "]"
	wantOK(t, send(t, s, gw, "batch_path", pathBody("grant", "alice", "mini_app_view", "mini_app", p1m2)))
	wantOK(t, send(t, s, gw, "batch_path", pathBody("revoke", "alice", "mini_app_view", "mini_app", p1m2)))
	r = getRead(t, s, "/api/v1/systems/bk_sops/policies?action_id=mini_app_view", goodAuth)
	ld = listData{}
	_ = json.Unmarshal([]byte(r.raw), &ld)
	want = mustJSON(`{"op":"AND","content":[{"field":"mini_app.id","op":"eq","value":"m1"},{"field":"mini_app._bk_iam_path_","op":"starts_with","value":"/project,p1/"}]}`)
	if len(ld.Data.Results) != 1 || !reflect.DeepEqual(ld.Data.Results[0].Expr, want) {
		t.Fatalf("after partial revoke: %s", r.raw)
	}
	// An idempotent grant writes nothing, so the full path stays; a grant that adds collapses again.
	p1m1Grant := pathBody("grant", "alice", "mini_app_view", "mini_app", p1m1)
	wantOK(t, send(t, s, gw, "batch_path", p1m1Grant))
	r = getRead(t, s, "/api/v1/systems/bk_sops/policies?action_id=mini_app_view", goodAuth)
	ld = listData{}
	_ = json.Unmarshal([]byte(r.raw), &ld)
	if !reflect.DeepEqual(ld.Data.Results[0].Expr, want) {
		t.Fatalf("after idempotent grant: %s", r.raw)
	}
	wantOK(t, send(t, s, gw, "batch_path", pathBody("grant", "alice", "mini_app_view", "mini_app", p1m2)))
	r = getRead(t, s, "/api/v1/systems/bk_sops/policies?action_id=mini_app_view", goodAuth)
	ld = listData{}
	_ = json.Unmarshal([]byte(r.raw), &ld)
	if want := mustJSON(`{"field":"mini_app.id","op":"in","value":["m1","m2"]}`); !reflect.DeepEqual(ld.Data.Results[0].Expr, want) {
		t.Fatalf("after adding grant: %s", r.raw)
	}
	// A group's grant of the same action is never collapsed.
	wantOK(t, send(t, s, gw, "batch_path", strings.Replace(p1m1Grant, `"type":"user","id":"alice"`, `"type":"group","id":"2"`, 1)))
	r = getRead(t, s, "/api/v1/systems/bk_sops/policies?action_id=mini_app_view", goodAuth)
	ld = listData{}
	_ = json.Unmarshal([]byte(r.raw), &ld)
	if len(ld.Data.Results) != 2 || !reflect.DeepEqual(ld.Data.Results[1].Expr, want) {
		t.Fatalf("group grant: %s", r.raw)
	}
}

func TestPolicyListPagingAndIDs(t *testing.T) {
	s := newServer(t)
	for i := 0; i < 12; i++ {
		body := instBody("grant", "group", "1", []string{"edit_host"}, "host", []string{fmt.Sprint(i)}, "")
		if i > 0 {
			body = instBody("grant", "user", []string{"alice", "bob", "carol", "dave"}[i%4], []string{"edit_host"}, "host", []string{fmt.Sprint(i)}, "")
		}
		wantOK(t, send(t, s, gw, "batch_instance", body))
	}
	// 5 policies: group 1 and four users. Page size 10: one page, the next one null.
	r := getRead(t, s, "/api/v1/systems/bk_cmdb/policies?action_id=edit_host&page_size=10", goodAuth)
	var ld listData
	_ = json.Unmarshal([]byte(r.raw), &ld)
	if ld.Code != 0 || r.body["message"] != "ok" || ld.Data.Count != 5 || len(ld.Data.Results) != 5 || ld.Data.Metadata.Timestamp != fixedNow.Unix() {
		t.Fatalf("list: %s", r.raw)
	}
	if _, has := r.body["result"]; has {
		t.Fatalf("backend envelope has no result field: %s", r.raw)
	}
	for _, row := range ld.Data.Results {
		if row.ID <= 5 {
			t.Fatalf("backend id %d collides with a SaaS policy_id", row.ID)
		}
	}
	r = getRead(t, s, "/api/v1/systems/bk_cmdb/policies?action_id=edit_host&page_size=10&page=2", goodAuth)
	if data, _ := r.body["data"].(map[string]any); data["results"] != nil || data["count"] != float64(5) {
		t.Fatalf("past the end: %s", r.raw)
	}
	// A timestamp after every user's expiry keeps only the never-expiring group policy.
	r = getRead(t, s, "/api/v1/systems/bk_cmdb/policies?action_id=edit_host&timestamp=1900000000", goodAuth)
	_ = json.Unmarshal([]byte(r.raw), &ld)
	if ld.Data.Count != 1 || ld.Data.Results[0].Subject["type"] != "group" {
		t.Fatalf("timestamp filter: %s", r.raw)
	}
	// Get by backend id; the SaaS policy_id is not a backend id.
	id := ld.Data.Results[0].ID
	r = getRead(t, s, fmt.Sprintf("/api/v1/systems/bk_cmdb/policies/%d", id), goodAuth)
	if r.body["code"] != float64(0) || r.raw == "" {
		t.Fatalf("get: %s", r.raw)
	}
	data, _ := r.body["data"].(map[string]any)
	if data["id"] != float64(id) || data["system"] != "bk_cmdb" || data["expired_at"] != float64(4102444800) {
		t.Fatalf("get: %s", r.raw)
	}
	r = getRead(t, s, "/api/v1/systems/bk_cmdb/policies/1", goodAuth)
	if r.status != 200 || r.body["code"] != float64(1901404) {
		t.Fatalf("get by SaaS id: %s", r.raw)
	}
	st := s.Stats()
	if st.Requests["policy_list"] != 3 || st.Requests["policy_get"] != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestReadRouteErrors(t *testing.T) {
	s := newServer(t)
	cases := []struct {
		path, auth string
		code       int
		msg        string
	}{
		{"/api/v1/systems/bk_cmdb/policies?action_id=edit_host", `{"bk_app_code":"outsider","bk_app_secret":"outsider-secret"}`, 1901401,
			"unauthorized:app(outsider) is not allowed to call system (bk_cmdb) api"},
		{"/api/v1/systems/bk_cmdb/policies?action_id=fly", goodAuth, 1901404, "not found:action(fly) of system(bk_cmdb) not exists"},
		{"/api/v1/systems/bk_cmdb/policies?action_id=edit_host&page_size=5", goodAuth, 1901400, "bad request:page_size must be an integer between 10 and 500"},
		{"/api/v1/systems/bk_cmdb/policies?action_id=edit_host&page=0", goodAuth, 1901400, "bad request:page must be an integer >= 1"},
		{"/api/v1/systems/bk_cmdb/policies/999", goodAuth, 1901404, "not found:policy not found"},
	}
	for _, tc := range cases {
		r := getRead(t, s, tc.path, tc.auth)
		if r.status != 200 || r.body["code"] != float64(tc.code) || r.body["message"] != tc.msg {
			t.Errorf("%s: %d %s", tc.path, r.status, r.raw)
		}
	}
	r := getRead(t, s, "/api/v1/systems/bk_cmdb/policies?action_id=edit_host", "")
	wantGatewayError(t, r, 400, 1640001, "INVALID_ARGS", `Parameters error [reason="app code cannot be empty, please provide bk_app_code in the X-Bkapi-Authorization header"]`)
	// The open route through a gateway: forwarded without the trailing slash whatever the client
	// sends, so the backend answers 301 to both forms (package doc of internal/bkiam, "Where the real
	// server differs from a first reading").
	for _, path := range []string{"/api/v1/open/systems/bk_cmdb/policies?action_id=edit_host", "/api/v1/open/systems/bk_cmdb/policies/?action_id=edit_host"} {
		r = getRead(t, s, path, goodAuth)
		if r.status != http.StatusMovedPermanently || r.header.Get("Location") != "/api/v1/open/systems/bk_cmdb/policies/?action_id=edit_host" {
			t.Fatalf("%s: no 301: %d %v", path, r.status, r.header)
		}
	}
}
