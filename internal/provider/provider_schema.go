package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// providerModel is the provider block as Terraform sends it.
type providerModel struct {
	APIGatewayURL      types.String `tfsdk:"apigw_url"`
	ESBURL             types.String `tfsdk:"esb_url"`
	AppCode            types.String `tfsdk:"app_code"`
	AppSecret          types.String `tfsdk:"app_secret"`
	Username           types.String `tfsdk:"username"`
	BKToken            types.String `tfsdk:"bk_token"`
	TenantID           types.String `tfsdk:"tenant_id"`
	GrantBatchSize     types.Int64  `tfsdk:"grant_batch_size"`
	RevokeBatchSize    types.Int64  `tfsdk:"revoke_batch_size"`
	RequestTimeout     types.String `tfsdk:"request_timeout"`
	MaxRetries         types.Int64  `tfsdk:"max_retries"`
	BatchWindow        types.String `tfsdk:"batch_window"`
	CACertFile         types.String `tfsdk:"ca_cert_file"`
	InsecureSkipVerify types.Bool   `tfsdk:"insecure_skip_verify"`
	DetectDrift        types.Bool   `tfsdk:"detect_drift"`
	PolicyListPath     types.String `tfsdk:"policy_list_path"`
	CheckModel         types.Bool   `tfsdk:"check_model"`
	AllowSharedGrants  types.Bool   `tfsdk:"allow_shared_grants"`
	ExpiryConflicts    types.String `tfsdk:"expiry_conflicts"`
	MaxMemberExpiry    types.String `tfsdk:"max_member_expiry"`
	ExpiryScanLimit    types.Int64  `tfsdk:"expiry_scan_limit"`
}

// Defaults of the optional settings. The batch sizes are the real server's
// default limits (BKAPP_AUTHORIZATION_INSTANCE_LIMIT for grants, 1000 for
// revokes); a site that lowered its limit lowers grant_batch_size to match.
const (
	defaultGrantBatchSize  = 200
	defaultRevokeBatchSize = 1000
	maxBatchSize           = 1000
	defaultRequestTimeout  = "30s"
	defaultMaxRetries      = 4
	defaultBatchWindow     = "250ms"
	maxMaxRetries          = 20
	// defaultExpiryScanLimit is how many policies of an action's list the
	// expiry check reads, at most, to find a user's recently expired
	// policy: four pages of IAM's largest.
	defaultExpiryScanLimit = 2000
)

// stringSetting is a string attribute of the provider block that falls back
// to environment variables, in order, when the configuration leaves it null.
type stringSetting struct {
	attr string
	env  []string
}

// The environment fallbacks. BK_* and BKPAAS_* are the names BlueKing hands
// its own apps, so a provider run inside a BlueKing app needs no setup.
var (
	settingAPIGatewayURL = stringSetting{"apigw_url", []string{"BKIAM_APIGW_URL", "BK_IAM_APIGATEWAY_URL"}}
	settingESBURL        = stringSetting{"esb_url", []string{"BKIAM_ESB_URL", "BK_COMPONENT_API_URL"}}
	settingAppCode       = stringSetting{"app_code", []string{"BKIAM_APP_CODE", "BK_APP_CODE", "BKPAAS_APP_ID"}}
	settingAppSecret     = stringSetting{"app_secret", []string{"BKIAM_APP_SECRET", "BK_APP_SECRET", "BKPAAS_APP_SECRET"}}
	settingUsername      = stringSetting{"username", []string{"BKIAM_USERNAME"}}
	settingBKToken       = stringSetting{"bk_token", []string{"BKIAM_BK_TOKEN"}}
	settingTenantID      = stringSetting{"tenant_id", []string{"BKIAM_TENANT_ID"}}
)

// The values of expiry_conflicts.
const (
	expiryConflictsWarn  = "warn"
	expiryConflictsError = "error"
	expiryConflictsOff   = "off"
)

// envDetectDrift is detect_drift's environment fallback.
const envDetectDrift = "BKIAM_DETECT_DRIFT"

// path is the attribute's path, for diagnostics.
func (s stringSetting) path() path.Path { return path.Root(s.attr) }

// envList renders the fallbacks for messages: "BKIAM_APP_CODE, BK_APP_CODE or BKPAAS_APP_ID".
func (s stringSetting) envList() string {
	switch len(s.env) {
	case 0:
		return ""
	case 1:
		return s.env[0]
	}
	return strings.Join(s.env[:len(s.env)-1], ", ") + " or " + s.env[len(s.env)-1]
}

