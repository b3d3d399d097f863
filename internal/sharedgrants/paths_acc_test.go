package sharedgrants_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// The paths a user's CLI takes besides plan-then-apply with a refresh,
// each asserting what IAM holds and that the next plan is honest.

// TestAccPathExpiringBesidePermanent: alice holds view_host through a
// grant that expires (a: host 1) and a permanent one (b: host 2). IAM
// keeps one expiry per subject and action, the later, so after a's expiry
// IAM still holds host 1. a stays in state, its plan stays empty (before,
// the provider dropped it on its own clock and every plan then failed on
// its past expires_at), and deleting a's block revokes host 1 and leaves
// b's host 2. With and without detect_drift.
func TestAccPathExpiringBesidePermanent(t *testing.T) {
	acctest.Parallel(t)
	for _, drift := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "detect_drift"}[drift], func(t *testing.T) {
			sb, provider := acctest.Target(t)
			if drift {
				provider = strings.Replace(provider, "provider \"bkiam\" {\n", "provider \"bkiam\" {\n  detect_drift = true\n", 1)
			}
			expiry := time.Now().Add(8 * time.Second).Truncate(time.Second)
			a := acctest.SharedHostGrant("a", "view_host", fmt.Sprintf("  expires_at = %q\n", expiry.UTC().Format(time.RFC3339)), "1")
			b := acctest.SharedHostGrant("b", "view_host", "", "2")
			both := map[string][]string{"view_host": sandboxtest.HostPaths("1", "2")}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				Steps: []resource.TestStep{
					{Config: provider + a + b, ConfigPlanChecks: acctest.EmptyPlanAfterApply, Check: acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", both)},
					{
						PreConfig: func() { time.Sleep(time.Until(expiry) + time.Second) },
						Config:    provider + a + b,
						PlanOnly:  true,
						Check:     acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", both),
					},
					{
						Config:           provider + b,
						ConfigPlanChecks: acctest.EmptyPlanAfterApply,
						Check:            acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"view_host": sandboxtest.HostPaths("2")}),
					},
				},
				CheckDestroy: acctest.CheckNothingHeld(sb),
			})
		})
	}
}

// pathCase is one way a user's CLI applies a change, in TestAccPathMatrix.
type pathCase struct {
	name string
	// apply applies the workspace's configuration on this path and
	// returns the output and exit code of the command that plans it.
	apply func(w *acctest.CLIWorkspace) (string, int)
	// only, when set, says whether the CLI offers the path.
	only func() bool
}

// pathCases are the paths TestAccPathMatrix takes: each plans every
// resource of the configuration (a resource tainted or replaced included).
var pathCases = []pathCase{
	{name: "plan and apply", apply: func(w *acctest.CLIWorkspace) (string, int) { return w.Run("apply", "-auto-approve") }},
	{name: "refresh=false", apply: func(w *acctest.CLIWorkspace) (string, int) { return w.Run("apply", "-auto-approve", "-refresh=false") }},
	{name: "parallelism=1", apply: func(w *acctest.CLIWorkspace) (string, int) { return w.Run("apply", "-auto-approve", "-parallelism=1") }},
	{name: "saved plan", apply: func(w *acctest.CLIWorkspace) (string, int) {
		// Planned by one process, applied later by another.
		out, code := w.Run("plan", "-out=saved.tfplan")
		if code != 0 {
			return out, code
		}
		time.Sleep(time.Second)
		return w.Run("apply", "saved.tfplan")
	}},
	{name: "replace", apply: func(w *acctest.CLIWorkspace) (string, int) {
		return w.Run("apply", "-auto-approve", "-replace=bkiam_instance_grant.a")
	}},
	{name: "taint", apply: func(w *acctest.CLIWorkspace) (string, int) {
		w.MustRun("taint", "bkiam_instance_grant.a")
		out, code := w.Run("apply", "-auto-approve")
		if code != 0 {
			w.MustRun("untaint", "bkiam_instance_grant.a")
		}
		return out, code
	}},
	{name: "exclude", only: func() bool { return acctest.CLI.IsTofu() }, apply: func(w *acctest.CLIWorkspace) (string, int) {
		// Excluding a resource that neither grant depends on plans both.
		return w.Run("apply", "-auto-approve", "-exclude=terraform_data.other")
	}},
}

