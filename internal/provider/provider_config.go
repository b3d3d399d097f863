package provider

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/renewal"
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
	// detectDrift reads grants back on refresh.
	detectDrift bool
	// checkModel checks planned grants against their system's model.
	checkModel bool
	// allowSharedGrants lets two resources grant one path (internal/sharedgrants).
	allowSharedGrants bool
	// expiryConflicts is expiry_conflicts: "warn", "error" for the plan's expiry warnings as errors, or "off".
	expiryConflicts string
	// expiryScanLimit bounds the policy lists the expiry check reads
	// (expiry_scan_limit); 0 reads them whole.
	expiryScanLimit int
	// maxMemberExpiry is max_member_expiry: the site's cap on membership expiries (0: none).
	maxMemberExpiry time.Duration
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

	// Everything is read before anything is checked. The TLS settings need
	// no check here; they are read in their place among the others so the
	// unknown-value errors keep their order.
	ep := r.endpoint(m)
	cred := r.credentials(m)
	caCertFile := r.plainString("ca_cert_file", m.CACertFile, "")
	lim := r.limits(m)
	insecure := r.bool("insecure_skip_verify", m.InsecureSkipVerify)
	drift := r.drift(m)
	if m.CheckModel.IsUnknown() {
		r.unknown("check_model", "")
	}
	allowShared := r.bool("allow_shared_grants", m.AllowSharedGrants)
	expiryConflicts := r.plainString("expiry_conflicts", m.ExpiryConflicts, expiryConflictsWarn)
	maxMemberExpiry := r.plainString("max_member_expiry", m.MaxMemberExpiry, "")
	expiryScanLimit := r.int64("expiry_scan_limit", m.ExpiryScanLimit, defaultExpiryScanLimit)
	if diags.HasError() {
		// Unknown values: anything said below would be a guess.
		return providerSettings{}, diags
	}

	checkEndpoint(&diags, ep)
	checkCredentials(&diags, ep, cred)
	checkDrift(&diags, ep, drift)
	checkModel := checkModelSetting(&diags, ep, m.CheckModel)
	expiryConflicts = expiryConflictsSetting(&diags, ep, m.ExpiryConflicts, expiryConflicts)
	timeout, window := checkLimits(&diags, lim)
	if diags.HasError() {
		return providerSettings{}, diags
	}

	warnIgnoredWithGateway(&diags, ep, cred)

	return providerSettings{
		client: bkiam.Config{
			APIGatewayURL: ep.apigw.value,
			ESBURL:        ep.esb.value,
			AppCode:       cred.appCode.value,
			AppSecret:     cred.appSecret.value,
			Username:      cred.username.value,
			BKToken:       cred.token.value,
			TenantID:      cred.tenant.value,
			Timeout:       timeout,
			MaxRetries:    int(lim.maxRetries),
		},
		batchWindow:        window,
		grantBatchSize:     int(lim.grantBatch),
		revokeBatchSize:    int(lim.revokeBatch),
		caCertFile:         caCertFile,
		insecureSkipVerify: insecure,
		detectDrift:        drift.on,
		checkModel:         checkModel,
		allowSharedGrants:  allowShared,
		expiryConflicts:    expiryConflicts, // warn, error or off: the schema validates it
		maxMemberExpiry:    memberExpiryCap(maxMemberExpiry),
		expiryScanLimit:    int(max(expiryScanLimit, 0)),
	}, diags
}

// endpointConfig is apigw_url and esb_url after their environment
// fallbacks: the transport the provider talks to IAM through.
type endpointConfig struct{ apigw, esb resolvedString }

// endpoint reads apigw_url and esb_url with their environment fallbacks.
func (r resolver) endpoint(m providerModel) endpointConfig {
	return endpointConfig{
		apigw: r.str(settingAPIGatewayURL, m.APIGatewayURL),
		esb:   r.str(settingESBURL, m.ESBURL),
	}
}

// checkEndpoint requires exactly one of apigw_url and esb_url, and checks the URL of each that is set.
func checkEndpoint(diags *diag.Diagnostics, e endpointConfig) {
	// Exactly one transport, after the fallbacks.
	switch {
	case e.apigw.value == "" && e.esb.value == "":
		diags.AddAttributeError(settingAPIGatewayURL.path(), "No IAM endpoint configured",
			fmt.Sprintf("Set apigw_url (or %s) to the IAM API gateway, e.g. https://bkapi.example.com/api/bk-iam/prod, "+
				"or esb_url (or %s) to the BlueKing ESB, e.g. https://paas.example.com.",
				settingAPIGatewayURL.envList(), settingESBURL.envList()))
	case e.apigw.value != "" && e.esb.value != "":
		// Blame the value that came from the environment: that is the one
		// the user did not write down and may not know about.
		blame := e.esb
		if e.apigw.fromEnv() && !e.esb.fromEnv() {
			blame = e.apigw
		}
		diags.AddAttributeError(blame.setting.path(), "Both apigw_url and esb_url are set",
			fmt.Sprintf("The provider talks to IAM through exactly one of the API gateway and the ESB, but apigw_url is "+
				"set by %s and esb_url by %s. Remove one of them.", e.apigw.source, e.esb.source))
	}
	for _, u := range []resolvedString{e.apigw, e.esb} {
		if u.value == "" {
			continue
		}
		if err := checkBaseURL(u.value); err != nil {
			diags.AddAttributeError(u.setting.path(), "Invalid "+u.setting.attr,
				fmt.Sprintf("%s (set by %s) %s.", u.setting.attr, u.source, err))
		}
	}
}

