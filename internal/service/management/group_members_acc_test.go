package management_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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

// newGroup creates, outside Terraform, a grade manager of bk_cmdb and a
// group under it, and returns the group's id.
func newGroup(t *testing.T, c *bkiam.Client, name string) int64 {
	t.Helper()
	_, id := acctest.OutsideGroup(t, c, name+"-managers", name)
	return id
}

// checkMembers is a step check: the group holds exactly want in the
// sandbox, member "type:id" → expiry.
func checkMembers(sb *sandboxtest.Sandbox, group int64, want map[string]int64) func(*terraform.State) error {
	return func(*terraform.State) error {
		got := map[string]int64{}
		for _, m := range sb.Members(group) {
			got[m.Type+":"+m.ID] = m.ExpiredAt
		}
		if !maps.Equal(got, want) {
			return fmt.Errorf("group %d holds %v, want %v", group, got, want)
		}
		return nil
	}
}

// TestAccGroupMembers is the lifecycle of a group's members: create,
// add and remove, an expiry raised in place and one lowered (delete and
// re-add, said in the plan), members changed outside Terraform (drift),
// import, and destroy, with the calls each step sends.
func TestAccGroupMembers(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	client := acctest.OutsideClient(t, sb)
	group := newGroup(t, client, "dev")
	calls := acctest.NewCallCounter(sb)
	soon := time.Now().Add(time.Hour).Truncate(time.Second).UTC()
	later := soon.Add(24 * time.Hour)
	rfc := func(t time.Time) string { return t.Format(time.RFC3339) }
	perm := bkiam.PermanentExpiry
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: calls.Reset,
				Config:    acctest.GroupMembersConfig(provider, group, map[string]string{"alice": "", "bob": rfc(soon)}, map[string]string{"1": ""}),
				Check: resource.ComposeTestCheckFunc(
					checkMembers(sb, group, map[string]int64{"user:alice": perm, "user:bob": soon.Unix(), "department:1": perm}),
					resource.TestCheckResourceAttr(acctest.MembersAddr, "id", fmt.Sprintf("bk_cmdb/%d", group)),
					// The create reads the group, adds in one call per expiry and
					// reads the group back. (The checks run after the apply, before
					// the plan that follows it, whose refresh counts in the next step.)
					calls.Expect(map[string]int{"member:list": 2, "member:add": 2}),
				),
			},
			{
				// bob's expiry raised in place, through the expiry route; carol
				// added; department 1 removed.
				Config: acctest.GroupMembersConfig(provider, group, map[string]string{"alice": "", "bob": rfc(later), "carol": ""}, nil),
				Check: resource.ComposeTestCheckFunc(
					checkMembers(sb, group, map[string]int64{"user:alice": perm, "user:bob": later.Unix(), "user:carol": perm}),
					// The last step's plan and this apply refresh; the read-back.
					calls.Expect(map[string]int{"member:list": 3, "member:expiry": 1, "member:add": 1, "member:delete": 1}),
				),
			},
			{
				// Lowered: bob is deleted and added again.
				Config: acctest.GroupMembersConfig(provider, group, map[string]string{"alice": "", "bob": rfc(soon), "carol": ""}, nil),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.MembersAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkMembers(sb, group, map[string]int64{"user:alice": perm, "user:bob": soon.Unix(), "user:carol": perm}),
					calls.Expect(map[string]int{"member:list": 3, "member:add": 1, "member:delete": 1}),
				),
			},
			{
				// Drift: dave added and carol removed outside Terraform.
				PreConfig: func() {
					ctx := context.Background()
					if err := client.AddMembers(ctx, "bk_cmdb", group, []bkiam.MemberRef{{Type: "user", ID: "dave"}}, perm); err != nil {
						t.Fatal(err)
					}
					if err := client.DeleteMembers(ctx, "bk_cmdb", group, "user", []string{"carol"}); err != nil {
						t.Fatal(err)
					}
				},
				Config:             acctest.GroupMembersConfig(provider, group, map[string]string{"alice": "", "bob": rfc(soon), "carol": ""}, nil),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: acctest.GroupMembersConfig(provider, group, map[string]string{"alice": "", "bob": rfc(soon), "carol": ""}, nil),
				Check:  checkMembers(sb, group, map[string]int64{"user:alice": perm, "user:bob": soon.Unix(), "user:carol": perm}),
			},
			{
				ResourceName:            acctest.MembersAddr,
				ImportState:             true,
				ImportStateId:           fmt.Sprintf("bk_cmdb/%d", group),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
		},
		CheckDestroy: func(*terraform.State) error {
			if n := len(sb.Members(group)); n != 0 {
				return fmt.Errorf("group %d still has %d members after destroy", group, n)
			}
			return nil
		},
	})
}

