package management_test

import (
	"context"
	"fmt"
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

// sandboxGroups is what the sandbox holds of a grade manager's groups:
// name → description, the sync group marked "(sync) <members>".
func sandboxGroups(sb *sandboxtest.Sandbox) map[string]string {
	out := map[string]string{}
	for _, gm := range sb.GradeManagers() {
		for _, g := range sb.Groups(gm.ID) {
			if g.Sync {
				var members []string
				for _, m := range g.Members {
					members = append(members, m.ID)
				}
				slices.Sort(members)
				out[g.Name] = "(sync) " + strings.Join(members, ",")
				continue
			}
			out[g.Name] = g.Description
		}
	}
	return out
}

func checkSandboxGroups(sb *sandboxtest.Sandbox, want map[string]string) func(*terraform.State) error {
	return func(*terraform.State) error {
		if got := sandboxGroups(sb); !mapsEqual(got, want) {
			return fmt.Errorf("the sandbox holds groups %v, want %v", got, want)
		}
		return nil
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// checkGradeManager is a step check of the one grade manager the sandbox
// holds.
func checkGradeManager(sb *sandboxtest.Sandbox, name, description string, members ...string) func(*terraform.State) error {
	return func(*terraform.State) error {
		gms := sb.GradeManagers()
		if len(gms) != 1 {
			return fmt.Errorf("the sandbox holds %d grade managers, want 1", len(gms))
		}
		gm := gms[0]
		got := slices.Sorted(slices.Values(gm.Members))
		if gm.Name != name || gm.Description != description || !slices.Equal(got, members) {
			return fmt.Errorf("the grade manager is %q %q %v, want %q %q %v", gm.Name, gm.Description, got, name, description, members)
		}
		return nil
	}
}

// TestAccGradeManagerAndGroups is the life of a grade manager with a sync
// group and three groups: create; update (the full replace keeps the sync
// group); a group renamed in place, a description cleared (a
// replacement); drift of each resource; objects deleted outside
// Terraform; the data source's exact name; import; destroy, which waits
// until IAM has carried out the grade manager's delete.
func TestAccGradeManagerAndGroups(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	client := acctest.OutsideClient(t, sb)
	lookup := `
data "bkiam_group" "dev" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = "dev"
  depends_on       = [bkiam_group.dev, bkiam_group.devops, bkiam_group.third]
}

data "bkiam_grade_manager" "platform" {
  system     = "bk_cmdb"
  name       = "platform"
  depends_on = [bkiam_grade_manager.platform]
}
`
	step1 := provider + acctest.GradeManagerHCL("platform", "", []string{"alice", "bob"}, true) + acctest.GroupsHCL([3]string{"dev", "dev", "developers"}, [3]string{"devops", "devops", ""}, [3]string{"third", "ops", "operators"}) + lookup
	step2 := provider + acctest.GradeManagerHCL("platform", "the platform team", []string{"alice", "carol"}, true) + acctest.GroupsHCL([3]string{"dev", "dev", "developers"}, [3]string{"devops", "devops", ""}, [3]string{"third", "quality", "testers"}) + lookup
	step3 := provider + acctest.GradeManagerHCL("platform", "the platform team", []string{"alice", "carol"}, true) + acctest.GroupsHCL([3]string{"dev", "dev", ""}, [3]string{"devops", "devops", ""}, [3]string{"third", "quality", "testers"}) + lookup
	gmID := func() int64 { return sb.GradeManagers()[0].ID }
	groupID := func(name string) int64 {
		for _, g := range sb.Groups(gmID()) {
			if g.Name == name {
				return g.ID
			}
		}
		t.Fatalf("no group %q", name)
		return 0
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: step1,
				Check: resource.ComposeTestCheckFunc(
					checkGradeManager(sb, "platform", "", "alice", "bob"),
					checkSandboxGroups(sb, map[string]string{"platform-admins": "(sync) alice,bob", "dev": "developers", "devops": "", "ops": "operators"}),
					func(st *terraform.State) error {
						return resource.TestCheckResourceAttr("data.bkiam_group.dev", "id", fmt.Sprint(groupID("dev")))(st)
					},
					resource.TestCheckResourceAttr("data.bkiam_group.dev", "description", "developers"),
					resource.TestCheckResourceAttrPair("data.bkiam_grade_manager.platform", "id", "bkiam_grade_manager.platform", "id"),
					resource.TestCheckResourceAttr("data.bkiam_grade_manager.platform", "members.#", "2"),
					resource.TestCheckResourceAttr("data.bkiam_grade_manager.platform", "members.0", "alice"),
					resource.TestCheckResourceAttr("data.bkiam_grade_manager.platform", "members.1", "bob"),
					resource.TestCheckResourceAttr("data.bkiam_grade_manager.platform", "sync_perm", "true"),
					resource.TestCheckResourceAttr("data.bkiam_grade_manager.platform", "description", ""),
				),
			},
			{
				// The grade manager's update is a full replace that keeps the
				// sync group (and syncs its members); a group renamed in place.
				Config: step2,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("bkiam_grade_manager.platform", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("bkiam_group.third", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr("data.bkiam_grade_manager.platform", "description", "the platform team"),
					resource.TestCheckResourceAttr("data.bkiam_grade_manager.platform", "members.1", "carol"),
					checkGradeManager(sb, "platform", "the platform team", "alice", "carol"),
					checkSandboxGroups(sb, map[string]string{"platform-admins": "(sync) alice,carol", "dev": "developers", "devops": "", "quality": "testers"}),
				),
			},
			{
				// IAM keeps a description an update sends empty: clearing it
				// replaces the group.
				Config: step3,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("bkiam_group.dev", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: checkSandboxGroups(sb, map[string]string{"platform-admins": "(sync) alice,carol", "dev": "", "devops": "", "quality": "testers"}),
			},
			{
				// Drift: the grade manager and a group changed outside Terraform.
				PreConfig: func() {
					ctx := context.Background()
					gm, err := client.GradeManager(ctx, "bk_cmdb", gmID())
					if err != nil {
						t.Fatal(err)
					}
					spec := bkiam.GradeManagerSpec{Name: gm.Name, Description: "changed outside", Members: gm.Members, SyncPerm: true,
						GroupName: "platform-admins", SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}},
						AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "create_biz"}}}}}
					if err := client.UpdateGradeManager(ctx, "bk_cmdb", gmID(), spec); err != nil {
						t.Fatal(err)
					}
					if err := client.UpdateGroup(ctx, "bk_cmdb", groupID("quality"), "quality-renamed", ""); err != nil {
						t.Fatal(err)
					}
				},
				Config:             step3,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: step3,
				Check: resource.ComposeTestCheckFunc(
					checkGradeManager(sb, "platform", "the platform team", "alice", "carol"),
					checkSandboxGroups(sb, map[string]string{"platform-admins": "(sync) alice,carol", "dev": "", "devops": "", "quality": "testers"}),
				),
			},
			{
				// A group deleted outside Terraform leaves state: the plan creates it.
				PreConfig: func() {
					if err := client.DeleteGroup(context.Background(), "bk_cmdb", groupID("devops")); err != nil {
						t.Fatal(err)
					}
				},
				Config:             step3,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: step3,
				Check:  checkSandboxGroups(sb, map[string]string{"platform-admins": "(sync) alice,carol", "dev": "", "devops": "", "quality": "testers"}),
			},
			{
				ResourceName: "bkiam_grade_manager.platform", ImportState: true, ImportStateVerify: true,
				ImportStateIdFunc: func(*terraform.State) (string, error) { return fmt.Sprintf("bk_cmdb/%d", gmID()), nil },
				// What IAM cannot read back comes from the configuration.
				ImportStateVerifyIgnore: []string{"authorization_scopes", "subject_scopes", "group_name", "timeouts"},
			},
		},
		CheckDestroy: func(*terraform.State) error {
			// The destroy waited until IAM carried out the grade manager's delete.
			if m := sb.Management(); len(m.GradeManagers) != 0 || len(m.Groups) != 0 {
				return fmt.Errorf("after destroy the sandbox holds %d grade managers and %d groups", len(m.GradeManagers), len(m.Groups))
			}
			return nil
		},
	})
}