// TestAccPathMatrix: the guarantees of shared grants on every path a
// user's CLI takes (DESIGN.md, "Shared grants"), on whichever CLI runs
// it. alice holds hosts 1 and 2 through grant a and host 3 through b.
//
//   - Two grants that both keep host 2 are a lasting overlap, where on
//     some paths (-refresh=false, a taint, -target) one's change used to
//     take host 2 from the other: every path refuses the plan, sends
//     nothing, and the plan after stays honest.
//   - Moving host 2 from a to b in one change is a transient overlap,
//     which the ledger carries: alice keeps every host throughout, state
//     matches IAM, the next plan is empty.
//   - A failed create (Terraform taints it) in the middle of such a move
//     leaves state an upper bound of IAM, and the next apply converges.
//   - -target of one of the two applies only its half, and the next plan
//     applies the rest.
func TestAccPathMatrix(t *testing.T) {
	acctest.Parallel(t)
	held := func(ids ...string) map[string][]string {
		return map[string][]string{"view_host": sandboxtest.HostPaths(ids...)}
	}
	other := "\nresource \"terraform_data\" \"other\" {}\n"
	grants := func(a, b []string) string {
		return acctest.SharedHostGrant("a", "view_host", "", a...) + acctest.SharedHostGrant("b", "view_host", "", b...) + other
	}
	start := func(t *testing.T) (*acctest.CLIWorkspace, *sandboxtest.Sandbox, string) {
		w, sb, provider := sharedWorkspace(t)
		w.Configure(provider, grants([]string{"1", "2"}, []string{"3"}))
		applyAndCheck(t, w, sb, "bk_cmdb", held("1", "2", "3"))
		return w, sb, provider
	}
	for _, p := range pathCases {
		t.Run(p.name, func(t *testing.T) {
			if p.only != nil && !p.only() {
				t.Skipf("%s does not offer this path", acctest.CLI)
			}
			acctest.Parallel(t)
			t.Run("lasting overlap refused", func(t *testing.T) {
				w, sb, provider := start(t)
				// b gains host 2, a keeps it; a also loses host 1, which no
				// path may revoke since the plan is refused whole.
				w.Configure(provider, grants([]string{"2"}, []string{"2", "3"}))
				out, code := p.apply(w)
				if code == 0 || !acctest.PlanErrorPattern("Grants shared with another resource", "/bk_cmdb,host,2/", "allow_shared_grants").MatchString(out) {
					t.Fatalf("a lasting overlap was not refused (exit %d):\n%s", code, out)
				}
				if got := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice"); !reflect.DeepEqual(got, held("1", "2", "3")) {
					t.Fatalf("after the refused plan alice holds\n%s", acctest.RenderHeld(got))
				}
				w.Configure(provider, grants([]string{"1", "2"}, []string{"3"}))
				if !w.PlanIsEmpty() {
					t.Fatal("the plan of the applied configuration is not empty after the refusal")
				}
			})
			t.Run("move", func(t *testing.T) {
				w, sb, provider := start(t)
				for _, split := range [][2][]string{{{"1"}, {"2", "3"}}, {{"1", "2"}, {"3"}}} {
					w.Configure(provider, grants(split[0], split[1]))
					if out, code := p.apply(w); code != 0 {
						t.Fatalf("moving host 2 (exit %d):\n%s", code, out)
					}
					if got := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice"); !reflect.DeepEqual(got, held("1", "2", "3")) {
						t.Fatalf("after moving host 2, alice holds\n%s", acctest.RenderHeld(got))
					}
					if err := acctest.CheckStateMatchesStore(w, sb, false, "user/alice"); err != nil {
						t.Fatal(err)
					}
					if !w.PlanIsEmpty() {
						t.Fatal("the plan after the move is not empty")
					}
				}
			})
		})
	}
	t.Run("failed create", func(t *testing.T) {
		acctest.Parallel(t)
		w, sb, provider := start(t)
		// Host 2 moves from a to a new grant c, whose create fails: IAM
		// refuses the first calls (after the provider's retries). The
		// failed create leaves c tainted with what it may hold, and the
		// next apply replaces it.
		w.Configure(provider, grants([]string{"1"}, []string{"3"})+acctest.SharedHostGrant("c", "view_host", "", "2"))
		if err := sb.SetFaults(sandbox.Faults{SpareReads: true, Fail: &sandbox.FailFault{After: 0, Count: 3, Status: 500, Code: 1902500}}); err != nil {
			t.Fatal(err)
		}
		if out, code := w.Run("apply", "-auto-approve"); code == 0 {
			t.Fatalf("the apply succeeded through the faults:\n%s", out)
		}
		if err := sb.SetFaults(sandbox.Faults{}); err != nil {
			t.Fatal(err)
		}
		if err := acctest.CheckStateMatchesStore(w, sb, true, "user/alice"); err != nil {
			t.Fatal(err)
		}
		applyAndCheck(t, w, sb, "bk_cmdb", held("1", "2", "3"))
		if err := acctest.CheckStateMatchesStore(w, sb, false, "user/alice"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("target", func(t *testing.T) {
		acctest.Parallel(t)
		w, sb, provider := start(t)
		// Host 2 moves from a to b; -target applies a's half only.
		w.Configure(provider, grants([]string{"1"}, []string{"2", "3"}))
		w.MustRun("apply", "-auto-approve", "-target=bkiam_instance_grant.a")
		if got := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice"); !reflect.DeepEqual(got, held("1", "3")) {
			t.Fatalf("after -target of a, alice holds\n%s", acctest.RenderHeld(got))
		}
		if w.PlanIsEmpty() {
			t.Fatal("the plan after -target shows nothing of b's half")
		}
		applyAndCheck(t, w, sb, "bk_cmdb", held("1", "2", "3"))
	})
}