// credentialConfig is app_code, app_secret, username, bk_token and
// tenant_id after their environment fallbacks: who the provider calls as.
type credentialConfig struct{ appCode, appSecret, username, token, tenant resolvedString }

// credentials reads the app, user and tenant settings with their environment fallbacks.
func (r resolver) credentials(m providerModel) credentialConfig {
	return credentialConfig{
		appCode:   r.str(settingAppCode, m.AppCode),
		appSecret: r.str(settingAppSecret, m.AppSecret),
		username:  r.str(settingUsername, m.Username),
		token:     r.str(settingBKToken, m.BKToken),
		tenant:    r.str(settingTenantID, m.TenantID),
	}
}

// checkCredentials requires the app's code and secret, refuses blank values, and requires a user on the ESB.
func checkCredentials(diags *diag.Diagnostics, e endpointConfig, c credentialConfig) {
	for _, required := range []resolvedString{c.appCode, c.appSecret} {
		if required.value == "" {
			diags.AddAttributeError(required.setting.path(), "Missing "+required.setting.attr,
				fmt.Sprintf("IAM authenticates every call by app code and secret. Set %s in the provider block or the "+
					"environment variable %s.", required.setting.attr, required.setting.envList()))
		}
	}

	checkBlankCredentials(diags, e, c)

	if e.esb.value != "" && e.apigw.value == "" && c.username.value == "" && c.token.value == "" {
		diags.AddAttributeError(settingUsername.path(), "ESB needs a user",
			fmt.Sprintf("ESB demands a user on every call. Set username (or %s) when the app is on ESB's skip-login "+
				"whitelist, or bk_token (or %s) to a user's login token; or use apigw_url, which needs no user.",
				settingUsername.envList(), settingBKToken.envList()))
	}
}

// checkBlankCredentials refuses credentials that are only white space.
func checkBlankCredentials(diags *diag.Diagnostics, e endpointConfig, c credentialConfig) {
	// White space is no value: the client would refuse it, in words that
	// name no attribute. The schema refuses it in the provider block at
	// validation; here it comes from the environment.
	blankable := []resolvedString{c.appCode, c.appSecret, c.tenant}
	if e.apigw.value == "" {
		// The gateway ignores both: a blank one does no harm there.
		blankable = append(blankable, c.username, c.token)
	}
	for _, s := range blankable {
		if s.value != "" && strings.TrimSpace(s.value) == "" {
			diags.AddAttributeError(s.setting.path(), "Blank "+s.setting.attr,
				fmt.Sprintf("%s, as set by %s, is only white space. %s Set %s in the provider block or the environment "+
					"variable %s to its real value%s.", s.setting.attr, s.source, blankWhy[s.setting.attr],
					s.setting.attr, s.setting.envList(), blankOr[s.setting.attr]))
		}
	}
}

// warnIgnoredWithGateway warns of a username or bk_token in the provider block that the API gateway ignores.
func warnIgnoredWithGateway(diags *diag.Diagnostics, e endpointConfig, c credentialConfig) {
	if e.apigw.value != "" {
		for _, esbOnly := range []resolvedString{c.username, c.token} {
			if esbOnly.value != "" && !esbOnly.fromEnv() {
				diags.AddAttributeWarning(esbOnly.setting.path(), esbOnly.setting.attr+" is ignored with apigw_url",
					"The API gateway authenticates the app alone; "+esbOnly.setting.attr+" is only sent to the ESB. Remove it.")
			}
		}
	}
}

// limitConfig is request_timeout, batch_window, the batch sizes and
// max_retries after their defaults, the durations not yet parsed.
type limitConfig struct {
	timeoutText, windowText             string
	grantBatch, revokeBatch, maxRetries int64
}

