package sandbox_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestGatewayCredentials(t *testing.T) {
	cases := []struct {
		name, auth, msg string
	}{
		{"missing", "", `Parameters error [reason="app code cannot be empty, please provide bk_app_code in the X-Bkapi-Authorization header"]`},
		{"not JSON", "bkiam-sandbox:sandbox-secret", `Parameters error [reason="app code cannot be empty, please provide bk_app_code in the X-Bkapi-Authorization header"]`},
		{"wrong secret", `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"nope"}`, `Parameters error [reason="bk_app_code or bk_app_secret is incorrect"]`},
		{"unknown app", `{"bk_app_code":"ghost","bk_app_secret":"x"}`, `Parameters error [reason="bk_app_code or bk_app_secret is incorrect"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			r := send(t, s, gw, "batch_instance", hostGrant("alice", "1"), "X-Bkapi-Authorization", tc.auth)
			wantGatewayError(t, r, http.StatusBadRequest, 1640001, "INVALID_ARGS", tc.msg)
			wantPolicies(t, s, all, noPolicies)
		})
	}
	// Credentials in the body do not count on the gateway.
	s := newServer(t)
	body := strings.Replace(hostGrant("alice", "1"), `{`, `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret",`, 1)
	r := send(t, s, gw, "batch_instance", body, "X-Bkapi-Authorization", "")
	wantGatewayError(t, r, http.StatusBadRequest, 1640001, "INVALID_ARGS", cases[0].msg)
}

func TestESBCredentialsAndUser(t *testing.T) {
	grant := hostGrant("alice", "1")
	withCreds := func(fields string) string { return strings.Replace(grant, "{", "{"+fields+",", 1) }
	cases := []struct {
		name, body, header, msg string
	}{
		{"no app", withCreds(`"bk_username":"admin"`), "", "bk_app_code or app_code cannot be empty"},
		{"wrong secret", withCreds(`"bk_app_code":"bkiam-sandbox","bk_app_secret":"x","bk_username":"admin"`), "",
			"APP Secret verification failed, please check bk_app_code and bk_app_secret"},
		{"no user", withCreds(`"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret"`), "",
			"User authentication failed, please provide a valid user identity, such as bk_username, bk_token"},
		{"bad token", withCreds(`"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret","bk_token":"nope"`), "",
			"User authentication failed, please check if the bk_token is valid"},
		{"username without whitelist", withCreds(`"bk_app_code":"outsider","bk_app_secret":"outsider-secret","bk_username":"alice"`), "",
			"User authentication failed, the APP [outsider] is not on the skip-login whitelist, please provide bk_token instead of bk_username"},
		{"header without user", grant, `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret"}`,
			"User authentication failed, please provide a valid user identity, such as bk_username, bk_token"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			hdr := []string{}
			if tc.header != "" {
				hdr = []string{"X-Bkapi-Authorization", tc.header}
			}
			r := send(t, s, esb, "batch_instance", tc.body, hdr...)
			wantESBError(t, r, 1306000, tc.msg)
			wantPolicies(t, s, all, noPolicies)
		})
	}
	okCases := []struct{ name, body, header string }{
		{"token in body", withCreds(`"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret","bk_token":"token-alice"`), ""},
		{"all in header", grant, `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret","bk_username":"bob"}`},
		{"outsider with token reaches the SaaS", withCreds(`"bk_app_code":"outsider","bk_app_secret":"outsider-secret","bk_token":"token-alice"`), ""},
	}
	for i, tc := range okCases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			hdr := []string{}
			if tc.header != "" {
				hdr = []string{"X-Bkapi-Authorization", tc.header}
			}
			r := send(t, s, esb, "batch_instance", tc.body, hdr...)
			if i == 2 {
				wantSaaSError(t, esb, r, 403, 1902403, "app_code outsider can not access system bk_cmdb (FORBIDDEN)")
				return
			}
			wantOK(t, r)
			if id, _ := r.body["request_id"].(string); len(id) != 32 {
				t.Fatalf("no request_id: %s", r.raw)
			}
		})
	}
}

func TestForbiddenAndCheckOrder(t *testing.T) {
	bothTransports(t, func(t *testing.T, tr string) {
		s := newServer(t)
		outsider := []string{"X-Bkapi-Authorization", `{"bk_app_code":"outsider","bk_app_secret":"outsider-secret","bk_username":"x","bk_token":"token-alice"}`}
		// System client is checked before the fields: even an invalid body answers 403.
		r := send(t, s, tr, "batch_instance", `{"system":"bk_cmdb","operate":"bogus"}`, outsider...)
		wantSaaSError(t, tr, r, 403, 1902403, "app_code outsider can not access system bk_cmdb (FORBIDDEN)")
		r = send(t, s, tr, "batch_resource_creator_action", `{"system":"bk_job","type":"job"}`, outsider...)
		wantSaaSError(t, tr, r, 403, 1902403, "app_code outsider can not access system bk_job (FORBIDDEN)")
		// Bad JSON is answered by the SaaS once credentials pass.
		r = send(t, s, tr, "batch_instance", `{"system":`, "X-Bkapi-Authorization", `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret","bk_username":"admin"}`)
		wantSaaSError(t, tr, r, 200, 1902414, "JSON parse error - unexpected EOF (JSON_FORMAT_ERROR)")
		// Field validation comes before the model checks and the user lookup.
		r = send(t, s, tr, "batch_instance", instBody("grant", "user", "zed", []string{"fly"}, "host", []string{"1234567890123456789012345678901234567"}, ""))
		wantSaaSError(t, tr, r, 200, 1902412, `{"resources": [{"instances": [{"id": ["Ensure this field has no more than 36 characters."]}]}]}`)
		// Model checks come before the user lookup.
		r = send(t, s, tr, "batch_instance", instBody("grant", "user", "zed", []string{"edit_host"}, "biz", []string{"1"}, ""))
		if r.code() != 1902417 {
			t.Fatalf("want 1902417 before the user lookup: %s", r.raw)
		}
		wantPolicies(t, s, all, noPolicies)
	})
}

