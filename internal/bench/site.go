package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// Issue 51's site: an action granted to many users, as a real site holds it, and one more grant
// planned and applied on it, with the provider's plan-time expiry check at its default
// (expiry_conflicts = "warn") and turned off.

// siteHeld are the hosts alice holds view_host on before the site's grant (SiteComparison).
var siteHeld = []string{"1", "2", "3"}

// siteUser is the name of the site's i-th user (1 ≤ i < policies).
func siteUser(i int) string { return fmt.Sprintf("u%05d", i) }

// siteModel is the default model with the site's users: policies-1 of them beside the default
// ones (alice holds the site's last policy).
func siteModel(policies int) func() (*sandbox.Model, error) {
	return func() (*sandbox.Model, error) {
		m := sandbox.DefaultModel()
		for i := 1; i < policies; i++ {
			m.Users = append(m.Users, siteUser(i))
		}
		raw, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		return sandbox.LoadModel(raw)
	}
}

// fillSite grants, through the authorization API at url, view_host to policies users: alice on
// siteHeld, permanently; every other user on one host, three in four by id (batch_instance) and
// the fourth on every host of a business (batch_path, as the web UI grants by topology), half of
// them permanently and half with IAM's default of 365 days. It makes one call per user, several
// users at a time, as IAM serves different subjects' calls in parallel.
func fillSite(ctx context.Context, url string, policies int) error {
	c, err := bkiam.New(bkiam.Config{APIGatewayURL: url, AppCode: "bkiam-sandbox", AppSecret: "sandbox-secret"})
	if err != nil {
		return err
	}
	viewHost := []bkiam.Action{{ID: "view_host"}}
	alice := bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant, ExpiredAt: bkiam.PermanentExpiry,
		Subject: bkiam.Subject{Type: bkiam.SubjectUser, ID: "alice"}, Actions: viewHost,
		Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host"}}}
	for _, id := range siteHeld {
		alice.Resources[0].Instances = append(alice.Resources[0].Instances, bkiam.Instance{ID: id, Name: "host " + id})
	}
	if _, err := c.BatchInstance(ctx, alice); err != nil {
		return fmt.Errorf("granting alice's hosts: %w", err)
	}
	grant := func(i int) error {
		subject := bkiam.Subject{Type: bkiam.SubjectUser, ID: siteUser(i)}
		var expiry int64
		if i%2 == 0 {
			expiry = bkiam.PermanentExpiry
		}
		if i%4 == 0 {
			biz := fmt.Sprint(1 + i%200)
			_, err := c.BatchPath(ctx, bkiam.BatchPathRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant, ExpiredAt: expiry,
				Subject: subject, Actions: viewHost, Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host",
					Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "biz", ID: biz, Name: "biz " + biz}, {System: "bk_cmdb", Type: "host", ID: "*"}}}}}})
			return err
		}
		host := fmt.Sprint(1000 + i)
		_, err := c.BatchInstance(ctx, bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant, ExpiredAt: expiry,
			Subject: subject, Actions: viewHost, Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host",
				Instances: []bkiam.Instance{{ID: host, Name: "host " + host}}}}})
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := grant(i); err != nil {
					once.Do(func() { first = fmt.Errorf("granting %s's host: %w", siteUser(i), err); cancel() })
				}
			}
		})
	}
feed:
	for i := 1; i < policies; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return first
}

// Comparison measures one grant on a prepared site twice over, with the provider's expiry check
// at its default (expiry_conflicts = "warn") and with expiry_conflicts = "off", in alternate
// rounds against one sandbox: each round plans and applies the grant on one side, then destroys
// it, so that every round starts from the site as prepared.
type Comparison struct {
	Name string
	// Scenario is the configuration, the model and the preparation; the provider's settings are
	// each side's.
	Scenario Scenario
	// Rounds is how many times each side measures each step; the median is reported.
	Rounds int
	// Goals are, by step, the most the check may cost: its time over the time with the check off.
	// A case without goals is reported without a verdict.
	Goals map[string]float64
	// Without is the provider setting that turns the check off, added to the scenario's own on
	// that side; expiry_conflicts = "off" when empty.
	Without string
}

// without is the setting that turns the comparison's check off.
func (c Comparison) without() string { return cmp.Or(c.Without, `expiry_conflicts = "off"`) }

// Compared is one step's measurements on both sides.
type Compared struct {
	Step      string
	Check     Result // expiry_conflicts at its default
	Unchecked Result // expiry_conflicts = "off"
}

// siteSteps are the measured steps of a Comparison's round.
var siteSteps = []string{StepPlan, StepApply}

// SiteComparison is issue 51's scenario on a site of policies users' view_host policies
// (fillSite): a bkiam_instance_grant of one more host (host 0) planned and applied for alice,
// who holds view_host on a few hosts, or, with firstGrant, for bob, who holds none of it: the
// check then reads the action's policy list too, for a policy of bob's that expired within the
// day, which no other route shows an app, no further than its first page when the list is
// longer than expiry_scan_limit (issue 61; 2000 policies by default). Both cases have issue 51's
// goal: the check may cost at most 1.5× the plan and 1.3× the apply with the check off.
func SiteComparison(policies int, firstGrant bool, rounds int) Comparison {
	user, what := "alice", "one more host for alice, who holds view_host on a few"
	if firstGrant {
		user, what = "bob", "a first view_host grant, to bob, who holds none"
	}
	name := fmt.Sprintf("site of %d users' view_host policies: %s", policies, what)
	return Comparison{
		Name: name, Rounds: rounds, Goals: map[string]float64{StepPlan: 1.5, StepApply: 1.3},
		Scenario: Scenario{
			Name: name, Size: 1,
			Config: fmt.Sprintf(`resource "bkiam_instance_grant" "host" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = %q }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = var.instances }]
}
`, user),
			Model: siteModel(policies),
			Prepare: func(ctx context.Context, url string) (map[string]any, error) {
				return nil, fillSite(ctx, url, policies)
			},
		},
	}
}

