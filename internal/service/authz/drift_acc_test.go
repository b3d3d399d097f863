package authz_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccInstanceGrant_driftDetection: with detect_drift, instances and a
// whole action revoked behind Terraform's back show in the plan as
// granted again, and the apply restores exactly them; a revoke of an
// instance the configuration never had changes nothing; a grant that
// expired in IAM shows as gone.
func TestAccInstanceGrant_driftDetection(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	provider := acctest.DriftProvider(sb, "")
	calls := acctest.NewCallCounter(sb)
	ids := sandboxtest.IDRange(1, 6)
	both := []string{"edit_host", "view_host"}
	cfg := acctest.HostGrant{Actions: both, Ids: ids}.Config(provider)
	all := map[string][]string{"edit_host": sandboxtest.HostPaths(ids...), "view_host": sandboxtest.HostPaths(ids...)}

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					// A grant of the configuration's action on an instance
					// it never had, made outside Terraform.
					acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "alice", []string{"view_host"}, []string{"99"}, bkiam.PermanentExpiry)
				},
				Config:           cfg,
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{
					"edit_host": sandboxtest.HostPaths(ids...), "view_host": sandboxtest.HostPaths(append([]string{"99"}, ids...)...)}),
			},
			{
				// Revoking what the configuration never had is not drift.
				PreConfig: func() {
					acctest.ChangeHostsOutside(t, sb, bkiam.OperationRevoke, "alice", []string{"view_host"}, []string{"99"}, 0)
					calls.Reset()
				},
				Config:   cfg,
				PlanOnly: true,
			},
			{
				// Two instances of view_host and the whole of edit_host
				// are revoked outside: the plan grants exactly those
				// again, and the apply sends only them.
				PreConfig: func() {
					acctest.ChangeHostsOutside(t, sb, bkiam.OperationRevoke, "alice", []string{"view_host"}, []string{"2", "3"}, 0)
					acctest.ChangeHostsOutside(t, sb, bkiam.OperationRevoke, "alice", []string{"edit_host"}, ids, 0)
					calls.Reset()
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(acctest.GrantAddr, plancheck.ResourceActionUpdate),
						// The refreshed state lacks exactly what was revoked.
						refreshedGrant{actions: []string{"view_host"}, ids: []string{"1", "4", "5"}},
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", all), func(*terraform.State) error {
					// Only what was lost: edit_host on 5 and view_host on 2.
					got := calls.SinceLast()
					if got["batch_instance:grant"] < 1 || got["batch_instance:grant"] > 2 || got["batch_instance:revoke"] != 0 {
						return fmt.Errorf("calls %v, want one or two grants and no revoke", got)
					}
					// The refresh reads the lists, one scan per action
					// whatever the resources; the apply's re-plan asks IAM
					// about the one user for the expiry check (its process
					// has no list read), no more.
					if got["policy_query_by_actions"] > 1 || got["policy_get"] > 1 {
						return fmt.Errorf("calls %v: a policy read per resource", got)
					}
					return nil
				},
				),
			},
			{
				// The grant is revoked whole and granted again outside,
				// expiring in a moment: once expired, IAM holds nothing,
				// and the plan grants it all again.
				PreConfig: func() {
					acctest.ChangeHostsOutside(t, sb, bkiam.OperationRevoke, "alice", both, ids, 0)
					acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "alice", both, ids, time.Now().Add(2*time.Second).Unix())
					time.Sleep(3 * time.Second)
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(acctest.GrantAddr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkExpiry(sb, bkiam.PermanentExpiry),
			},
		},
		CheckDestroy: acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", nil),
	})
}

