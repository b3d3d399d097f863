package bkiam

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
)

var allSentinels = map[string]error{
	"ErrValidation": ErrValidation, "ErrForbidden": ErrForbidden, "ErrUnauthorized": ErrUnauthorized,
	"ErrRateLimited": ErrRateLimited, "ErrTransient": ErrTransient, "ErrNotFound": ErrNotFound,
	"ErrUnexpectedResponse": ErrUnexpectedResponse, "ErrResourceMismatch": ErrResourceMismatch,
}

func TestErrorClasses(t *testing.T) {
	gwErr := func(status int, code, name, msg string) http.HandlerFunc {
		return reply(status, `{"result":false,"code":`+code+`,"code_name":"`+name+`","message":"`+msg+`","data":null}`,
			"X-Bkapi-Error-Code", code, "X-Bkapi-Error-Message", msg, "X-Bkapi-Request-Id", "gw-req-1")
	}
	esbErr := func(code, msg string) http.HandlerFunc {
		return reply(200, `{"result":false,"code":`+code+`,"message":"`+msg+`","data":null,"request_id":"esb-req-1"}`)
	}
	iamErr := func(status int, code, msg string) http.HandlerFunc {
		return reply(status, `{"result":false,"code":`+code+`,"message":`+msg+`,"data":null}`, "X-Bkapi-Request-Id", "gw-req-2")
	}
	tests := []struct {
		name     string
		cfg      func(string) Config
		h        http.HandlerFunc
		layer    Layer
		code     int
		status   int
		is       []string // sentinels that must match; every other one must not
		attempts int
		text     []string // substrings of Error()
	}{
		{"gateway 1640001 bad credentials", gatewayConfig, gwErr(400, "1640001", "INVALID_ARGS", "bk_app_code or bk_app_secret is incorrect"),
			LayerGateway, 1640001, 400, []string{"ErrUnauthorized"}, 1,
			[]string{"API gateway rejected the grant (HTTP 400, code 1640001 INVALID_ARGS, request ", ", gateway request gw-req-1): bk_app_code or bk_app_secret is incorrect"}},
		{"gateway error in headers only", gatewayConfig,
			reply(401, "Unauthorized", "Content-Type", "text/plain", "X-Bkapi-Error-Code", "1640001",
				"X-Bkapi-Error-Message", "App authentication failed, please provide a valid bk_app_code", "X-Bkapi-Request-Id", "gw-req-3"),
			LayerGateway, 1640001, 401, []string{"ErrUnauthorized"}, 1,
			[]string{"(HTTP 401, code 1640001, request ", ", gateway request gw-req-3): App authentication failed, please provide a valid bk_app_code"}},
		{"gateway 1640001 bad arguments", gatewayConfig, gwErr(400, "1640001", "INVALID_ARGS", "Parameters error [reason=invalid json]"),
			LayerGateway, 1640001, 400, []string{"ErrValidation"}, 1, []string{"Parameters error"}},
		{"gateway 1640301 app not allowed", gatewayConfig, gwErr(403, "1640301", "APP_NO_PERMISSION", "App has no permission to the resource"),
			LayerGateway, 1640301, 403, []string{"ErrForbidden"}, 1, nil},
		{"gateway 1640401 not found", gatewayConfig, gwErr(404, "1640401", "API_NOT_FOUND", "API not found"),
			LayerGateway, 1640401, 404, []string{"ErrNotFound"}, 1, nil},
		{"gateway 429 1642902 retried", gatewayConfig, gwErr(429, "1642902", "RATE_LIMITED", "Request rate limit exceeded"),
			LayerGateway, 1642902, 429, []string{"ErrRateLimited", "ErrTransient"}, 3, []string{"after 3 attempts"}},
		{"gateway 504 1650401 retried", gatewayConfig, gwErr(504, "1650401", "UPSTREAM_TIMEOUT", "Request backend service timeout"),
			LayerGateway, 1650401, 504, []string{"ErrTransient"}, 3, nil},
		{"ESB 1306000 app check", esbConfig, esbErr("1306000", "APP Secret verification failed, please check"),
			LayerESB, 1306000, 200, []string{"ErrUnauthorized"}, 1,
			[]string{"ESB rejected the grant (code 1306000, request ", ", ESB request esb-req-1): APP Secret verification failed"}},
		{"ESB 1306403 no permission", esbConfig, esbErr("1306403", "no permission"),
			LayerESB, 1306403, 200, []string{"ErrForbidden"}, 1, nil},
		{"ESB 1306429 in HTTP 200 retried", esbConfig, esbErr("1306429", "rate limited"),
			LayerESB, 1306429, 200, []string{"ErrRateLimited", "ErrTransient"}, 3, nil},
		{"ESB 1306201 upstream retried", esbConfig, esbErr("1306201", "Request third-party interface error"),
			LayerESB, 1306201, 200, []string{"ErrTransient"}, 3, nil},
		{"ESB passes IAM 1902412 through", esbConfig, iamErr(200, "1902412", `"user[nobody] not exists (VALIDATION_ERROR)"`),
			LayerIAM, 1902412, 200, []string{"ErrValidation"}, 1, []string{"IAM rejected the grant (code 1902412, request "}},
		{"IAM 1902412 field errors", gatewayConfig, iamErr(200, "1902412", `"{\"non_field_errors\": [\"maximum number of instance grant 200\"]}"`),
			LayerIAM, 1902412, 200, []string{"ErrValidation"}, 1,
			[]string{"IAM rejected the grant (code 1902412, request ", "gateway request gw-req-2): maximum number of instance grant 200"}},
		{"IAM 1902412 nested field errors", gatewayConfig,
			iamErr(200, "1902412", `"{\"resources\": [{\"instances\": [\"Ensure this field has no more than 200 elements.\"]}], \"subject\": {\"id\": [\"This field may not be blank.\"]}} (VALIDATION_ERROR)"`),
			LayerIAM, 1902412, 200, []string{"ErrValidation"}, 1,
			[]string{"): resources[0].instances: Ensure this field has no more than 200 elements.; subject.id: This field may not be blank."}},
		{"IAM 1902403 with HTTP 403", gatewayConfig, iamErr(403, "1902403", `"app_code my-app can not access system bk_cmdb (FORBIDDEN)"`),
			LayerIAM, 1902403, 403, []string{"ErrForbidden"}, 1, []string{"IAM rejected the grant (HTTP 403, code 1902403, request "}},
		{"IAM 1902401 with HTTP 401", gatewayConfig, iamErr(401, "1902401", `"unauthorized"`),
			LayerIAM, 1902401, 401, []string{"ErrUnauthorized"}, 1, nil},
		{"IAM 1902417 action/resource mismatch", gatewayConfig, iamErr(200, "1902417", `"resource type does not match action"`),
			LayerIAM, 1902417, 200, []string{"ErrValidation", "ErrResourceMismatch"}, 1, nil},
		{"IAM 1902416 bad args", gatewayConfig, iamErr(200, "1902416", `"ancestor not found"`),
			LayerIAM, 1902416, 200, []string{"ErrValidation"}, 1, nil},
		{"IAM 1902000 upstream retried", gatewayConfig, iamErr(200, "1902000", `"request backend failed"`),
			LayerIAM, 1902000, 200, []string{"ErrTransient"}, 3, nil},
		// The backend's definite refusals inside a 1902000 fail at once (the package doc, "The
		// management API"): an unknown action, found by nothing in its tables.
		{"IAM 1902000 carrying a backend refusal not retried", gatewayConfig, iamErr(200, "1902000",
			`"请求第三方API错误: request iam error! Request=[http_get /api/v1/web/systems/bk_cmdb/actions/nope request_id=abc] Response[code=1901500, message=system error[request_id=abc]: [Handler:GetAction] systemID=`+"`bk_cmdb`"+` => [Raw:Error] sql: no rows in result set] (REMOTE_REQUEST_ERROR)"`),
			LayerIAM, 1902000, 200, nil, 1, nil},
		{"IAM 1902500 with HTTP 500 not retried", gatewayConfig, iamErr(500, "1902500", `"system error"`),
			LayerIAM, 1902500, 500, nil, 1, nil},
		{"result false with code 0", gatewayConfig, reply(200, `{"result":false,"code":0,"message":"weird"}`),
			LayerIAM, 0, 200, nil, 1, []string{"weird"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, tt.h)
			_, err := mustClient(t, tt.cfg(fs.URL)).BatchInstance(context.Background(), grantReq())
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if e.Layer != tt.layer || e.Code != tt.code || e.HTTPStatus != tt.status || e.Operation != "grant" {
				t.Errorf("layer/code/status/op = %q/%d/%d/%q, want %q/%d/%d/grant", e.Layer, e.Code, e.HTTPStatus, e.Operation, tt.layer, tt.code, tt.status)
			}
			if e.Attempts != tt.attempts || len(fs.requests()) != tt.attempts {
				t.Errorf("attempts = %d, server saw %d, want %d", e.Attempts, len(fs.requests()), tt.attempts)
			}
			want := map[string]bool{}
			for _, s := range tt.is {
				want[s] = true
			}
			for name, s := range allSentinels {
				if got := errors.Is(err, s); got != want[name] {
					t.Errorf("errors.Is(err, %s) = %v, want %v", name, got, want[name])
				}
			}
			// The id named is the one of the last (failing) attempt.
			reqs := fs.requests()
			if last := reqs[len(reqs)-1].Header.Get("X-Request-Id"); e.RequestID != last {
				t.Errorf("RequestID = %q, want last attempt's %q", e.RequestID, last)
			}
			msg := err.Error()
			if !strings.Contains(msg, e.RequestID) {
				t.Errorf("error text lacks request id: %s", msg)
			}
			for _, s := range tt.text {
				if !strings.Contains(msg, s) {
					t.Errorf("error text %q lacks %q", msg, s)
				}
			}
			assertNoSecrets(t, msg)
		})
	}
}