// WithScanLimit is c with the provider's expiry_scan_limit set to limit, on both sides.
func (c Comparison) WithScanLimit(limit int) Comparison {
	c.Name += fmt.Sprintf(", expiry_scan_limit = %d", limit)
	c.Scenario.Name = c.Name
	c.Scenario.ProviderSettings = strings.TrimSpace(c.Scenario.ProviderSettings + fmt.Sprintf("\nexpiry_scan_limit = %d", limit))
	return c
}

// RunComparison measures a Comparison: the site prepared once, then its rounds, each side in
// turn (the side that goes first alternates), every step's calls checked to be the same in
// every round.
func RunComparison(ctx context.Context, opts Options, c Comparison) ([]Compared, error) {
	srv, url, vars, stop, err := start(ctx, opts, c.Scenario)
	if err != nil {
		return nil, err
	}
	defer stop()
	checked, unchecked := c.Scenario, c.Scenario
	unchecked.ProviderSettings = strings.TrimSpace(c.Scenario.ProviderSettings + "\n" + c.without())
	unchecked.Name += ", " + c.without()
	sides := make([]*workdir, 2)
	for i, sc := range []Scenario{checked, unchecked} {
		if sides[i], err = newWorkdir(opts, url, sc, onProvider, vars); err != nil {
			return nil, err
		}
		defer sides[i].close()
	}
	results := make([][]Result, 2)
	for i := range results {
		results[i] = make([]Result, len(siteSteps))
		for j, step := range siteSteps {
			results[i][j] = Result{Step: step}
		}
	}
	rounds := max(c.Rounds, 1)
	for round := range rounds {
		for k := range sides {
			side := (k + round) % 2
			w := sides[side]
			for j, step := range siteSteps {
				m, err := w.measure(ctx, step, srv, onProvider)
				if err != nil {
					return nil, err
				}
				r := &results[side][j]
				if round == 0 {
					r.Calls = m.calls
				} else if !maps.Equal(r.Calls, m.calls) {
					return nil, fmt.Errorf("%s (%s): round %d made the calls %v, round 1 %v", w.sc.Name, step, round+1, m.calls, r.Calls)
				}
				r.Rounds = append(r.Rounds, m.elapsed)
				r.PeakRSS = max(r.PeakRSS, m.peak)
			}
			// Back to the site as prepared, for the other side and the next round.
			if _, err := w.measure(ctx, StepDestroy, srv, onProvider); err != nil {
				return nil, err
			}
		}
	}
	out := make([]Compared, len(siteSteps))
	for j, step := range siteSteps {
		for i := range results {
			results[i][j].Provider = median(results[i][j].Rounds)
		}
		out[j] = Compared{Step: step, Check: results[0][j], Unchecked: results[1][j]}
	}
	return out, nil
}

// median is the middle of ds (the lower middle of an even count).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[(len(s)-1)/2]
}

// PrintComparison writes a Comparison's results on one CLI as a Markdown table: each step's
// median time with the check and without, their ratio against the goal, and the IAM calls of
// one run of the step on each side.
func PrintComparison(out io.Writer, c Comparison, cli string, results []Compared) {
	fmt.Fprintf(out, "\n### %s — %s\n\n", c.Name, cli)
	fmt.Fprintf(out, "| step | with the check (median of %d, range) | %s | ratio | goal | IAM calls with the check | IAM calls without | provider peak RSS |\n",
		max(c.Rounds, 1), c.without())
	fmt.Fprintln(out, "|---|---:|---:|---:|---|---|---|---:|")
	for _, r := range results {
		goal := "none"
		rat := ratio(r.Check.Provider, r.Unchecked.Provider)
		if g, ok := c.Goals[r.Step]; ok {
			verdict := "met"
			if rat > g {
				verdict = "missed"
			}
			goal = fmt.Sprintf("at most %.1f×, %s", g, verdict)
		}
		fmt.Fprintf(out, "| %s | %s | %s | %.2f× | %s | %s | %s | %.0f MiB |\n", r.Step, timeRange(r.Check), timeRange(r.Unchecked),
			rat, goal, callList(r.Check.Calls), callList(r.Unchecked.Calls), float64(max(r.Check.PeakRSS, r.Unchecked.PeakRSS))/(1<<20))
	}
}

// timeRange is a step's median time and, measured more than once, the range of its rounds.
func timeRange(r Result) string {
	if len(r.Rounds) < 2 {
		return fmt.Sprintf("%.2f s", r.Provider.Seconds())
	}
	return fmt.Sprintf("%.2f s (%.2f–%.2f)", r.Provider.Seconds(), slices.Min(r.Rounds).Seconds(), slices.Max(r.Rounds).Seconds())
}
