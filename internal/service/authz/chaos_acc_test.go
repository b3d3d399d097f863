package authz_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// chaosSubjects are the subjects the chaos test manages, one resource each.
var chaosSubjects = []string{"user/alice", "user/bob", "group/1"}

// chaosGrant is one subject's desired grant; nil actions: no resource.
type chaosGrant struct {
	actions []string
	ids     map[int]bool
}

// TestAccChaos applies a fixed-seed random sequence of configuration
// changes for three subjects through the Terraform CLI, each with a
// random fault injected (or none), and checks after every apply, failed
// or not, that the state records what the sandbox holds: exactly, or,
// after a call whose outcome is unknown, at least it. At the end, an
// apply without faults must converge to the configuration with an empty
// plan, and a destroy must leave nothing held. Set BKIAM_CHAOS_SEED to
// replay another sequence.
func TestAccChaos(t *testing.T) {
	testutil.SameOnEveryCLI(t, "it checks what the provider records under random faults; how each CLI keeps the state of a failed or interrupted apply is TestAccFaultMatrix's classes that run on every CLI")
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	acctest.Parallel(t) // its own sandbox and working directory
	seed := uint64(20261122)
	if s := os.Getenv("BKIAM_CHAOS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("BKIAM_CHAOS_SEED: %v", err)
		}
	}
	t.Logf("seed %d (replay with BKIAM_CHAOS_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	sb := sandboxtest.Start(t)
	provider := strings.Replace(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), "  max_retries = 2\n",
		"  max_retries = 2\n  revoke_batch_size = 200\n  request_timeout = \"1500ms\"\n", 1)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	grants := map[string]chaosGrant{}
	const steps = 14
	failures := 0
	for step := 1; step <= steps; step++ {
		for _, subject := range chaosSubjects {
			grants[subject] = nextChaosGrant(rng, grants[subject])
		}
		fault, what := randomFault(rng)
		w.Configure(provider, chaosConfig(grants))
		fault.SpareReads = true // the writes' faults: the plan's expiry reads are spared
		if err := sb.SetFaults(fault); err != nil {
			t.Fatal(err)
		}
		out, code := w.Run("apply", "-auto-approve")
		if err := sb.SetFaults(sandbox.Faults{}); err != nil {
			t.Fatal(err)
		}
		doubt := strings.Contains(strings.Join(strings.Fields(out), " "), "IAM may or may not have carried out this call")
		if code != 0 {
			failures++
			if !strings.Contains(out, "Error: IAM call failed") {
				t.Fatalf("step %d (%s): terraform failed without saying which call:\n%s", step, what, out)
			}
		}
		t.Logf("step %d: %s → exit %d, outcome in doubt: %v", step, what, code, doubt)
		if err := acctest.CheckStateMatchesStore(w, sb, doubt, chaosSubjects...); err != nil {
			t.Fatalf("step %d (%s, exit %d): %v\nterraform said:\n%s", step, what, code, err, out)
		}
	}
	if failures == 0 {
		t.Fatal("no fault made an apply fail: the sequence tests nothing")
	}

	// Without faults, one apply reaches the configuration.
	w.MustRun("apply", "-auto-approve")
	if err := acctest.CheckStateMatchesStore(w, sb, false, chaosSubjects...); err != nil {
		t.Fatalf("after the final apply: %v", err)
	}
	for _, subject := range chaosSubjects {
		typ, id, _ := strings.Cut(subject, "/")
		want := map[string][]string{}
		g := grants[subject]
		for _, a := range g.actions {
			want[a] = sandboxtest.HostPaths(chaosIDs(g)...)
		}
		if err := acctest.CheckHeld(sb, "bk_cmdb", typ, id, want)(nil); err != nil {
			t.Fatalf("after the final apply, %s: %v", subject, err)
		}
	}
	if !w.PlanIsEmpty() {
		out, _ := w.Run("plan")
		t.Fatalf("the plan after the final apply is not empty:\n%s", out)
	}
	w.MustRun("destroy", "-auto-approve")
	if n := len(sb.Policies(sandbox.PolicyFilter{}).Policies); n != 0 {
		t.Fatalf("the sandbox holds %d policies after the destroy", n)
	}
}