// TestAccGroupMembersDropped: IAM drops users it does not know without an
// error; the apply fails naming them, state records what the group holds,
// and the corrected configuration converges.
func TestAccGroupMembersDropped(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM drops and how the provider words it")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	group := newGroup(t, acctest.OutsideClient(t, sb), "dev")
	perm := bkiam.PermanentExpiry
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      acctest.GroupMembersConfig(provider, group, map[string]string{"alice": "", "nobody": "", "ghost": ""}, nil),
				ExpectError: regexp.MustCompile(`(?s)IAM dropped members.*did not add 2 members \(user ghost, user\s+nobody\)`),
			},
			{
				// State holds alice, as IAM does: the plan adds the others again.
				Config:             acctest.GroupMembersConfig(provider, group, map[string]string{"alice": "", "nobody": "", "ghost": ""}, nil),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: acctest.GroupMembersConfig(provider, group, map[string]string{"alice": "", "bob": ""}, nil),
				Check:  checkMembers(sb, group, map[string]int64{"user:alice": perm, "user:bob": perm}),
			},
		},
	})
}

// TestAccGroupMembersOutsideSubjectScope: IAM refuses a member outside
// the grade manager's subject scopes (403); the error names the fix, and
// the members fit once the scope is widened. In the sandbox's model alice
// is in department 2 and bob in department 3, both under department 1.
func TestAccGroupMembersOutsideSubjectScope(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM refuses and how the provider words it")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	config := func(department string) string {
		return provider + fmt.Sprintf(`
resource "bkiam_grade_manager" "team" {
  system               = "bk_cmdb"
  name                 = "team"
  members              = ["alice"]
  authorization_scopes = [{ system = "bk_cmdb", actions = ["create_biz"] }]
  subject_scopes       = [{ type = "department", id = %q }]
}

resource "bkiam_group" "dev" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.team.id
  name             = "dev"
}

resource "bkiam_group_members" "dev" {
  system   = "bk_cmdb"
  group_id = bkiam_group.dev.id
  users    = { alice = "permanent", bob = "permanent" }
  # The members must wait for a change of the grade manager's subject scopes.
  depends_on = [bkiam_grade_manager.team]
}
`, department)
	}
	members := func(want ...string) func(*terraform.State) error {
		return func(*terraform.State) error {
			var got []string
			for _, gm := range sb.GradeManagers() {
				for _, g := range sb.Groups(gm.ID) {
					for _, m := range sb.Members(g.ID) {
						got = append(got, m.ID)
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				return fmt.Errorf("the group holds %v, want %v", got, want)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("2"),
				ExpectError: acctest.PlanErrorPattern("HTTP 403", "用户 (bob) 在分级管理员的授权范围内",
					"The member is outside the subject_scopes of the group's grade manager, which admit the users and departments they name "+
						"and everyone in a named department or under it. Widen the grade manager's subject_scopes (bkiam_grade_manager), or remove the member."),
			},
			{
				Config: config("1"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("bkiam_grade_manager.team", plancheck.ResourceActionUpdate),
				}},
				Check: members("alice", "bob"),
			},
		},
	})
}

