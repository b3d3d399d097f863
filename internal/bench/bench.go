// Package bench measures the provider with the real Terraform CLI against
// an in-process IAM sandbox with injected latency, beside the same
// scenario built from Terraform's own terraform_data (Terraform's own cost)
// and, for the scenarios of many resources, on an empty plugin provider
// (internal/bench/floor: what any plugin provider costs, the floor), and
// reports wall times, IAM calls by kind and the provider's peak memory.
// cmd/bkiam-bench runs it (make bench).
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// Step names, in the order a full scenario runs them.
const (
	StepCreatePlan  = "create plan"
	StepCreateApply = "create apply"
	StepNoopPlan    = "no-op plan"
	StepChangeApply = "1% change apply"
	StepDestroy     = "destroy"
	// StepRenewalApply applies a later expires_at (Scenario.RenewedAt).
	StepRenewalApply = "renewal apply"
)

// Steps of a grant on a prepared site (SiteComparison): a plan, and an
// apply that plans again, as terraform apply does without a saved plan.
const (
	StepPlan  = "plan"
	StepApply = "apply"
)

var allSteps = []string{StepCreatePlan, StepCreateApply, StepNoopPlan, StepChangeApply, StepDestroy}

// Scenario is one measured configuration.
type Scenario struct {
	Name string
	// Size is the number of instances (or resources).
	Size int
	// PlanOnly measures the create plan alone.
	PlanOnly bool
	// Steps, unless nil, are the steps measured, in order (allSteps
	// otherwise; PlanOnly wins).
	Steps []string
	// ExpiresAt, when set, is var.expires_at, which both configurations
	// declare, until StepRenewalApply sets it to RenewedAt.
	ExpiresAt, RenewedAt string
	// Config is the provider's configuration, Baseline the terraform_data
	// one; both read var.instances (id => name).
	Config, Baseline string
	// Floor, when set, is the same configuration on the empty provider
	// (floor_instance_grant, internal/bench/floor), which reads
	// var.instances too: the scenario then runs a third time, on it.
	Floor string
	// ProviderSettings go into the provider block.
	ProviderSettings string
	// LatencyMS, when set, is the latency of this scenario's IAM calls
	// instead of Options.LatencyMS (the comparisons' times, which make no
	// IAM call, are shared with the scenario at the usual latency).
	LatencyMS int
	// RefusedWith, when set, is the plan-time error the provider must
	// answer with: the scenario measures how fast a plan is refused.
	RefusedWith string
	// Model, unless nil, is the sandbox's model (the default otherwise).
	Model func() (*sandbox.Model, error)
	// Prepare, unless nil, sets the sandbox up before the steps (through
	// IAM's APIs at url, before the latency is set) and returns more
	// variables for both configurations, which declare them.
	Prepare func(ctx context.Context, url string) (map[string]any, error)
}

// Result is one step's measurement.
type Result struct {
	Step     string
	Provider time.Duration
	Baseline time.Duration
	// Floor is the empty provider's time (Scenario.Floor); zero when the
	// scenario has none or it was not measured.
	Floor time.Duration
	// Calls counts IAM calls by kind during the step.
	Calls map[string]int
	// PeakRSS is the provider process's peak resident memory, in bytes.
	PeakRSS int64
	// Trace, for a traced step (RunTrace), is where its
	// ApplyResourceChange calls' time went.
	Trace *Trace
	// Rounds are the times of a step measured several times
	// (SiteComparison), in order; Provider is then their median.
	Rounds []time.Duration
}