// nextChaosGrant changes a grant at random: sometimes removes it, else
// keeps, adds and drops actions and instances, from a few to a few hundred.
func nextChaosGrant(rng *rand.Rand, g chaosGrant) chaosGrant {
	if rng.IntN(7) == 0 {
		return chaosGrant{}
	}
	actions := []string{"delete_host", "edit_host", "view_host"}
	next := chaosGrant{ids: map[int]bool{}}
	for _, a := range actions {
		if slices.Contains(g.actions, a) == (rng.IntN(4) != 0) {
			next.actions = append(next.actions, a)
		}
	}
	if len(next.actions) == 0 {
		next.actions = []string{actions[rng.IntN(len(actions))]}
	}
	for id := range g.ids {
		if rng.IntN(5) != 0 {
			next.ids[id] = true
		}
	}
	// A run of new ids, so that calls fill whole entries.
	from, n := rng.IntN(600), rng.IntN(300)
	for id := from; id < from+n; id++ {
		next.ids[id] = true
	}
	if len(next.ids) == 0 {
		next.ids[rng.IntN(600)] = true
	}
	return next
}

func chaosIDs(g chaosGrant) []string {
	ids := make([]string, 0, len(g.ids))
	for id := range g.ids {
		ids = append(ids, strconv.Itoa(id))
	}
	slices.Sort(ids)
	return ids
}

func chaosConfig(grants map[string]chaosGrant) string {
	var b strings.Builder
	for _, subject := range chaosSubjects {
		g := grants[subject]
		if g.actions == nil {
			continue
		}
		typ, id, _ := strings.Cut(subject, "/")
		fmt.Fprintf(&b, `
resource "bkiam_instance_grant" "%s_%s" {
  system  = "bk_cmdb"
  subject = { type = %q, id = %q }
  actions = [%s]
  resources = [{
    system    = "bk_cmdb"
    type      = "host"
    instances = %s
  }]
}
`, typ, id, typ, id, acctest.QuoteList(g.actions), acctest.InstancesHCL(chaosIDs(g), sandboxtest.HostName))
	}
	return b.String()
}

// randomFault picks a fault, or none, striking after a few calls and a
// few times: sometimes within max_retries, sometimes beyond (the calls
// of three resources share the strikes).
func randomFault(rng *rand.Rand) (sandbox.Faults, string) {
	after, count := rng.IntN(4), 1+rng.IntN(8)
	switch rng.IntN(7) {
	case 0:
		return sandbox.Faults{}, "no fault"
	case 1:
		return sandbox.Faults{Fail: &sandbox.FailFault{After: after, Count: count, Status: 500, Code: 1902500}},
			fmt.Sprintf("HTTP 500 ×%d after %d", count, after)
	case 2:
		return sandbox.Faults{Fail: &sandbox.FailFault{After: after, Count: count, Status: 502, Code: 1, Body: "html"}},
			fmt.Sprintf("HTML 502 ×%d after %d", count, after)
	case 3:
		return sandbox.Faults{RateLimit: &sandbox.RateFault{After: after, Count: count, RetryAfterS: 1}},
			fmt.Sprintf("429 ×%d after %d", count, after)
	case 4:
		return sandbox.Faults{Drop: &sandbox.DropFault{After: after, Count: count}},
			fmt.Sprintf("connection reset ×%d after %d", count, after)
	case 5:
		return sandbox.Faults{Drop: &sandbox.DropFault{After: after, Count: count, Served: true}},
			fmt.Sprintf("connection reset after serving ×%d after %d", count, after)
	default:
		return sandbox.Faults{Slow: &sandbox.SlowFault{After: after, Count: count, DelayMS: 2000}},
			fmt.Sprintf("slow ×%d after %d", count, after)
	}
}
