package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// isolateEnv blanks every variable the provider reads (an empty variable
// counts as unset) and then sets env.
func isolateEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, name := range EnvironmentVariables() {
		t.Setenv(name, "")
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

func validateProvider(t *testing.T, attrs map[string]any) []*tfprotov6.Diagnostic {
	t.Helper()
	resp, err := protoServer(t).ValidateProviderConfig(context.Background(), &tfprotov6.ValidateProviderConfigRequest{
		Config: providerConfig(t, attrs),
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Diagnostics
}

func configureProvider(t *testing.T, attrs map[string]any) []*tfprotov6.Diagnostic {
	t.Helper()
	resp, err := protoServer(t).ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{
		Config:           providerConfig(t, attrs),
		TerraformVersion: "1.5.7",
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Diagnostics
}

// wantDiag is one diagnostic a test expects: on attribute attr, whose
// summary and detail together contain every string of contains.
type wantDiag struct {
	severity tfprotov6.DiagnosticSeverity
	attr     string
	contains []string
}

func checkDiags(t *testing.T, got []*tfprotov6.Diagnostic, want []wantDiag) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d diagnostics, want %d:\n%s", len(got), len(want), testutil.RenderDiags(got))
	}
	for i, w := range want {
		d := got[i]
		if d.Severity != w.severity {
			t.Errorf("diagnostic %d: severity %v, want %v\n%s", i, d.Severity, w.severity, testutil.RenderDiags(got))
		}
		wantPath := tftypes.NewAttributePath().WithAttributeName(w.attr)
		if d.Attribute == nil || !d.Attribute.Equal(wantPath) {
			t.Errorf("diagnostic %d: on attribute %v, want %s\n%s", i, d.Attribute, w.attr, testutil.RenderDiags(got))
		}
		text := d.Summary + ": " + d.Detail
		for _, c := range w.contains {
			if !strings.Contains(text, c) {
				t.Errorf("diagnostic %d: %q does not contain %q", i, text, c)
			}
		}
	}
}

func errorOn(attr string, contains ...string) wantDiag {
	return wantDiag{severity: tfprotov6.DiagnosticSeverityError, attr: attr, contains: contains}
}

func warningOn(attr string, contains ...string) wantDiag {
	return wantDiag{severity: tfprotov6.DiagnosticSeverityWarning, attr: attr, contains: contains}
}

// gateway is a complete, valid gateway configuration that cases modify.
func gateway(extra map[string]any) map[string]any {
	attrs := map[string]any{"apigw_url": "https://bkapi.example.com/api/bk-iam/prod", "app_code": "app", "app_secret": "s3cret"}
	for k, v := range extra {
		attrs[k] = v
	}
	return attrs
}

// TestValidateProviderConfig covers the errors Terraform reports at plan
// time from the configuration alone.
func TestValidateProviderConfig(t *testing.T) {
	cases := []struct {
		name  string
		attrs map[string]any
		want  []wantDiag
	}{
		{"valid gateway", gateway(nil), nil},
		{"valid esb", map[string]any{"esb_url": "https://paas.example.com", "username": "alice"}, nil},
		{"nothing set is left to the environment", map[string]any{}, nil},
		{"unknown values are left to configure", map[string]any{"apigw_url": testutil.Unknown, "request_timeout": testutil.Unknown}, nil},
		{"both urls", gateway(map[string]any{"esb_url": "https://paas.example.com"}),
			[]wantDiag{errorOn("apigw_url", "esb_url")}},
		{"url without scheme", gateway(map[string]any{"apigw_url": "bkapi.example.com/api/bk-iam/prod"}),
			[]wantDiag{errorOn("apigw_url", "apigw_url", "https://")}},
		{"url with credentials is not echoed", map[string]any{"esb_url": "ftp://user:hunter2@paas.example.com"},
			[]wantDiag{errorOn("esb_url", "esb_url must not carry credentials", "set app_code and app_secret")}},
		// Without a scheme, url.Parse takes the user for the scheme and the
		// password for the rest: neither is a URL's to repeat.
		{"url with credentials but no scheme is not echoed", map[string]any{"apigw_url": "alice:hunter2@gw.example.com/prod"},
			[]wantDiag{errorOn("apigw_url", "apigw_url must start with https://")}},
		{"url with credentials the parser quotes is not echoed", map[string]any{"apigw_url": "https://alice:hunter2/x@gw.example.com"},
			[]wantDiag{errorOn("apigw_url", "apigw_url is not a valid URL")}},
		{"url with query", gateway(map[string]any{"apigw_url": "https://bkapi.example.com/prod?x=1"}),
			[]wantDiag{errorOn("apigw_url", "apigw_url must not carry a query", `"https://bkapi.example.com/prod"`)}},
		{"url with a secret in the query is not echoed", gateway(map[string]any{"apigw_url": "https://bkapi.example.com/prod?bk_app_secret=hunter2"}),
			[]wantDiag{errorOn("apigw_url", "apigw_url must not carry a query", `"https://bkapi.example.com/prod"`)}},
		{"url with a secret in the fragment is not echoed", gateway(map[string]any{"apigw_url": "https://bkapi.example.com/prod#hunter2"}),
			[]wantDiag{errorOn("apigw_url", "apigw_url must not carry a query or fragment", `"https://bkapi.example.com/prod"`)}},
		{"empty app_code", gateway(map[string]any{"app_code": ""}),
			[]wantDiag{errorOn("app_code", "app_code: value must not be empty or white space", "omit the attribute", "BKIAM_APP_CODE")}},
		{"empty app_secret", gateway(map[string]any{"app_secret": ""}),
			[]wantDiag{errorOn("app_secret", "app_secret: value must not be empty or white space", "omit the attribute", "BKIAM_APP_SECRET")}},
		{"blank app_secret", gateway(map[string]any{"app_secret": " \t "}),
			[]wantDiag{errorOn("app_secret", "app_secret: value must not be empty or white space",
				"omit the attribute to use the environment variable BKIAM_APP_SECRET, BK_APP_SECRET or BKPAAS_APP_SECRET")}},
		{"blank username", map[string]any{"esb_url": "https://paas.example.com", "username": "\n", "bk_token": "hunter2"},
			[]wantDiag{errorOn("username", "username: value must not be empty or white space", "BKIAM_USERNAME")}},
		{"grant batch too big", gateway(map[string]any{"grant_batch_size": 1001}),
			[]wantDiag{errorOn("grant_batch_size", "between 1 and 1000")}},
		{"revoke batch zero", gateway(map[string]any{"revoke_batch_size": 0}),
			[]wantDiag{errorOn("revoke_batch_size", "between 1 and 1000")}},
		{"bad timeout", gateway(map[string]any{"request_timeout": "30"}),
			[]wantDiag{errorOn("request_timeout", "Go duration", `"30"`)}},
		{"negative timeout", gateway(map[string]any{"request_timeout": "-1s"}),
			[]wantDiag{errorOn("request_timeout", "positive")}},
		{"negative retries", gateway(map[string]any{"max_retries": -1}),
			[]wantDiag{errorOn("max_retries", "between 0 and 20")}},
		{"merging off", gateway(map[string]any{"batch_window": "0s"}), nil},
		{"negative batch window", gateway(map[string]any{"batch_window": "-5ms"}),
			[]wantDiag{errorOn("batch_window", "Go duration", `"-5ms"`)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			isolateEnv(t, nil)
			got := validateProvider(t, tc.attrs)
			checkDiags(t, got, tc.want)
			checkNoSecret(t, got, "hunter2", "s3cret", "alice", "\t", "\n")
		})
	}
}

// checkNoSecret fails when a diagnostic's summary or detail holds one of
// secrets: the values of the secrets in the configuration and environment,
// and whatever else a case must not repeat (a URL's user, white space).
func checkNoSecret(t *testing.T, diags []*tfprotov6.Diagnostic, secrets ...string) {
	t.Helper()
	for _, d := range diags {
		for _, secret := range secrets {
			if strings.Contains(d.Summary+"\x00"+d.Detail, secret) {
				t.Errorf("diagnostic leaks %q: %s: %s", secret, d.Summary, d.Detail)
			}
		}
	}
}

// TestConfigureProvider covers the errors that need the environment
// fallbacks, and the warnings Configure gives.
func TestConfigureProvider(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name  string
		attrs map[string]any
		env   map[string]string
		want  []wantDiag
	}{
		{"gateway from config", gateway(nil), nil, nil},
		{"esb with token", map[string]any{"esb_url": "https://paas.example.com", "app_code": "a", "app_secret": "b", "bk_token": "t"}, nil, nil},
		{"everything from the environment", map[string]any{},
			map[string]string{"BKIAM_APIGW_URL": "https://gw.example.com/prod", "BK_APP_CODE": "a", "BKPAAS_APP_SECRET": "b"}, nil},
		{"no endpoint", map[string]any{"app_code": "a", "app_secret": "b"}, nil,
			[]wantDiag{errorOn("apigw_url", "No IAM endpoint", "BKIAM_APIGW_URL", "BK_IAM_APIGATEWAY_URL", "BKIAM_ESB_URL", "BK_COMPONENT_API_URL")}},
		{"esb from the environment beside apigw from config", gateway(nil),
			map[string]string{"BK_COMPONENT_API_URL": "https://paas.example.com"},
			[]wantDiag{errorOn("esb_url", "Both", "the environment variable BK_COMPONENT_API_URL", "the provider block")}},
		{"apigw from the environment beside esb from config",
			map[string]any{"esb_url": "https://paas.example.com", "app_code": "a", "app_secret": "b", "username": "u"},
			map[string]string{"BK_IAM_APIGATEWAY_URL": "https://gw.example.com/prod"},
			[]wantDiag{errorOn("apigw_url", "Both", "BK_IAM_APIGATEWAY_URL")}},
		{"missing app_code", map[string]any{"apigw_url": "https://gw.example.com/prod", "app_secret": "b"}, nil,
			[]wantDiag{errorOn("app_code", "Missing app_code", "BKIAM_APP_CODE, BK_APP_CODE or BKPAAS_APP_ID")}},
		{"missing app_secret", map[string]any{"apigw_url": "https://gw.example.com/prod", "app_code": "a"}, nil,
			[]wantDiag{errorOn("app_secret", "Missing app_secret", "BKIAM_APP_SECRET, BK_APP_SECRET or BKPAAS_APP_SECRET")}},
		{"esb without a user", map[string]any{"esb_url": "https://paas.example.com", "app_code": "a", "app_secret": "b"}, nil,
			[]wantDiag{errorOn("username", "ESB needs a user", "BKIAM_USERNAME", "BKIAM_BK_TOKEN")}},
		{"bad url from the environment", map[string]any{"app_code": "a", "app_secret": "b"},
			map[string]string{"BKIAM_ESB_URL": "paas.example.com", "BKIAM_USERNAME": "u"},
			[]wantDiag{errorOn("esb_url", "the environment variable BKIAM_ESB_URL", "https://")}},
		{"url with credentials but no scheme from the environment", map[string]any{"app_code": "a", "app_secret": "b"},
			map[string]string{"BK_IAM_APIGATEWAY_URL": "alice:hunter2@gw.example.com/prod"},
			[]wantDiag{errorOn("apigw_url", "apigw_url (set by the environment variable BK_IAM_APIGATEWAY_URL) must start with https://")}},
		{"url with a secret in the query from the environment", map[string]any{"app_code": "a", "app_secret": "b"},
			map[string]string{"BKIAM_APIGW_URL": "https://gw.example.com/prod?bk_app_secret=hunter2"},
			[]wantDiag{errorOn("apigw_url", "apigw_url (set by the environment variable BKIAM_APIGW_URL) must not carry a query",
				`"https://gw.example.com/prod"`)}},
		// White space from the environment: refused on the attribute, with
		// the variable that holds it, not by the client in words that name
		// no attribute. The next variable's value is no business of the
		// message either.
		{"blank app_secret from the environment", map[string]any{"apigw_url": "https://gw.example.com/prod", "app_code": "a"},
			map[string]string{"BKIAM_APP_SECRET": " \t ", "BK_APP_SECRET": "s3cret"},
			[]wantDiag{errorOn("app_secret", "Blank app_secret", "as set by the environment variable BKIAM_APP_SECRET, is only white space",
				"Set app_secret in the provider block or the environment variable BKIAM_APP_SECRET, BK_APP_SECRET or BKPAAS_APP_SECRET")}},
		{"blank app_code from the environment", map[string]any{"apigw_url": "https://gw.example.com/prod", "app_secret": "s3cret"},
			map[string]string{"BK_APP_CODE": " "},
			[]wantDiag{errorOn("app_code", "Blank app_code", "the environment variable BK_APP_CODE", "BKIAM_APP_CODE, BK_APP_CODE or BKPAAS_APP_ID")}},
		{"blank username from the environment with esb", map[string]any{"esb_url": "https://paas.example.com", "app_code": "a", "app_secret": "s3cret"},
			map[string]string{"BKIAM_USERNAME": "\t"},
			[]wantDiag{errorOn("username", "Blank username", "the environment variable BKIAM_USERNAME", "or unset it and use bk_token")}},
		{"blank username from the environment is ignored with the gateway", gateway(nil),
			map[string]string{"BKIAM_USERNAME": " "}, nil},
		// Configure without validation still refuses white space in the
		// block, which the schema refuses first in Terraform.
		{"blank app_secret in the block", gateway(map[string]any{"app_secret": " "}), nil,
			[]wantDiag{errorOn("app_secret", "Blank app_secret", "as set by the provider block")}},
		{"unknown url", gateway(map[string]any{"apigw_url": testutil.Unknown}), nil,
			[]wantDiag{errorOn("apigw_url", "not known until apply", "BKIAM_APIGW_URL")}},
		{"unknown secret", gateway(map[string]any{"app_secret": testutil.Unknown}), nil,
			[]wantDiag{errorOn("app_secret", "not known until apply")}},
		{"unknown batch size", gateway(map[string]any{"grant_batch_size": testutil.Unknown}), nil,
			[]wantDiag{errorOn("grant_batch_size", "not known until apply")}},
		{"missing ca file", gateway(map[string]any{"ca_cert_file": filepath.Join(dir, "missing.pem")}), nil,
			[]wantDiag{errorOn("ca_cert_file", "missing.pem")}},
		{"ca file without a certificate", gateway(map[string]any{"ca_cert_file": notPEM}), nil,
			[]wantDiag{errorOn("ca_cert_file", "no PEM-encoded certificate")}},
		{"insecure warns", gateway(map[string]any{"insecure_skip_verify": true}), nil,
			[]wantDiag{warningOn("insecure_skip_verify", "verification is off")}},
		{"plain http to a remote host warns", gateway(map[string]any{"apigw_url": "http://bkapi.example.com/prod"}), nil,
			[]wantDiag{warningOn("apigw_url", "unencrypted")}},
		{"plain http to loopback is fine", gateway(map[string]any{"apigw_url": "http://127.0.0.1:8080"}), nil, nil},
		{"username with the gateway warns", gateway(map[string]any{"username": "alice"}), nil,
			[]wantDiag{warningOn("username", "ignored with apigw_url")}},
		{"bk_token with the gateway warns", gateway(map[string]any{"bk_token": "t0ken"}), nil,
			[]wantDiag{warningOn("bk_token", "ignored with apigw_url")}},
		{"bk_token from the environment with the gateway is quiet", gateway(nil), map[string]string{"BKIAM_BK_TOKEN": "t0ken"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			isolateEnv(t, tc.env)
			got := configureProvider(t, tc.attrs)
			checkDiags(t, got, tc.want)
			checkNoSecret(t, got, "hunter2", "s3cret", "\t")
		})
	}
}

// TestEnvironmentFallbackOrder pins, for every attribute with fallbacks,
// that the configuration beats the environment and that the variables are
// read in the documented order.
func TestEnvironmentFallbackOrder(t *testing.T) {
	settings := []struct {
		setting stringSetting
		get     func(providerSettings) string
		set     func(*providerModel, types.String)
	}{
		{settingAPIGatewayURL, func(s providerSettings) string { return s.client.APIGatewayURL }, func(m *providerModel, v types.String) { m.APIGatewayURL = v }},
		{settingESBURL, func(s providerSettings) string { return s.client.ESBURL }, func(m *providerModel, v types.String) { m.ESBURL = v }},
		{settingAppCode, func(s providerSettings) string { return s.client.AppCode }, func(m *providerModel, v types.String) { m.AppCode = v }},
		{settingAppSecret, func(s providerSettings) string { return s.client.AppSecret }, func(m *providerModel, v types.String) { m.AppSecret = v }},
		{settingUsername, func(s providerSettings) string { return s.client.Username }, func(m *providerModel, v types.String) { m.Username = v }},
		{settingBKToken, func(s providerSettings) string { return s.client.BKToken }, func(m *providerModel, v types.String) { m.BKToken = v }},
		{settingTenantID, func(s providerSettings) string { return s.client.TenantID }, func(m *providerModel, v types.String) { m.TenantID = v }},
	}
	wantOrder := map[string][]string{
		"apigw_url":  {"BKIAM_APIGW_URL", "BK_IAM_APIGATEWAY_URL"},
		"esb_url":    {"BKIAM_ESB_URL", "BK_COMPONENT_API_URL"},
		"app_code":   {"BKIAM_APP_CODE", "BK_APP_CODE", "BKPAAS_APP_ID"},
		"app_secret": {"BKIAM_APP_SECRET", "BK_APP_SECRET", "BKPAAS_APP_SECRET"},
		"username":   {"BKIAM_USERNAME"},
		"bk_token":   {"BKIAM_BK_TOKEN"},
		"tenant_id":  {"BKIAM_TENANT_ID"},
	}
	for _, s := range settings {
		t.Run(s.setting.attr, func(t *testing.T) {
			if got, want := strings.Join(s.setting.env, ","), strings.Join(wantOrder[s.setting.attr], ","); got != want {
				t.Fatalf("fallbacks %s, want %s", got, want)
			}
			// A complete configuration for the transport this setting
			// belongs to, with the setting itself left null.
			base := func() providerModel {
				m := providerModel{AppCode: types.StringValue("code"), AppSecret: types.StringValue("secret"),
					APIGatewayURL: types.StringValue("https://gw.example.com/prod")}
				if s.setting.attr == "esb_url" {
					m.APIGatewayURL = types.StringNull()
					m.Username = types.StringValue("u")
				}
				s.set(&m, types.StringNull())
				return m
			}
			resolve := func(m providerModel, env map[string]string) string {
				t.Helper()
				got, diags := resolveConfig(m, func(k string) string { return env[k] })
				if diags.HasError() {
					t.Fatalf("resolveConfig: %v", diags)
				}
				return s.get(got)
			}
			value := func(i int) string { return "https://v" + string(rune('a'+i)) + ".example.com" }

			// Every variable set: the first wins. Then drop the winner
			// and the next one takes over, down to the last.
			env := map[string]string{}
			for i, name := range s.setting.env {
				env[name] = value(i)
			}
			for i, name := range s.setting.env {
				if got := resolve(base(), env); got != value(i) {
					t.Fatalf("with %v set: got %q, want %q from %s", testutil.Keys(env), got, value(i), name)
				}
				delete(env, name)
			}
			// The configuration beats every variable.
			for i, name := range s.setting.env {
				env[name] = value(i)
			}
			m := base()
			s.set(&m, types.StringValue("https://config.example.com"))
			if got := resolve(m, env); got != "https://config.example.com" {
				t.Fatalf("configuration did not win over the environment: got %q", got)
			}
		})
	}
}

func TestResolveConfigDefaults(t *testing.T) {
	got, diags := resolveConfig(providerModel{
		APIGatewayURL: types.StringValue("https://gw.example.com/prod"),
		AppCode:       types.StringValue("a"), AppSecret: types.StringValue("b"),
	}, func(string) string { return "" })
	if diags.HasError() {
		t.Fatal(diags)
	}
	if got.grantBatchSize != 200 || got.revokeBatchSize != 1000 || got.client.MaxRetries != 4 ||
		got.client.Timeout.String() != "30s" || got.insecureSkipVerify || got.batchWindow.String() != "250ms" {
		t.Fatalf("defaults: %+v", got)
	}
}

// TestConfigureMakesNoNetworkCall: configuring must not touch IAM, so that
// `terraform validate` and plans of unrelated changes work offline.
func TestConfigureMakesNoNetworkCall(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	isolateEnv(t, nil)
	for _, attrs := range []map[string]any{
		gateway(map[string]any{"apigw_url": srv.URL}),
		{"esb_url": srv.URL, "app_code": "a", "app_secret": "b", "username": "u"},
	} {
		checkDiags(t, configureProvider(t, attrs), nil)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("Configure sent %d requests", n)
	}
}

func TestUserAgent(t *testing.T) {
	if got := userAgent("1.2.3", ""); got != "terraform-provider-bkiam/1.2.3" {
		t.Errorf("got %q", got)
	}
	if got := userAgent("1.2.3", "1.5.7"); !strings.HasPrefix(got, "terraform-provider-bkiam/1.2.3 ") || !strings.HasSuffix(got, "Terraform/1.5.7") {
		t.Errorf("got %q", got)
	}
}

// protoServer is the provider behind the same protocol 6 server Terraform
// talks to, so tests see exactly the diagnostics a user would.
func protoServer(t *testing.T) tfprotov6.ProviderServer {
	t.Helper()
	server, err := NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	// The framework wants the schema fetched before configuration calls.
	if resp, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{}); err != nil || testutil.HasError(resp.Diagnostics) {
		t.Fatalf("GetProviderSchema: %v %v", err, resp.Diagnostics)
	}
	return server
}

// providerConfig builds the provider block as Terraform would send it.
func providerConfig(t *testing.T, attrs map[string]any) *tfprotov6.DynamicValue {
	t.Helper()
	objType, ok := providerSchema().Type().TerraformType(context.Background()).(tftypes.Object)
	if !ok {
		t.Fatal("provider schema is not an object")
	}
	return testutil.ObjectValue(t, objType, attrs)
}