// Options say where the tools are and how to measure.
type Options struct {
	Terraform   string
	ProviderDir string
	// FloorDir holds terraform-provider-floor (internal/bench/floor), the
	// empty provider of the scenarios that have a floor; ProviderDir when
	// empty.
	FloorDir string
	// LatencyMS is injected into every IAM call.
	LatencyMS int
	// Parallelism is Terraform's -parallelism.
	Parallelism int
	// SkipBaseline leaves terraform_data and the empty provider out, for
	// quick experiments: the baseline, floor, ratio, target and goal
	// columns then say n/a.
	SkipBaseline bool
	// Baselines keeps the terraform_data and empty provider figures
	// already measured, by CLI, configuration, size and steps, so that
	// scenarios that differ only in the provider's settings measure them
	// once. Nil measures every time.
	Baselines map[string][]time.Duration
}

// InstanceGrant is scenario 1: one bkiam_instance_grant with size instances.
// Past IAM's 10000 instances per policy the plan is refused at validation,
// and only that plan is measured.
func InstanceGrant(size int, planOnly bool) Scenario {
	refused := ""
	name := fmt.Sprintf("one bkiam_instance_grant, %d instances", size)
	if size > 10000 {
		refused = "at most 10000 elements"
		name += " (plan only: refused at validation, as IAM allows 10000 per policy)"
	}
	return Scenario{
		Name: name, Size: size, PlanOnly: planOnly, RefusedWith: refused,
		Config: `resource "bkiam_instance_grant" "team" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host", "edit_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = var.instances }]
}
`,
		Baseline: `resource "terraform_data" "team" {
  input = {
    system    = "bk_cmdb"
    subject   = { type = "user", id = "alice" }
    actions   = ["view_host", "edit_host"]
    resources = [{ system = "bk_cmdb", type = "host", instances = var.instances }]
  }
}
`,
	}
}

// Renewal is a renewal of scenario 1: one bkiam_instance_grant of size
// instances to a user, created with an expiry, whose expires_at is then
// moved later (what renew_before does when its window opens). IAM raises
// the expiry of everything a policy holds on any grant into it, so the
// renewal apply sends one grant, of one instance, for both actions.
func Renewal(size int) Scenario {
	return Scenario{
		Name:      fmt.Sprintf("renewal of one bkiam_instance_grant, %d instances (a later expires_at)", size),
		Size:      size,
		Steps:     []string{StepCreatePlan, StepCreateApply, StepRenewalApply},
		ExpiresAt: "2098-01-01T00:00:00Z", RenewedAt: "2099-01-01T00:00:00Z",
		Config: `resource "bkiam_instance_grant" "team" {
  system     = "bk_cmdb"
  subject    = { type = "user", id = "alice" }
  actions    = ["view_host", "edit_host"]
  resources  = [{ system = "bk_cmdb", type = "host", instances = var.instances }]
  expires_at = var.expires_at
}

variable "expires_at" {
  type = string
}
`,
		Baseline: `resource "terraform_data" "team" {
  input = {
    system     = "bk_cmdb"
    subject    = { type = "user", id = "alice" }
    actions    = ["view_host", "edit_host"]
    resources  = [{ system = "bk_cmdb", type = "host", instances = var.instances }]
    expires_at = var.expires_at
  }
}

variable "expires_at" {
  type = string
}
`,
	}
}

// ManyGrants is scenario 2: one bkiam_instance_grant per instance, all
// for one subject; batchWindow sets the provider's batch_window ("" for
// its default, "0s" for no merging).
func ManyGrants(size int, batchWindow string) Scenario {
	name := fmt.Sprintf("%d bkiam_instance_grant of one instance each, one subject", size)
	settings := ""
	if batchWindow != "" {
		name += fmt.Sprintf(", batch_window = %q", batchWindow)
		settings = fmt.Sprintf("batch_window = %q", batchWindow)
	}
	const grants = `resource "bkiam_instance_grant" "host" {
  for_each  = var.instances
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { (each.key) = each.value } }]
}
`
	return Scenario{
		Name: name, Size: size, ProviderSettings: settings,
		Config: grants,
		Baseline: `resource "terraform_data" "host" {
  for_each = var.instances
  input = {
    system    = "bk_cmdb"
    subject   = { type = "user", id = "alice" }
    actions   = ["view_host"]
    resources = [{ system = "bk_cmdb", type = "host", instances = { (each.key) = each.value } }]
  }
}
`,
		// The same resources on the empty provider.
		Floor: strings.Replace(grants, "bkiam_instance_grant", "floor_instance_grant", 1),
	}
}