// limits reads the timeout, the batch window, the batch sizes and the retries, or their defaults.
func (r resolver) limits(m providerModel) limitConfig {
	return limitConfig{
		timeoutText: r.plainString("request_timeout", m.RequestTimeout, defaultRequestTimeout),
		windowText:  r.plainString("batch_window", m.BatchWindow, defaultBatchWindow),
		grantBatch:  r.int64("grant_batch_size", m.GrantBatchSize, defaultGrantBatchSize),
		revokeBatch: r.int64("revoke_batch_size", m.RevokeBatchSize, defaultRevokeBatchSize),
		maxRetries:  r.int64("max_retries", m.MaxRetries, defaultMaxRetries),
	}
}

// checkLimits parses request_timeout and batch_window and checks the ranges of the numbers.
func checkLimits(diags *diag.Diagnostics, l limitConfig) (timeout, window time.Duration) {
	var err error
	timeout, err = time.ParseDuration(l.timeoutText)
	if err != nil || timeout <= 0 {
		diags.AddAttributeError(path.Root("request_timeout"), "Invalid request_timeout",
			fmt.Sprintf("request_timeout must be a positive Go duration such as \"30s\" or \"2m\", got %q.", l.timeoutText))
	}
	window, err = time.ParseDuration(l.windowText)
	if err != nil || window < 0 {
		diags.AddAttributeError(path.Root("batch_window"), "Invalid batch_window",
			fmt.Sprintf("batch_window must be a Go duration such as \"10ms\", or \"0s\" to turn merging off, got %q.", l.windowText))
	}
	// The schema validators reject out-of-range numbers at plan time; these
	// checks keep Configure safe when it is called without validation.
	checkRange(diags, "grant_batch_size", l.grantBatch, 1, maxBatchSize)
	checkRange(diags, "revoke_batch_size", l.revokeBatch, 1, maxBatchSize)
	checkRange(diags, "max_retries", l.maxRetries, 0, maxMaxRetries)
	return timeout, window
}

// driftConfig is detect_drift, after its environment fallback, and the
// retired policy_list_path ("" when unset).
type driftConfig struct {
	on    bool
	route string
}

// drift reads detect_drift with its environment fallback, and policy_list_path.
func (r resolver) drift(m providerModel) driftConfig {
	return driftConfig{
		on:    r.detectDrift(m.DetectDrift),
		route: r.plainString("policy_list_path", m.PolicyListPath, ""),
	}
}

// policyRouteLegacy is the one value policy_list_path has left.
const policyRouteLegacy = "legacy"

// checkDrift requires apigw_url for detect_drift (the ESB has no
// policy-list API), and refuses the retired open policy-list route.
func checkDrift(diags *diag.Diagnostics, e endpointConfig, d driftConfig) {
	if d.on && e.esb.value != "" && e.apigw.value == "" {
		diags.AddAttributeError(path.Root("detect_drift"), "detect_drift needs apigw_url",
			fmt.Sprintf("detect_drift reads grants back through IAM's policy-list API, which IAM serves only through "+
				"the API gateway; the ESB (esb_url, set by %s) has no such API. Set apigw_url (or %s) instead of esb_url, "+
				"or turn detect_drift off.", e.esb.source, settingAPIGatewayURL.envList()))
	}
	switch d.route {
	case "", policyRouteLegacy:
	case "open":
		diags.AddAttributeError(path.Root("policy_list_path"), "The open policy-list route is retired",
			`policy_list_path = "open" read GET /api/v1/open/systems/{system}/policies/, which cannot be read through `+
				`IAM's API gateway: the gateway forwards it without its trailing slash, and IAM's backend answers that `+
				`with a redirect. Remove policy_list_path: the provider reads GET /api/v1/systems/{system}/policies, `+
				`the route the official SDKs use ("legacy").`)
	default:
		diags.AddAttributeError(path.Root("policy_list_path"), "Invalid policy_list_path",
			fmt.Sprintf(`policy_list_path must be "legacy", got %q. Remove it: "legacy" is the default and the only route left.`, d.route))
	}
}

// checkModelSetting is check_model: true by default with apigw_url,
// false with esb_url, where setting it true is an error (ESB serves no
// model).
func checkModelSetting(diags *diag.Diagnostics, e endpointConfig, v types.Bool) bool {
	gateway := e.apigw.value != ""
	if v.IsNull() {
		return gateway
	}
	if v.ValueBool() && !gateway {
		diags.AddAttributeError(path.Root("check_model"), "check_model needs apigw_url",
			fmt.Sprintf("check_model reads each system's model through IAM's model API, which IAM serves only through "+
				"the API gateway; the ESB (esb_url, set by %s) has no such API. Set apigw_url (or %s) instead of esb_url, "+
				"or remove check_model.", e.esb.source, settingAPIGatewayURL.envList()))
		return false
	}
	return v.ValueBool()
}