// TestAccGradeManagerGone: a grade manager deleted outside Terraform
// leaves state, and so do its groups: the plan creates them all again.
func TestAccGradeManagerGone(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM answers for a deleted grade manager")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t, sandbox.WithGradeManagerDeleteDelay(0))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	client := acctest.OutsideClient(t, sb)
	config := provider + acctest.GradeManagerHCL("platform", "", []string{"alice"}, false) + acctest.GroupsHCL([3]string{"dev", "dev", ""})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					if err := client.DeleteGradeManager(context.Background(), "bk_cmdb", sb.GradeManagers()[0].ID); err != nil {
						t.Fatal(err)
					}
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("bkiam_grade_manager.platform", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("bkiam_group.dev", plancheck.ResourceActionCreate),
				}},
			},
			{Config: config, Check: checkSandboxGroups(sb, map[string]string{"dev": ""})},
		},
	})
}

// TestAccGradeManagerRefusals: what IAM refuses reaches the user with the
// fix: a group under a grade manager made in the IAM web UI (IAM's
// ownership 403: no creator record), a scope of a system the creator may
// not authorize (403), a grade manager whose name is taken (409, compared
// case-insensitively), and a group the data source cannot find. What IAM
// allows goes through: a group under a grade manager bk_job created, managed
// through bk_cmdb's path (IAM checks the creator, which the app is a client
// of, not the path's system). The bkiam_grade_manager data source finds the
// foreign grade manager only as the system that created it, and only by its
// exact name.
func TestAccGradeManagerRefusals(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM refuses and how the provider words it")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	client := acctest.OutsideClient(t, sb)
	ctx := context.Background()
	scope := []bkiam.AuthorizationScope{{System: "bk_job", Actions: []bkiam.Action{{ID: "view"}},
		Resources: []bkiam.PathResource{{System: "bk_job", Type: "job", Paths: [][]bkiam.PathNode{{{System: "bk_job", Type: "job", ID: "*"}}}}}}}
	foreign, err := client.CreateGradeManager(ctx, "bk_job", bkiam.GradeManagerSpec{Name: "Platform", Members: []string{"alice"},
		AuthorizationScopes: scope, SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		t.Fatal(err)
	}
	webUI, err := client.CreateGradeManager(ctx, "bk_job", bkiam.GradeManagerSpec{Name: "Made in the web UI", Members: []string{"alice"},
		AuthorizationScopes: scope, SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		t.Fatal(err)
	}
	webUIGroups, err := client.CreateGroups(ctx, "bk_job", fmt.Sprint(webUI), []bkiam.GroupSpec{{Name: "ops"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.ForgetCreator(webUI); err != nil {
		t.Fatal(err)
	}
	group := func(gm int64) string {
		return provider + fmt.Sprintf(`
resource "bkiam_group" "dev" {
  system           = "bk_cmdb"
  grade_manager_id = "%d"
  name             = "dev"
}
`, gm)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: group(webUI),
				ExpectError: acctest.PlanErrorPattern("Cannot create the group", fmt.Sprintf("Creating group \"dev\" under grade manager %d in bk_cmdb:", webUI),
					"HTTP 403", "since role is not created by system[bk_cmdb]",
					"IAM lets an app manage only the grade managers and groups that a system created through the management API, and only "+
						"when the app is a client of that system. This one has no such record: it was made in the IAM web UI, or it no longer exists."),
			},
			{
				Config: provider + fmt.Sprintf(`
resource "bkiam_group_permission" "ops" {
  system    = "bk_job"
  group_id  = "%d"
  actions   = ["view"]
  resources = [{ system = "bk_job", type = "job", instances = { "j1" = "job 1" } }]
}
`, webUIGroups[0]),
				ExpectError: acctest.PlanErrorPattern("HTTP 403", "since role is not created by system[bk_job]",
					"the group is gone, or its grade manager was made in the IAM web UI: IAM's management API manages only the groups of "+
						"grade managers a system created through it"),
			},
			{
				Config: group(foreign),
				Check: func(*terraform.State) error {
					if g := sb.Groups(foreign); len(g) != 1 || g[0].Name != "dev" {
						return fmt.Errorf("the groups of bk_job's grade manager: %+v", g)
					}
					return nil
				},
			},
			{
				// bk_sops may not put bk_job's actions in its grade managers' scopes.
				Config: provider + `
resource "bkiam_grade_manager" "sops" {
  system               = "bk_sops"
  name                 = "sops"
  members              = ["alice"]
  authorization_scopes = [{ system = "bk_job", actions = ["view"], resources = [{ system = "bk_job", type = "job", instances = [{ id = "*" }] }] }]
  subject_scopes       = [{ type = "*", id = "*" }]
}
`,
				ExpectError: acctest.PlanErrorPattern("Cannot create the grade manager", `Creating grade manager "sops" in bk_sops:`, "HTTP 403",
					"system[bk_sops] is not allow to operate system[bk_job]'s permission data",
					"An authorization scope names another system's actions. IAM lets a system put other systems' actions in its grade "+
						"managers' scopes only where its SystemAllowAuthSystem table allows it: ask the IAM administrators to allow it, or remove that scope."),
			},
			{
				Config: provider + acctest.GradeManagerHCL("platform", "", []string{"alice"}, false),
				ExpectError: acctest.PlanErrorPattern("Cannot create the grade manager", `Creating grade manager "platform" in bk_cmdb:`, "HTTP 409",
					"The name is taken: grade manager names are unique across IAM and group names within their grade manager (compared case-insensitively)."),
			},
			{
				Config: provider + fmt.Sprintf(`
data "bkiam_group" "missing" {
  system           = "bk_job"
  grade_manager_id = "%d"
  name             = "nobody"
}
`, foreign),
				ExpectError: acctest.PlanErrorPattern("No such group", fmt.Sprintf(`Grade manager %d of bk_job has no group named exactly "nobody"`, foreign)),
			},
			{
				Config: provider + "data \"bkiam_grade_manager\" \"theirs\" {\n  system = \"bk_job\"\n  name   = \"Platform\"\n}\n",
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr("data.bkiam_grade_manager.theirs", "id", fmt.Sprint(foreign)),
					resource.TestCheckResourceAttr("data.bkiam_grade_manager.theirs", "members.#", "1"),
					resource.TestCheckResourceAttr("data.bkiam_grade_manager.theirs", "sync_perm", "false"),
				),
			},
			{
				// IAM's own filter matches "platform" to "Platform"; the lookup is exact.
				Config: provider + "data \"bkiam_grade_manager\" \"theirs\" {\n  system = \"bk_job\"\n  name   = \"platform\"\n}\n",
				ExpectError: acctest.PlanErrorPattern("No such grade manager",
					`bk_job has created no grade manager named exactly "platform" through the management API. IAM lists to a system only the grade managers it created through the API (not those made in the web UI), and this lookup is exact where IAM's filter is not: check the name's case and spaces, and the system.`),
			},
			{
				// Only the system that created a grade manager sees it.
				Config:      provider + "data \"bkiam_grade_manager\" \"theirs\" {\n  system = \"bk_cmdb\"\n  name   = \"Platform\"\n}\n",
				ExpectError: acctest.PlanErrorPattern("No such grade manager", `bk_cmdb has created no grade manager named exactly "Platform"`),
			},
		},
	})
	if n := len(sb.GradeManagers()); n != 2 {
		t.Errorf("the sandbox holds %d grade managers, want only the two foreign ones", n)
	}
}

// TestAccGroupImport: a group is imported by SYSTEM/GRADE_MANAGER_ID/ID,
// and reads back whole.
func TestAccGroupImport(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	config := provider + acctest.GradeManagerHCL("platform", "", []string{"alice"}, false) + `
resource "bkiam_group" "dev" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = "dev"
  description      = "developers"
  readonly         = true
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, Check: checkSandboxGroups(sb, map[string]string{"dev": "developers"})},
			{
				ResourceName: "bkiam_group.dev", ImportState: true, ImportStateVerify: true,
				ImportStateIdFunc: func(st *terraform.State) (string, error) {
					gm := st.RootModule().Resources["bkiam_grade_manager.platform"].Primary.ID
					return fmt.Sprintf("bk_cmdb/%s/%s", gm, st.RootModule().Resources["bkiam_group.dev"].Primary.ID), nil
				},
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
	})
}

// TestAccGroupsForEach: a for_each of groups under a grade manager,
// through the CLI (terraform-plugin-testing cannot read a for_each's
// state back): created, one key removed and one added, an empty plan after
// each apply, and a destroy that leaves IAM empty.
func TestAccGroupsForEach(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the calls the provider sends for each group")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	sb := sandboxtest.Start(t, sandbox.WithGradeManagerDeleteDelay(0))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	config := func(groups map[string]string) string {
		var b strings.Builder
		b.WriteString(acctest.GradeManagerHCL("platform", "", []string{"alice"}, false))
		b.WriteString("\nresource \"bkiam_group\" \"team\" {\n  for_each = {\n")
		for _, name := range acctest.SortedKeys(groups) {
			fmt.Fprintf(&b, "    %q = %q\n", name, groups[name])
		}
		b.WriteString("  }\n  system           = \"bk_cmdb\"\n  grade_manager_id = bkiam_grade_manager.platform.id\n  name             = each.key\n  description      = each.value\n}\n")
		return b.String()
	}
	for _, groups := range []map[string]string{
		{"dev": "developers", "ops": "operators", "qa": "testers"},
		{"dev": "developers", "ops": "operators", "sec": "security"},
	} {
		w.Configure(provider, config(groups))
		w.MustRun("apply", "-auto-approve")
		if got := sandboxGroups(sb); !mapsEqual(got, groups) {
			t.Fatalf("the sandbox holds groups %v, want %v", got, groups)
		}
		if !w.PlanIsEmpty() {
			t.Fatal("the plan after the apply is not empty")
		}
	}
	w.MustRun("destroy", "-auto-approve")
	if m := sb.Management(); len(m.GradeManagers) != 0 || len(m.Groups) != 0 {
		t.Fatalf("after destroy the sandbox holds %d grade managers and %d groups", len(m.GradeManagers), len(m.Groups))
	}
}

// TestAccManagement_planTimeValidation: every mistake is refused at plan
// time, before any call.
func TestAccManagement_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	sb, provider := acctest.Target(t)
	test := acctest.PlanTimeTest(t, provider, acctest.ManagementValidationCases())
	test.CheckDestroy = func(*terraform.State) error {
		if sb != nil {
			if n := acctest.IAMCalls(sb); n != 0 {
				return fmt.Errorf("refused configurations sent %d requests", n)
			}
		}
		return nil
	}
	resource.Test(t, test)
}

// TestAccManagementNeedsTheGateway: with esb_url, a plan that creates a
// grade manager or a group, or reads either data source, fails before any
// call, naming the fix.
func TestAccManagementNeedsTheGateway(t *testing.T) {
	acctest.Parallel(t)
	sb := sandboxtest.Start(t)
	provider := acctest.Transports[acctest.ESBTransport].Block(sb.URL)
	want := acctest.PlanErrorPattern(acctest.ManagementCases()[0].Want...)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: provider + acctest.GradeManagerHCL("platform", "", []string{"alice"}, false), PlanOnly: true, ExpectError: want},
			{Config: provider + acctest.GroupsHCL([3]string{"dev", "dev", ""}) + acctest.GradeManagerHCL("platform", "", []string{"alice"}, false), PlanOnly: true, ExpectError: want},
			{Config: provider + `resource "bkiam_group_permission" "p" {
  system    = "bk_cmdb"
  group_id  = "4"
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "h" } }]
}
`, PlanOnly: true, ExpectError: want},
			{Config: provider + "data \"bkiam_group\" \"dev\" {\n  system = \"bk_cmdb\"\n  grade_manager_id = \"1\"\n  name = \"dev\"\n}\n", PlanOnly: true, ExpectError: want},
			{Config: provider + "data \"bkiam_grade_manager\" \"platform\" {\n  system = \"bk_cmdb\"\n  name = \"platform\"\n}\n", PlanOnly: true, ExpectError: want},
		},
	})
	if n := acctest.IAMCalls(sb); n != 0 {
		t.Errorf("the refused plans sent %d requests", n)
	}
}

// TestAccGradeManagerDeleteWaits: IAM deletes a grade manager in a
// background task. A destroy waits for it within timeouts.delete; when IAM
// takes longer, the destroy fails saying so, state keeps the grade
// manager, and the next destroy, once IAM is done, succeeds.
func TestAccGradeManagerDeleteWaits(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the provider's wait for IAM's background delete")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	sb := sandboxtest.Start(t, sandbox.WithNow(clock), sandbox.WithGradeManagerDeleteDelay(time.Hour))
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), strings.Replace(acctest.GradeManagerHCL("platform", "", []string{"alice"}, false), "  sync_perm", "  timeouts       = { delete = \"2s\" }\n  sync_perm", 1))
	w.MustRun("apply", "-auto-approve")
	out, code := w.Run("destroy", "-auto-approve")
	if code == 0 || !acctest.PlanErrorPattern("The grade manager is still there", "IAM accepted the delete of grade manager 1 in bk_cmdb, but still had it after 2s").MatchString(out) {
		t.Fatalf("the destroy should have timed out waiting for IAM (exit %d):\n%s", code, out)
	}
	if gms := sb.GradeManagers(); len(gms) != 1 || gms[0].DeleteAt == 0 {
		t.Fatalf("the sandbox should hold the grade manager, its delete pending: %+v", gms)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour) // IAM's task has run
	mu.Unlock()
	w.MustRun("destroy", "-auto-approve")
	if n := len(sb.GradeManagers()); n != 0 {
		t.Fatalf("the sandbox holds %d grade managers after the destroy", n)
	}
}

// TestAccManagementLostCreates: IAM carries out a create whose answer is
// lost (the connection reset after it), and the client's retry finds the
// name taken. The grade manager's and the group's creates find what IAM
// made, by exact name, and record it: one object in IAM, in state, and an
// empty plan.
func TestAccManagementLostCreates(t *testing.T) {
	testutil.SameOnEveryCLI(t, "how the provider finds what a lost create made")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	sb := sandboxtest.Start(t, sandbox.WithGradeManagerDeleteDelay(0))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	lost := sandbox.Faults{Drop: &sandbox.DropFault{Count: 1, Served: true}}
	for _, config := range []string{acctest.GradeManagerHCL("platform", "", []string{"alice"}, false), acctest.GradeManagerHCL("platform", "", []string{"alice"}, false) + acctest.GroupsHCL([3]string{"dev", "dev", "developers"})} {
		w.Configure(provider, config)
		if err := sb.SetFaults(lost); err != nil {
			t.Fatal(err)
		}
		// Without a refresh, the create is the step's first call.
		out := w.MustRun("apply", "-auto-approve", "-refresh=false")
		if !strings.Contains(out, "found after a lost answer") {
			t.Fatalf("the apply did not say it found what IAM made:\n%s", out)
		}
		if err := sb.SetFaults(sandbox.Faults{}); err != nil {
			t.Fatal(err)
		}
		if !w.PlanIsEmpty() {
			t.Fatal("the plan after the apply is not empty")
		}
	}
	if n := len(sb.GradeManagers()); n != 1 {
		t.Fatalf("the sandbox holds %d grade managers, want 1", n)
	}
	if got := sandboxGroups(sb); !mapsEqual(got, map[string]string{"dev": "developers"}) {
		t.Fatalf("the sandbox holds groups %v", got)
	}
	w.MustRun("destroy", "-auto-approve")
	if m := sb.Management(); len(m.GradeManagers) != 0 || len(m.Groups) != 0 {
		t.Fatalf("after destroy the sandbox holds %d grade managers and %d groups", len(m.GradeManagers), len(m.Groups))
	}
}

// TestAccGradeManagerSyncGroupRefused: sync_perm with a member IAM's
// backend does not know. IAM commits the grade manager, then its backend
// refuses the sync group's member with a 1902000 (internal/bkiam's package
// doc, "The management API"). The apply fails naming the member and the
// fix, with the grade manager recorded (tainted), not lost; with the
// member fixed, the next apply replaces it with one that has its sync
// group, and the plan after is empty. A sync group deleted outside
// Terraform later is seen by the refresh and built again.
func TestAccGradeManagerSyncGroupRefused(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM refuses and how the provider words it")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t, sandbox.WithGradeManagerDeleteDelay(0))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	hasSyncGroup := func(*terraform.State) error {
		m := sb.Management()
		if len(m.GradeManagers) != 1 || len(m.Groups) != 1 || !m.Groups[0].Sync {
			return fmt.Errorf("%d grade managers, groups %+v, want one with its sync group", len(m.GradeManagers), m.Groups)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: provider + acctest.GradeManagerHCL("platform", "", []string{"alice", "nobody"}, true),
				ExpectError: acctest.PlanErrorPattern("Grade manager created without its sync group", "then failed to build its sync group",
					"id=`nobody`", "IAM's backend does not know a user or department", "recorded in state, tainted"),
			},
			{
				Config:           provider + acctest.GradeManagerHCL("platform", "", []string{"alice"}, true),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            hasSyncGroup,
			},
			{
				// The sync group deleted outside Terraform: IAM still says
				// sync_perm, the refresh looks for the group, and the plan
				// sends sync_perm again, which builds it.
				PreConfig: func() {
					if err := acctest.OutsideClient(t, sb).DeleteGroup(context.Background(), "bk_cmdb", sb.Management().Groups[0].ID); err != nil {
						t.Fatal(err)
					}
				},
				Config: provider + acctest.GradeManagerHCL("platform", "", []string{"alice"}, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("bkiam_grade_manager.platform", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: hasSyncGroup,
			},
		},
	})
}

// TestAccGradeManagerUnlimitedScope: all_instances declares IAM's unlimited
// scope (the type with no paths), which admits every instance however it
// is given; { id = "*" } admits only instances given by their id alone
// (internal/bkiam's package doc, "The management API"). A group permission
// on a host under business 2 is refused under the one and granted under
// the other.
func TestAccGradeManagerUnlimitedScope(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM makes of the scope")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	scope := func(resources string) string {
		return fmt.Sprintf(`