// ManyGrantsSlowIAM is ManyGrants with the default batch_window against an
// IAM that takes latencyMS per call: where merging matters most, as IAM is
// then what every resource waits for.
func ManyGrantsSlowIAM(size, latencyMS int) Scenario {
	sc := ManyGrants(size, "")
	sc.Name += fmt.Sprintf(", IAM at %d ms per call", latencyMS)
	sc.LatencyMS = latencyMS
	return sc
}

// Latency is the latency of the scenario's IAM calls, in milliseconds.
func (sc Scenario) Latency(opts Options) int {
	if sc.LatencyMS > 0 {
		return sc.LatencyMS
	}
	return opts.LatencyMS
}

// CreatorGrant is scenario 3: one bkiam_creator_grant with size instances.
func CreatorGrant(size int) Scenario {
	return Scenario{
		Name: fmt.Sprintf("one bkiam_creator_grant, %d instances", size), Size: size,
		Config: `resource "bkiam_creator_grant" "jobs" {
  system    = "bk_job"
  type      = "job"
  creator   = "alice"
  instances = var.instances
}
`,
		Baseline: `resource "terraform_data" "jobs" {
  input = {
    system    = "bk_job"
    type      = "job"
    creator   = "alice"
    instances = var.instances
  }
}
`,
	}
}

// GroupMembers is scenario 4: one bkiam_group_members with size users
// ("u" + each instance id) in a group the scenario creates first, on a
// site whose group member limit allows them (BKAPP_GROUP_MEMBER_LIMIT).
func GroupMembers(size int) Scenario {
	return Scenario{
		Name: fmt.Sprintf("one bkiam_group_members, %d users", size), Size: size,
		Config: `resource "bkiam_group_members" "team" {
  system   = "bk_cmdb"
  group_id = var.group_id
  users    = { for id, name in var.instances : "u${id}" => "permanent" }
}

variable "group_id" {
  type = string
}
`,
		Baseline: `resource "terraform_data" "team" {
  input = {
    system   = "bk_cmdb"
    group_id = var.group_id
    users    = { for id, name in var.instances : "u${id}" => "permanent" }
  }
}

variable "group_id" {
  type = string
}
`,
		Model: func() (*sandbox.Model, error) {
			m := sandbox.DefaultModel()
			for i := range size {
				m.Users = append(m.Users, fmt.Sprintf("u%d", i), fmt.Sprintf("unew-%d", i))
			}
			m.Limits.GroupMemberLimit = 2 * size
			raw, err := json.Marshal(m)
			if err != nil {
				return nil, err
			}
			return sandbox.LoadModel(raw)
		},
		Prepare: func(ctx context.Context, url string) (map[string]any, error) {
			c, err := bkiam.New(bkiam.Config{APIGatewayURL: url, AppCode: "bkiam-sandbox", AppSecret: "sandbox-secret"})
			if err != nil {
				return nil, err
			}
			gm, err := c.CreateGradeManager(ctx, "bk_cmdb", bkiam.GradeManagerSpec{
				Name: "bench", Members: []string{"alice"},
				AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "view_host"}},
					Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "*"}}}}}}},
				SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}},
			})
			if err != nil {
				return nil, err
			}
			ids, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "team"}})
			if err != nil {
				return nil, err
			}
			return map[string]any{"group_id": fmt.Sprint(ids[0])}, nil
		},
	}
}

// variant is which of a scenario's configurations a run measures.
type variant int