// TestAccGroupMembersGroupsQuota: IAM's backend lets a member be in only
// so many groups holding permissions in one system (here 1, the
// sandbox's subject_max_groups); joining one more fails with the fix, at
// once: the backend's refusal inside IAM's 1902000 is definite (the
// package doc of internal/bkiam, "Answers and errors"), so the refused add
// is sent once, not retried as a failed backend call.
func TestAccGroupMembersGroupsQuota(t *testing.T) {
	testutil.SameOnEveryCLI(t, "IAM's quota")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t, sandbox.WithModel(acctest.EditedModel(t, func(m *sandbox.Model) { m.Limits.SubjectMaxGroups = 1 })))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	client := acctest.OutsideClient(t, sb)
	ctx := context.Background()
	groups := []int64{newGroup(t, client, "dev"), newGroup(t, client, "ops")}
	for _, g := range groups {
		if err := client.GrantGroupPolicies(ctx, "bk_cmdb", g, bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: "view_host"}},
			Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "1"}}}}}}); err != nil {
			t.Fatal(err)
		}
	}
	config := provider
	for i, g := range groups {
		config += fmt.Sprintf("resource \"bkiam_group_members\" \"g%d\" {\n  system   = \"bk_cmdb\"\n  group_id = \"%d\"\n  users    = { alice = \"permanent\" }\n}\n", i, g)
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			ExpectError: acctest.PlanErrorPattern("subject {user alice} can only have 1 groups in system bk_cmdb",
				"A member would be in more groups holding permissions in one system than IAM allows (its backend's subject_max_groups_limit, "+
					"100 by default). Take the member out of another group of that system, or ask the IAM administrators to raise the limit."),
		}},
		CheckDestroy: func(*terraform.State) error {
			// One add per group: alice joins one, the other refuses once.
			if n := sb.Stats().Requests["member:add"]; n != 2 {
				return fmt.Errorf("%d member adds, want 2: the quota refusal was retried", n)
			}
			return nil
		},
	})
}

// TestAccGroupMembersGroupGone: a group deleted outside Terraform takes
// its members with it; refresh removes the resource from state, so the
// plan shows a create, and a destroy has nothing left to do.
func TestAccGroupMembersGroupGone(t *testing.T) {
	testutil.SameOnEveryCLI(t, "what IAM answers for a deleted group")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, provider := acctest.Target(t)
	client := acctest.OutsideClient(t, sb)
	group := newGroup(t, client, "dev")
	config := acctest.GroupMembersConfig(provider, group, map[string]string{"alice": ""}, nil)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					if err := client.DeleteGroup(context.Background(), "bk_cmdb", group); err != nil {
						t.Fatal(err)
					}
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.MembersAddr, plancheck.ResourceActionCreate),
				}},
			},
			{
				// Creating the members of a group that is gone says why.
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)Cannot read the group's members.*IAM lets an app manage only the grade\s+managers and groups`),
			},
		},
	})
}

// memberFaultClass is a fault injected into the second member call of a
// step of TestAccGroupMembersFaultMatrix.
type memberFaultClass struct {
	name     string
	fault    func(after int) sandbox.Faults
	recovers bool
	failure  []string
	doubt    bool
	// everyCLI: the class runs on every CLI, as one of what a CLI does
	// with a step that fails (a refused call, a call whose outcome is
	// unknown); the others differ only in what the provider does with
	// IAM's answer.
	everyCLI bool
}

// memberInDoubt is what a member call whose outcome is unknown adds.
const memberInDoubt = `IAM may or may not have carried out this call: state (counts its members as added|still counts its members)`