// describe documents the fallbacks in the schema.
func (s stringSetting) describe(text string) string {
	quoted := make([]string, len(s.env))
	for i, e := range s.env {
		quoted[i] = "`" + e + "`"
	}
	return fmt.Sprintf("%s When unset, read from the environment variable %s (the first one set wins).", text, strings.Join(quoted, ", then "))
}

// notBlank refuses "" and white space in the configuration: neither is
// ever a useful value, and users who mean "use the environment" should
// omit the attribute or set it to null, which the message tells them.
// Unknown and null values are left to Configure, which sees the
// environment fallbacks too.
type notBlank struct {
	// unset says what omitting the attribute does: "to use …".
	unset string
}

var _ validator.String = notBlank{}

// notBlankOr is notBlank for a setting with environment fallbacks.
func notBlankOr(s stringSetting) notBlank {
	return notBlank{unset: "to use the environment variable " + s.envList()}
}

func (v notBlank) Description(context.Context) string {
	return "value must not be empty or white space; omit the attribute " + v.unset
}

func (v notBlank) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v notBlank) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	// The value itself is never repeated: it may be a secret.
	if strings.TrimSpace(req.ConfigValue.ValueString()) == "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Blank value",
			fmt.Sprintf("%s: %s.", req.Path, v.Description(ctx)))
	}
}

func providerSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "The `bkiam` provider manages permissions in the BlueKing (蓝鲸) IAM permission center " +
			"through its API gateway or its ESB. Set exactly one of `apigw_url` and `esb_url`.",
		Attributes: map[string]schema.Attribute{
			settingAPIGatewayURL.attr: schema.StringAttribute{
				Optional: true,
				MarkdownDescription: settingAPIGatewayURL.describe("Base URL of the IAM API gateway, stage included, " +
					"e.g. `https://bkapi.example.com/api/bk-iam/prod`. Conflicts with `esb_url`."),
				Validators: []validator.String{
					urlValidator{},
					stringvalidator.ConflictsWith(path.MatchRoot(settingESBURL.attr)),
					notBlankOr(settingAPIGatewayURL),
				},
			},
			settingESBURL.attr: schema.StringAttribute{
				Optional: true,
				MarkdownDescription: settingESBURL.describe("Base URL of the BlueKing ESB (legacy PaaS), " +
					"e.g. `https://paas.example.com`. ESB also needs `username` or `bk_token`. Conflicts with `apigw_url`."),
				Validators: []validator.String{urlValidator{}, notBlankOr(settingESBURL)},
			},
			settingAppCode.attr: schema.StringAttribute{
				Optional: true,
				MarkdownDescription: settingAppCode.describe("Code of the BlueKing app that calls IAM. " +
					"Required: set it here or in the environment. The app must be a client of the target system."),
				Validators: []validator.String{notBlankOr(settingAppCode)},
			},
			settingAppSecret.attr: schema.StringAttribute{
				Optional:  true,
				Sensitive: true,
				MarkdownDescription: settingAppSecret.describe("Secret of the app. Required: set it here or, better, " +
					"in the environment, so it stays out of configuration files."),
				Validators: []validator.String{notBlankOr(settingAppSecret)},
			},
			settingUsername.attr: schema.StringAttribute{
				Optional: true,
				MarkdownDescription: settingUsername.describe("ESB only: the `bk_username` ESB asks for. " +
					"Works when the app is on ESB's skip-login whitelist; otherwise use `bk_token`."),
				Validators: []validator.String{notBlankOr(settingUsername)},
			},
			settingBKToken.attr: schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: settingBKToken.describe("ESB only: a user's login token (`bk_token`)."),
				Validators:          []validator.String{notBlankOr(settingBKToken)},
			},
			settingTenantID.attr: schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: settingTenantID.describe("Tenant of a multi-tenant BlueKing site, sent as `X-Bk-Tenant-Id`."),
				Validators:          []validator.String{notBlankOr(settingTenantID)},
			},
			"grant_batch_size": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: fmt.Sprintf("Most instances (or paths) per resource entry in one grant call, "+
					"and per creator-grant call. Defaults to %d, the IAM server's default limit; lower it to match a "+
					"site that configured a lower `BKAPP_AUTHORIZATION_INSTANCE_LIMIT`. 1 to %d.", defaultGrantBatchSize, maxBatchSize),
				Validators: []validator.Int64{int64validator.Between(1, maxBatchSize)},
			},
			"revoke_batch_size": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: fmt.Sprintf("Most instances (or paths) per resource entry in one revoke call. "+
					"Defaults to %d, the IAM server's limit. 1 to %d.", defaultRevokeBatchSize, maxBatchSize),
				Validators: []validator.Int64{int64validator.Between(1, maxBatchSize)},
			},
			"request_timeout": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "How long one HTTP attempt may take, as a Go duration such as `30s` or `2m`. " +
					"Defaults to `" + defaultRequestTimeout + "`. A timed-out attempt is retried like a network error.",
				Validators: []validator.String{durationValidator{}},
			},
			"max_retries": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: fmt.Sprintf("How many times a call is retried after a transient failure "+
					"(network error, HTTP 429/502/503/504, a rate limit or upstream code), with exponential backoff "+
					"and jitter that honours `Retry-After`. Validation and permission errors are never retried. "+
					"Defaults to %d; 0 to %d.", defaultMaxRetries, maxMaxRetries),
				Validators: []validator.Int64{int64validator.Between(0, maxMaxRetries)},
			},
			"batch_window": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "The longest a grant or revoke call may wait for calls of other resources to join it, as a " +
					"Go duration; `0s` turns merging off. Defaults to `" + defaultBatchWindow + "`. Terraform applies up to ten " +
					"resources at once (`-parallelism`); calls that grant (or revoke) the same actions to the same subject " +
					"on the same resource type, such as a `for_each` over hosts, are merged into one call within the " +
					"batch limits, and each resource still gets its own result. A call waits only while calls of its kind " +
					"keep coming: a lone call (a single resource's apply) leaves at once, a merged call leaves as soon as " +
					"half of the resources Terraform runs at once are in it, or when the stream pauses for three of its " +
					"usual gaps. A merged call that fails is retried resource by resource, so one bad resource does not " +
					"fail the others. With `TF_LOG_PROVIDER=DEBUG`, each call logs how many resources rode in it, how long " +
					"they waited before it left and how long IAM took (`IAM call of merged requests answered`).",
				Validators: []validator.String{durationValidator{allowZero: true}},
			},
			"ca_cert_file": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Path of a PEM file with CA certificates to trust in addition to the system's, " +
					"for sites whose certificate comes from a private CA.",
				Validators: []validator.String{notBlank{unset: "to trust the system's certificate authorities alone"}},
			},
			"detect_drift": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Read grants back from IAM on refresh, so that a permission revoked outside Terraform " +
					"(in the IAM web UI, by a script) shows in the plan as granted again. Defaults to `false`, or the " +
					"environment variable `" + envDetectDrift + "` (`true`/`false`). Needs `apigw_url`: IAM serves its " +
					"policy reads through the API gateway only. The cost is one scan of each action's policy list per " +
					"provider process (pages of 500 policies, shared by every resource that grants the action; a `terraform " +
					"apply` without a saved plan runs one for its plan and one for its apply), not a call per resource. " +
					"It sees the subject's own direct grants, not what it holds through groups; a site " +
					"whose IAM backend has several replicas can serve a change up to about five minutes late. With it, " +
					"import reads what the subject holds (see the resources' import IDs).",
			},
			"max_member_expiry": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "The longest a group membership may last from the call that sets it on this site, for the plan " +
					"to refuse what IAM would: a duration such as `\"730d\"` (units `s`, `m`, `h`, `d` for 24 hours and `w`, as " +
					"`expires_in` takes them). Unset (the default), the plan checks no cap, as IAM 1.8 to 1.10 has none. IAM's " +
					"SaaS from its July 2026 release (bk-iam-saas #3143) caps the expiry that its management API's member add and " +
					"expiry update set at two years from the call, `\"permanent\"` aside: set `\"730d\"` there. The provider " +
					"cannot ask IAM its release or its cap. With it set, a plan of `bkiam_group_members` or `bkiam_user_groups` " +
					"fails, naming the cap, when a member it adds or changes expires later than that after now, or when " +
					"`expires_in`, with `renew_before` (and `renew_jitter`), lets an apply set an expiry further out than the cap " +
					"(a renewal sets up to `expires_in` + `renew_before` + a margin of at most a day after its apply). " +
					"`bkiam_instance_grant`'s expiries, which the authorization API sets, are not checked.",
				Validators: []validator.String{rollingDurationValidator{}},
			},
			"expiry_conflicts": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "What a plan does when it reads that a user grant changes the one expiry IAM keeps " +
					"per user and action, for everything the policy holds (ids, every host under a business, every " +
					"instance, attribute conditions, time windows): the grant would raise the expiry of what it does not " +
					"manage (a creator grant makes the policy permanent), revive a policy that expired (with all it held), " +
					"or its `expires_at` cannot take effect because IAM's policy already expires later; or two resources of " +
					"the configuration grant one user and action with different expiries. `warn` (the default) plans with a " +
					"warning naming what changes and the dates; `error` fails the plan on each of those, and when the policy " +
					"cannot be read; `off` reads nothing and checks nothing. What IAM does not let an app see is said, not " +
					"guaranteed: IAM keeps a user's expired policy for a year and merges the next grant into it, but shows it " +
					"to an app only during the day after it expired, so a plan that grants a user an action it holds nothing " +
					"live of warns (whatever this setting) that an older expired policy may come back; the provider reads by " +
					"id the policies a grant has seen before, which tells them for certain. The check asks IAM about each " +
					"user a plan grants to, once per provider process: the backend's policy query (whose debug output names " +
					"the user's own rows; an action related to another system's resource type, as most of bk_job's and " +
					"bk_sops' are to CMDB's, is asked alone, the others ten to a call), one read per row it holds, and the " +
					"action's policy list where the user holds nothing live (at most `expiry_scan_limit` policies of it) or " +
					"where IAM's answer cannot tell (a manager of the system, a frozen user); with `detect_drift`, the lists " +
					"the refresh read answer instead. None when nothing changes. It needs `apigw_url` (IAM's policy reads are " +
					"served through the API gateway only): with `esb_url` it is `off`, and setting it otherwise is an error.",
				Validators: []validator.String{stringvalidator.OneOf(expiryConflictsWarn, expiryConflictsError, expiryConflictsOff)},
			},
			"expiry_scan_limit": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: fmt.Sprintf("The most policies of one action's list the expiry check (`expiry_conflicts`) "+
					"reads to find a policy that expired within the last day, which a grant to a user who holds nothing live of "+
					"the action would revive. IAM's list has no filter by subject and counts and sorts the whole list for every "+
					"page, so a list that announces more is read no further than its first page, and the plan says it did not "+
					"look. Defaults to %d (%d pages); 0 reads every list whole, whatever its length. Not used with "+
					"`detect_drift`, whose refresh reads the lists whole anyway.", defaultExpiryScanLimit, defaultExpiryScanLimit/500),
				Validators: []validator.Int64{int64validator.AtLeast(0)},
			},
			"allow_shared_grants": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Let two grant resources of this provider configuration grant the same subject, action " +
					"and instance (`bkiam_instance_grant`, `bkiam_creator_grant`, `bkiam_group_permission`). IAM keeps one " +
					"policy per subject and action, so a revoke by either takes the path from both: by default a plan in " +
					"which two resources that both stay grant the same path fails, naming them and the paths. With `true` " +
					"it warns instead, and the provider's ledger keeps one resource's revoke from taking what the other " +
					"grants when a command plans both; `-target`, `-exclude`, a taint and `-refresh=false` can still take " +
					"shared paths (see the provider docs, *Shared grants*). Defaults to `false`.",
			},
			"policy_list_path": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Retired: `detect_drift` reads `GET /api/v1/systems/{system}/policies`, the route the " +
					"official SDKs use. Its one accepted value is `legacy`, that route. The former `open` " +
					"(`GET /api/v1/open/systems/{system}/policies/`) cannot be read through IAM's API gateway, which " +
					"forwards it without its trailing slash to a backend that answers with a redirect; it is refused.",
				DeprecationMessage: `policy_list_path is retired: its one accepted value, "legacy", is what the provider reads. Remove it.`,
			},
			"check_model": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Check each planned grant, and each grade manager's authorization scopes, against the " +
					"model its system registered in IAM (its actions, their resource types in order, its creator configuration), so that a typo in an action, " +
					"resources in the wrong order or a creator type without a creator configuration fail the plan, " +
					"naming the attribute, instead of failing the apply after other calls went out. Defaults to `true` " +
					"with `apigw_url` and cannot be `true` with `esb_url` (ESB serves no model). The cost is one model " +
					"read per system per provider process (Terraform runs one for a plan, two for an apply), shared by " +
					"every resource of the system, and only when a resource of the system is created or changed; a plan " +
					"that changes nothing reads no model. The app " +
					"must be a client of each system. Set it to `false` to plan without the checks, for instance when " +
					"the model cannot be read.",
			},
			"insecure_skip_verify": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Skip TLS certificate verification. Defaults to `false`. Anyone on the network " +
					"path can then read the app secret: use `ca_cert_file` instead wherever possible.",
			},
		},
	}
}

// EnvironmentVariables are the names of every environment variable the
// provider reads, for tools and tests that must run it with none of a
// user's own settings.
func EnvironmentVariables() []string {
	var names []string
	for _, s := range []stringSetting{settingAPIGatewayURL, settingESBURL, settingAppCode, settingAppSecret,
		settingUsername, settingBKToken, settingTenantID} {
		names = append(names, s.env...)
	}
	return append(names, envDetectDrift)
}