// TestAccInstanceGrant_driftImport: with detect_drift, an import by
// actions and resource type reads what the subject holds, and the next
// plan of a matching configuration (ids as names: IAM keeps none) is
// empty.
func TestAccInstanceGrant_driftImport(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	provider := acctest.DriftProvider(sb, "")
	ids := sandboxtest.IDRange(1, 4)
	cfg := acctest.HostGrant{Actions: []string{"edit_host", "view_host"}, Ids: ids, Name: func(id string) string { return id }}.Config(provider)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "alice", []string{"edit_host", "view_host"}, ids, bkiam.PermanentExpiry)
				},
				Config: cfg + `
import {
  to = bkiam_instance_grant.test
  id = "bk_cmdb/user/alice/view_host,edit_host/bk_cmdb/host"
}
`,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(acctest.GrantAddr, plancheck.ResourceActionNoop)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// TestAccCreatorGrant_drift: a creator grant of a mini app under a
// project, whose view action collapses user path grants to the id in
// IAM, is still seen as held; a path revoked outside shows as registered
// again.
func TestAccCreatorGrant_drift(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	provider := acctest.DriftProvider(sb, "")
	cfg := provider + `
resource "bkiam_creator_grant" "test" {
  system  = "bk_sops"
  type    = "mini_app"
  creator = "alice"
  actions = ["mini_app_edit", "mini_app_view"]
  instances = {
    "/bk_sops,project,project1/bk_sops,mini_app,m1/" = "mini app 1"
    "/bk_sops,project,project1/bk_sops,mini_app,m2/" = "mini app 2"
  }
}
`
	revokePath := func(id string) {
		_, err := acctest.OutsideClient(t, sb).BatchPath(context.Background(), bkiam.BatchPathRequest{
			System: "bk_sops", Operate: bkiam.OperationRevoke, Subject: bkiam.Subject{Type: "user", ID: "alice"},
			Actions: []bkiam.Action{{ID: "mini_app_edit"}},
			Resources: []bkiam.PathResource{{System: "bk_sops", Type: "mini_app", Paths: [][]bkiam.PathNode{{
				{System: "bk_sops", Type: "project", ID: "project1", Name: "Project One"}, {System: "bk_sops", Type: "mini_app", ID: id, Name: id},
			}}}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
			{
				PreConfig: func() { revokePath("m2") },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("bkiam_creator_grant.test", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// TestAccDriftNeedsTheGateway: detect_drift with esb_url is refused, with
// the reason.
func TestAccDriftNeedsTheGateway(t *testing.T) {
	acctest.Parallel(t)
	sb := sandboxtest.Start(t)
	provider := strings.Replace(acctest.Transports[acctest.ESBTransport].Block(sb.URL), "  max_retries = 2\n", "  max_retries = 2\n  detect_drift = true\n", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      acctest.HostGrant{Actions: []string{"view_host"}, Ids: []string{"1"}}.Config(provider),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)detect_drift needs apigw_url.*only\s+through\s+the\s+API\s+gateway`),
		}},
	})
}

// TestAccDriftCallCounts: a refresh of 200 resources of different
// subjects on one action, among 1 400 policies of that action, reads the
// action's policy list once, in ceil(1400/500) = 3 pages: never a call per
// resource.
func TestAccDriftCallCounts(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the calls the provider's drift detection sends")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	raw, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "internal", "sandbox", "default_model.json"))
	if err != nil {
		t.Fatal(err)
	}
	var model map[string]any
	if err := json.Unmarshal(raw, &model); err != nil {
		t.Fatal(err)
	}
	users, _ := model["users"].([]any)
	const managed, others = 200, 1200
	for i := range managed + others {
		users = append(users, fmt.Sprintf("u%d", i))
	}
	model["users"] = users
	raw, _ = json.Marshal(model)
	m, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	sb := sandboxtest.Start(t, sandbox.WithModel(m))
	// The other 1 200 subjects' policies, granted outside Terraform.
	client := acctest.OutsideClient(t, sb)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := managed; i < managed+others; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, err := client.BatchInstance(context.Background(), bkiam.BatchInstanceRequest{
				System: "bk_cmdb", Operate: bkiam.OperationGrant, ExpiredAt: bkiam.PermanentExpiry,
				Subject: bkiam.Subject{Type: "user", ID: fmt.Sprintf("u%d", i)}, Actions: []bkiam.Action{{ID: "view_host"}},
				Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: "1", Name: "host1"}}}},
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.DriftProvider(sb, ""), fmt.Sprintf(`
resource "bkiam_instance_grant" "u" {
  for_each = toset([for i in range(%d) : "u${i}"])
  system   = "bk_cmdb"
  subject  = { type = "user", id = each.key }
  actions  = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "7" = "host7" } }]
}
`, managed))
	w.MustRun("apply", "-auto-approve")
	before := sb.Stats().Requests
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the apply is not empty")
	}
	after := sb.Stats().Requests
	lists, gets := after["policy_list"]-before["policy_list"], after["policy_get"]-before["policy_get"]
	t.Logf("a refresh of %d resources among %d policies: %d policy_list, %d policy_get calls", managed, managed+others, lists, gets)
	if lists > 3 || gets != 0 || lists == 0 {
		t.Fatalf("the refresh made %d policy_list and %d policy_get calls, want at most 3 list calls and no get", lists, gets)
	}

	// A revoke behind Terraform's back shows for that subject alone.
	acctest.ChangeHostsOutside(t, sb, bkiam.OperationRevoke, "u42", []string{"view_host"}, []string{"7"}, 0)
	out, code := w.Run("plan", "-detailed-exitcode")
	if code != 2 || !strings.Contains(out, `bkiam_instance_grant.u["u42"] will be created`) || strings.Count(out, "will be created") != 1 {
		t.Fatalf("the plan after u42's revoke (exit %d) does not re-grant u42 alone:\n%s", code, out)
	}
}

// TestAccDriftReadErrors: a read that IAM refuses (here: an app that is
// not a client of the system) is an error naming the route and the code,
// and drops nothing from state.
func TestAccDriftReadErrors(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what a failed read makes the provider keep")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	ids := sandboxtest.IDRange(1, 4)
	good := acctest.HostGrant{Actions: []string{"view_host"}, Ids: ids}.Config(acctest.DriftProvider(sb, ""))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: good, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
			{
				Config:   acctest.HostGrant{Actions: []string{"view_host"}, Ids: ids}.Config(acctest.OutsiderProvider(acctest.DriftProvider(sb, ""))),
				PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Cannot read grants back from IAM.*GET /api/v1/systems/bk_cmdb/policies.*` +
					`code\s+1901401.*State\s+is\s+kept\s+as\s+it\s+was`),
			},
			{
				// The state still records everything: nothing to do.
				Config:   good,
				PlanOnly: true,
				Check:    acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", map[string][]string{"view_host": sandboxtest.HostPaths(ids...)}),
			},
		},
	})
}