resource "bkiam_grade_manager" "platform" {
  system               = "bk_cmdb"
  name                 = "platform"
  members              = ["alice"]
  authorization_scopes = [{ system = "bk_cmdb", actions = ["view_host"], resources = [{ system = "bk_cmdb", type = "host", %s }] }]
  subject_scopes       = [{ type = "*", id = "*" }]
}

resource "bkiam_group" "dev" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = "dev"
}
`, resources)
	}
	underBiz := map[string]string{"/bk_cmdb,biz,2/bk_cmdb,host,5/": "host5"}
	// The scope widens in the apply that uses it: depends_on orders the grant after it (the
	// resource docs say so).
	permission := strings.Replace(acctest.PermissionHCL("hosts", []string{"view_host"}, underBiz), "  group_id = bkiam_group.dev.id\n",
		"  group_id = bkiam_group.dev.id\n  depends_on = [bkiam_grade_manager.platform]\n", 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      provider + scope(`instances = [{ id = "*" }]`) + permission,
				ExpectError: regexp.MustCompile(`outside the grade\s+manager's authorization\s+scope`),
			},
			{
				Config:           provider + scope(`all_instances = true`) + permission,
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            checkGroupHeld(sb, map[string][]string{"view_host": {"/bk_cmdb,biz,2/bk_cmdb,host,5/"}}),
			},
		},
	})
}