// With max_retries = 2 a call makes 3 attempts: 3 strikes exhaust them.
var memberFaultClasses = []memberFaultClass{
	{name: "refused", fault: func(after int) sandbox.Faults {
		return sandbox.Faults{Fail: &sandbox.FailFault{After: after, Count: 1, Status: 400, Code: 1902412}}
	}, failure: []string{`HTTP 400, code 1902412`}},
	{name: "http 500", everyCLI: true, fault: func(after int) sandbox.Faults {
		return sandbox.Faults{Fail: &sandbox.FailFault{After: after, Count: 3, Status: 500, Code: 1902500}}
	}, failure: []string{`HTTP 500`, `code 1902500`}},
	{name: "1902000 in http 200", doubt: true, fault: func(after int) sandbox.Faults {
		return sandbox.Faults{Fail: &sandbox.FailFault{After: after, Count: 3, Status: 200, Code: 1902000}}
	}, failure: []string{`code 1902000`, `after 3 attempts`, memberInDoubt}},
	{name: "connection reset after carrying the call out", doubt: true, everyCLI: true, fault: func(after int) sandbox.Faults {
		return sandbox.Faults{Drop: &sandbox.DropFault{After: after, Count: 3, Served: true}}
	}, failure: []string{`connection reset by peer`, memberInDoubt}},
	{name: "gateway 429 absorbed", recovers: true, fault: func(after int) sandbox.Faults {
		return sandbox.Faults{RateLimit: &sandbox.RateFault{After: after, Count: 2, RetryAfterS: 1}}
	}},
	{name: "gateway 502 html absorbed", recovers: true, fault: func(after int) sandbox.Faults {
		return sandbox.Faults{Fail: &sandbox.FailFault{After: after, Count: 2, Status: 502, Code: 1, Body: "html"}}
	}},
}

// memberFaultStep is a step of a group's members, each of at least two
// member calls; after is how many requests precede its second call.
type memberFaultStep struct {
	name  string
	users []string // nil: destroy
	after int
}

var memberFaultSteps = []memberFaultStep{
	// Read the group, add 1000, add 500 (struck), read back.
	{"create", userRange(0, 1500), 2},
	// Add 1000 and 1000 (struck), delete 1000.
	{"update", userRange(1000, 3500), 1},
	// Delete 1000, 1000 (struck) and 500.
	{"destroy", nil, 1},
}

func userRange(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("u%05d", i))
	}
	return out
}

// TestAccGroupMembersFaultMatrix: every fault class strikes the second
// member call of a create, an update and a destroy of 1 500 to 2 500
// members, through the real Terraform CLI with -refresh=false (so that the
// calls are the step's own). After each: the error names the call and the
// request; the state records exactly what the group holds (after a call
// whose outcome is unknown, at least that); the same command without the
// fault converges, and the plan after it is empty.
func TestAccGroupMembersFaultMatrix(t *testing.T) {
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	acctest.Parallel(t)
	providerDir := testutil.BuildProvider(t)
	for _, fc := range memberFaultClasses {
		t.Run(strings.ReplaceAll(fc.name, " ", "_"), func(t *testing.T) {
			if !fc.everyCLI {
				testutil.SameOnEveryCLI(t, "the provider's handling of IAM's answer; the classes that run on every CLI cover what the CLI does with a failed step")
			}
			acctest.Parallel(t)
			sb := sandboxtest.Start(t, sandbox.WithModel(acctest.ModelWithUsers(t, 3500, 5000)))
			provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
			group := newGroup(t, acctest.OutsideClient(t, sb), "big")
			w := acctest.NewCLIWorkspace(t, providerDir)
			for _, step := range memberFaultSteps {
				runMemberFaultStep(t, w, sb, provider, group, step, fc)
			}
		})
	}
}