// refreshedGrant is a plan check: the grant's refreshed state, the plan's
// "before", holds these actions over these instances.
type refreshedGrant struct{ actions, ids []string }

func (c refreshedGrant) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != acctest.GrantAddr {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		var actions, ids []string
		for _, a := range before["actions"].([]any) { //nolint:forcetypeassert // the schema's set of strings
			actions = append(actions, a.(string)) //nolint:forcetypeassert // the schema's set of strings
		}
		resources, _ := before["resources"].([]any)
		for _, r := range resources {
			instances, _ := r.(map[string]any)["instances"].(map[string]any) //nolint:forcetypeassert // the schema's object
			for id := range instances {
				ids = append(ids, id)
			}
		}
		slices.Sort(actions)
		slices.Sort(ids)
		if !slices.Equal(actions, c.actions) || !slices.Equal(ids, c.ids) {
			resp.Error = fmt.Errorf("the refreshed grant holds %v on %v, want %v on %v", actions, ids, c.actions, c.ids)
		}
		return
	}
	resp.Error = fmt.Errorf("no change planned for %s", acctest.GrantAddr)
}

// TestAccDriftShapes: with detect_drift, a group's grant, a combined
// resource and an action related to no resource type are seen as held
// after their apply (an empty plan); a combination cut into outside
// Terraform counts as gone whole, and the plan grants it again.
func TestAccDriftShapes(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the provider's reading of IAM's expressions")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	cfg := acctest.DriftProvider(sb, "") + `
resource "bkiam_instance_grant" "group" {
  system    = "bk_cmdb"
  subject   = { type = "group", id = "1" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1", "2" = "host2" } }]
}

resource "bkiam_instance_grant" "combined" {
  system  = "bk_cmdb"
  subject = { type = "user", id = "bob" }
  actions = ["edit_biz_host"]
  resources = [
    { system = "bk_cmdb", type = "biz", instances = { "1" = "biz1" } },
    { system = "bk_cmdb", type = "host", instances = { "7" = "host7", "8" = "host8" } },
  ]
}

resource "bkiam_instance_grant" "no_type" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "carol" }
  actions   = ["create_biz"]
  resources = []
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply},
			{
				// Bob's combination is revoked outside. (A revoke of a
				// part of it, host 8 alone, would change nothing: IAM
				// removes only the stored combinations the revoked one
				// fully contains.)
				PreConfig: func() {
					_, err := acctest.OutsideClient(t, sb).BatchInstance(context.Background(), bkiam.BatchInstanceRequest{
						System: "bk_cmdb", Operate: bkiam.OperationRevoke, Subject: bkiam.Subject{Type: "user", ID: "bob"},
						Actions: []bkiam.Action{{ID: "edit_biz_host"}},
						Resources: []bkiam.InstanceResource{
							{System: "bk_cmdb", Type: "biz", Instances: []bkiam.Instance{{ID: "1", Name: "biz1"}}},
							{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: "7", Name: "host7"}, {ID: "8", Name: "host8"}}},
						},
					})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("bkiam_instance_grant.combined", plancheck.ResourceActionCreate),
						plancheck.ExpectResourceAction("bkiam_instance_grant.group", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction("bkiam_instance_grant.no_type", plancheck.ResourceActionNoop),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: acctest.CheckHeld(sb, "bk_cmdb", "user", "bob", map[string][]string{
					"edit_biz_host": {"/bk_cmdb,biz,1/ & " + strings.Join(sandboxtest.HostPaths("7", "8"), " & ")}}),
			},
		},
	})
}

