package provider

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// lookupEnv is os.Getenv behind a seam, so tests can hand resolveConfig an
// environment without touching the process's own.
var lookupEnv = os.Getenv

// providerSettings is the provider block after environment fallbacks and
// defaults: everything Configure needs, in plain Go types.
type providerSettings struct {
	client             bkiam.Config
	batchWindow        time.Duration
	grantBatchSize     int
	revokeBatchSize    int
	caCertFile         string
	insecureSkipVerify bool
}

func (s providerSettings) baseURL() string {
	if s.client.APIGatewayURL != "" {
		return s.client.APIGatewayURL
	}
	return s.client.ESBURL
}

// resolveConfig applies the environment fallbacks and defaults to the
// provider block and checks everything that needs both, reporting each
// problem on the attribute it concerns. It makes no network call.
func resolveConfig(m providerModel, getenv func(string) string) (providerSettings, diag.Diagnostics) {
	var diags diag.Diagnostics
	r := resolver{getenv: getenv, diags: &diags}

	apigw := r.str(settingAPIGatewayURL, m.APIGatewayURL)
	esb := r.str(settingESBURL, m.ESBURL)
	appCode := r.str(settingAppCode, m.AppCode)
	appSecret := r.str(settingAppSecret, m.AppSecret)
	username := r.str(settingUsername, m.Username)
	token := r.str(settingBKToken, m.BKToken)
	tenant := r.str(settingTenantID, m.TenantID)
	caCertFile := r.plainString("ca_cert_file", m.CACertFile, "")
	timeoutText := r.plainString("request_timeout", m.RequestTimeout, defaultRequestTimeout)
	windowText := r.plainString("batch_window", m.BatchWindow, defaultBatchWindow)
	grantBatch := r.int64("grant_batch_size", m.GrantBatchSize, defaultGrantBatchSize)
	revokeBatch := r.int64("revoke_batch_size", m.RevokeBatchSize, defaultRevokeBatchSize)
	maxRetries := r.int64("max_retries", m.MaxRetries, defaultMaxRetries)
	insecure := r.bool("insecure_skip_verify", m.InsecureSkipVerify)
	if diags.HasError() {
		// Unknown values: anything said below would be a guess.
		return providerSettings{}, diags
	}

	// Exactly one transport, after the fallbacks.
	switch {
	case apigw.value == "" && esb.value == "":
		diags.AddAttributeError(settingAPIGatewayURL.path(), "No IAM endpoint configured",
			fmt.Sprintf("Set apigw_url (or %s) to the IAM API gateway, e.g. https://bkapi.example.com/api/bk-iam/prod, "+
				"or esb_url (or %s) to the BlueKing ESB, e.g. https://paas.example.com.",
				settingAPIGatewayURL.envList(), settingESBURL.envList()))
	case apigw.value != "" && esb.value != "":
		// Blame the value that came from the environment: that is the one
		// the user did not write down and may not know about.
		blame := esb
		if apigw.fromEnv() && !esb.fromEnv() {
			blame = apigw
		}
		diags.AddAttributeError(blame.setting.path(), "Both apigw_url and esb_url are set",
			fmt.Sprintf("The provider talks to IAM through exactly one of the API gateway and the ESB, but apigw_url is "+
				"set by %s and esb_url by %s. Remove one of them.", apigw.source, esb.source))
	}
	for _, u := range []resolvedString{apigw, esb} {
		if u.value == "" {
			continue
		}
		if err := checkBaseURL(u.value); err != nil {
			diags.AddAttributeError(u.setting.path(), "Invalid "+u.setting.attr,
				fmt.Sprintf("%s (set by %s) %s.", u.setting.attr, u.source, err))
		}
	}

	for _, required := range []resolvedString{appCode, appSecret} {
		if required.value == "" {
			diags.AddAttributeError(required.setting.path(), "Missing "+required.setting.attr,
				fmt.Sprintf("IAM authenticates every call by app code and secret. Set %s in the provider block or the "+
					"environment variable %s.", required.setting.attr, required.setting.envList()))
		}
	}

	if esb.value != "" && apigw.value == "" && username.value == "" && token.value == "" {
		diags.AddAttributeError(settingUsername.path(), "ESB needs a user",
			fmt.Sprintf("ESB demands a user on every call. Set username (or %s) when the app is on ESB's skip-login "+
				"whitelist, or bk_token (or %s) to a user's login token; or use apigw_url, which needs no user.",
				settingUsername.envList(), settingBKToken.envList()))
	}

	timeout, err := time.ParseDuration(timeoutText)
	if err != nil || timeout <= 0 {
		diags.AddAttributeError(path.Root("request_timeout"), "Invalid request_timeout",
			fmt.Sprintf("request_timeout must be a positive Go duration such as \"30s\" or \"2m\", got %q.", timeoutText))
	}
	window, err := time.ParseDuration(windowText)
	if err != nil || window < 0 {
		diags.AddAttributeError(path.Root("batch_window"), "Invalid batch_window",
			fmt.Sprintf("batch_window must be a Go duration such as \"10ms\", or \"0s\" to turn merging off, got %q.", windowText))
	}
	// The schema validators reject out-of-range numbers at plan time; these
	// checks keep Configure safe when it is called without validation.
	checkRange(&diags, "grant_batch_size", grantBatch, 1, maxBatchSize)
	checkRange(&diags, "revoke_batch_size", revokeBatch, 1, maxBatchSize)
	checkRange(&diags, "max_retries", maxRetries, 0, maxMaxRetries)

	if diags.HasError() {
		return providerSettings{}, diags
	}

	if apigw.value != "" {
		for _, esbOnly := range []resolvedString{username, token} {
			if esbOnly.value != "" && !esbOnly.fromEnv() {
				diags.AddAttributeWarning(esbOnly.setting.path(), esbOnly.setting.attr+" is ignored with apigw_url",
					"The API gateway authenticates the app alone; "+esbOnly.setting.attr+" is only sent to the ESB. Remove it.")
			}
		}
	}

	return providerSettings{
		client: bkiam.Config{
			APIGatewayURL: apigw.value,
			ESBURL:        esb.value,
			AppCode:       appCode.value,
			AppSecret:     appSecret.value,
			Username:      username.value,
			BKToken:       token.value,
			TenantID:      tenant.value,
			Timeout:       timeout,
			MaxRetries:    int(maxRetries),
		},
		batchWindow:        window,
		grantBatchSize:     int(grantBatch),
		revokeBatchSize:    int(revokeBatch),
		caCertFile:         caCertFile,
		insecureSkipVerify: insecure,
	}, diags
}

