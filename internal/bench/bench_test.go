package bench

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"testing"

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
	opts := Options{Terraform: testutil.Terraform(t), ProviderDir: testutil.BuildProvider(t), Parallelism: 10}
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
			}
		})
	}
}

// TestAccSiteCallCounts pins the IAM calls of issue 51's site
// (SiteComparison) on a small site, in two rounds: with the check, a plan
// that grants alice one more host asks IAM about alice once and reads her
// one row by id, however large the site; a first grant to bob, who holds
// nothing of the action, reads the action's whole list (ceil(policies /
// 500) pages) for a policy that expired within the day. The apply plans
// again in a second process, which reads the same before it writes. With
// expiry_conflicts = "off" only the model is read.
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
		{SiteComparison(policies, true, 2), map[string]map[string]int{
			StepPlan:  reads(nil, 1, 0, pages),
			StepApply: reads(grant, 2, 0, pages),
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
					if len(side.Rounds) != 2 || side.Provider <= 0 {
						t.Errorf("%s: rounds %v, median %v", r.Step, side.Rounds, side.Provider)
					}
				}
			}
		})
	}
}
