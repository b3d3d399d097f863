package provider

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// planTimeCase is a configuration that the plan must refuse, and what the
// user reads then.
type planTimeCase struct {
	name string
	// config is the configuration: for the resources' cases, the resource
	// block alone (the test adds the provider block).
	config string
	// env, unless nil, is the provider's environment during the plan:
	// every other variable the provider reads is unset. The resources'
	// cases leave it nil, as their provider block may rely on the
	// environment (against a real site, the app secret is there).
	env map[string]string
	// want are pieces of the message, each literal and in the order
	// Terraform prints them: the summary, then the detail. Together they
	// name the attribute and the fix.
	want []string
	// absent are values the message must not repeat: secrets in the
	// configuration or the environment. Terraform quotes the configuration
	// line of the attribute in error, the user's own text, so a secret in
	// the configuration may be there; the message must not add it.
	absent []string
}

// planErrorPattern is the ExpectError pattern of a message made of
// fragments: each literally, in order. Terraform wraps long lines, so a
// space matches any run of white space.
func planErrorPattern(fragments ...string) *regexp.Regexp {
	parts := make([]string, len(fragments))
	for i, f := range fragments {
		words := strings.Fields(f)
		for j, w := range words {
			words[j] = regexp.QuoteMeta(w)
		}
		parts[i] = strings.Join(words, `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, `.*`))
}

// planTimeTest is the test of cases: plan-only steps after the provider
// block, each of which must fail with its message and repeat none of its
// absent values (errorWatch stands in for ExpectError).
func planTimeTest(t *testing.T, provider string, cases []planTimeCase) resource.TestCase {
	t.Helper()
	errs := newErrorWatch(t)
	steps := make([]resource.TestStep, 0, len(cases))
	for _, tc := range cases {
		steps = append(steps, errs.expect(resource.TestStep{
			PreConfig: func() {
				if tc.env != nil {
					isolateEnv(t, tc.env)
				}
			},
			Config:   provider + tc.config,
			PlanOnly: true,
		}, planErrorPattern(tc.want...), tc.absent...))
	}
	return resource.TestCase{ProtoV6ProviderFactories: protoV6ProviderFactories, ErrorCheck: errs.check, Steps: steps}
}

// unknownValueOf is an expression of typ that Terraform cannot know
// before the apply: the id of a terraform_data resource not created yet.
func unknownValueOf(typ string) string {
	switch typ {
	case "int64":
		return "length(terraform_data.later.id)"
	case "bool":
		return `terraform_data.later.id != ""`
	}
	return "terraform_data.later.id"
}

// providerConfigErrorCases are the provider's plan-time errors: those of
// the schema's validators (ValidateProviderConfig) and those Configure
// finds once the environment fallbacks are applied, which Terraform
// reports during the plan too. dir holds the CA files the cases name.
func providerConfigErrorCases(dir string) []planTimeCase {
	notPEM := filepath.Join(dir, "not.pem")
	missing := filepath.Join(dir, "missing.pem")
	// A resource makes Terraform configure the provider during the plan.
	const grant = `
resource "bkiam_instance_grant" "test" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
}
`
	// block renders the provider block from attributes: the valid gateway
	// configuration, changed by changes ("" removes an attribute).
	block := func(changes map[string]string) string {
		attrs := map[string]string{
			"apigw_url":  `"https://gw.example.com/prod"`,
			"app_code":   `"a"`,
			"app_secret": `"b"`,
		}
		for k, v := range changes {
			attrs[k] = v
		}
		var b strings.Builder
		b.WriteString("provider \"bkiam\" {\n")
		for _, k := range sortedKeys(attrs) {
			if attrs[k] != "" {
				fmt.Fprintf(&b, "  %s = %s\n", k, attrs[k])
			}
		}
		b.WriteString("}\n")
		return b.String() + grant
	}
	esb := func(changes map[string]string) map[string]string {
		out := map[string]string{"apigw_url": "", "esb_url": `"https://paas.example.com"`, "username": `"alice"`}
		for k, v := range changes {
			out[k] = v
		}
		return out
	}

	cases := []planTimeCase{
		// Schema validators: an empty or white-space string is never useful;
		// the user who means "use the environment" omits the attribute, and
		// the message says so. The value is never repeated: it may be a
		// secret (secretFreeCases checks that).
		{name: "empty apigw_url", config: block(map[string]string{"apigw_url": `""`}),
			want: []string{"Blank value", "apigw_url: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_APIGW_URL or BK_IAM_APIGATEWAY_URL."}},
		{name: "empty esb_url", config: block(esb(map[string]string{"esb_url": `""`})),
			want: []string{"Blank value", "esb_url: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_ESB_URL or BK_COMPONENT_API_URL."}},
		{name: "empty app_code", config: block(map[string]string{"app_code": `""`}),
			want: []string{"Blank value", "app_code: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_APP_CODE, BK_APP_CODE or BKPAAS_APP_ID."}},
		{name: "blank app_code", config: block(map[string]string{"app_code": `" "`}),
			want: []string{"Blank value", "app_code: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_APP_CODE, BK_APP_CODE or BKPAAS_APP_ID."}},
		{name: "empty app_secret", config: block(map[string]string{"app_secret": `""`}),
			want: []string{"Blank value", "app_secret: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_APP_SECRET, BK_APP_SECRET or BKPAAS_APP_SECRET."}},
		{name: "blank app_secret", config: block(esb(map[string]string{"app_secret": `" \t "`, "bk_token": `"hunter2-token"`})),
			absent: []string{"hunter2"},
			want:   []string{"Blank value", "app_secret: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_APP_SECRET, BK_APP_SECRET or BKPAAS_APP_SECRET."}},
		{name: "empty username", config: block(esb(map[string]string{"username": `""`})),
			want: []string{"Blank value", "username: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_USERNAME."}},
		{name: "blank username with esb", config: block(esb(map[string]string{"username": `" "`})),
			want: []string{"Blank value", "username: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_USERNAME."}},
		{name: "empty bk_token", config: block(esb(map[string]string{"bk_token": `""`})),
			want: []string{"Blank value", "bk_token: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_BK_TOKEN."}},
		{name: "empty tenant_id", config: block(map[string]string{"tenant_id": `""`}),
			want: []string{"Blank value", "tenant_id: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_TENANT_ID."}},
		{name: "empty ca_cert_file", config: block(map[string]string{"ca_cert_file": `""`}),
			want: []string{"Blank value", "ca_cert_file: value must not be empty or white space; omit the attribute to trust the system's certificate authorities alone."}},
		{name: "detect_drift with esb_url", config: block(esb(map[string]string{"detect_drift": "true"})),
			want: []string{"detect_drift needs apigw_url", "detect_drift reads grants back through IAM's policy-list API, which IAM serves only " +
				"through the API gateway; the ESB (esb_url, set by the provider block) has no such API. Set apigw_url (or BKIAM_APIGW_URL " +
				"or BK_IAM_APIGATEWAY_URL) instead of esb_url, or turn detect_drift off."}},
		{name: "detect_drift from the environment not a boolean", config: block(nil), env: map[string]string{"BKIAM_DETECT_DRIFT": "yes please"},
			want: []string{"Invalid BKIAM_DETECT_DRIFT", `The environment variable BKIAM_DETECT_DRIFT sets detect_drift and must be true or false; got "yes please".`}},
		{name: "check_model with esb_url", config: block(esb(map[string]string{"check_model": "true"})),
			want: []string{"check_model needs apigw_url", "check_model reads each system's model through IAM's model API, which IAM serves only " +
				"through the API gateway; the ESB (esb_url, set by the provider block) has no such API. Set apigw_url (or BKIAM_APIGW_URL " +
				"or BK_IAM_APIGATEWAY_URL) instead of esb_url, or remove check_model."}},
		{name: "policy_list_path not a route", config: block(map[string]string{"policy_list_path": `"v2"`}),
			want: []string{"Invalid policy_list_path", `policy_list_path must be "legacy", got "v2". Remove it: "legacy" is the default and the only route left.`}},
		{name: "policy_list_path open, retired", config: block(map[string]string{"policy_list_path": `"open"`}),
			want: []string{"The open policy-list route is retired", `policy_list_path = "open" read GET /api/v1/open/systems/{system}/policies/, ` +
				`which cannot be read through IAM's API gateway: the gateway forwards it without its trailing slash, and IAM's backend ` +
				`answers that with a redirect. Remove policy_list_path: the provider reads GET /api/v1/systems/{system}/policies, ` +
				`the route the official SDKs use ("legacy").`}},
		{name: "both urls in the configuration", config: block(map[string]string{"esb_url": `"https://paas.example.com"`}),
			want: []string{"Invalid Attribute Combination", `Attribute "esb_url" cannot be specified when "apigw_url" is specified`}},

		// Schema validators: the URLs, one case per way a base URL is wrong.
		// A URL is repeated, if at all, without its user part, query and
		// fragment, any of which may hold a secret.
		{name: "url without scheme", config: block(map[string]string{"apigw_url": `"gw.example.com/prod"`}),
			want: []string{"Invalid URL", `apigw_url must start with https:// (or http:// for a local sandbox).`}},
		// url.Parse reads "alice:" as the scheme, not as a user: only the
		// "//" after a scheme makes it one worth repeating.
		{name: "url without scheme with credentials", config: block(map[string]string{"apigw_url": `"alice:hunter2@gw.example.com/prod"`}),
			absent: []string{"hunter2", "alice"},
			want:   []string{"Invalid URL", `apigw_url must start with https:// (or http:// for a local sandbox).`}},
		{name: "url with another scheme", config: block(esb(map[string]string{"esb_url": `"ftp://paas.example.com"`})),
			want: []string{"Invalid URL", `esb_url must start with https:// (or http:// for a local sandbox), not ftp://.`}},
		{name: "url with credentials", config: block(map[string]string{"apigw_url": `"https://alice:hunter2@gw.example.com/prod"`}),
			absent: []string{"hunter2", "alice"},
			want:   []string{"Invalid URL", "apigw_url must not carry credentials; set app_code and app_secret instead."}},
		{name: "url without host", config: block(map[string]string{"apigw_url": `"https:///prod"`}),
			want: []string{"Invalid URL", `apigw_url has no host; write it as https://host/path.`}},
		{name: "url without host with credentials", config: block(map[string]string{"apigw_url": `"https:alice:hunter2@gw.example.com"`}),
			absent: []string{"hunter2", "alice"},
			want:   []string{"Invalid URL", `apigw_url has no host; write it as https://host/path.`}},
		{name: "url with query", config: block(map[string]string{"apigw_url": `"https://gw.example.com/prod?stage=1"`}),
			want: []string{"Invalid URL", `apigw_url must not carry a query or fragment; set it to "https://gw.example.com/prod", without what follows the ? or #.`}},
		{name: "url with a secret in the query", config: block(map[string]string{"apigw_url": `"https://gw.example.com/prod?bk_app_secret=hunter2"`}),
			absent: []string{"hunter2"},
			want:   []string{"Invalid URL", `apigw_url must not carry a query or fragment; set it to "https://gw.example.com/prod", without what follows the ? or #.`}},
		{name: "url with fragment", config: block(esb(map[string]string{"esb_url": `"https://paas.example.com/#top"`})),
			want: []string{"Invalid URL", `esb_url must not carry a query or fragment; set it to "https://paas.example.com/", without what follows the ? or #.`}},
		{name: "url that does not parse", config: block(map[string]string{"apigw_url": `"https://gw.example.com/%zz"`}),
			want: []string{"Invalid URL", `apigw_url is not a valid URL: invalid URL escape.`}},
		// The parser's error is given without the URL, which may carry a
		// password that the credentials check never got to see, and
		// without the piece of it the parser quotes: here ":hun", the
		// start of a password with a slash in it.
		{name: "unparsable url with credentials", config: block(map[string]string{"apigw_url": `" https://alice:hunter2@gw.example.com/prod"`}),
			absent: []string{"hunter2"},
			want:   []string{"Invalid URL", "apigw_url is not a valid URL: first path segment in URL cannot contain colon."}},
		{name: "unparsable url with a password the parser quotes", config: block(map[string]string{"apigw_url": `"https://alice:hun/ter2@gw.example.com/prod"`}),
			absent: []string{":hun", "ter2"},
			want:   []string{"Invalid URL", "apigw_url is not a valid URL: invalid port after host."}},

		// Schema validators: numbers and durations.
		{name: "grant batch too big", config: block(map[string]string{"grant_batch_size": "5000"}),
			want: []string{"Invalid Attribute Value", "Attribute grant_batch_size value must be between 1 and 1000, got: 5000"}},
		{name: "grant batch zero", config: block(map[string]string{"grant_batch_size": "0"}),
			want: []string{"Invalid Attribute Value", "Attribute grant_batch_size value must be between 1 and 1000, got: 0"}},
		{name: "revoke batch zero", config: block(map[string]string{"revoke_batch_size": "0"}),
			want: []string{"Invalid Attribute Value", "Attribute revoke_batch_size value must be between 1 and 1000, got: 0"}},
		{name: "revoke batch too big", config: block(map[string]string{"revoke_batch_size": "1001"}),
			want: []string{"Invalid Attribute Value", "Attribute revoke_batch_size value must be between 1 and 1000, got: 1001"}},
		{name: "negative retries", config: block(map[string]string{"max_retries": "-1"}),
			want: []string{"Invalid Attribute Value", "Attribute max_retries value must be between 0 and 20, got: -1"}},
		{name: "too many retries", config: block(map[string]string{"max_retries": "21"}),
			want: []string{"Invalid Attribute Value", "Attribute max_retries value must be between 0 and 20, got: 21"}},
		{name: "timeout not a duration", config: block(map[string]string{"request_timeout": `"soon"`}),
			want: []string{"Invalid duration", `request_timeout: value must be a positive Go duration such as "30s" or "2m", got "soon".`}},
		{name: "zero timeout", config: block(map[string]string{"request_timeout": `"0s"`}),
			want: []string{"Invalid duration", `request_timeout: value must be a positive Go duration such as "30s" or "2m", got "0s".`}},
		{name: "negative timeout", config: block(map[string]string{"request_timeout": `"-1s"`}),
			want: []string{"Invalid duration", `request_timeout: value must be a positive Go duration such as "30s" or "2m", got "-1s".`}},
		{name: "batch window not a duration", config: block(map[string]string{"batch_window": `"often"`}),
			want: []string{"Invalid duration", `batch_window: value must be a Go duration such as "10ms" or "0s", got "often".`}},
		{name: "negative batch window", config: block(map[string]string{"batch_window": `"-5ms"`}),
			want: []string{"Invalid duration", `batch_window: value must be a Go duration such as "10ms" or "0s", got "-5ms".`}},

		// Configure, after the environment fallbacks.
		{name: "no endpoint", config: block(map[string]string{"apigw_url": ""}),
			want: []string{"No IAM endpoint configured",
				"Set apigw_url (or BKIAM_APIGW_URL or BK_IAM_APIGATEWAY_URL) to the IAM API gateway, e.g. https://bkapi.example.com/api/bk-iam/prod, " +
					"or esb_url (or BKIAM_ESB_URL or BK_COMPONENT_API_URL) to the BlueKing ESB, e.g. https://paas.example.com."}},
		{name: "esb_url from the environment beside apigw_url", config: block(nil),
			env: map[string]string{"BK_COMPONENT_API_URL": "https://paas.example.com"},
			want: []string{"Both apigw_url and esb_url are set",
				"The provider talks to IAM through exactly one of the API gateway and the ESB, but apigw_url is set by the provider block " +
					"and esb_url by the environment variable BK_COMPONENT_API_URL. Remove one of them."}},
		{name: "apigw_url from the environment beside esb_url", config: block(esb(nil)),
			env: map[string]string{"BKIAM_APIGW_URL": "https://gw.example.com/prod"},
			want: []string{"Both apigw_url and esb_url are set",
				"apigw_url is set by the environment variable BKIAM_APIGW_URL and esb_url by the provider block. Remove one of them."}},
		{name: "apigw_url from the environment without scheme", config: block(map[string]string{"apigw_url": ""}),
			env: map[string]string{"BKIAM_APIGW_URL": "gw.example.com/prod"},
			want: []string{"Invalid apigw_url",
				`apigw_url (set by the environment variable BKIAM_APIGW_URL) must start with https:// (or http:// for a local sandbox).`}},
		{name: "apigw_url from the environment without scheme with credentials", config: block(map[string]string{"apigw_url": ""}),
			env: map[string]string{"BKIAM_APIGW_URL": "alice:hunter2@gw.example.com/prod"}, absent: []string{"hunter2", "alice"},
			want: []string{"Invalid apigw_url",
				`apigw_url (set by the environment variable BKIAM_APIGW_URL) must start with https:// (or http:// for a local sandbox).`}},
		{name: "esb_url from the environment with credentials", config: block(esb(map[string]string{"esb_url": ""})),
			env: map[string]string{"BK_COMPONENT_API_URL": "https://alice:hunter2@paas.example.com"}, absent: []string{"hunter2", "alice"},
			want: []string{"Invalid esb_url",
				"esb_url (set by the environment variable BK_COMPONENT_API_URL) must not carry credentials; set app_code and app_secret instead."}},
		{name: "apigw_url from the environment with query", config: block(map[string]string{"apigw_url": ""}),
			env: map[string]string{"BK_IAM_APIGATEWAY_URL": "https://gw.example.com/prod?stage=1"},
			want: []string{"Invalid apigw_url",
				`apigw_url (set by the environment variable BK_IAM_APIGATEWAY_URL) must not carry a query or fragment; ` +
					`set it to "https://gw.example.com/prod", without what follows the ? or #.`}},
		{name: "apigw_url from the environment with a secret in the query", config: block(map[string]string{"apigw_url": ""}),
			env: map[string]string{"BKIAM_APIGW_URL": "https://gw.example.com/prod?bk_app_secret=hunter2"}, absent: []string{"hunter2"},
			want: []string{"Invalid apigw_url",
				`apigw_url (set by the environment variable BKIAM_APIGW_URL) must not carry a query or fragment; ` +
					`set it to "https://gw.example.com/prod", without what follows the ? or #.`}},
		{name: "missing app_code", config: block(map[string]string{"app_code": ""}),
			want: []string{"Missing app_code",
				"IAM authenticates every call by app code and secret. Set app_code in the provider block or the environment variable " +
					"BKIAM_APP_CODE, BK_APP_CODE or BKPAAS_APP_ID."}},
		{name: "missing app_secret", config: block(map[string]string{"app_secret": ""}),
			want: []string{"Missing app_secret",
				"Set app_secret in the provider block or the environment variable BKIAM_APP_SECRET, BK_APP_SECRET or BKPAAS_APP_SECRET."}},
		{name: "esb without a user", config: block(esb(map[string]string{"username": ""})),
			want: []string{"ESB needs a user",
				"ESB demands a user on every call. Set username (or BKIAM_USERNAME) when the app is on ESB's skip-login whitelist, " +
					"or bk_token (or BKIAM_BK_TOKEN) to a user's login token; or use apigw_url, which needs no user."}},
		{name: "esb from the environment without a user", config: block(map[string]string{"apigw_url": ""}),
			env:  map[string]string{"BKIAM_ESB_URL": "https://paas.example.com"},
			want: []string{"ESB needs a user", "Set username (or BKIAM_USERNAME)"}},
		{name: "missing ca_cert_file", config: block(map[string]string{"ca_cert_file": fmt.Sprintf("%q", missing)}),
			want: []string{"Cannot use ca_cert_file", "reading ca_cert_file: open " + missing + ": no such file or directory"}},
		{name: "ca_cert_file without a certificate", config: block(map[string]string{"ca_cert_file": fmt.Sprintf("%q", notPEM)}),
			want: []string{"Cannot use ca_cert_file", "ca_cert_file " + notPEM + " holds no PEM-encoded certificate"}},
		// White space from the environment: the schema never sees it.
		{name: "blank app_secret from the environment", config: block(map[string]string{"app_secret": ""}),
			// The next variable's secret is no business of the message.
			env: map[string]string{"BKIAM_APP_SECRET": "  ", "BK_APP_SECRET": "hunter2"}, absent: []string{"hunter2"},
			want: []string{"Blank app_secret",
				"app_secret, as set by the environment variable BKIAM_APP_SECRET, is only white space. IAM authenticates every call by " +
					"app code and secret. Set app_secret in the provider block or the environment variable BKIAM_APP_SECRET, BK_APP_SECRET " +
					"or BKPAAS_APP_SECRET to its real value."}},
		{name: "blank app_code from the environment", config: block(map[string]string{"app_code": ""}),
			env: map[string]string{"BKPAAS_APP_ID": "\t"},
			want: []string{"Blank app_code", "app_code, as set by the environment variable BKPAAS_APP_ID, is only white space.",
				"Set app_code in the provider block or the environment variable BKIAM_APP_CODE, BK_APP_CODE or BKPAAS_APP_ID to its real value."}},
		{name: "blank username from the environment with esb", config: block(esb(map[string]string{"username": ""})),
			env: map[string]string{"BKIAM_USERNAME": " "},
			want: []string{"Blank username",
				"username, as set by the environment variable BKIAM_USERNAME, is only white space. ESB sends it as the user of every call. " +
					"Set username in the provider block or the environment variable BKIAM_USERNAME to its real value, or unset it and use bk_token."}},
		{name: "blank bk_token from the environment with esb", config: block(esb(nil)),
			env:  map[string]string{"BKIAM_BK_TOKEN": " "},
			want: []string{"Blank bk_token", "ESB sends it as the user's login token.", "or unset it and use username."}},
		{name: "blank tenant_id from the environment", config: block(nil),
			env:  map[string]string{"BKIAM_TENANT_ID": " "},
			want: []string{"Blank tenant_id", "It is sent as the tenant of every call.", "or unset it on a site with one tenant."}},

		// Configure: a value not known until the apply. The string settings
		// point at their environment variables.
		{name: "unknown apigw_url", config: `resource "terraform_data" "later" {}` + "\n" +
			block(map[string]string{"apigw_url": unknownValueOf("string")}),
			want: []string{"Unknown value for apigw_url",
				"apigw_url depends on a value that is not known until apply, but the provider must be configured before it can plan. " +
					"Set it to a value known at plan time or leave it unset and use BKIAM_APIGW_URL or BK_IAM_APIGATEWAY_URL, " +
					"or apply what it depends on first (terraform apply -target=…)."}},
	}

	// Every other attribute, unknown, is refused as well: a new attribute
	// gets its case here without anyone having to remember it.
	for _, attr := range sortedKeys(providerSchema().Attributes) {
		if attr == "apigw_url" {
			continue
		}
		typ := "string"
		switch t := providerSchema().Attributes[attr].GetType(); {
		case t.Equal(types.Int64Type):
			typ = "int64"
		case t.Equal(types.BoolType):
			typ = "bool"
		}
		changes := map[string]string{attr: unknownValueOf(typ)}
		if attr == "esb_url" {
			changes = esb(changes)
		}
		cases = append(cases, planTimeCase{
			name:   "unknown " + attr,
			config: `resource "terraform_data" "later" {}` + "\n" + block(changes),
			want: []string{"Unknown value for " + attr,
				attr + " depends on a value that is not known until apply", "Set it to a value known at plan time"},
		})
	}
	// The provider's own settings alone, whatever the environment of the
	// test run (against a real site it holds the app secret).
	for i := range cases {
		if cases[i].env == nil {
			cases[i].env = map[string]string{}
		}
	}
	return cases
}