const (
	onProvider variant = iota // Scenario.Config, on the provider
	onBaseline                // Scenario.Baseline, on terraform_data
	onFloor                   // Scenario.Floor, on the empty provider
)

// Run measures a scenario: every step with the provider, then with the
// baseline, then, if the scenario has one, with the empty provider, against
// a fresh sandbox.
func Run(ctx context.Context, opts Options, sc Scenario) ([]Result, error) {
	srv, url, vars, stop, err := start(ctx, opts, sc)
	if err != nil {
		return nil, err
	}
	defer stop()

	steps := allSteps
	switch {
	case sc.PlanOnly:
		steps = []string{StepCreatePlan}
	case sc.Steps != nil:
		steps = sc.Steps
	}
	results := make([]Result, len(steps))
	for i, s := range steps {
		results[i] = Result{Step: s, Calls: map[string]int{}}
	}

	// The baseline and the floor: each measured once per CLI, size, steps
	// and configuration (opts.Baselines).
	variants := []variant{onProvider}
	keys := map[variant]string{
		onBaseline: measuredKey("terraform_data", opts.Terraform, sc.Size, steps, sc.Baseline),
		onFloor:    measuredKey("floor", opts.Terraform, sc.Size, steps, sc.Floor),
	}
	for _, v := range []variant{onBaseline, onFloor} {
		if opts.SkipBaseline || v == onFloor && sc.Floor == "" {
			continue
		}
		if known, ok := opts.Baselines[keys[v]]; ok && len(known) == len(results) {
			for i := range results {
				*results[i].time(v) = known[i]
			}
			continue
		}
		variants = append(variants, v)
	}
	for _, v := range variants {
		if v == onFloor {
			if err := floorBuilt(opts); err != nil {
				return nil, fmt.Errorf("%s: %w", sc.Name, err)
			}
		}
		w, err := newWorkdir(opts, url, sc, v, vars)
		if err != nil {
			return nil, err
		}
		err = w.runSteps(ctx, steps, results, srv, v)
		w.close()
		if err != nil {
			return nil, err
		}
		if v != onProvider && opts.Baselines != nil {
			measured := make([]time.Duration, len(results))
			for i := range results {
				measured[i] = *results[i].time(v)
			}
			opts.Baselines[keys[v]] = measured
		}
	}
	return results, nil
}

// time is where a variant's time of the step goes.
func (r *Result) time(v variant) *time.Duration {
	switch v {
	case onBaseline:
		return &r.Baseline
	case onFloor:
		return &r.Floor
	default:
		return &r.Provider
	}
}

// measuredKey is the key of Options.Baselines for what a configuration
// (on terraform_data or the empty provider, which kind says) took on a CLI
// at a size over steps.
func measuredKey(kind, cli string, size int, steps []string, config string) string {
	return strings.Join([]string{kind, cli, fmt.Sprint(size), strings.Join(steps, ","), config}, "\x00")
}

// floorDir is the directory of the empty provider.
func floorDir(opts Options) string {
	if opts.FloorDir != "" {
		return opts.FloorDir
	}
	return opts.ProviderDir
}

// floorBuilt says, before a CLI would (less plainly), that the empty
// provider is missing.
func floorBuilt(opts Options) error {
	name := "terraform-provider-floor"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if _, err := os.Stat(filepath.Join(floorDir(opts), name)); err != nil {
		return fmt.Errorf("the empty provider is not built (go build -o %s ./internal/bench/floor): %w", filepath.Join(floorDir(opts), name), err)
	}
	return nil
}