func runMemberFaultStep(t *testing.T, w *acctest.CLIWorkspace, sb *sandboxtest.Sandbox, provider string, group int64, step memberFaultStep, fc memberFaultClass) {
	t.Helper()
	args := []string{"destroy", "-auto-approve", "-refresh=false"}
	if step.users != nil {
		users := map[string]string{}
		for _, u := range step.users {
			users[u] = ""
		}
		w.Configure(provider, strings.TrimPrefix(acctest.GroupMembersConfig("", group, users, nil), "\n"))
		args = []string{"apply", "-auto-approve", "-refresh=false"}
	}
	if err := sb.SetFaults(fc.fault(step.after)); err != nil {
		t.Fatal(err)
	}
	out, code := w.Run(args...)
	if err := sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
	switch {
	case fc.recovers && code != 0:
		t.Fatalf("%s: the retries should have absorbed the fault, but terraform exited %d:\n%s", step.name, code, out)
	case !fc.recovers && code == 0:
		t.Fatalf("%s: terraform succeeded despite the fault:\n%s", step.name, out)
	case !fc.recovers:
		patterns := append([]string{`Call 2 of \d failed, (adding|removing) (500|1000) members`, `request [0-9a-f]{32}`,
			`The call before it succeeded and is recorded in state`}, fc.failure...)
		for _, p := range patterns {
			if !regexp.MustCompile(`(?s)` + strings.ReplaceAll(p, " ", `\s+`)).MatchString(out) {
				t.Fatalf("%s: the error does not match %q:\n%s", step.name, p, out)
			}
		}
		if err := checkMembersState(w, sb, group, fc.doubt); err != nil {
			t.Fatalf("%s, after the fault: %v\nterraform said:\n%s", step.name, err, out)
		}
		// Without the fault, the same command finishes the job.
		w.MustRun(args[:2]...)
	}
	if err := checkMembersState(w, sb, group, false); err != nil {
		t.Fatalf("%s, at the end: %v", step.name, err)
	}
	got := map[string]bool{}
	for _, m := range sb.Members(group) {
		got[m.ID] = true
	}
	if len(got) != len(step.users) {
		t.Fatalf("%s: the group holds %d members, want %d", step.name, len(got), len(step.users))
	}
	for _, u := range step.users {
		if !got[u] {
			t.Fatalf("%s: the group lacks %s", step.name, u)
		}
	}
	if step.users != nil && !w.PlanIsEmpty() {
		t.Fatalf("%s: the plan after the apply is not empty", step.name)
	}
}

