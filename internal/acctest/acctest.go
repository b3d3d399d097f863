package acctest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
	"github.com/bkiam/terraform-provider-bkiam/internal/tfcli"
)

// Main is the TestMain of every package of acceptance and protocol tests.
// It clears the provider's environment variables, so that a developer's
// own BlueKing settings cannot leak into the tests' provider blocks, which
// set everything they need. Against a real site, the app secret and token
// travel in the environment instead, never in a configuration file.
func Main(m *testing.M) {
	for _, name := range provider.EnvironmentVariables() {
		_ = os.Unsetenv(name)
	}
	provider.QuietUnrequestedLogs()
	var err error
	if CLI, err = testutil.CLIEnv(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	Site = RealSiteFromEnv()
	if Profile, err = LoadSiteProfile(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if Site != nil {
		_ = os.Setenv("BKIAM_APP_SECRET", Site.Client.AppSecret)
		if Site.Client.BKToken != "" {
			_ = os.Setenv("BKIAM_BK_TOKEN", Site.Client.BKToken)
		}
	}
	testutil.Main(m)
}

// RealSite is a BlueKing site the acceptance tests run against instead of
// the sandbox, when BKIAM_ACC_APIGW_URL or BKIAM_ACC_ESB_URL is set (see
// docs/development.md). The checks that read the sandbox's store or counters, and
// the tests that inject faults, are then skipped.
type RealSite struct {
	Provider string
	Client   bkiam.Config
}

var Site *RealSite

// Profile names what of the site the site lifecycle tests use
// (internal/provider/site_acc_test.go): the sandbox's names unless BKIAM_ACC_SITE says.
var Profile *SiteProfile

// CLI is the CLI the acceptance tests drive (testutil.CLIEnv), for the
// few tests whose expectations differ: Terraform 1.5.7, Terraform 1.16 or
// OpenTofu. It is the zero CLI when there is none (make unit).
var CLI tfcli.CLI

// IsolateEnv blanks every variable the provider reads (an empty variable
// counts as unset) and then sets env.
func IsolateEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, name := range provider.EnvironmentVariables() {
		t.Setenv(name, "")
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

func RealSiteFromEnv() *RealSite {
	c := bkiam.Config{
		APIGatewayURL: os.Getenv("BKIAM_ACC_APIGW_URL"),
		ESBURL:        os.Getenv("BKIAM_ACC_ESB_URL"),
		AppCode:       os.Getenv("BKIAM_ACC_APP_CODE"),
		AppSecret:     os.Getenv("BKIAM_ACC_APP_SECRET"),
		Username:      os.Getenv("BKIAM_ACC_USERNAME"),
		BKToken:       os.Getenv("BKIAM_ACC_BK_TOKEN"),
	}
	if c.APIGatewayURL == "" && c.ESBURL == "" {
		return nil
	}
	var b strings.Builder
	b.WriteString("\nprovider \"bkiam\" {\n")
	if c.APIGatewayURL != "" {
		fmt.Fprintf(&b, "  apigw_url = %q\n", c.APIGatewayURL)
	} else {
		fmt.Fprintf(&b, "  esb_url = %q\n", c.ESBURL)
	}
	fmt.Fprintf(&b, "  app_code = %q\n", c.AppCode)
	if c.Username != "" {
		fmt.Fprintf(&b, "  username = %q\n", c.Username)
	}
	b.WriteString("}\n")
	return &RealSite{Provider: b.String(), Client: c}
}

// Target returns where an acceptance test runs: a fresh sandbox over the
// API gateway (sb set), or the real site (sb nil). The tests that call it
// name the sandbox model's systems, users and instances: against a site
// described by BKIAM_ACC_SITE they skip, and the site lifecycle tests
// (siteTarget) run instead.
func Target(t *testing.T) (sb *sandboxtest.Sandbox, provider string) {
	t.Helper()
	SandboxNames(t)
	return SiteTarget(t)
}

// SiteTarget is target for the tests that take their names from the
// profile.
func SiteTarget(t *testing.T) (sb *sandboxtest.Sandbox, provider string) {
	t.Helper()
	if Site != nil {
		return nil, Site.Provider
	}
	sb = sandboxtest.Start(t)
	return sb, Transports[0].Block(sb.URL)
}

// SandboxNames skips a test written with the sandbox model's names when
// the site under test has names of its own (BKIAM_ACC_SITE).
func SandboxNames(t *testing.T) {
	t.Helper()
	if Site != nil && os.Getenv("BKIAM_ACC_SITE") != "" {
		t.Skip("names the sandbox model's systems, users and instances; the site under test has its own (BKIAM_ACC_SITE): " +
			"the site lifecycle tests, TestAccSite_*, cover it")
	}
}

// NeedsSandbox skips a test that injects faults or reads the sandbox
// directly, when the tests run against a real site.
func NeedsSandbox(t *testing.T) {
	t.Helper()
	if Site != nil {
		t.Skip("needs the sandbox (fault injection or its model); skipped against a real site")
	}
}

// OutsideClient is a client for grants made outside Terraform.
func OutsideClient(t *testing.T, sb *sandboxtest.Sandbox) *bkiam.Client {
	t.Helper()
	cfg := bkiam.Config{AppCode: sandboxtest.AppCode, AppSecret: sandboxtest.AppSecret}
	if sb == nil {
		cfg = Site.Client
	} else {
		cfg.APIGatewayURL = sb.URL
	}
	client, err := bkiam.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// ProtoV6ProviderFactories serves the provider in-process to the real
// Terraform CLI that terraform-plugin-testing drives.
var ProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"bkiam": provider.NewServer("test"),
}

// Transport is one of the two ways the provider reaches IAM; every
// acceptance test runs over both.
type Transport struct {
	Name  string
	Block func(url string) string
}

var Transports = []Transport{
	{"gateway", func(url string) string {
		return fmt.Sprintf(`
provider "bkiam" {
  apigw_url   = %q
  app_code    = %q
  app_secret  = %q
  max_retries = 2
}
`, url, sandboxtest.AppCode, sandboxtest.AppSecret)
	}},
	{"esb", func(url string) string {
		return fmt.Sprintf(`
provider "bkiam" {
  esb_url     = %q
  app_code    = %q
  app_secret  = %q
  username    = "admin"
  max_retries = 2
}
`, url, sandboxtest.AppCode, sandboxtest.AppSecret)
	}},
}

// EachTransport runs f once per transport, each against its own sandbox;
// against a real site, once with sb nil.
func EachTransport(t *testing.T, f func(t *testing.T, sb *sandboxtest.Sandbox, provider string)) {
	SandboxNames(t)
	if Site != nil {
		t.Run("real", func(t *testing.T) { f(t, nil, Site.Provider) })
		return
	}
	for _, tr := range Transports {
		t.Run(tr.Name, func(t *testing.T) {
			sb := sandboxtest.Start(t)
			f(t, sb, tr.Block(sb.URL))
		})
	}
}

func SortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// CheckHeld is a step check: the sandbox holds exactly want for the subject.
func CheckHeld(sb *sandboxtest.Sandbox, system, subjectType, subjectID string, want map[string][]string) func(*terraform.State) error {
	return func(*terraform.State) error {
		if sb == nil {
			return nil // a real site: no inspection API
		}
		got := sandboxtest.HeldPaths(sb, system, subjectType, subjectID)
		if len(got) == 0 && len(want) == 0 {
			return nil
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("the sandbox holds\n%s\nwant\n%s", RenderHeld(got), RenderHeld(want))
		}
		return nil
	}
}

func RenderHeld(h map[string][]string) string {
	var b strings.Builder
	for _, a := range SortedKeys(h) {
		paths := h[a]
		if len(paths) > 6 {
			fmt.Fprintf(&b, "  %s: %d paths %v … %v\n", a, len(paths), paths[:3], paths[len(paths)-3:])
		} else {
			fmt.Fprintf(&b, "  %s: %v\n", a, paths)
		}
	}
	return b.String()
}

// CallCounter measures the calls each step sends, as the sandbox counts
// them: every check reports the calls since the previous check.
type CallCounter struct {
	Sb   *sandboxtest.Sandbox
	Mu   sync.Mutex
	Last map[string]int
}

func NewCallCounter(sb *sandboxtest.Sandbox) *CallCounter {
	return &CallCounter{Sb: sb, Last: map[string]int{}}
}

// SinceLast returns the calls since the last call of sinceLast, by kind,
// zero counts and model reads left out.
func (c *CallCounter) SinceLast() map[string]int {
	if c.Sb == nil {
		return nil
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	now := c.Sb.Stats().Requests
	delta := map[string]int{}
	for k, v := range now {
		// Model reads (check_model) are counted apart: see modelReads.
		if d := v - c.Last[k]; d != 0 && k != "model_query" {
			delta[k] = d
		}
	}
	c.Last = now
	return delta
}

// Expect is a step check: exactly these calls since the previous check.
// It reads the counters after Terraform's post-apply refresh and plan, so
// a refresh or plan that called IAM would show here too.
func (c *CallCounter) Expect(want map[string]int) func(*terraform.State) error {
	return func(*terraform.State) error {
		if c.Sb == nil {
			return nil // a real site: no counters
		}
		if got := c.SinceLast(); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("calls since the last step: %v, want %v", got, want)
		}
		return nil
	}
}

// CheckPolicyIDs checks that the policies attribute holds the sandbox's
// policy id of every action.
func CheckPolicyIDs(sb *sandboxtest.Sandbox) func(*terraform.State) error {
	return func(s *terraform.State) error {
		if sb == nil {
			return nil
		}
		rs, ok := s.RootModule().Resources[GrantAddr]
		if !ok {
			return fmt.Errorf("%s not in state", GrantAddr)
		}
		policies := sb.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies
		if got := rs.Primary.Attributes["policies.%"]; got != strconv.Itoa(len(policies)) {
			return fmt.Errorf("state has %s policies, the sandbox %d", got, len(policies))
		}
		for _, p := range policies {
			if got := rs.Primary.Attributes["policies."+p.Action]; got != strconv.FormatInt(p.PolicyID, 10) {
				return fmt.Errorf("policies.%s = %q, the sandbox's policy id is %d", p.Action, got, p.PolicyID)
			}
		}
		return nil
	}
}

// ExpiryRead is what the plan-time expiry check reads of IAM in a step: the
// policy queries (one per subject a plan or an apply's re-plan checks:
// heldpolicy.Reader asks IAM about the one subject), the rows read by id
// (one per row of an action the subject holds, where the grant changes the
// policy's expiry), and the policy-list pages (an action the subject holds
// nothing live of is looked for in the list, whose expired rows a grant
// revives).
type ExpiryRead struct{ Queries, Gets, Pages int }

// ExpiryReads adds to want what the plan-time expiry check reads through
// provider, a provider block: over the gateway, r; nothing over ESB, which
// has no policy read. A step that creates or changes a user's grant reads
// once in the plan and again in the apply, which plans again, unless the
// apply wrote to the action before (heldpolicy.Reader).
func ExpiryReads(provider string, r ExpiryRead, want map[string]int) map[string]int {
	out := maps.Clone(want)
	if out == nil {
		out = map[string]int{}
	}
	if strings.Contains(provider, "esb_url") {
		return out
	}
	for k, n := range map[string]int{"policy_query_by_actions": r.Queries, "policy_get": r.Gets, "policy_list": r.Pages} {
		if n > 0 {
			out[k] += n
		}
	}
	return out
}

// IAMCalls counts the requests the sandbox received apart from model reads
// (check_model reads each system's model at plan time; the injected faults
// of Faults never touch those, see sandbox.Faults.ModelFail).
func IAMCalls(sb *sandboxtest.Sandbox) int {
	st := sb.Stats()
	return st.Total - st.Requests["model_query"]
}

// IAMWrites counts the requests the sandbox received that can change IAM:
// every one but the reads (lists and gets of either API, the model, the
// policy reads of the expiry check and detect_drift, the access checks, a
// member's groups read through either API).
func IAMWrites(sb *sandboxtest.Sandbox) int {
	n := 0
	for key, count := range sb.Stats().Requests {
		if !IsRead(key) {
			n += count
		}
	}
	return n
}

// IsRead reports whether a sandbox stat key counts reads.
func IsRead(key string) bool {
	return strings.HasSuffix(key, ":list") || strings.HasSuffix(key, ":get") || strings.HasPrefix(key, "policy_") ||
		slices.Contains([]string{"model_query", "group_policy:actions", "user_groups", "member_groups:details", "admin:subject_groups"}, key)
}

// Reset forgets the calls made so far (for PreConfig hooks).
func (c *CallCounter) Reset() { c.SinceLast() }

// InstancesHCL renders an instances map literal for ids, named "host<id>".
func InstancesHCL(ids []string, name func(id string) string) string {
	var b strings.Builder
	b.WriteString("{\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "      %q = %q\n", id, name(id))
	}
	b.WriteString("    }")
	return b.String()
}

// CheckNothingHeld is a CheckDestroy for tests whose every grant failed:
// the sandbox holds no policy at all.
func CheckNothingHeld(sb *sandboxtest.Sandbox) func(*terraform.State) error {
	return func(*terraform.State) error {
		if sb == nil {
			return nil
		}
		if n := len(sb.Policies(sandbox.PolicyFilter{}).Policies); n != 0 {
			return fmt.Errorf("the sandbox holds %d policies after the failed grants", n)
		}
		return nil
	}
}

// NoModelChecks turns check_model off in a provider block, for the tests
// of what IAM itself refuses at apply (the checks would refuse it at plan).
func NoModelChecks(provider string) string {
	return strings.Replace(provider, "provider \"bkiam\" {\n", "provider \"bkiam\" {\n  check_model = false\n", 1)
}

// ChangeHostsOutside grants or revokes a user's actions on bk_cmdb hosts
// as someone using the IAM API directly would, expiring at expiresAt
// (grants).
func ChangeHostsOutside(t *testing.T, sb *sandboxtest.Sandbox, op bkiam.Operation, subject string, actions []string, ids []string, expiresAt int64) {
	t.Helper()
	req := bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: op, Subject: bkiam.Subject{Type: "user", ID: subject}}
	if op == bkiam.OperationGrant {
		req.ExpiredAt = expiresAt
	}
	for _, a := range actions {
		req.Actions = append(req.Actions, bkiam.Action{ID: a})
	}
	var instances []bkiam.Instance
	for _, id := range ids {
		instances = append(instances, bkiam.Instance{ID: id, Name: sandboxtest.HostName(id)})
	}
	req.Resources = []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: instances}}
	if _, err := OutsideClient(t, sb).BatchInstance(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

// GrantUnderOutside grants user action on every instance of typ under
// ancestors with batch_path, as the web UI and CMDB grant, and as someone
// using the IAM API directly would: IAM holds it as TYPE._bk_iam_path_
// starts_with the ancestors' path.
func GrantUnderOutside(t testing.TB, c *bkiam.Client, system, user, action, typ string, expiresAt int64, ancestors ...bkiam.PathNode) {
	t.Helper()
	if _, err := c.BatchPath(context.Background(), bkiam.BatchPathRequest{System: system, Operate: bkiam.OperationGrant, ExpiredAt: expiresAt,
		Subject: bkiam.Subject{Type: bkiam.SubjectUser, ID: user}, Actions: []bkiam.Action{{ID: action}},
		Resources: Under(system, typ, ancestors...)}); err != nil {
		t.Fatal(err)
	}
}

// Under is every instance of typ under ancestors, as a path grant's
// resources give it: the ancestors, then the type's "*".
func Under(system, typ string, ancestors ...bkiam.PathNode) []bkiam.PathResource {
	path := append(slices.Clone(ancestors), bkiam.PathNode{System: system, Type: typ, ID: "*"})
	return []bkiam.PathResource{{System: system, Type: typ, Paths: [][]bkiam.PathNode{path}}}
}

// Biz is business id of the sandbox's bk_cmdb as a path node.
func Biz(id string) bkiam.PathNode {
	return bkiam.PathNode{System: "bk_cmdb", Type: "biz", ID: id, Name: "biz" + id}
}

// OutsiderProvider turns a provider block into one for the sandbox model's
// app that is a client of no system (on ESB, with a user's token: it is
// not on the skip-login whitelist either).
func OutsiderProvider(provider string) string {
	return strings.NewReplacer(sandboxtest.AppCode, "outsider", sandboxtest.AppSecret, "outsider-secret",
		`username    = "admin"`, `bk_token    = "token-alice"`).Replace(provider)
}

// Parallel runs t in parallel with the other tests that call it when the
// tests run against the sandbox, where each test has one of its own. On a
// real site (Site) the tests share one IAM, its users and its instances,
// and one test's grants would show in another's checks: there they run
// one at a time.
func Parallel(t *testing.T) {
	t.Helper()
	if Site == nil {
		t.Parallel()
	}
}

// ManagementCall sends one request to the sandbox's management API as the
// sandbox's app, for a route the client does not serve (subject
// templates), and decodes the answer's data into out (when not nil). A
// refusal fails the test.
func ManagementCall(t *testing.T, sb *sandboxtest.Sandbox, method, path, body string, out any) {
	t.Helper()
	req, err := http.NewRequest(method, sb.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Bkapi-Authorization", fmt.Sprintf(`{"bk_app_code": %q, "bk_app_secret": %q}`, sandboxtest.AppCode, sandboxtest.AppSecret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK || answer.Code != 0 {
		t.Fatalf("%s %s: HTTP %d, code %d %q (%v)", method, path, resp.StatusCode, answer.Code, answer.Message, err)
	}
	if out != nil {
		if err := json.Unmarshal(answer.Data, out); err != nil {
			t.Fatalf("%s %s: data %s: %v", method, path, answer.Data, err)
		}
	}
}

// OutsideGroup makes, through IAM's management API as another team's
// tooling would, a grade manager of bk_cmdb called gradeManager (alice its
// member; view_host on every host; every subject in scope) and, unless
// group is "", a group of it called group: their ids (id 0 without one).
func OutsideGroup(t testing.TB, c *bkiam.Client, gradeManager, group string) (gm, id int64) {
	t.Helper()
	ctx := context.Background()
	hosts := []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "*"}}}}}
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", bkiam.GradeManagerSpec{Name: gradeManager, Members: []string{"alice"},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "view_host"}}, Resources: hosts}},
		SubjectScopes:       []bkiam.SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		t.Fatal(err)
	}
	if group == "" {
		return gm, 0
	}
	ids, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: group}})
	if err != nil {
		t.Fatal(err)
	}
	return gm, ids[0]
}
