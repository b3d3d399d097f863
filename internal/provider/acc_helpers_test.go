package provider

import (
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
	"github.com/bkiam/terraform-provider-bkiam/internal/tfcli"
)

// TestMain clears the provider's environment variables, so that a
// developer's own BlueKing settings cannot leak into the tests' provider
// blocks, which set everything they need. Against a real site, the app
// secret and token travel in the environment instead, never in a
// configuration file.
func TestMain(m *testing.M) {
	for _, name := range allEnv() {
		_ = os.Unsetenv(name)
	}
	QuietUnrequestedLogs()
	var err error
	if cli, err = testutil.CLIEnv(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	site = realSiteFromEnv()
	if profile, err = loadSiteProfile(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if site != nil {
		_ = os.Setenv("BKIAM_APP_SECRET", site.client.AppSecret)
		if site.client.BKToken != "" {
			_ = os.Setenv("BKIAM_BK_TOKEN", site.client.BKToken)
		}
	}
	os.Exit(m.Run())
}

// realSite is a BlueKing site the acceptance tests run against instead of
// the sandbox, when BKIAM_ACC_APIGW_URL or BKIAM_ACC_ESB_URL is set (see
// docs/development.md). The checks that read the sandbox's store or counters, and
// the tests that inject faults, are then skipped.
type realSite struct {
	provider string
	client   bkiam.Config
}

var site *realSite

// profile names what of the site the site lifecycle tests use
// (site_acc_test.go): the sandbox's names unless BKIAM_ACC_SITE says.
var profile *siteProfile

// cli is the CLI the acceptance tests drive (testutil.CLIEnv), for the
// few tests whose expectations differ: Terraform 1.5.7, Terraform 1.16 or
// OpenTofu. It is the zero CLI when there is none (make unit).
var cli tfcli.CLI

func realSiteFromEnv() *realSite {
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
	return &realSite{provider: b.String(), client: c}
}

// target returns where an acceptance test runs: a fresh sandbox over the
// API gateway (sb set), or the real site (sb nil). The tests that call it
// name the sandbox model's systems, users and instances: against a site
// described by BKIAM_ACC_SITE they skip, and the site lifecycle tests
// (siteTarget) run instead.
func target(t *testing.T) (sb *sandboxtest.Sandbox, provider string) {
	t.Helper()
	sandboxNames(t)
	return siteTarget(t)
}

// siteTarget is target for the tests that take their names from the
// profile.
func siteTarget(t *testing.T) (sb *sandboxtest.Sandbox, provider string) {
	t.Helper()
	if site != nil {
		return nil, site.provider
	}
	sb = sandboxtest.Start(t)
	return sb, transports[0].block(sb.URL)
}

// sandboxNames skips a test written with the sandbox model's names when
// the site under test has names of its own (BKIAM_ACC_SITE).
func sandboxNames(t *testing.T) {
	t.Helper()
	if site != nil && os.Getenv("BKIAM_ACC_SITE") != "" {
		t.Skip("names the sandbox model's systems, users and instances; the site under test has its own (BKIAM_ACC_SITE): " +
			"the site lifecycle tests, TestAccSite_*, cover it")
	}
}

// needsSandbox skips a test that injects faults or reads the sandbox
// directly, when the tests run against a real site.
func needsSandbox(t *testing.T) {
	t.Helper()
	if site != nil {
		t.Skip("needs the sandbox (fault injection or its model); skipped against a real site")
	}
}

// outsideClient is a client for grants made outside Terraform.
func outsideClient(t *testing.T, sb *sandboxtest.Sandbox) *bkiam.Client {
	t.Helper()
	cfg := bkiam.Config{AppCode: sandboxtest.AppCode, AppSecret: sandboxtest.AppSecret}
	if sb == nil {
		cfg = site.client
	} else {
		cfg.APIGatewayURL = sb.URL
	}
	client, err := bkiam.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// protoV6ProviderFactories serves the provider in-process to the real
// Terraform CLI that terraform-plugin-testing drives.
var protoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"bkiam": NewServer("test"),
}

// transport is one of the two ways the provider reaches IAM; every
// acceptance test runs over both.
type transport struct {
	name  string
	block func(url string) string
}

var transports = []transport{
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

// eachTransport runs f once per transport, each against its own sandbox;
// against a real site, once with sb nil.
func eachTransport(t *testing.T, f func(t *testing.T, sb *sandboxtest.Sandbox, provider string)) {
	sandboxNames(t)
	if site != nil {
		t.Run("real", func(t *testing.T) { f(t, nil, site.provider) })
		return
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			sb := sandboxtest.Start(t)
			f(t, sb, tr.block(sb.URL))
		})
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// checkHeld is a step check: the sandbox holds exactly want for the subject.
func checkHeld(sb *sandboxtest.Sandbox, system, subjectType, subjectID string, want map[string][]string) func(*terraform.State) error {
	return func(*terraform.State) error {
		if sb == nil {
			return nil // a real site: no inspection API
		}
		got := sandboxtest.HeldPaths(sb, system, subjectType, subjectID)
		if len(got) == 0 && len(want) == 0 {
			return nil
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("the sandbox holds\n%s\nwant\n%s", renderHeld(got), renderHeld(want))
		}
		return nil
	}
}

func renderHeld(h map[string][]string) string {
	var b strings.Builder
	for _, a := range sortedKeys(h) {
		paths := h[a]
		if len(paths) > 6 {
			fmt.Fprintf(&b, "  %s: %d paths %v … %v\n", a, len(paths), paths[:3], paths[len(paths)-3:])
		} else {
			fmt.Fprintf(&b, "  %s: %v\n", a, paths)
		}
	}
	return b.String()
}

// callCounter measures the calls each step sends, as the sandbox counts
// them: every check reports the calls since the previous check.
type callCounter struct {
	sb   *sandboxtest.Sandbox
	mu   sync.Mutex
	last map[string]int
}

func newCallCounter(sb *sandboxtest.Sandbox) *callCounter {
	return &callCounter{sb: sb, last: map[string]int{}}
}

// sinceLast returns the calls since the last call of sinceLast, by kind,
// zero counts and model reads left out.
func (c *callCounter) sinceLast() map[string]int {
	if c.sb == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.sb.Stats().Requests
	delta := map[string]int{}
	for k, v := range now {
		// Model reads (check_model) are counted apart: see modelReads.
		if d := v - c.last[k]; d != 0 && k != "model_query" {
			delta[k] = d
		}
	}
	c.last = now
	return delta
}

// expect is a step check: exactly these calls since the previous check.
// It reads the counters after Terraform's post-apply refresh and plan, so
// a refresh or plan that called IAM would show here too.
func (c *callCounter) expect(want map[string]int) func(*terraform.State) error {
	return func(*terraform.State) error {
		if c.sb == nil {
			return nil // a real site: no counters
		}
		if got := c.sinceLast(); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("calls since the last step: %v, want %v", got, want)
		}
		return nil
	}
}

// iamCalls counts the requests the sandbox received apart from model reads
// (check_model reads each system's model at plan time; the injected faults
// of Faults never touch those, see sandbox.Faults.ModelFail).
func iamCalls(sb *sandboxtest.Sandbox) int {
	st := sb.Stats()
	return st.Total - st.Requests["model_query"]
}

// reset forgets the calls made so far (for PreConfig hooks).
func (c *callCounter) reset() { c.sinceLast() }

// instancesHCL renders an instances map literal for ids, named "host<id>".
func instancesHCL(ids []string, name func(id string) string) string {
	var b strings.Builder
	b.WriteString("{\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "      %q = %q\n", id, name(id))
	}
	b.WriteString("    }")
	return b.String()
}

// checkNothingHeld is a CheckDestroy for tests whose every grant failed:
// the sandbox holds no policy at all.
func checkNothingHeld(sb *sandboxtest.Sandbox) func(*terraform.State) error {
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

// noModelChecks turns check_model off in a provider block, for the tests
// of what IAM itself refuses at apply (the checks would refuse it at plan).
func noModelChecks(provider string) string {
	return strings.Replace(provider, "provider \"bkiam\" {\n", "provider \"bkiam\" {\n  check_model = false\n", 1)
}

// outsiderProvider turns a provider block into one for the sandbox model's
// app that is a client of no system (on ESB, with a user's token: it is
// not on the skip-login whitelist either).
func outsiderProvider(provider string) string {
	return strings.NewReplacer(sandboxtest.AppCode, "outsider", sandboxtest.AppSecret, "outsider-secret",
		`username    = "admin"`, `bk_token    = "token-alice"`).Replace(provider)
}