// start builds a scenario's sandbox, serves it, prepares it (sc.Prepare)
// and then sets the latency, which is the measured calls', not the
// preparation's. It returns the sandbox, its URL, the variables Prepare
// gave and the function that stops it.
func start(ctx context.Context, opts Options, sc Scenario) (*sandbox.Server, string, map[string]any, func(), error) {
	var sandboxOpts []sandbox.Option
	if sc.Model != nil {
		m, err := sc.Model()
		if err != nil {
			return nil, "", nil, nil, err
		}
		sandboxOpts = append(sandboxOpts, sandbox.WithModel(m))
	}
	srv, err := sandbox.New(sandboxOpts...)
	if err != nil {
		return nil, "", nil, nil, err
	}
	url, stop, err := serve(ctx, srv)
	if err != nil {
		return nil, "", nil, nil, err
	}
	var vars map[string]any
	if sc.Prepare != nil {
		if vars, err = sc.Prepare(ctx, url); err != nil {
			stop()
			return nil, "", nil, nil, fmt.Errorf("%s: preparing the sandbox: %w", sc.Name, err)
		}
	}
	if err := srv.SetFaults(sandbox.Faults{LatencyMS: sc.Latency(opts)}); err != nil {
		stop()
		return nil, "", nil, nil, err
	}
	return srv, url, vars, stop, nil
}

// serve serves srv on a free local port: its URL, and the function that
// stops it.
func serve(ctx context.Context, srv *sandbox.Server) (string, func(), error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("starting the sandbox: %w", err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = hs.Close() }, nil
}

// workdir is one Terraform working directory of a scenario.
type workdir struct {
	dir  string
	env  []string
	opts Options
	sc   Scenario
	vars map[string]any
	// renewed is set once StepRenewalApply moved var.expires_at on.
	renewed bool
}

func newWorkdir(opts Options, url string, sc Scenario, v variant, vars map[string]any) (*workdir, error) {
	dir, err := os.MkdirTemp("", "bkiam-bench-")
	if err != nil {
		return nil, err
	}
	providerDir, err := filepath.Abs(opts.ProviderDir)
	if err != nil {
		return nil, err
	}
	emptyDir, err := filepath.Abs(floorDir(opts))
	if err != nil {
		return nil, err
	}
	cliConfig := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    \"bkiam/bkiam\" = %q\n    \"bench/floor\" = %q\n  }\n  direct {}\n}\n",
		providerDir, emptyDir)
	var main string
	switch v {
	case onBaseline:
		main = sc.Baseline
	case onFloor:
		main = "terraform {\n  required_providers {\n    floor = { source = \"bench/floor\" }\n  }\n}\n\nprovider \"floor\" {}\n\n" + sc.Floor
	default:
		main = "terraform {\n  required_providers {\n    bkiam = { source = \"bkiam/bkiam\" }\n  }\n}\n\nprovider \"bkiam\" {\n" + sc.ProviderSettings + "\n}\n\n" + sc.Config
	}
	main += "\nvariable \"instances\" {\n  type = map(string)\n}\n"
	files := map[string]string{"main.tf": main, "cli.tfrc": cliConfig}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			return nil, err
		}
	}
	w := &workdir{dir: dir, opts: opts, sc: sc, vars: vars}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") && !strings.HasPrefix(kv, "BKIAM_") && !strings.HasPrefix(kv, "BK_") {
			w.env = append(w.env, kv)
		}
	}
	w.env = append(w.env, "TF_CLI_CONFIG_FILE="+filepath.Join(dir, "cli.tfrc"), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1",
		"BKIAM_APIGW_URL="+url, "BKIAM_APP_CODE=bkiam-sandbox", "BKIAM_APP_SECRET=sandbox-secret")
	return w, w.writeInstances(0)
}

func (w *workdir) close() { _ = os.RemoveAll(w.dir) }