// TestAccGradeManagerLoneStarWithSyncPerm: with sync_perm, a scope instance
// { id = "*" } is warned of at plan, naming all_instances: IAM grants the
// sync group the scope as written, where a lone * is the literal id
// (internal/bkiam's package doc, "The management API"). The warning shows
// once; all_instances and a scope without sync_perm plan without it.
func TestAccGradeManagerLoneStarWithSyncPerm(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM makes of the scope")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	sb := sandboxtest.Start(t)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	const warning = "The sync group gets the literal id *"
	lone := strings.Replace(acctest.GradeManagerHCL("platform", "", []string{"alice"}, true), `instances = [{ id = "*", ancestors = [{ system = "bk_cmdb", type = "biz", id = "2" }] }]`, `instances = [{ id = "*" }]`, 1)
	for _, tc := range []struct {
		name, config string
		warned       bool
	}{
		{"lone * with sync_perm", lone, true},
		{"all_instances with sync_perm", strings.Replace(lone, `instances = [{ id = "*" }]`, "all_instances = true", 1), false},
		{"lone * without sync_perm", strings.Replace(lone, "sync_perm      = true", "sync_perm      = false", 1), false},
	} {
		w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), tc.config)
		out := w.MustRun("plan", "-no-color")
		if got := strings.Count(out, warning) == 1 && acctest.PlanErrorPattern(warning, "write all_instances = true (IAM's unlimited scope)").MatchString(out); got != tc.warned {
			t.Errorf("%s: warned %t, want %t:\n%s", tc.name, got, tc.warned, out)
		}
	}
}