// TestAccInstanceGrantIDsWithCommas: an instance id may hold a comma (IAM
// takes any string), and the one id "a,b" is not the two ids "a" and "b".
// With edit_host revoked outside on "a,b" and view_host on "a" and "b",
// the apply grants each action exactly what it lacks: two calls, where
// sharing one call by the ids joined with commas granted one action's
// instances to both and left the plan after it non-empty.
func TestAccInstanceGrantIDsWithCommas(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the provider's encoding of ids")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	ids := []string{"a", "a,b", "b"}
	cfg := acctest.HostGrant{Actions: []string{"edit_host", "view_host"}, Ids: ids}.Config(acctest.DriftProvider(sb, ""))
	all := map[string][]string{"edit_host": sandboxtest.HostPaths(ids...), "view_host": sandboxtest.HostPaths(ids...)}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: cfg, ConfigPlanChecks: acctest.EmptyPlanAfterApply, Check: acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", all)},
			{
				PreConfig: func() {
					acctest.ChangeHostsOutside(t, sb, bkiam.OperationRevoke, "alice", []string{"edit_host"}, []string{"a,b"}, 0)
					acctest.ChangeHostsOutside(t, sb, bkiam.OperationRevoke, "alice", []string{"view_host"}, []string{"a", "b"}, 0)
				},
				Config:           cfg,
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", all),
			},
		},
	})
}