// resolvedString is a string setting's value and where it came from.
type resolvedString struct {
	setting stringSetting
	value   string
	// source names where the value came from, for messages: "the provider
	// block" or "the environment variable X".
	source string
}

func (r resolvedString) fromEnv() bool { return strings.HasPrefix(r.source, "the environment") }

// resolver reads attributes, recording unknown values as errors: the
// provider cannot be configured from values Terraform does not know yet.
type resolver struct {
	getenv func(string) string
	diags  *diag.Diagnostics
}

func (r resolver) unknown(attr, hint string) {
	r.diags.AddAttributeError(path.Root(attr), "Unknown value for "+attr,
		fmt.Sprintf("%s depends on a value that is not known until apply, but the provider must be configured before "+
			"it can plan. Set it to a value known at plan time%s, or apply what it depends on first "+
			"(terraform apply -target=…).", attr, hint))
}

func (r resolver) str(s stringSetting, v types.String) resolvedString {
	switch {
	case v.IsUnknown():
		r.unknown(s.attr, " or leave it unset and use "+s.envList())
		return resolvedString{setting: s}
	case !v.IsNull():
		return resolvedString{setting: s, value: v.ValueString(), source: "the provider block"}
	}
	for _, name := range s.env {
		if value := r.getenv(name); value != "" {
			return resolvedString{setting: s, value: value, source: "the environment variable " + name}
		}
	}
	return resolvedString{setting: s}
}

func (r resolver) plainString(attr string, v types.String, fallback string) string {
	switch {
	case v.IsUnknown():
		r.unknown(attr, "")
	case !v.IsNull():
		return v.ValueString()
	}
	return fallback
}

func (r resolver) int64(attr string, v types.Int64, fallback int64) int64 {
	switch {
	case v.IsUnknown():
		r.unknown(attr, "")
	case !v.IsNull():
		return v.ValueInt64()
	}
	return fallback
}

func (r resolver) bool(attr string, v types.Bool) bool {
	if v.IsUnknown() {
		r.unknown(attr, "")
	}
	return v.ValueBool()
}

func checkRange(diags *diag.Diagnostics, attr string, v, lowest, highest int64) {
	if v < lowest || v > highest {
		diags.AddAttributeError(path.Root(attr), "Invalid "+attr,
			fmt.Sprintf("%s must be between %d and %d, got %d.", attr, lowest, highest, v))
	}
}

// checkBaseURL accepts an absolute http or https URL without query or
// fragment; the error completes the sentence "apigw_url (set by …) ".
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		// The parser's reason alone: its error repeats the URL, whose user
		// part, not yet recognised as such, may be a password.
		return fmt.Errorf("is not a valid URL: %w", errors.Unwrap(err))
	case u.User != nil:
		// Never echo such a URL: its user part is a secret.
		return fmt.Errorf("must not carry credentials; set app_code and app_secret instead")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("must start with https:// (or http:// for a local sandbox), got %q", raw)
	case u.Host == "":
		return fmt.Errorf("has no host: %q", raw)
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("must not carry a query or fragment: %q", raw)
	}
	return nil
}

// isLoopback reports whether a URL's host is this machine, where plain HTTP
// exposes nothing to the network.
func isLoopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
