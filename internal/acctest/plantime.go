package acctest

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// PlanTimeCase is a configuration that the plan must refuse, and what the
// user reads then.
type PlanTimeCase struct {
	Name string
	// Config is the configuration: for the resources' cases, the resource
	// block alone (the test adds the provider block).
	Config string
	// Env, unless nil, is the provider's environment during the plan:
	// every other variable the provider reads is unset. The resources'
	// cases leave it nil, as their provider block may rely on the
	// environment (against a real site, the app secret is there).
	Env map[string]string
	// Want are pieces of the message, each literal and in the order
	// Terraform prints them: the summary, then the detail. Together they
	// name the attribute and the fix.
	Want []string
	// Absent are values the message must not repeat: secrets in the
	// configuration or the environment. Terraform quotes the configuration
	// line of the attribute in error, the user's own text, so a secret in
	// the configuration may be there; the message must not add it.
	Absent []string
}

// PlanErrorPattern is the ExpectError pattern of a message made of
// fragments: each literally, in order. Terraform wraps long lines, so a
// space matches any run of white space.
func PlanErrorPattern(fragments ...string) *regexp.Regexp {
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

// PlanTimeTest is the test of cases: plan-only steps after the provider
// block, each of which must fail with its message and repeat none of its
// absent values (errorWatch stands in for ExpectError).
func PlanTimeTest(t *testing.T, provider string, cases []PlanTimeCase) resource.TestCase {
	t.Helper()
	errs := NewErrorWatch(t)
	steps := make([]resource.TestStep, 0, len(cases))
	for _, tc := range cases {
		steps = append(steps, errs.Expect(resource.TestStep{
			PreConfig: func() {
				if tc.Env != nil {
					IsolateEnv(t, tc.Env)
				}
			},
			Config:   provider + tc.Config,
			PlanOnly: true,
		}, PlanErrorPattern(tc.Want...), tc.Absent...))
	}
	return resource.TestCase{ProtoV6ProviderFactories: ProtoV6ProviderFactories, ErrorCheck: errs.Check, Steps: steps}
}

// UnknownValueOf is an expression of typ that Terraform cannot know
// before the apply: the id of a terraform_data resource not created yet.
func UnknownValueOf(typ string) string {
	switch typ {
	case "int64":
		return "length(terraform_data.later.id)"
	case "bool":
		return `terraform_data.later.id != ""`
	}
	return "terraform_data.later.id"
}

// ProviderConfigErrorCases are the provider's plan-time errors: those of
// the schema's validators (ValidateProviderConfig) and those Configure
// finds once the environment fallbacks are applied, which Terraform
// reports during the plan too. dir holds the CA files the cases name.
func ProviderConfigErrorCases(dir string) []PlanTimeCase {
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
		for _, k := range SortedKeys(attrs) {
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

	cases := []PlanTimeCase{
		// Schema validators: an empty or white-space string is never useful;
		// the user who means "use the environment" omits the attribute, and
		// the message says so. The value is never repeated: it may be a
		// secret (secretFreeCases checks that).
		{Name: "empty apigw_url", Config: block(map[string]string{"apigw_url": `""`}),
			Want: []string{"Blank value", "apigw_url: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_APIGW_URL or BK_IAM_APIGATEWAY_URL."}},
		{Name: "empty esb_url", Config: block(esb(map[string]string{"esb_url": `""`})),
			Want: []string{"Blank value", "esb_url: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_ESB_URL or BK_COMPONENT_API_URL."}},
		{Name: "empty app_code", Config: block(map[string]string{"app_code": `""`}),
			Want: []string{"Blank value", "app_code: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_APP_CODE, BK_APP_CODE or BKPAAS_APP_ID."}},
		{Name: "blank app_code", Config: block(map[string]string{"app_code": `" "`}),
			Want: []string{"Blank value", "app_code: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_APP_CODE, BK_APP_CODE or BKPAAS_APP_ID."}},
		{Name: "empty app_secret", Config: block(map[string]string{"app_secret": `""`}),
			Want: []string{"Blank value", "app_secret: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_APP_SECRET, BK_APP_SECRET or BKPAAS_APP_SECRET."}},
		{Name: "blank app_secret", Config: block(esb(map[string]string{"app_secret": `" \t "`, "bk_token": `"hunter2-token"`})),
			Absent: []string{"hunter2"},
			Want:   []string{"Blank value", "app_secret: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_APP_SECRET, BK_APP_SECRET or BKPAAS_APP_SECRET."}},
		{Name: "empty username", Config: block(esb(map[string]string{"username": `""`})),
			Want: []string{"Blank value", "username: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_USERNAME."}},
		{Name: "blank username with esb", Config: block(esb(map[string]string{"username": `" "`})),
			Want: []string{"Blank value", "username: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_USERNAME."}},
		{Name: "empty bk_token", Config: block(esb(map[string]string{"bk_token": `""`})),
			Want: []string{"Blank value", "bk_token: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_BK_TOKEN."}},
		{Name: "empty tenant_id", Config: block(map[string]string{"tenant_id": `""`}),
			Want: []string{"Blank value", "tenant_id: value must not be empty or white space; omit the attribute to use the environment variable BKIAM_TENANT_ID."}},
		{Name: "empty ca_cert_file", Config: block(map[string]string{"ca_cert_file": `""`}),
			Want: []string{"Blank value", "ca_cert_file: value must not be empty or white space; omit the attribute to trust the system's certificate authorities alone."}},
		{Name: "detect_drift with esb_url", Config: block(esb(map[string]string{"detect_drift": "true"})),
			Want: []string{"detect_drift needs apigw_url", "detect_drift reads grants back through IAM's policy-list API, which IAM serves only " +
				"through the API gateway; the ESB (esb_url, set by the provider block) has no such API. Set apigw_url (or BKIAM_APIGW_URL " +
				"or BK_IAM_APIGATEWAY_URL) instead of esb_url, or turn detect_drift off."}},
		{Name: "detect_drift from the environment not a boolean", Config: block(nil), Env: map[string]string{"BKIAM_DETECT_DRIFT": "yes please"},
			Want: []string{"Invalid BKIAM_DETECT_DRIFT", `The environment variable BKIAM_DETECT_DRIFT sets detect_drift and must be true or false; got "yes please".`}},
		{Name: "check_model with esb_url", Config: block(esb(map[string]string{"check_model": "true"})),
			Want: []string{"check_model needs apigw_url", "check_model reads each system's model through IAM's model API, which IAM serves only " +
				"through the API gateway; the ESB (esb_url, set by the provider block) has no such API. Set apigw_url (or BKIAM_APIGW_URL " +
				"or BK_IAM_APIGATEWAY_URL) instead of esb_url, or remove check_model."}},
		{Name: "policy_list_path not a route", Config: block(map[string]string{"policy_list_path": `"v2"`}),
			Want: []string{"Invalid policy_list_path", `policy_list_path must be "legacy", got "v2". Remove it: "legacy" is the default and the only route left.`}},
		{Name: "policy_list_path open, retired", Config: block(map[string]string{"policy_list_path": `"open"`}),
			Want: []string{"The open policy-list route is retired", `policy_list_path = "open" read GET /api/v1/open/systems/{system}/policies/, ` +
				`which cannot be read through IAM's API gateway: the gateway forwards it without its trailing slash, and IAM's backend ` +
				`answers that with a redirect. Remove policy_list_path: the provider reads GET /api/v1/systems/{system}/policies, ` +
				`the route the official SDKs use ("legacy").`}},
		{Name: "both urls in the configuration", Config: block(map[string]string{"esb_url": `"https://paas.example.com"`}),
			Want: []string{"Invalid Attribute Combination", `Attribute "esb_url" cannot be specified when "apigw_url" is specified`}},

		// Schema validators: the URLs, one case per way a base URL is wrong.
		// A URL is repeated, if at all, without its user part, query and
		// fragment, any of which may hold a secret.
		{Name: "url without scheme", Config: block(map[string]string{"apigw_url": `"gw.example.com/prod"`}),
			Want: []string{"Invalid URL", `apigw_url must start with https:// (or http:// for a local sandbox).`}},
		// url.Parse reads "alice:" as the scheme, not as a user: only the
		// "//" after a scheme makes it one worth repeating.
		{Name: "url without scheme with credentials", Config: block(map[string]string{"apigw_url": `"alice:hunter2@gw.example.com/prod"`}),
			Absent: []string{"hunter2", "alice"},
			Want:   []string{"Invalid URL", `apigw_url must start with https:// (or http:// for a local sandbox).`}},
		{Name: "url with another scheme", Config: block(esb(map[string]string{"esb_url": `"ftp://paas.example.com"`})),
			Want: []string{"Invalid URL", `esb_url must start with https:// (or http:// for a local sandbox), not ftp://.`}},
		{Name: "url with credentials", Config: block(map[string]string{"apigw_url": `"https://alice:hunter2@gw.example.com/prod"`}),
			Absent: []string{"hunter2", "alice"},
			Want:   []string{"Invalid URL", "apigw_url must not carry credentials; set app_code and app_secret instead."}},
		{Name: "url without host", Config: block(map[string]string{"apigw_url": `"https:///prod"`}),
			Want: []string{"Invalid URL", `apigw_url has no host; write it as https://host/path.`}},
		{Name: "url without host with credentials", Config: block(map[string]string{"apigw_url": `"https:alice:hunter2@gw.example.com"`}),
			Absent: []string{"hunter2", "alice"},
			Want:   []string{"Invalid URL", `apigw_url has no host; write it as https://host/path.`}},
		{Name: "url with query", Config: block(map[string]string{"apigw_url": `"https://gw.example.com/prod?stage=1"`}),
			Want: []string{"Invalid URL", `apigw_url must not carry a query or fragment; set it to "https://gw.example.com/prod", without what follows the ? or #.`}},
		{Name: "url with a secret in the query", Config: block(map[string]string{"apigw_url": `"https://gw.example.com/prod?bk_app_secret=hunter2"`}),
			Absent: []string{"hunter2"},
			Want:   []string{"Invalid URL", `apigw_url must not carry a query or fragment; set it to "https://gw.example.com/prod", without what follows the ? or #.`}},
		{Name: "url with fragment", Config: block(esb(map[string]string{"esb_url": `"https://paas.example.com/#top"`})),
			Want: []string{"Invalid URL", `esb_url must not carry a query or fragment; set it to "https://paas.example.com/", without what follows the ? or #.`}},
		{Name: "url that does not parse", Config: block(map[string]string{"apigw_url": `"https://gw.example.com/%zz"`}),
			Want: []string{"Invalid URL", `apigw_url is not a valid URL: invalid URL escape.`}},
		// The parser's error is given without the URL, which may carry a
		// password that the credentials check never got to see, and
		// without the piece of it the parser quotes: here ":hun", the
		// start of a password with a slash in it.
		{Name: "unparsable url with credentials", Config: block(map[string]string{"apigw_url": `" https://alice:hunter2@gw.example.com/prod"`}),
			Absent: []string{"hunter2"},
			Want:   []string{"Invalid URL", "apigw_url is not a valid URL: first path segment in URL cannot contain colon."}},
		{Name: "unparsable url with a password the parser quotes", Config: block(map[string]string{"apigw_url": `"https://alice:hun/ter2@gw.example.com/prod"`}),
			Absent: []string{":hun", "ter2"},
			Want:   []string{"Invalid URL", "apigw_url is not a valid URL: invalid port after host."}},

		// Schema validators: numbers and durations.
		{Name: "grant batch too big", Config: block(map[string]string{"grant_batch_size": "5000"}),
			Want: []string{"Invalid Attribute Value", "Attribute grant_batch_size value must be between 1 and 1000, got: 5000"}},
		{Name: "grant batch zero", Config: block(map[string]string{"grant_batch_size": "0"}),
			Want: []string{"Invalid Attribute Value", "Attribute grant_batch_size value must be between 1 and 1000, got: 0"}},
		{Name: "revoke batch zero", Config: block(map[string]string{"revoke_batch_size": "0"}),
			Want: []string{"Invalid Attribute Value", "Attribute revoke_batch_size value must be between 1 and 1000, got: 0"}},
		{Name: "revoke batch too big", Config: block(map[string]string{"revoke_batch_size": "1001"}),
			Want: []string{"Invalid Attribute Value", "Attribute revoke_batch_size value must be between 1 and 1000, got: 1001"}},
		{Name: "negative retries", Config: block(map[string]string{"max_retries": "-1"}),
			Want: []string{"Invalid Attribute Value", "Attribute max_retries value must be between 0 and 20, got: -1"}},
		{Name: "too many retries", Config: block(map[string]string{"max_retries": "21"}),
			Want: []string{"Invalid Attribute Value", "Attribute max_retries value must be between 0 and 20, got: 21"}},
		{Name: "negative expiry_scan_limit", Config: block(map[string]string{"expiry_scan_limit": "-1"}),
			Want: []string{"Invalid Attribute Value", "Attribute expiry_scan_limit value must be at least 0, got: -1"}},
		{Name: "unknown expiry_conflicts", Config: block(map[string]string{"expiry_conflicts": `"fail"`}),
			Want: []string{"Invalid Attribute Value Match", `Attribute expiry_conflicts value must be one of: ["warn" "error" "off"], got: "fail"`}},
		// The expiry check reads each user's policy, which ESB cannot: a
		// setting that asks for it is refused once, at configure time.
		{Name: "expiry_conflicts error with esb_url", Config: block(esb(map[string]string{"expiry_conflicts": `"error"`})),
			Want: []string{"expiry_conflicts needs apigw_url", `expiry_conflicts = "error" reads each user's policy through IAM's policy ` +
				"reads, which IAM serves only through the API gateway; the ESB (esb_url, set by the provider block) has none. Set " +
				`apigw_url (or BKIAM_APIGW_URL or BK_IAM_APIGATEWAY_URL) instead of esb_url, or set expiry_conflicts = "off".`}},
		{Name: "timeout not a duration", Config: block(map[string]string{"request_timeout": `"soon"`}),
			Want: []string{"Invalid duration", `request_timeout: value must be a positive Go duration such as "30s" or "2m", got "soon".`}},
		{Name: "zero timeout", Config: block(map[string]string{"request_timeout": `"0s"`}),
			Want: []string{"Invalid duration", `request_timeout: value must be a positive Go duration such as "30s" or "2m", got "0s".`}},
		{Name: "negative timeout", Config: block(map[string]string{"request_timeout": `"-1s"`}),
			Want: []string{"Invalid duration", `request_timeout: value must be a positive Go duration such as "30s" or "2m", got "-1s".`}},
		{Name: "batch window not a duration", Config: block(map[string]string{"batch_window": `"often"`}),
			Want: []string{"Invalid duration", `batch_window: value must be a Go duration such as "10ms" or "0s", got "often".`}},
		{Name: "negative batch window", Config: block(map[string]string{"batch_window": `"-5ms"`}),
			Want: []string{"Invalid duration", `batch_window: value must be a Go duration such as "10ms" or "0s", got "-5ms".`}},
		{Name: "max_member_expiry not a duration", Config: block(map[string]string{"max_member_expiry": `"two years"`}),
			Want: []string{"Invalid duration", `max_member_expiry: value must be a positive duration such as "730d", "52w" or "8760h" ` +
				`(units s, m, h, d for 24 hours, w), got "two years": "two years" is not a duration such as "90d", "12h", "1w" or "1d12h".`}},

		// Configure, after the environment fallbacks.
		{Name: "no endpoint", Config: block(map[string]string{"apigw_url": ""}),
			Want: []string{"No IAM endpoint configured",
				"Set apigw_url (or BKIAM_APIGW_URL or BK_IAM_APIGATEWAY_URL) to the IAM API gateway, e.g. https://bkapi.example.com/api/bk-iam/prod, " +
					"or esb_url (or BKIAM_ESB_URL or BK_COMPONENT_API_URL) to the BlueKing ESB, e.g. https://paas.example.com."}},
		{Name: "esb_url from the environment beside apigw_url", Config: block(nil),
			Env: map[string]string{"BK_COMPONENT_API_URL": "https://paas.example.com"},
			Want: []string{"Both apigw_url and esb_url are set",
				"The provider talks to IAM through exactly one of the API gateway and the ESB, but apigw_url is set by the provider block " +
					"and esb_url by the environment variable BK_COMPONENT_API_URL. Remove one of them."}},
		{Name: "apigw_url from the environment beside esb_url", Config: block(esb(nil)),
			Env: map[string]string{"BKIAM_APIGW_URL": "https://gw.example.com/prod"},
			Want: []string{"Both apigw_url and esb_url are set",
				"apigw_url is set by the environment variable BKIAM_APIGW_URL and esb_url by the provider block. Remove one of them."}},
		{Name: "apigw_url from the environment without scheme", Config: block(map[string]string{"apigw_url": ""}),
			Env: map[string]string{"BKIAM_APIGW_URL": "gw.example.com/prod"},
			Want: []string{"Invalid apigw_url",
				`apigw_url (set by the environment variable BKIAM_APIGW_URL) must start with https:// (or http:// for a local sandbox).`}},
		{Name: "apigw_url from the environment without scheme with credentials", Config: block(map[string]string{"apigw_url": ""}),
			Env: map[string]string{"BKIAM_APIGW_URL": "alice:hunter2@gw.example.com/prod"}, Absent: []string{"hunter2", "alice"},
			Want: []string{"Invalid apigw_url",
				`apigw_url (set by the environment variable BKIAM_APIGW_URL) must start with https:// (or http:// for a local sandbox).`}},
		{Name: "esb_url from the environment with credentials", Config: block(esb(map[string]string{"esb_url": ""})),
			Env: map[string]string{"BK_COMPONENT_API_URL": "https://alice:hunter2@paas.example.com"}, Absent: []string{"hunter2", "alice"},
			Want: []string{"Invalid esb_url",
				"esb_url (set by the environment variable BK_COMPONENT_API_URL) must not carry credentials; set app_code and app_secret instead."}},
		{Name: "apigw_url from the environment with query", Config: block(map[string]string{"apigw_url": ""}),
			Env: map[string]string{"BK_IAM_APIGATEWAY_URL": "https://gw.example.com/prod?stage=1"},
			Want: []string{"Invalid apigw_url",
				`apigw_url (set by the environment variable BK_IAM_APIGATEWAY_URL) must not carry a query or fragment; ` +
					`set it to "https://gw.example.com/prod", without what follows the ? or #.`}},
		{Name: "apigw_url from the environment with a secret in the query", Config: block(map[string]string{"apigw_url": ""}),
			Env: map[string]string{"BKIAM_APIGW_URL": "https://gw.example.com/prod?bk_app_secret=hunter2"}, Absent: []string{"hunter2"},
			Want: []string{"Invalid apigw_url",
				`apigw_url (set by the environment variable BKIAM_APIGW_URL) must not carry a query or fragment; ` +
					`set it to "https://gw.example.com/prod", without what follows the ? or #.`}},
		{Name: "missing app_code", Config: block(map[string]string{"app_code": ""}),
			Want: []string{"Missing app_code",
				"IAM authenticates every call by app code and secret. Set app_code in the provider block or the environment variable " +
					"BKIAM_APP_CODE, BK_APP_CODE or BKPAAS_APP_ID."}},
		{Name: "missing app_secret", Config: block(map[string]string{"app_secret": ""}),
			Want: []string{"Missing app_secret",
				"Set app_secret in the provider block or the environment variable BKIAM_APP_SECRET, BK_APP_SECRET or BKPAAS_APP_SECRET."}},
		{Name: "esb without a user", Config: block(esb(map[string]string{"username": ""})),
			Want: []string{"ESB needs a user",
				"ESB demands a user on every call. Set username (or BKIAM_USERNAME) when the app is on ESB's skip-login whitelist, " +
					"or bk_token (or BKIAM_BK_TOKEN) to a user's login token; or use apigw_url, which needs no user."}},
		{Name: "esb from the environment without a user", Config: block(map[string]string{"apigw_url": ""}),
			Env:  map[string]string{"BKIAM_ESB_URL": "https://paas.example.com"},
			Want: []string{"ESB needs a user", "Set username (or BKIAM_USERNAME)"}},
		{Name: "missing ca_cert_file", Config: block(map[string]string{"ca_cert_file": fmt.Sprintf("%q", missing)}),
			Want: []string{"Cannot use ca_cert_file", "reading ca_cert_file: open " + missing + ": no such file or directory"}},
		{Name: "ca_cert_file without a certificate", Config: block(map[string]string{"ca_cert_file": fmt.Sprintf("%q", notPEM)}),
			Want: []string{"Cannot use ca_cert_file", "ca_cert_file " + notPEM + " holds no PEM-encoded certificate"}},
		// White space from the environment: the schema never sees it.
		{Name: "blank app_secret from the environment", Config: block(map[string]string{"app_secret": ""}),
			// The next variable's secret is no business of the message.
			Env: map[string]string{"BKIAM_APP_SECRET": "  ", "BK_APP_SECRET": "hunter2"}, Absent: []string{"hunter2"},
			Want: []string{"Blank app_secret",
				"app_secret, as set by the environment variable BKIAM_APP_SECRET, is only white space. IAM authenticates every call by " +
					"app code and secret. Set app_secret in the provider block or the environment variable BKIAM_APP_SECRET, BK_APP_SECRET " +
					"or BKPAAS_APP_SECRET to its real value."}},
		{Name: "blank app_code from the environment", Config: block(map[string]string{"app_code": ""}),
			Env: map[string]string{"BKPAAS_APP_ID": "\t"},
			Want: []string{"Blank app_code", "app_code, as set by the environment variable BKPAAS_APP_ID, is only white space.",
				"Set app_code in the provider block or the environment variable BKIAM_APP_CODE, BK_APP_CODE or BKPAAS_APP_ID to its real value."}},
		{Name: "blank username from the environment with esb", Config: block(esb(map[string]string{"username": ""})),
			Env: map[string]string{"BKIAM_USERNAME": " "},
			Want: []string{"Blank username",
				"username, as set by the environment variable BKIAM_USERNAME, is only white space. ESB sends it as the user of every call. " +
					"Set username in the provider block or the environment variable BKIAM_USERNAME to its real value, or unset it and use bk_token."}},
		{Name: "blank bk_token from the environment with esb", Config: block(esb(nil)),
			Env:  map[string]string{"BKIAM_BK_TOKEN": " "},
			Want: []string{"Blank bk_token", "ESB sends it as the user's login token.", "or unset it and use username."}},
		{Name: "blank tenant_id from the environment", Config: block(nil),
			Env:  map[string]string{"BKIAM_TENANT_ID": " "},
			Want: []string{"Blank tenant_id", "It is sent as the tenant of every call.", "or unset it on a site with one tenant."}},

		// Configure: a value not known until the apply. The string settings
		// point at their environment variables.
		{Name: "unknown apigw_url", Config: `resource "terraform_data" "later" {}` + "\n" +
			block(map[string]string{"apigw_url": UnknownValueOf("string")}),
			Want: []string{"Unknown value for apigw_url",
				"apigw_url depends on a value that is not known until apply, but the provider must be configured before it can plan. " +
					"Set it to a value known at plan time or leave it unset and use BKIAM_APIGW_URL or BK_IAM_APIGATEWAY_URL, " +
					"or apply what it depends on first (terraform apply -target=…)."}},
	}

	// Every other attribute, unknown, is refused as well: a new attribute
	// gets its case here without anyone having to remember it.
	types := ProviderAttributeTypes()
	for _, attr := range SortedKeys(types) {
		if attr == "apigw_url" {
			continue
		}
		typ := "string"
		switch t := types[attr]; {
		case t.Is(tftypes.Number):
			typ = "int64"
		case t.Is(tftypes.Bool):
			typ = "bool"
		}
		changes := map[string]string{attr: UnknownValueOf(typ)}
		if attr == "esb_url" {
			changes = esb(changes)
		}
		cases = append(cases, PlanTimeCase{
			Name:   "unknown " + attr,
			Config: `resource "terraform_data" "later" {}` + "\n" + block(changes),
			Want: []string{"Unknown value for " + attr,
				attr + " depends on a value that is not known until apply", "Set it to a value known at plan time"},
		})
	}
	// The provider's own settings alone, whatever the environment of the
	// test run (against a real site it holds the app secret).
	for i := range cases {
		if cases[i].Env == nil {
			cases[i].Env = map[string]string{}
		}
	}
	return cases
}