// writeInstances writes var.instances; generation g replaces the first
// g% of the instances with new ones.
func (w *workdir) writeInstances(g int) error {
	instances := make(map[string]string, w.sc.Size)
	replaced := w.sc.Size * g / 100
	if g > 0 && replaced == 0 {
		replaced = 1
	}
	for i := 0; i < w.sc.Size; i++ {
		id := fmt.Sprintf("%d", i)
		if i < replaced {
			id = fmt.Sprintf("new-%d", i)
		}
		instances[id] = "host " + id
	}
	all := map[string]any{"instances": instances}
	maps.Copy(all, w.vars)
	if w.sc.ExpiresAt != "" {
		all["expires_at"] = w.sc.ExpiresAt
		if w.renewed {
			all["expires_at"] = w.sc.RenewedAt
		}
	}
	data, err := json.Marshal(all)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(w.dir, "instances.auto.tfvars.json"), data, 0o600)
}

func (w *workdir) runSteps(ctx context.Context, steps []string, results []Result, srv *sandbox.Server, v variant) error {
	for i, step := range steps {
		m, err := w.measure(ctx, step, srv, v)
		if err != nil {
			return err
		}
		if v != onProvider {
			*results[i].time(v) = m.elapsed
			continue
		}
		results[i].Provider = m.elapsed
		results[i].PeakRSS = m.peak
		results[i].Calls = m.calls
	}
	return nil
}

// measurement is one Terraform command's: its wall time, the provider's
// peak memory and the IAM calls by kind (none for the baseline and the
// floor, which make none).
type measurement struct {
	elapsed time.Duration
	peak    int64
	calls   map[string]int
}

// measure runs one step's Terraform command. A command that fails fails
// the step; so does a no-op plan that would change something, which
// -detailed-exitcode makes exit 2.
func (w *workdir) measure(ctx context.Context, step string, srv *sandbox.Server, v variant) (measurement, error) {
	parallelism := fmt.Sprintf("-parallelism=%d", w.opts.Parallelism)
	var args []string
	switch step {
	case StepCreatePlan:
		args = []string{"plan", "-input=false", parallelism, "-out=create.tfplan"}
	case StepCreateApply:
		args = []string{"apply", "-input=false", parallelism, "create.tfplan"}
	case StepNoopPlan:
		args = []string{"plan", "-input=false", parallelism, "-detailed-exitcode"}
	case StepChangeApply:
		if err := w.writeInstances(1); err != nil {
			return measurement{}, err
		}
		args = []string{"apply", "-input=false", parallelism, "-auto-approve"}
	case StepRenewalApply:
		w.renewed = true
		if err := w.writeInstances(0); err != nil {
			return measurement{}, err
		}
		args = []string{"apply", "-input=false", parallelism, "-auto-approve"}
	case StepDestroy:
		args = []string{"destroy", "-input=false", parallelism, "-auto-approve"}
	case StepPlan:
		args = []string{"plan", "-input=false", parallelism}
	case StepApply:
		args = []string{"apply", "-input=false", parallelism, "-auto-approve"}
	default:
		return measurement{}, fmt.Errorf("%s: unknown step %q", w.sc.Name, step)
	}
	before := srv.Stats()
	mem := watchProviderMemory()
	start := time.Now()
	out, err := w.terraform(ctx, args...)
	m := measurement{elapsed: time.Since(start), peak: mem.stop(), calls: map[string]int{}}
	if err != nil && v == onProvider && w.sc.RefusedWith != "" && strings.Contains(strings.Join(strings.Fields(string(out)), " "), w.sc.RefusedWith) {
		err = nil // refused as expected
	}
	if err != nil {
		return measurement{}, fmt.Errorf("%s (%s): terraform %s: %w\n%s", w.sc.Name, step, args[0], err, out)
	}
	if v != onProvider {
		return m, nil
	}
	after := srv.Stats()
	for kind, n := range after.Requests {
		if d := n - before.Requests[kind]; d > 0 {
			m.calls[kind] = d
		}
	}
	return m, nil
}

func (w *workdir) terraform(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, w.opts.Terraform, append(args[:1:1], append([]string{"-no-color"}, args[1:]...)...)...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	return cmd.CombinedOutput()
}