func TestRetriesUseFreshRequestIDs(t *testing.T) {
	fs := newFakeServer(t, reply(503, "busy"), reply(200, okBody))
	if _, err := mustClient(t, gatewayConfig(fs.URL)).BatchInstance(context.Background(), grantReq()); err != nil {
		t.Fatal(err)
	}
	reqs := fs.requests()
	if len(reqs) != 2 || reqs[0].Header.Get("X-Request-Id") == reqs[1].Header.Get("X-Request-Id") {
		t.Fatalf("want 2 attempts with distinct ids, got %d", len(reqs))
	}
	if reqs[1].Raw != reqs[0].Raw || !hex32.MatchString(reqs[1].Header.Get("X-Request-Id")) {
		t.Fatalf("retry body or id differs: %q vs %q", reqs[0].Raw, reqs[1].Raw)
	}
}

func TestNonJSONProxyPage(t *testing.T) {
	html := "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx</center>\n" +
		strings.Repeat("<!-- padding -->\n", 30) + "</body>\n</html>\n"
	fs := newFakeServer(t, reply(502, html, "Content-Type", "text/html"))
	_, err := mustClient(t, gatewayConfig(fs.URL)).BatchInstance(context.Background(), grantReq())
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v", err)
	}
	msg := err.Error()
	wantPrefix := "API gateway answered the grant with HTTP 502 and a non-JSON body (request " + e.RequestID + ", after 3 attempts): <html> <head><title>502 Bad Gateway</title></head> <body>"
	if !strings.HasPrefix(msg, wantPrefix) {
		t.Errorf("error text = %q\nwant prefix %q", msg, wantPrefix)
	}
	if strings.Contains(msg, "\n") || len([]rune(e.Message)) > snippetRunes+1 {
		t.Errorf("snippet not folded or not cut: %q", e.Message)
	}
	if !errors.Is(err, ErrTransient) || !errors.Is(err, ErrUnexpectedResponse) || e.Attempts != 3 {
		t.Errorf("classification: transient=%v unexpected=%v attempts=%d", errors.Is(err, ErrTransient), errors.Is(err, ErrUnexpectedResponse), e.Attempts)
	}
}

func TestMalformedJSON(t *testing.T) {
	for name, body := range map[string]string{
		"truncated":      `{"result":true,"code":0,"data":[{"action":`,
		"html in 200":    `<html>oops</html>`,
		"empty":          ``,
		"data not list":  `{"result":true,"code":0,"message":"OK","data":{"policy_id":1}}`,
		"no code at all": `{"detail":"hello"}`,
	} {
		t.Run(name, func(t *testing.T) {
			fs := newFakeServer(t, reply(200, body))
			_, err := mustClient(t, esbConfig(fs.URL)).BatchResourceCreatorAction(context.Background(), CreatorActionRequest{
				System: "bk_sops", Type: "mini_app", Creator: "bob", Instances: []CreatorInstance{{ID: "m1", Name: "M1"}}})
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrUnexpectedResponse) || errors.Is(err, ErrTransient) {
				t.Fatalf("err = %v", err)
			}
			if e.Attempts != 1 || e.Operation != "creator grant" {
				t.Errorf("attempts %d op %q", e.Attempts, e.Operation)
			}
			if !strings.HasPrefix(err.Error(), "ESB answered the creator grant with HTTP 200 and a malformed body (request ") {
				t.Errorf("error text = %q", err.Error())
			}
		})
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	var followed bool
	fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere/" {
			followed = true
			reply(200, okBody)(w, r)
			return
		}
		http.Redirect(w, r, "/elsewhere/", http.StatusMovedPermanently)
	})
	_, err := mustClient(t, gatewayConfig(fs.URL)).BatchPath(context.Background(), BatchPathRequest{
		System: "s", Operate: OperationRevoke, Subject: Subject{Type: "user", ID: "u"}, Actions: []Action{{ID: "a"}},
		Resources: []PathResource{{System: "s", Type: "t", Paths: [][]PathNode{{{System: "s", Type: "t", ID: "1", Name: "n"}}}}}})
	var e *Error
	if !errors.As(err, &e) || followed || len(fs.requests()) != 1 {
		t.Fatalf("err = %v, followed = %v, requests = %d", err, followed, len(fs.requests()))
	}
	if e.HTTPStatus != 301 || e.Location != "/elsewhere/" || !errors.Is(err, ErrUnexpectedResponse) {
		t.Errorf("status %d location %q", e.HTTPStatus, e.Location)
	}
	if msg := err.Error(); !strings.Contains(msg, "path revoke with a redirect (HTTP 301) to /elsewhere/, which is not followed") {
		t.Errorf("error text = %q", msg)
	}
}

func TestRenderFieldErrors(t *testing.T) {
	tests := map[string]string{
		`{"non_field_errors": ["maximum number of instance grant 200"]}`:                  "maximum number of instance grant 200",
		`{"non_field_errors": ["a"]} (VALIDATION_ERROR)`:                                  "a",
		`{"expired_at": ["greater than now timestamp"], "system": ["required", "blank"]}`: "expired_at: greater than now timestamp; system: required, blank",
		`{"resources": [{}, {"instances": [{}, {"id": ["too long"]}]}]}`:                  "resources[1].instances[1].id: too long",
		`user[x] not exists`: "user[x] not exists",
		`{not json`:          "{not json",
		`system[s] do not register resource_creator_actions config (VALIDATION_ERROR)`: "system[s] do not register resource_creator_actions config (VALIDATION_ERROR)",
	}
	for in, want := range tests {
		if got := renderFieldErrors(in); got != want {
			t.Errorf("renderFieldErrors(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorTextHasNoSecretsEvenIfEchoed(t *testing.T) {
	// A misbehaving proxy echoing the request: neither secret may reach the error text.
	fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		reply(400, "bad request: "+r.Header.Get("X-Bkapi-Authorization"))(w, r)
	})
	_, err := mustClient(t, gatewayConfig(fs.URL)).BatchInstance(context.Background(), grantReq())
	if err == nil {
		t.Fatal("want error")
	}
	assertNoSecrets(t, err.Error())

	fs2 := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		raw := bodyOf(r)
		reply(200, `{"result":false,"code":1306000,"message":"bad request `+strings.ReplaceAll(raw, `"`, `'`)+`"}`)(w, r)
	})
	_, err = mustClient(t, esbConfig(fs2.URL)).BatchInstance(context.Background(), grantReq())
	if err == nil || !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), testAppCode) || !strings.Contains(err.Error(), redacted) {
		t.Errorf("echoed body not rendered (redacted): %q", err.Error())
	}
	assertNoSecrets(t, err.Error())
}

func assertNoSecrets(t *testing.T, s string) {
	t.Helper()
	for _, secret := range []string{testAppSecret, testBKToken} {
		if strings.Contains(s, secret) {
			t.Errorf("secret %q leaked into %q", secret, s)
		}
	}
}

// TestErrResourceMismatch: IAM's 1902417 (resources that do not match the action), and batch_path's
// 1902412 that says the same of a type the action does not relate to (the real SaaS's text), are
// told apart from the other validation errors, and stay among them.
func TestErrResourceMismatch(t *testing.T) {
	for _, tt := range []struct {
		code               int
		message            string
		mismatch, validity bool
	}{
		{1902417, "Action check error: action `biz_view` related resource types `host` wrong (ACTION_VALIDATE_ERROR)", true, true},
		{1902412, "Parameter verification failed: action(biz_view) not support to grant instance (VALIDATE_ERROR)", true, true},
		{1902412, "Parameter verification failed: user[ghost] not exists (VALIDATE_ERROR)", false, true},
		{1902416, "", false, true},
		{1902403, "", false, false},
	} {
		var err error = &Error{Layer: LayerIAM, Code: tt.code, HTTPStatus: http.StatusOK, Message: tt.message}
		if got := errors.Is(err, ErrResourceMismatch); got != tt.mismatch {
			t.Errorf("code %d: errors.Is(err, ErrResourceMismatch) = %v, want %v", tt.code, got, tt.mismatch)
		}
		if got := errors.Is(err, ErrValidation); got != tt.validity {
			t.Errorf("code %d: errors.Is(err, ErrValidation) = %v, want %v", tt.code, got, tt.validity)
		}
	}
}