// TestAccGradeManagerQuota: a create past the grade managers a system may
// create through the API (a site setting, 500 by default) fails with IAM's
// message and the fix (internal/bkiam's package doc, "The management API").
func TestAccGradeManagerQuota(t *testing.T) {
	testutil.SameOnEveryCLI(t, "IAM's quota")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	m := sandbox.DefaultModel()
	m.Limits.GradeManagersPerSystem = 1
	sb := sandboxtest.Start(t, sandbox.WithModel(m))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	if _, err := acctest.OutsideClient(t, sb).CreateGradeManager(context.Background(), "bk_cmdb", bkiam.GradeManagerSpec{Name: "first",
		Members: []string{"alice"}, SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "create_biz"}}, Resources: []bkiam.PathResource{}}}}); err != nil {
		t.Fatal(err)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: provider + acctest.GradeManagerHCL("platform", "", []string{"alice"}, false),
			ExpectError: acctest.PlanErrorPattern("Cannot create the grade manager", "HTTP 400", "code 1902412",
				"The system has created as many grade managers through the API as IAM allows (the SaaS setting "+
					"BKAPP_DEFAULT_GRADE_MANAGER_OF_SYSTEM_LIMIT, 500 by default, or the system's entry in "+
					"BKAPP_GRADE_MANAGER_OF_SPECIFIED_SYSTEMS_LIMIT). Delete grade managers the system no longer needs, or ask the "+
					"IAM administrators to raise the limit."),
		}},
	})
}