// TestAccProviderConfigErrors: every provider configuration mistake, as
// users see it from the real Terraform CLI, naming the attribute and the
// fix. The warnings (plain http to a remote host, insecure_skip_verify,
// username or bk_token with apigw_url) fail nothing, so ExpectError cannot
// see them: TestConfigureProvider covers them.
func TestAccProviderConfigErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "not.pem"), []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	resource.Test(t, planTimeTest(t, "", providerConfigErrorCases(dir)))
}

// providerSources are the Go files of the packages that make up the
// provider's resources: this one, and every package under internal/ that
// talks to Terraform (the protocol seam, and those importing it or the
// plugin framework: the resources' rooms and what they share), so that a
// new package is read without a test naming it.
func providerSources(t *testing.T) []string {
	t.Helper()
	const seam = "github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	dirs, err := filepath.Glob("../*")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("../service/*")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, dir := range append(dirs, more...) {
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		var sources []string
		uses := filepath.Base(dir) == "protocol" || filepath.Base(dir) == "provider"
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			sources = append(sources, name)
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if path := strings.Trim(imp.Path.Value, `"`); path == seam || strings.HasPrefix(path, "github.com/hashicorp/terraform-plugin-framework") {
					uses = true
				}
			}
		}
		if uses {
			files = append(files, sources...)
		}
	}
	if len(files) == 0 {
		t.Fatal("no provider sources found")
	}
	return files
}

// notAtPlanTime are the error messages of the provider's source that no
// configuration can bring about at plan time, by the function that gives
// them and the longest fixed part of their summary, with the reason.
// TestEveryValidationHasAnAcceptanceCase lets them go without a case.
var notAtPlanTime = map[string]string{
	"checkLimits: Invalid request_timeout":                       "the schema's durationValidator refuses the same value first, and the attribute has no environment fallback",
	"checkLimits: Invalid batch_window":                          "the schema's durationValidator refuses the same value first, and the attribute has no environment fallback",
	"checkRange: Invalid":                                        "the schema's int64validator.Between refuses the same value first, and the attributes have no environment fallback",
	"bkiamProvider.Configure: Cannot create the IAM client":      "resolveConfig refuses first, on the attribute, everything bkiam.New refuses: a bug",
	"newHTTPClient: Cannot create the HTTP client":               "only if http.DefaultTransport was replaced: a bug",
	"applyChange: Provider not configured":                       "apply time, and a bug",
	"unmarshal: Cannot decode the":                               "Terraform sent a value that does not fit the schema: a bug",
	"decodeValue: Cannot decode the":                             "a codec that does not fit its schema: a bug (TestCodecsRoundTrip)",
	"AsInt64: is not a 64-bit integer":                           "a number in state the provider did not write: a bug",
	"marshal: Cannot encode the resource's state":                "a bug",
	"identityData: Cannot encode the resource's identity":        "a bug (TestProtocolSchemasUseNothingIgnored holds identities to strings and lists)",
	"heldIdentity: Cannot decode the resource's identity":        "an identity Terraform kept or checked against the identity schema: a bug",
	"importResource: Cannot decode the import identity":          "Terraform checks an import block's identity against the identity schema first: a bug",
	"Base.Client: Provider not configured":                       "terraform query configures the provider before listing: a bug",
	"checkIdentityKept: Unexpected Identity Change":              "a bug in a resource's IdentityOf, caught as the framework catches it (TestIdentityAsTheFrameworkDoes)",
	"ReadPrivateState: Cannot read the resource's private state": "private state Terraform kept, not configuration",
	"PrivateState.Get: Cannot read the resource's private state": "private state Terraform kept, not configuration",
	"PrivateState.Bytes: Cannot record what the resource holds":  "apply time, and a bug",
	"PrivateState.Set: Cannot record what the resource holds":    "apply time, and a bug",
	"InstanceGrant.Apply: Unknown grant at apply":                "apply time, and a bug",
	"CreatorGrant.Apply: Unknown instances at apply":             "apply time, and a bug",
	"GroupMembers.Apply: Unknown members at apply":               "apply time, and a bug",
	"memberRunner.Load: Unknown members in state":                "apply time, and a bug",
	"memberRunner.Load: Cannot read the group's members": "apply time: depends on the group in IAM " +
		"(TestAccGroupMembersGroupGone provokes it)",
	"GroupMembers.Read: Cannot read the group's members":       "refresh time: depends on what IAM answers to the read",
	"FromProviderData: Unexpected provider data":               "a bug: Configure always hands over *conns.Data",
	"gradeManagerResource.configured: Provider not configured": "a bug: Terraform configures the provider first",
	"groupResource.configured: Provider not configured":        "a bug: Terraform configures the provider first",
	"managementDataSourceReady: Provider not configured":       "a bug: Terraform configures the provider first",
	"gradeManagerResource.Create: Cannot create the grade manager": "apply time: depends on IAM " +
		"(TestAccGradeManagerRefusals provokes the name conflict)",
	"gradeManagerResource.Read: Invalid grade manager id":          "refresh time: a state the provider did not write",
	"gradeManagerResource.Read: Cannot read the grade manager":     "refresh time: depends on what IAM answers to the read",
	"gradeManagerResource.Update: Cannot update the grade manager": "apply time: depends on IAM",
	"gradeManagerResource.Create: Grade manager created without its sync group": "apply time: depends on IAM's organisation " +
		"(TestAccGradeManagerSyncGroupRefused provokes it)",
	"gradeManagerResource.Delete: Cannot delete the grade manager":                  "apply time: depends on IAM",
	"gradeManagerResource.Delete: Cannot tell whether the grade manager is deleted": "apply time: depends on IAM's read after the delete",
	"gradeManagerResource.Delete: The grade manager is still there": "apply time: IAM's background delete outlasts timeouts.delete " +
		"(TestAccGradeManagerDeleteWaits provokes it)",
	"groupResource.Create: group ids for one group": "apply time: an answer IAM never gives",
	"groupResource.Create: Cannot create the group": "apply time: depends on IAM " +
		"(TestAccGradeManagerRefusals provokes the ownership 403)",
	"groupResource.Read: Invalid group id":          "refresh time: a state the provider did not write",
	"groupResource.Read: Cannot read the group":     "refresh time: depends on what IAM answers to the read",
	"groupResource.Update: Cannot update the group": "apply time: depends on IAM",
	"groupResource.Delete: Cannot delete the group": "apply time: depends on IAM",
	"groupDataSource.Read: No such group": "read time: depends on the groups in IAM " +
		"(TestAccGradeManagerRefusals provokes it)",
	"groupDataSource.Read: Cannot find the group": "read time: depends on what IAM answers to the list",
	"gradeManagerDataSource.Read: No such grade manager": "read time: depends on the grade managers in IAM " +
		"(TestAccGradeManagerRefusals provokes it)",
	"gradeManagerDataSource.Read: Several grade managers":        "read time: IAM keeps names unique, so only a broken site answers it",
	"gradeManagerDataSource.Read: Cannot find the grade manager": "read time: depends on what IAM answers to the list",
	"gradeManagerDataSource.Read: Cannot read the grade manager": "read time: depends on what IAM answers to the read",
	"GroupPermission.Read: Cannot read the group's permissions":  "refresh time: depends on what IAM answers to the read",
	"GroupPermission.readImport: Cannot import the permissions": "import time: depends on what the group holds in IAM " +
		"(TestAccGroupPermission imports)",
	"listedResources: which a resource never grants": "import time: depends on what the group holds in IAM",
	"PathKeyOf: in a path, which this resource's notation (/SYSTEM,TYPE,ID/…/) cannot write: an id with \",\" or \"/\" can be granted only by itself, as a plain key": "import time: depends on what the " +
		"group holds in IAM (TestInstancePathKeys provokes it)",
	"managementCaller.BatchInstance: a group permission's call for": "apply time, and a bug: the resource's subject is always its group",
	"managementCaller.BatchInstance: outside the authorization scope of the group's grade manager: widen its authorization_scopes, or grant less": "apply time: " +
		"IAM checks the scope (TestAccGroupPermissionOutsideScope provokes it)",
	"managementCaller.BatchInstance: the group is gone, or its grade manager was made in the IAM web UI: IAM's management API manages only the groups of grade managers a system created through it": "apply " +
		"time: depends on the group in IAM (TestAccGradeManagerRefusals provokes it)",
	"managementCaller.BatchInstance: IAM also checks the system that created the group's grade manager: the app must be a client of both, each with the management allow-list for the call. If the app is not a client of system, set group_system to the system that created the grade manager": "apply " +
		"time: depends on the app's rights in IAM (TestAccGroupPermissionNotClientOfActionsSystem provokes it)",
	"memberRunner.After: IAM dropped members": "apply time: depends on IAM's organisation " +
		"(TestAccGroupMembersDropped provokes it)",
	"systemDataSource.Configure: Unexpected provider data": "a bug: Configure always hands over *conns.Data",
	"systemDataSource.Read: Provider not configured":       "a bug: Terraform configures the provider before reading a data source",
	"Run: Cannot plan the IAM calls":                       "apply time; the validation refuses every grant the planner would",
	"InstanceGrant.Read: Cannot read grants back from IAM": "refresh time: depends on what IAM answers to the read " +
		"(TestAccDriftReadErrors provokes it)",
	"CreatorGrant.Read: Cannot read grants back from IAM": "refresh time: depends on what IAM answers to the read",
	"heldPolicy: cannot read the expression of":           "refresh time: an expression IAM sent that does not parse",
	"InstanceGrant.readImport: Cannot import the grant":   "import time: depends on what the subject holds in IAM",
	"importedHoldings: instance (a grant with an empty instance list); bkiam_instance_grant never grants that, so it cannot be imported": "import time: " +
		"depends on what the subject holds in IAM",
	"importedHoldings: instances directly; there is nothing to import": "import time: depends on what the subject holds in IAM",
	"goneCheck.groupGone: but IAM refuses its groups": "refresh time: an answer the real IAM never gives (a grade manager it lists but " +
		"refuses); TestProtocolOwnership403OnRefresh provokes the refresh's other refusal",
	"UpgradePrivate: use that newer version (or a later one) with this state, since an older one could lose track of what the resource granted": "private state Terraform kept, not " +
		"configuration (TestPrivateStateVersion)",
	"UpgradePrivate: which this provider cannot upgrade (a bug in the provider": "a bug: TestPrivateUpgradesCoverEveryVersion",
	"UpgradePrivate: upgrading it from format":                                  "private state Terraform kept, and a bug",
	"upgradeState: Cannot read the stored state":                                "state Terraform kept, not configuration (TestUpgradeState)",
	"upgradeState: Cannot upgrade the stored state":                             "state Terraform kept; the CLIs refuse a newer schema version first (TestUpgradeState, TestAccStateUpgrade)",
	"upgradeState: Cannot encode the resource's state":                          "a bug",
	"upgradeJSON: by a newer version of the provider, and this one knows versions up to": "state Terraform kept; the CLIs refuse " +
		"a newer schema version first (TestUpgradeState, TestAccStateUpgrade)",
	"upgradeJSON: its schema version":                                                        "state Terraform kept: a negative version is a broken state file",
	"upgradeJSON: its attributes are not a JSON object":                                      "state Terraform kept: a broken state file",
	"upgradeJSON: and this provider has no upgrade from that version (a bug in the provider": "a bug: TestProtocolSchemasUseNothingIgnored",
	"upgradeJSON: upgrading it from schema version":                                          "state Terraform kept, refused by an upgrade step; no step refuses yet",
	"creatorGrantRunner.recordPolicies: do not include them. Remove them from actions, or leave actions unset to record what IAM grants": "apply time: " +
		"depends on the creator actions the system configured in IAM",
	"instanceGrantRunner.Failed: IAM answers a grant to a user group that does not exist this way: check that group": "apply time: " +
		"depends on whether IAM knows the group",
	"checkPlannedScope: Outside the grade manager's scope": "plan time, but only once the grade manager and the group exist " +
		"(their ids known at plan), which a plan-only case cannot arrange: TestAccGroupPermissionPlannedScope provokes both",
}

// TestEveryValidationHasAnAcceptanceCase keeps the acceptance cases
// complete, so that a new validation cannot slip in untested. It needs no
// Terraform: it reads the provider's source and schema, and the cases.
//
//   - Every error message of the source (the summary and the detail given
//     to a diagnostic, and every fmt.Errorf, as those end up in details)
//     has its longest fixed part, between the values filled in, in some
//     case's expected message, unless notAtPlanTime explains why not.
//   - Every validator of the provider schema has a case whose message is
//     that validator's, on that attribute.
func TestEveryValidationHasAnAcceptanceCase(t *testing.T) {
	var cases []planTimeCase
	cases = append(cases, providerConfigErrorCases(t.TempDir())...)
	cases = append(cases, instanceGrantValidationCases()...)
	cases = append(cases, creatorGrantValidationCases()...)
	cases = append(cases, creatorActionsNeedModelCases()...)
	cases = append(cases, modelCheckCases()...)
	cases = append(cases, groupMembersValidationCases()...)
	cases = append(cases, managementCases()...)
	cases = append(cases, managementValidationCases()...)
	cases = append(cases, groupPermissionValidationCases()...)
	cases = append(cases, identityValidationCases()...)
	expected := func(match func(want []string, fragment string) bool) bool {
		for _, c := range cases {
			for _, f := range c.want {
				if match(c.want, f) {
					return true
				}
			}
		}
		return false
	}

	files := providerSources(t)
	fset := token.NewFileSet()
	excused := map[string]bool{}
	for _, name := range files {
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				parts := errorMessageParts(call)
				if len(parts) == 0 {
					return true
				}
				key := funcName(fn) + ": " + parts[0]
				if _, ok := notAtPlanTime[key]; ok {
					excused[key] = true
					return true
				}
				for _, part := range parts {
					if !expected(func(_ []string, f string) bool { return strings.Contains(f, part) }) {
						t.Errorf("%s: no acceptance case expects %q (%s); add one that provokes it at plan time, or explain in notAtPlanTime why none can",
							fset.Position(call.Pos()), part, key)
					}
				}
				return true
			})
		}
	}
	for key := range notAtPlanTime {
		if !excused[key] {
			t.Errorf("notAtPlanTime names %q, which the source no longer gives", key)
		}
	}

	ctx := context.Background()
	for attrName, attr := range providerSchema().Attributes {
		var descriptions []string
		switch a := attr.(type) {
		case interface{ StringValidators() []validator.String }:
			for _, v := range a.StringValidators() {
				if _, ok := v.(urlValidator); ok {
					// Its messages are checkBaseURL's, checked above; here
					// only that some case shows one on this attribute.
					if !expected(func(want []string, f string) bool {
						return want[0] == "Invalid URL" && strings.HasPrefix(f, attrName+" ")
					}) {
						t.Errorf("no acceptance case expects an invalid URL in %s", attrName)
					}
					continue
				}
				descriptions = append(descriptions, v.Description(ctx))
			}
		case interface{ Int64Validators() []validator.Int64 }:
			for _, v := range a.Int64Validators() {
				descriptions = append(descriptions, v.Description(ctx))
			}
		case interface{ BoolValidators() []validator.Bool }:
			for _, v := range a.BoolValidators() {
				descriptions = append(descriptions, v.Description(ctx))
			}
		default:
			t.Errorf("provider attribute %s is of a kind (%T) this test does not read validators of", attrName, attr)
		}
		for _, d := range descriptions {
			// The framework's validators say "Attribute <attr> <description>,
			// got: …"; durationValidator "<attr>: <description>, got …";
			// ConflictsWith has a message of its own.
			forms := []string{"Attribute " + attrName + " " + d, attrName + ": " + d}
			if strings.HasPrefix(d, "Ensure that if an attribute is set, these are not set:") {
				forms = []string{`cannot be specified when "` + attrName + `" is specified`}
			}
			if !expected(func(_ []string, f string) bool {
				return slices.ContainsFunc(forms, func(form string) bool { return strings.Contains(f, form) })
			}) {
				t.Errorf("no acceptance case expects the message of %s's validator %q", attrName, d)
			}
		}
	}
}

// messageHole stands, in a message's template, for a value filled in.
const messageHole = "\x00"

var formatVerb = regexp.MustCompile(`%[-+# 0-9.*]*[a-zA-Z%]`)

// errorMessageParts returns, for a call that makes an error message (a
// diagnostic's error or fmt.Errorf), the longest fixed part of each of its
// texts: the summary and the detail, or the format. Nil for other calls.
func errorMessageParts(call *ast.CallExpr) []string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	var texts []string
	switch pkg, _ := sel.X.(*ast.Ident); {
	case sel.Sel.Name == "Errorf" && pkg != nil && pkg.Name == "fmt" && len(call.Args) > 0:
		texts = []string{formatVerb.ReplaceAllString(messageTemplate(call.Args[0]), messageHole)}
	case (sel.Sel.Name == "AddError" || sel.Sel.Name == "addError") && len(call.Args) == 2:
		texts = []string{messageTemplate(call.Args[0]), messageTemplate(call.Args[1])}
	case (sel.Sel.Name == "AddAttributeError" || sel.Sel.Name == "addAttributeError") && len(call.Args) == 3:
		texts = []string{messageTemplate(call.Args[1]), messageTemplate(call.Args[2])}
	}
	var parts []string
	for _, text := range texts {
		longest := ""
		for _, part := range strings.Split(text, messageHole) {
			if part = strings.Trim(part, ` .,;:()"`); len(part) > len(longest) {
				longest = part
			}
		}
		// Shorter pieces ("got", "of") say nothing about the message.
		if len(longest) >= 6 {
			parts = append(parts, longest)
		}
	}
	return parts
}

// messageTemplate is the text of a message expression, with messageHole
// for every value computed at run time.
func messageTemplate(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		if s, err := strconv.Unquote(e.Value); err == nil && e.Kind == token.STRING {
			return s
		}
	case *ast.ParenExpr:
		return messageTemplate(e.X)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return messageTemplate(e.X) + messageTemplate(e.Y)
		}
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(e.Args) > 0 {
			return formatVerb.ReplaceAllString(messageTemplate(e.Args[0]), messageHole)
		}
	}
	return messageHole
}

// funcName names a function as notAtPlanTime does: "recv.name" for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