// expiryConflictsSetting is expiry_conflicts (set: its value): "warn" by
// default with apigw_url, "off" with esb_url, where setting it to check is
// an error (ESB serves no reads), settled here once rather than said on
// every plan.
func expiryConflictsSetting(diags *diag.Diagnostics, e endpointConfig, v types.String, set string) string {
	if e.apigw.value != "" {
		return set
	}
	if !v.IsNull() && set != expiryConflictsOff {
		diags.AddAttributeError(path.Root("expiry_conflicts"), "expiry_conflicts needs apigw_url",
			fmt.Sprintf("expiry_conflicts = %q reads each user's policy through IAM's policy reads, which IAM serves only through "+
				"the API gateway; the ESB (esb_url, set by %s) has none. Set apigw_url (or %s) instead of esb_url, or set "+
				"expiry_conflicts = \"off\".", set, e.esb.source, settingAPIGatewayURL.envList()))
	}
	return expiryConflictsOff
}

// memberExpiryCap is max_member_expiry as a duration: 0 when unset (the
// schema refuses one that does not parse).
func memberExpiryCap(s string) time.Duration {
	if s == "" {
		return 0
	}
	d, _ := renewal.ParseDuration(s)
	return d
}

// blankWhy and blankOr complete a blank setting's message: what the
// setting is for, and the other fix where leaving it unset is one.
var (
	blankWhy = map[string]string{
		settingAppCode.attr:   "IAM authenticates every call by app code and secret.",
		settingAppSecret.attr: "IAM authenticates every call by app code and secret.",
		settingUsername.attr:  "ESB sends it as the user of every call.",
		settingBKToken.attr:   "ESB sends it as the user's login token.",
		settingTenantID.attr:  "It is sent as the tenant of every call.",
	}
	blankOr = map[string]string{
		settingUsername.attr: ", or unset it and use bk_token",
		settingBKToken.attr:  ", or unset it and use username",
		settingTenantID.attr: ", or unset it on a site with one tenant",
	}
)

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

// detectDrift is detect_drift, or its environment variable when unset.
func (r resolver) detectDrift(v types.Bool) bool {
	switch {
	case v.IsUnknown():
		r.unknown("detect_drift", " or leave it unset and use "+envDetectDrift)
		return false
	case !v.IsNull():
		return v.ValueBool()
	}
	text := strings.TrimSpace(r.getenv(envDetectDrift))
	if text == "" {
		return false
	}
	on, err := strconv.ParseBool(text)
	if err != nil {
		r.diags.AddAttributeError(path.Root("detect_drift"), "Invalid "+envDetectDrift,
			fmt.Sprintf("The environment variable %s sets detect_drift and must be true or false; got %q.", envDetectDrift, text))
	}
	return on
}

func checkRange(diags *diag.Diagnostics, attr string, v, lowest, highest int64) {
	if v < lowest || v > highest {
		diags.AddAttributeError(path.Root(attr), "Invalid "+attr,
			fmt.Sprintf("%s must be between %d and %d, got %d.", attr, lowest, highest, v))
	}
}

// checkBaseURL accepts an absolute http or https URL without query or
// fragment; the error completes the sentence "apigw_url (set by …) ".
//
// The errors never repeat the URL as given: its user part, its query and
// its fragment can hold a secret (a password, ?bk_app_secret=…), and a URL
// without a scheme is not even known to have a user part ("alice:hunter2@gw"
// parses as the scheme "alice"). They echo at most the scheme, and the
// scheme, host and path of a URL whose host was recognised.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		// The parser's reason alone, without the values it quotes: its
		// error repeats the URL, and its reason a piece of it (invalid
		// port ":hun" after host, of https://alice:hun/ter2@…), either of
		// which may be part of a password.
		return fmt.Errorf("is not a valid URL: %s", parserReason(err))
	case u.User != nil:
		// Never echo such a URL: its user part is a secret.
		return fmt.Errorf("must not carry credentials; set app_code and app_secret instead")
	case u.Scheme != "http" && u.Scheme != "https":
		got := ""
		// Only a scheme followed by "//" is one: in "alice:hunter2@gw"
		// it is a user name, followed by the password.
		if u.Scheme != "" && strings.HasPrefix(strings.ToLower(raw), u.Scheme+"://") {
			got = ", not " + u.Scheme + "://"
		}
		return fmt.Errorf("must start with https:// (or http:// for a local sandbox)%s", got)
	case u.Host == "":
		return fmt.Errorf("has no host; write it as %s://host/path", u.Scheme)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		bare := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
		return fmt.Errorf("must not carry a query or fragment; set it to %q, without what follows the ? or #", bare.String())
	}
	return nil
}

// quoted matches the values a parser error quotes, with the white space
// before them.
var quoted = regexp.MustCompile(`\s*"(?:[^"\\]|\\.)*"`)

// parserReason is url.Parse's reason for refusing a URL without the values
// it quotes.
func parserReason(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return quoted.ReplaceAllString(err.Error(), "")
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