// TestAccGradeManagerRenameKeepsTheSyncGroupKnown (issue 53): IAM keeps a
// sync group's name when its grade manager is renamed, unless the update
// names it, and the lists then told the sync group by IAM's default name
// (they still do where the app may not read IAM's mark): after a rename, a
// query offered it as an ordinary group. Renaming a grade
// manager with sync_perm and no group_name now plans a warning naming the
// sync group's new name, and the apply renames it to that default; the
// plan after is empty.
func TestAccGradeManagerRenameKeepsTheSyncGroupKnown(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	sb := sandboxtest.Start(t)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	config := func(name string) string {
		return strings.Replace(acctest.GradeManagerHCL(name, "", []string{"alice"}, true), "  group_name     = \"platform-admins\"\n", "", 1)
	}
	groups := func() []string {
		var names []string
		for _, g := range sb.Management().Groups {
			names = append(names, g.Name)
		}
		return names
	}
	w.Configure(provider, config("platform"))
	w.MustRun("apply", "-auto-approve")
	if got := groups(); len(got) != 1 || got[0] != "platform administrator group" {
		t.Fatalf("after the create IAM holds the groups %q, want the sync group \"platform administrator group\"", got)
	}
	w.Configure(provider, config("platform-ops"))
	if out := w.MustRun("plan"); !acctest.PlanErrorPattern("Sync group renamed with the grade manager",
		`renames the grade manager's sync group from "platform administrator group" to "platform-ops administrator group"`).MatchString(out) {
		t.Errorf("the rename's plan does not say the sync group is renamed:\n%s", out)
	}
	w.MustRun("apply", "-auto-approve")
	if got := groups(); len(got) != 1 || got[0] != "platform-ops administrator group" {
		t.Errorf("after the rename IAM holds the groups %q, want the sync group renamed \"platform-ops administrator group\"", got)
	}
	if !w.PlanIsEmpty() {
		t.Error("the plan after the rename is not empty")
	}
}