// checkMembersState compares the users the state records for the group
// with those the sandbox holds: exactly, or with upperBound, the sandbox
// may hold fewer but never more.
func checkMembersState(w *acctest.CLIWorkspace, sb *sandboxtest.Sandbox, group int64, upperBound bool) error {
	raw, err := os.ReadFile(filepath.Join(w.Dir, "terraform.tfstate"))
	if err != nil {
		return err
	}
	var state struct {
		Resources []struct {
			Type      string `json:"type"`
			Instances []struct {
				Attributes struct {
					Users map[string]json.RawMessage `json:"users"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		return err
	}
	recorded := map[string]bool{}
	for _, r := range state.Resources {
		for _, in := range r.Instances {
			for u := range in.Attributes.Users {
				recorded[u] = true
			}
		}
	}
	held := map[string]bool{}
	for _, m := range sb.Members(group) {
		held[m.ID] = true
		if !recorded[m.ID] {
			return fmt.Errorf("the group holds %s, which the state does not record", m.ID)
		}
	}
	if !upperBound {
		for u := range recorded {
			if !held[u] {
				return fmt.Errorf("the state records %s, which the group does not hold", u)
			}
		}
	}
	return nil
}

// TestAccGroupMembers_planTimeValidation: every mistake is refused at plan
// time, before any call.
func TestAccGroupMembers_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	sb, provider := acctest.Target(t)
	test := acctest.PlanTimeTest(t, provider, acctest.GroupMembersValidationCases())
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

// TestAccGroupMembersNeedTheGateway: with esb_url, the plan fails on the
// provider's transport before any call, naming the fix.
func TestAccGroupMembersNeedTheGateway(t *testing.T) {
	acctest.Parallel(t)
	sb := sandboxtest.Start(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      acctest.GroupMembersConfig(acctest.Transports[acctest.ESBTransport].Block(sb.URL), 42, map[string]string{"alice": ""}, nil),
			PlanOnly:    true,
			ExpectError: acctest.PlanErrorPattern(acctest.ManagementCases()[0].Want...),
		}},
	})
	if n := acctest.IAMCalls(sb); n != 0 {
		t.Errorf("the refused plan sent %d requests", n)
	}
}

// TestAccGroupMembersRenewal: renewing every member of a group of 600 —
// the change BlueKing teams make most (续期) — and swapping one member of
// a full group. IAM counts the members a group holds plus those an add
// sends (present ones again) against its member limit (1000 here, the
// default), so renewing through adds (600 + 600) and adding before
// deleting (1000 + 1) are refused; its expiry route has no such count
// (internal/bkiam's package doc, "The management API"). The renewal is one
// expiry call, the swap a delete then an add, and each plan after is empty.
func TestAccGroupMembersRenewal(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the calls the provider sends")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t, sandbox.WithModel(acctest.ModelWithUsers(t, 1001, 1000)))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	group := newGroup(t, acctest.OutsideClient(t, sb), "dev")
	calls := acctest.NewCallCounter(sb)
	soon := time.Now().Add(time.Hour).Truncate(time.Second).UTC()
	later := soon.Add(30 * 24 * time.Hour)
	users := func(from, to int, expiry string) map[string]string {
		m := map[string]string{}
		for i := from; i < to; i++ {
			m[fmt.Sprintf("u%05d", i)] = expiry
		}
		return m
	}
	held := func(from, to int, expiry int64, skip ...int) map[string]int64 {
		m := map[string]int64{}
		for i := from; i < to; i++ {
			if !slices.Contains(skip, i) {
				m[fmt.Sprintf("user:u%05d", i)] = expiry
			}
		}
		return m
	}
	full := users(0, 1000, "")
	swapped := users(1, 1001, "")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: acctest.GroupMembersConfig(provider, group, users(0, 600, soon.Format(time.RFC3339)), nil), ConfigPlanChecks: acctest.EmptyPlanAfterApply},
			{
				PreConfig:        calls.Reset,
				Config:           acctest.GroupMembersConfig(provider, group, users(0, 600, later.Format(time.RFC3339)), nil),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: resource.ComposeTestCheckFunc(
					checkMembers(sb, group, held(0, 600, later.Unix())),
					// The refresh reads 600 members in two pages of 500; a raise needs no read-back.
					calls.Expect(map[string]int{"member:list": 2, "member:expiry": 1}),
				),
			},
			{Config: acctest.GroupMembersConfig(provider, group, full, nil), ConfigPlanChecks: acctest.EmptyPlanAfterApply},
			{
				PreConfig:        calls.Reset,
				Config:           acctest.GroupMembersConfig(provider, group, swapped, nil),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: resource.ComposeTestCheckFunc(
					checkMembers(sb, group, held(1, 1001, bkiam.PermanentExpiry)),
					// The refresh reads 1000 members in two pages; the add's check
					// counts them in one call.
					calls.Expect(map[string]int{"member:list": 3, "member:delete": 1, "member:add": 1}),
				),
			},
		},
	})
}

// TestAccGroupMembersOneOwner: two bkiam_group_members of one group
// would each remove, on every apply, the members only the other declares;
// the plan fails, whichever is planned first, sending nothing. One
// resource's own replacements never count as a second owner: -replace,
// a taint, and a group_id changed to another group (a replacement
// Terraform plans in two calls) apply as before.
func TestAccGroupMembersOneOwner(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	sb := sandboxtest.Start(t)
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	client := acctest.OutsideClient(t, sb)
	dev, ops := newGroup(t, client, "dev"), newGroup(t, client, "ops")
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	members := func(label string, group int64, user string) string {
		return fmt.Sprintf("resource \"bkiam_group_members\" %q {\n  system   = \"bk_cmdb\"\n  group_id = \"%d\"\n  users    = { %s = \"permanent\" }\n}\n",
			label, group, user)
	}
	w.Configure(provider, members("test", dev, "alice"))
	w.MustRun("apply", "-auto-approve")
	for _, args := range [][]string{{"apply", "-auto-approve", "-replace=bkiam_group_members.test"}, {"taint", "bkiam_group_members.test"},
		{"apply", "-auto-approve"}} {
		w.MustRun(args...)
	}
	w.Configure(provider, members("test", ops, "alice"))
	w.MustRun("apply", "-auto-approve")
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after moving the members to another group is not empty")
	}

	w.Configure(provider, members("test", ops, "alice")+members("again", ops, "bob"))
	writes := acctest.IAMWrites(sb)
	out, code := w.Run("apply", "-auto-approve")
	if code == 0 || !acctest.PlanErrorPattern("Error: Owned by another resource", fmt.Sprintf("the members of group %d whole", ops)).MatchString(out) {
		t.Fatalf("two resources of one group's members planned (exit %d):\n%s", code, out)
	}
	if n := acctest.IAMWrites(sb) - writes; n != 0 {
		t.Fatalf("the refused plan sent %d calls that change IAM", n)
	}
}