func TestAllowList(t *testing.T) {
	m := loadModel(t, `{"systems":[{"id":"bk_cmdb","resource_types":[{"id":"host"}],"actions":[{"id":"edit_host","related_types":["host"]},{"id":"view_host","related_types":["host"]}],
		"creator_actions":[{"id":"host","actions":[{"id":"view_host","required":true}]}],
		"allow_list":{"instance_actions":["view_host"],"creator_types":[]}}],
		"users":["alice"],"apps":[{"code":"bkiam-sandbox","secret":"sandbox-secret","client_of":["bk_cmdb"],"esb_skip_login":true}]}`)
	bothTransports(t, func(t *testing.T, tr string) {
		s := newServer(t, withModel(m))
		r := send(t, s, tr, "batch_instance", instBody("grant", "user", "alice", []string{"view_host", "edit_host"}, "host", []string{"1"}, ""))
		wantSaaSError(t, tr, r, 403, 1902403, "authorization_instance api don't support the [edit_host] of system[bk_cmdb] (FORBIDDEN)")
		r = send(t, s, tr, "batch_resource_creator_action", `{"system":"bk_cmdb","type":"host","creator":"alice","instances":[{"id":"1","name":"h"}]}`)
		wantSaaSError(t, tr, r, 403, 1902403, "authorization_resource_creator_action api don't support the [host] of system[bk_cmdb] (FORBIDDEN)")
		wantPolicies(t, s, all, noPolicies)
		wantOK(t, send(t, s, tr, "batch_instance", instBody("grant", "user", "alice", []string{"view_host"}, "host", []string{"1"}, "")))
	})
}

func TestRequestIDs(t *testing.T) {
	s := newServer(t)
	const rid = "0123456789abcdef0123456789abcdef"
	for _, tr := range []string{gw, esb} {
		for _, body := range []string{hostGrant("alice", "1"), `{`} {
			r := send(t, s, tr, "batch_instance", body, "X-Request-Id", rid)
			if r.header.Get("X-Request-Id") != rid {
				t.Errorf("%s: X-Request-Id not echoed", tr)
			}
			if (tr == gw) != (r.header.Get("X-Bkapi-Request-Id") != "") {
				t.Errorf("%s: X-Bkapi-Request-Id presence wrong: %q", tr, r.header.Get("X-Bkapi-Request-Id"))
			}
		}
	}
	// Gateway-layer failures carry both too.
	r := send(t, s, gw, "batch_instance", "{}", "X-Request-Id", rid, "X-Bkapi-Authorization", "")
	if r.header.Get("X-Request-Id") != rid || r.header.Get("X-Bkapi-Request-Id") == "" {
		t.Errorf("gateway error headers: %v", r.header)
	}
	// Without a client id, one is generated.
	if id := send(t, s, gw, "batch_instance", "{}").header.Get("X-Request-Id"); len(id) != 32 {
		t.Errorf("generated X-Request-Id %q", id)
	}
}

func TestMalformedBodies(t *testing.T) {
	s := newServer(t, withMaxBody(1024))
	bodies := []string{"", "null", "[", `{"a":1}{"b":2}`, "\x00\xff", `{"system":1e999}`, strings.Repeat("[", 600) + strings.Repeat("]", 600),
		`{"operate":"grant","system":"bk_cmdb","actions":[null, 1, "x", {"id":[]}],"subject":[],"resources":[1,{"instances":{}},{"system":{},"type":null,"instances":[[],{"id":{},"name":true}]}],"expired_at":1.5}`}
	for _, b := range bodies {
		for _, tr := range []string{gw, esb} {
			for _, ep := range []string{"batch_instance", "batch_path", "batch_resource_creator_action"} {
				r := send(t, s, tr, ep, b, "X-Bkapi-Authorization", `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret","bk_username":"admin"}`)
				if c := r.code(); c != 1902414 && c != 1902412 && c != 1902403 {
					t.Errorf("%s %s %q: %s", tr, ep, b, r.raw)
				}
			}
		}
	}
	r := send(t, s, gw, "batch_instance", `{"x":"`+strings.Repeat("a", 2000)+`"}`)
	wantSaaSError(t, gw, r, 200, 1902414, "JSON parse error - request body exceeds 1024 bytes (JSON_FORMAT_ERROR)")
	wantPolicies(t, s, all, noPolicies)
}

func TestUnknownRoutes(t *testing.T) {
	s := newServer(t)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/open/authorization/batch_instance/", nil)
	req.Header.Set("X-Bkapi-Authorization", goodAuth)
	r := serve(t, s, req)
	wantGatewayError(t, r, 404, 1640401, "API_NOT_FOUND", "API not found [method=GET path=/api/v1/open/authorization/batch_instance/]")
	req = httptest.NewRequest(http.MethodPost, "/api/c/compapi/v2/iam/authorization/batch_nothing/", strings.NewReader("{}"))
	r = serve(t, s, req)
	wantESBError(t, r, 1306000, "Component not found: POST /api/c/compapi/v2/iam/authorization/batch_nothing/")
}
