package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccScenarioCallCounts pins, through the harness itself, the IAM calls
// of each benchmark scenario at a small size: the lower bound of
// ceil(instances / limit) per changed group, none on a no-op plan. Each
// provider process that plans a change reads the system's model once
// (check_model) and, for the expiry check, asks IAM about the user once
// (policy_query_by_actions, every action it grants in one query), reads
// by id (policy_get) each row the user holds of them whose expiry the grant
// would change (none here: the grants and the policies are permanent), and
// reads the policy
// list of an action the user holds nothing live of (policy_list: one page
// here), where a policy that expired within the day would show: terraform
// plan runs one process, terraform apply two (its plan and apply walks; an
// apply of a saved plan one). A process that wrote to an action before it
// read it leaves it to the plan, which read it first.
func TestAccScenarioCallCounts(t *testing.T) {
	opts := Options{Terraform: testutil.Terraform(t), ProviderDir: testutil.BuildProvider(t), FloorDir: testutil.BuildFloorProvider(t), Parallelism: 10}
	none := map[string]int{}
	model := map[string]int{"model_query": 1}
	// plus adds the expiry check's reads to calls: queries of the user,
	// rows read by id, policy-list pages.
	plus := func(calls map[string]int, queries, gets, pages int) map[string]int {
		out := maps.Clone(calls)
		for k, n := range map[string]int{"policy_query_by_actions": queries, "policy_get": gets, "policy_list": pages} {
			if n > 0 {
				out[k] = n
			}
		}
		return out
	}
	cases := []struct {
		sc   Scenario
		want map[string]map[string]int
		// or is, by step, the other count a step may make, where a race
		// between Terraform's concurrent operations decides.
		or map[string]map[string]int
	}{
		// Two actions, in one query; alice holds nothing of them before the
		// create (a page of each list), a row of each after it.
		{InstanceGrant(450, false), map[string]map[string]int{
			StepCreatePlan:  plus(model, 1, 0, 2),
			StepCreateApply: plus(map[string]int{"batch_instance:grant": 3, "model_query": 1}, 1, 0, 2),
			StepNoopPlan:    none,
			// 1% of 450 replaced: 4 instances out, 4 in.
			StepChangeApply: plus(map[string]int{"batch_instance:grant": 1, "batch_instance:revoke": 1, "model_query": 2}, 2, 0, 0),
			StepDestroy:     {"batch_instance:revoke": 1},
		}, nil},
		// A later expires_at: one grant of one host for both actions,
		// which raises their whole policies; the expiry check reads
		// alice's two rows by id in each process, as the grant changes
		// their expiry.
		{Renewal(450), map[string]map[string]int{
			StepCreatePlan:   plus(model, 1, 0, 2),
			StepCreateApply:  plus(map[string]int{"batch_instance:grant": 3, "model_query": 1}, 1, 0, 2),
			StepRenewalApply: plus(map[string]int{"batch_instance:grant": 1, "model_query": 2}, 2, 4, 0),
		}, nil},
		// One action of one user, read once for the 20 resources.
		{ManyGrants(20, "0s"), map[string]map[string]int{
			StepCreatePlan:  plus(model, 1, 0, 1),
			StepCreateApply: plus(map[string]int{"batch_instance:grant": 20, "model_query": 1}, 1, 0, 1),
			StepNoopPlan:    none,
			// One resource replaced by another: the plan reads alice's row.
			// The apply runs the old one's destroy and the new one's create
			// at once: when the revoke is sent before the create is planned
			// again, the apply leaves the check to the plan; otherwise it
			// reads the row again.
			StepChangeApply: plus(map[string]int{"batch_instance:grant": 1, "batch_instance:revoke": 1, "model_query": 2}, 1, 0, 0),
			StepDestroy:     {"batch_instance:revoke": 20},
		}, map[string]map[string]int{
			StepChangeApply: plus(map[string]int{"batch_instance:grant": 1, "batch_instance:revoke": 1, "model_query": 2}, 2, 0, 0),
		}},
		// Four creator actions.
		{CreatorGrant(450), map[string]map[string]int{
			StepCreatePlan:  plus(model, 1, 0, 4),
			StepCreateApply: plus(map[string]int{"batch_resource_creator_action": 3, "model_query": 1}, 1, 0, 4),
			StepNoopPlan:    none,
			StepChangeApply: plus(map[string]int{"batch_resource_creator_action": 1, "batch_path:revoke": 1, "model_query": 2}, 2, 0, 0),
			StepDestroy:     {"batch_path:revoke": 1},
		}, nil},
		// A group's members: no model read; every refresh reads the group,
		// and an apply that adds reads it back.
		{GroupMembers(450), map[string]map[string]int{
			StepCreatePlan:  none,
			StepCreateApply: {"member:list": 2, "member:add": 1},
			StepNoopPlan:    {"member:list": 1},
			// 1% of 450 replaced: one add of 4 users, one delete of 4.
			StepChangeApply: {"member:list": 2, "member:add": 1, "member:delete": 1},
			StepDestroy:     {"member:list": 1, "member:delete": 1},
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.sc.Name, func(t *testing.T) {
			results, err := Run(context.Background(), opts, tc.sc)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range results {
				or, raced := tc.or[r.Step]
				if !reflect.DeepEqual(r.Calls, tc.want[r.Step]) && (!raced || !reflect.DeepEqual(r.Calls, or)) {
					want := fmt.Sprint(tc.want[r.Step])
					if raced {
						want += fmt.Sprintf(" or %v", or)
					}
					t.Errorf("%s: calls %v, want %s", r.Step, r.Calls, want)
				}
				if r.Provider <= 0 || r.Baseline <= 0 {
					t.Errorf("%s: no timing measured (%v, %v)", r.Step, r.Provider, r.Baseline)
				}
				// The empty provider runs the scenarios that have a floor.
				if (r.Floor > 0) != (tc.sc.Floor != "") {
					t.Errorf("%s: the empty provider took %v (the scenario's floor: %q)", r.Step, r.Floor, tc.sc.Floor)
				}
			}
		})
	}
}

// TestAccSiteCallCounts pins the IAM calls of issue 51's site
// (SiteComparison) on a small site, in two rounds: with the check, a plan
// that grants alice one more host asks IAM about alice once, however large
// the site; a first grant to bob, who holds nothing of the action, reads
// the action's list too for a policy that expired within the day: whole
// (ceil(policies / 500) pages) while it holds no more than
// expiry_scan_limit policies, its first page alone past it (issue 61: the
// site of 20 000 policies of make bench, past the default limit of 2000,
// reads one page, not 40). The apply plans again in a second process,
// which reads the same before it writes. With expiry_conflicts = "off"
// only the model is read.
func TestAccSiteCallCounts(t *testing.T) {
	opts := Options{Terraform: testutil.Terraform(t), ProviderDir: testutil.BuildProvider(t), Parallelism: 10}
	const policies = 1200
	pages := (policies + 499) / 500
	grant := map[string]int{"batch_instance:grant": 1}
	// Without the check, each process reads the model alone.
	unchecked := map[string]map[string]int{
		StepPlan:  {"model_query": 1},
		StepApply: {"model_query": 2, "batch_instance:grant": 1},
	}
	// reads adds, per provider process, the check's query, gets and pages.
	reads := func(calls map[string]int, processes, gets, pages int) map[string]int {
		out := map[string]int{}
		maps.Copy(out, calls)
		out["model_query"] = processes
		out["policy_query_by_actions"] = processes
		if gets > 0 {
			out["policy_get"] = processes * gets
		}
		if pages > 0 {
			out["policy_list"] = processes * pages
		}
		return out
	}
	cases := []struct {
		c       Comparison
		checked map[string]map[string]int
	}{
		{SiteComparison(policies, false, 2), map[string]map[string]int{
			StepPlan:  reads(nil, 1, 0, 0),
			StepApply: reads(grant, 2, 0, 0),
		}},
		// One round each from here: the first case checks that every round calls the same.
		{SiteComparison(policies, true, 1), map[string]map[string]int{
			StepPlan:  reads(nil, 1, 0, pages),
			StepApply: reads(grant, 2, 0, pages),
		}},
		{SiteComparison(policies, true, 1).WithScanLimit(policies - 200), map[string]map[string]int{
			StepPlan:  reads(nil, 1, 0, 1),
			StepApply: reads(grant, 2, 0, 1),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.c.Name, func(t *testing.T) {
			results, err := RunComparison(context.Background(), opts, tc.c)
			if err != nil {
				t.Fatal(err)
			}
			if len(results) != len(siteSteps) {
				t.Fatalf("%d steps measured, want %d", len(results), len(siteSteps))
			}
			for _, r := range results {
				if !reflect.DeepEqual(r.Check.Calls, tc.checked[r.Step]) {
					t.Errorf("%s with the check: calls %v, want %v", r.Step, r.Check.Calls, tc.checked[r.Step])
				}
				if !reflect.DeepEqual(r.Unchecked.Calls, unchecked[r.Step]) {
					t.Errorf("%s without the check: calls %v, want %v", r.Step, r.Unchecked.Calls, unchecked[r.Step])
				}
				for _, side := range []Result{r.Check, r.Unchecked} {
					if len(side.Rounds) != tc.c.Rounds || side.Provider <= 0 {
						t.Errorf("%s: rounds %v, median %v", r.Step, side.Rounds, side.Provider)
					}
				}
			}
		})
	}
}

// TestAccFloorProvider runs the empty provider (internal/bench/floor) through the harness on the
// CLI under test: ManyGrants' floor configuration at 10 resources, step by step as Run measures
// it, each step succeeding, the no-op plan with nothing to change (the harness plans it with
// -detailed-exitcode, so a change would fail the step), the state holding the resources after the
// create and nothing after the destroy. Then a floor configuration that changes on every plan
// shows that a no-op plan with changes does fail its step, with exit status 2.
func TestAccFloorProvider(t *testing.T) {
	opts := Options{Terraform: testutil.Terraform(t), FloorDir: testutil.BuildFloorProvider(t), Parallelism: 10}
	ctx := context.Background()
	// floorWorkdir is sc's floor configuration in a working directory of the harness, with the
	// sandbox measure asks for its calls (the floor makes none).
	floorWorkdir := func(t *testing.T, sc Scenario) (*workdir, *sandbox.Server) {
		t.Helper()
		srv, url, vars, stop, err := start(ctx, opts, sc)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		w, err := newWorkdir(opts, url, sc, onFloor, vars)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.close)
		return w, srv
	}
	// stateList is the addresses of the state's resources, each checked to hold what a
	// bkiam_instance_grant of the configuration holds: its id and a policy id for its action.
	stateList := func(t *testing.T, w *workdir) []string {
		t.Helper()
		out, err := w.terraform(ctx, "show", "-json")
		if err != nil {
			t.Fatalf("terraform show -json: %v\n%s", err, out)
		}
		var state struct {
			Values struct {
				RootModule struct {
					Resources []struct {
						Address string
						Values  struct {
							ID       string
							Policies map[string]int64
						}
					} `json:"resources"`
				} `json:"root_module"`
			}
		}
		if err := json.Unmarshal(out, &state); err != nil {
			t.Fatalf("terraform show -json: %v\n%s", err, out)
		}
		var addresses []string
		for _, r := range state.Values.RootModule.Resources {
			if r.Values.ID != "bk_cmdb/user/alice" || len(r.Values.Policies) != 1 || r.Values.Policies["view_host"] == 0 {
				t.Errorf("%s: id %q, policies %v, want bk_cmdb/user/alice and a policy id of view_host", r.Address, r.Values.ID, r.Values.Policies)
			}
			addresses = append(addresses, r.Address)
		}
		return addresses
	}

	t.Run("ManyGrants", func(t *testing.T) {
		sc := ManyGrants(10, "")
		if sc.Floor == "" {
			t.Fatal("ManyGrants has no floor configuration")
		}
		w, srv := floorWorkdir(t, sc)
		for _, step := range allSteps {
			m, err := w.measure(ctx, step, srv, onFloor)
			if err != nil {
				t.Fatal(err)
			}
			if m.elapsed <= 0 || len(m.calls) != 0 {
				t.Errorf("%s: took %v, calls %v", step, m.elapsed, m.calls)
			}
			switch step {
			case StepCreateApply, StepChangeApply:
				if got := stateList(t, w); len(got) != sc.Size || !strings.HasPrefix(got[0], "floor_instance_grant.host[") {
					t.Errorf("after the %s the state holds %v, want %d floor_instance_grant.host", step, got, sc.Size)
				}
			case StepDestroy:
				if got := stateList(t, w); len(got) != 0 {
					t.Errorf("after the destroy the state holds %v", got)
				}
			}
		}
	})

	t.Run("a no-op plan with changes fails", func(t *testing.T) {
		sc := Scenario{Name: "always changing", Size: 1, Floor: `resource "floor_instance_grant" "now" {
  system    = timestamp()
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = var.instances }]
}
`}
		w, srv := floorWorkdir(t, sc)
		for _, step := range []string{StepCreatePlan, StepCreateApply} {
			if _, err := w.measure(ctx, step, srv, onFloor); err != nil {
				t.Fatal(err)
			}
		}
		_, err := w.measure(ctx, StepNoopPlan, srv, onFloor)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Fatalf("a no-op plan that changes something: %v, want exit status 2", err)
		}
	})
}

// TestMeasuredKeys checks that the scenarios of 1000 resources with and without batch_window
// share their terraform_data and empty provider figures (Options.Baselines), which differ by CLI
// and from each other.
func TestMeasuredKeys(t *testing.T) {
	merged, unmerged := ManyGrants(1000, ""), ManyGrants(1000, "0s")
	key := func(kind, cli string, sc Scenario, config string) string {
		return measuredKey(kind, cli, sc.Size, allSteps, config)
	}
	if key("floor", "tf", merged, merged.Floor) != key("floor", "tf", unmerged, unmerged.Floor) ||
		key("terraform_data", "tf", merged, merged.Baseline) != key("terraform_data", "tf", unmerged, unmerged.Baseline) {
		t.Error("the scenarios of 1000 resources do not share their floor and baseline")
	}
	if key("floor", "tf", merged, merged.Floor) == key("floor", "tofu", merged, merged.Floor) ||
		key("floor", "tf", merged, merged.Floor) == key("floor", "tf", ManyGrants(100, ""), merged.Floor) ||
		key("floor", "tf", merged, merged.Floor) == key("terraform_data", "tf", merged, merged.Floor) {
		t.Error("figures of another CLI, size or kind share a key")
	}
}