// Print writes a scenario's results on one CLI (cli names it, as
// "Terraform v1.16.4") as a Markdown table. The target is issue 7's:
// within 1.5× of terraform_data plus the calls' latency. A scenario with a
// floor (Scenario.Floor) has issue 55's columns too: the empty provider's
// time, the floor (that time plus the step's IAM calls × the latency, as
// IAM serialises one subject's calls), the provider's ratio to it and the
// goal (floorGoals).
func Print(out io.Writer, sc Scenario, cli string, latencyMS int, results []Result) {
	fmt.Fprintf(out, "\n### %s — %s\n\n", sc.Name, cli)
	header := fmt.Sprintf("| step | bkiam | terraform_data | ratio | target: 1.5 × terraform_data + calls × %d ms |", latencyMS)
	rule := "|---|---:|---:|---:|---:|"
	if sc.Floor != "" {
		header += fmt.Sprintf(" empty provider | floor: empty provider + calls × %d ms | ratio to floor | goal |", latencyMS)
		rule += "---:|---:|---:|---|"
	}
	fmt.Fprintln(out, header+" IAM calls | provider peak RSS |")
	fmt.Fprintln(out, rule+"---|---:|")
	for _, r := range results {
		calls := 0
		for _, n := range r.Calls {
			calls += n
		}
		latency := time.Duration(calls*latencyMS) * time.Millisecond
		baseline, rat, goal := "n/a", "n/a", "n/a"
		if r.Baseline > 0 {
			target := time.Duration(1.5*float64(r.Baseline)) + latency
			verdict := "met"
			if r.Provider > target {
				verdict = "missed"
			}
			baseline = fmt.Sprintf("%.2f s", r.Baseline.Seconds())
			rat = fmt.Sprintf("%.2f×", ratio(r.Provider, r.Baseline))
			goal = fmt.Sprintf("%.2f s, %s", target.Seconds(), verdict)
		}
		row := []string{r.Step, fmt.Sprintf("%.2f s", r.Provider.Seconds()), baseline, rat, goal}
		if sc.Floor != "" {
			row = append(row, floorColumns(r, latency)...)
		}
		row = append(row, callList(r.Calls), fmt.Sprintf("%.0f MiB", float64(r.PeakRSS)/(1<<20)))
		fmt.Fprintf(out, "| %s |\n", strings.Join(row, " | "))
	}
}

// floorGoals are issue 55's goals, by step: the most the provider may take
// over the floor.
var floorGoals = map[string]float64{
	StepCreatePlan:  1.1,
	StepNoopPlan:    1.1,
	StepCreateApply: 1.2,
	StepChangeApply: 1.2,
	StepDestroy:     1.2,
}

// floorColumns are a step's columns of issue 55: the empty provider's
// time, the floor (that time and latency, the step's IAM calls' share),
// the provider's ratio to it and the goal; n/a where the empty provider
// was not measured.
func floorColumns(r Result, latency time.Duration) []string {
	if r.Floor <= 0 {
		return []string{"n/a", "n/a", "n/a", "n/a"}
	}
	floor := r.Floor + latency
	rat := ratio(r.Provider, floor)
	goal := "none"
	if g, ok := floorGoals[r.Step]; ok {
		verdict := "met"
		if rat > g {
			verdict = "missed"
		}
		goal = fmt.Sprintf("at most %.1f×, %s", g, verdict)
	}
	return []string{fmt.Sprintf("%.2f s", r.Floor.Seconds()), fmt.Sprintf("%.2f s", floor.Seconds()), fmt.Sprintf("%.2f×", rat), goal}
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}

// callList is calls by kind, as the tables show them: "1 model_query, 2 policy_list".
func callList(calls map[string]int) string {
	var kinds []string
	for _, k := range sortedKeys(calls) {
		kinds = append(kinds, fmt.Sprintf("%d %s", calls[k], k))
	}
	if len(kinds) == 0 {
		return "none"
	}
	return strings.Join(kinds, ", ")
}

func sortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }
