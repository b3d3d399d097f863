package bench

import (
	"context"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestDBMModel checks the generated system of DBM's size against what the scenarios say of it:
// 500 actions, of which 360 relate to a type of bk_cmdb (asked alone by the expiry check and the
// reads), in 14 grants that cover each action once.
func TestDBMModel(t *testing.T) {
	m, err := dbmModel()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	elsewhere := 0
	for _, sys := range m.Systems {
		if sys.ID != dbmSystem {
			continue
		}
		for _, a := range sys.Actions {
			ids = append(ids, a.ID)
			if slices.ContainsFunc(a.RelatedTypes, func(r string) bool { return strings.HasPrefix(r, "bk_cmdb:") }) {
				elsewhere++
			}
		}
	}
	if len(ids) != dbmActionCount || elsewhere != 360 {
		t.Errorf("%d actions, %d related to bk_cmdb's types; want %d and 360", len(ids), elsewhere, dbmActionCount)
	}
	granted := dbmAllActions()
	slices.Sort(ids)
	if !slices.Equal(granted, ids) || len(dbmGrants()) != 14 {
		t.Errorf("the %d grants hold %d actions, want the system's %d", len(dbmGrants()), len(granted), len(ids))
	}
}

// TestAccDBMCallCounts pins the IAM calls of issue 61's system of DBM's size
// (dbmModel: 500 actions, 360 of them related to bk_cmdb's biz or host), through the harness.
// The expiry check asks IAM about the user once per provider process and grant: an action
// related to another system's type alone (the single-action query, policy_query: 300 + 30 + 30 =
// 360), the others in batches of ten per grant (policy_query_by_actions: two for each of the 10
// cluster grants of 13 actions, one for the 10 actions related to no type: 21). Where the user
// holds nothing live of an action, it reads the action's policy list too (policy_list, one page
// here): 500 for a first grant. The model is read once per process (model_query). The reads of
// the data sources ask the same per action, for bkiam_effective_permissions and
// bkiam_user_access each (720 and 28, their actions in one question each: 140 in batches of
// ten), beside the model (bkiam_system's, shared with check_model) and the user's groups.
func TestAccDBMCallCounts(t *testing.T) {
	if os.Getenv("BKIAM_BENCH_PINS") == "" {
		t.Skip("make bench runs it (BKIAM_BENCH_PINS=1): 500 actions through a CLI took over 100 s of make test's " +
			"Terraform 1.16 pass, whose budget is spent (docs/development.md)")
	}
	testutil.SameOnEveryCLI(t, "the calls per provider process are the provider's; how many processes each CLI's walk starts "+
		"is pinned on every CLI by TestAccScenarioCallCounts and TestAccSiteCallCounts")
	// The counts alone: no terraform_data baseline.
	opts := Options{Terraform: testutil.Terraform(t), ProviderDir: testutil.BuildProvider(t), Parallelism: 10, SkipBaseline: true}
	ctx := context.Background()
	// check is the expiry check's calls in processes provider processes, lists lists each.
	check := func(calls map[string]int, processes, lists int) map[string]int {
		out := maps.Clone(calls)
		for k, n := range map[string]int{"policy_query": 360 * processes, "policy_query_by_actions": 21 * processes, "policy_list": lists * processes} {
			if n > 0 {
				out[k] += n
			}
		}
		return out
	}
	model := func(n int) map[string]int { return map[string]int{"model_query": n} }
	withGrants := func(calls map[string]int, kinds ...string) map[string]int {
		out := maps.Clone(calls)
		for _, k := range kinds {
			out[k] = 14
		}
		return out
	}

	t.Run("grants", func(t *testing.T) {
		results, err := Run(ctx, opts, DBMGrants(3))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]map[string]int{
			// A first grant: every list read; an apply of the saved plan is one process.
			StepCreatePlan:  check(model(1), 1, 500),
			StepCreateApply: check(withGrants(model(1), "batch_instance:grant"), 1, 500),
			StepNoopPlan:    {},
			// One business or cluster of 3 replaced in the 13 grants with var.instances: a
			// grant and a revoke each; alice holds every action now, so no list is read, and
			// the grant of the actions related to no type is not planned again (20 batches).
			StepChangeApply: {"batch_instance:grant": 13, "batch_instance:revoke": 13, "model_query": 2,
				"policy_query": 720, "policy_query_by_actions": 40},
			StepDestroy: {"batch_instance:revoke": 14},
		}
		for _, r := range results {
			if !reflect.DeepEqual(r.Calls, want[r.Step]) {
				t.Errorf("%s: calls %v, want %v", r.Step, r.Calls, want[r.Step])
			}
		}
	})

	t.Run("reads", func(t *testing.T) {
		results, err := Run(ctx, opts, DBMReads())
		if err != nil {
			t.Fatal(err)
		}
		// The model once, the user's groups (bkiam_effective_permissions' check that IAM knows
		// the user, bkiam_user_access's groups: the backend's user-groups route and the
		// management API's, the admin API tried first), and 360 + 14 queries for each.
		want := map[string]int{"model_query": 1, "policy_query": 720, "policy_query_by_actions": 28,
			"user_groups": 3, "admin:subject_groups": 1}
		if len(results) != 1 || !reflect.DeepEqual(results[0].Calls, want) {
			t.Errorf("calls %v, want %v", results[0].Calls, want)
		}
	})
}
