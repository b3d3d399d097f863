package provider

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

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

const membersAddr = "bkiam_group_members.test"

// membersHCL renders a users or departments map: id → expiry ("" for
// permanent).
func membersHCL(m map[string]string) string {
	var b strings.Builder
	b.WriteString("{\n")
	for _, id := range slices.Sorted(maps.Keys(m)) {
		exp := m[id]
		if exp == "" {
			exp = "permanent"
		}
		fmt.Fprintf(&b, "    %q = %q\n", id, exp)
	}
	b.WriteString("  }")
	return b.String()
}

// groupMembersConfig renders a bkiam_group_members of group in bk_cmdb.
func groupMembersConfig(provider string, group int64, users, departments map[string]string) string {
	var b strings.Builder
	b.WriteString(provider)
	fmt.Fprintf(&b, "resource \"bkiam_group_members\" \"test\" {\n  system   = \"bk_cmdb\"\n  group_id = \"%d\"\n", group)
	if users != nil {
		fmt.Fprintf(&b, "  users = %s\n", membersHCL(users))
	}
	if departments != nil {
		fmt.Fprintf(&b, "  departments = %s\n", membersHCL(departments))
	}
	b.WriteString("}\n")
	return b.String()
}

// newGroup creates, outside Terraform, a grade manager of bk_cmdb and a
// group under it, and returns the group's id.
func newGroup(t *testing.T, c *bkiam.Client, name string) int64 {
	t.Helper()
	ctx := context.Background()
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", bkiam.GradeManagerSpec{
		Name: name + "-managers", Members: []string{"alice"},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "view_host"}},
			Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "*", Name: ""}}}}}}},
		SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: name}})
	if err != nil {
		t.Fatal(err)
	}
	return ids[0]
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

// modelWithUsers is the default model with users u00000… added and the
// group member limit set.
func modelWithUsers(t testing.TB, users, memberLimit int) *sandbox.Model {
	t.Helper()
	return editedModel(t, func(m *sandbox.Model) {
		for i := range users {
			m.Users = append(m.Users, fmt.Sprintf("u%05d", i))
		}
		m.Limits.GroupMemberLimit = memberLimit
	})
}

// editedModel is the default model changed by edit, then loaded as the
// sandbox loads a model file (which derives what the model implies).
func editedModel(t testing.TB, edit func(m *sandbox.Model)) *sandbox.Model {
	t.Helper()
	m := sandbox.DefaultModel()
	edit(m)
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAccGroupMembers is the lifecycle of a group's members: create,
// add and remove, an expiry raised in place and one lowered (delete and
// re-add, said in the plan), members changed outside Terraform (drift),
// import, and destroy, with the calls each step sends.
func TestAccGroupMembers(t *testing.T) {
	needsSandbox(t)
	sb, provider := target(t)
	client := outsideClient(t, sb)
	group := newGroup(t, client, "dev")
	calls := newCallCounter(sb)
	soon := time.Now().Add(time.Hour).Truncate(time.Second).UTC()
	later := soon.Add(24 * time.Hour)
	rfc := func(t time.Time) string { return t.Format(time.RFC3339) }
	perm := bkiam.PermanentExpiry
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: calls.reset,
				Config:    groupMembersConfig(provider, group, map[string]string{"alice": "", "bob": rfc(soon)}, map[string]string{"1": ""}),
				Check: resource.ComposeTestCheckFunc(
					checkMembers(sb, group, map[string]int64{"user:alice": perm, "user:bob": soon.Unix(), "department:1": perm}),
					resource.TestCheckResourceAttr(membersAddr, "id", fmt.Sprintf("bk_cmdb/%d", group)),
					// The create reads the group, adds in one call per expiry and
					// reads the group back. (The checks run after the apply, before
					// the plan that follows it, whose refresh counts in the next step.)
					calls.expect(map[string]int{"member:list": 2, "member:add": 2}),
				),
			},
			{
				// bob's expiry raised in place, through the expiry route; carol
				// added; department 1 removed.
				Config: groupMembersConfig(provider, group, map[string]string{"alice": "", "bob": rfc(later), "carol": ""}, nil),
				Check: resource.ComposeTestCheckFunc(
					checkMembers(sb, group, map[string]int64{"user:alice": perm, "user:bob": later.Unix(), "user:carol": perm}),
					// The last step's plan and this apply refresh; the read-back.
					calls.expect(map[string]int{"member:list": 3, "member:expiry": 1, "member:add": 1, "member:delete": 1}),
				),
			},
			{
				// Lowered: bob is deleted and added again.
				Config: groupMembersConfig(provider, group, map[string]string{"alice": "", "bob": rfc(soon), "carol": ""}, nil),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(membersAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkMembers(sb, group, map[string]int64{"user:alice": perm, "user:bob": soon.Unix(), "user:carol": perm}),
					calls.expect(map[string]int{"member:list": 3, "member:add": 1, "member:delete": 1}),
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
				Config:             groupMembersConfig(provider, group, map[string]string{"alice": "", "bob": rfc(soon), "carol": ""}, nil),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: groupMembersConfig(provider, group, map[string]string{"alice": "", "bob": rfc(soon), "carol": ""}, nil),
				Check:  checkMembers(sb, group, map[string]int64{"user:alice": perm, "user:bob": soon.Unix(), "user:carol": perm}),
			},
			{
				ResourceName:            membersAddr,
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
	needsSandbox(t)
	sb, provider := target(t)
	group := newGroup(t, outsideClient(t, sb), "dev")
	perm := bkiam.PermanentExpiry
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      groupMembersConfig(provider, group, map[string]string{"alice": "", "nobody": "", "ghost": ""}, nil),
				ExpectError: regexp.MustCompile(`(?s)IAM dropped members.*did not make 2 members \(user ghost, user\s+nobody\)`),
			},
			{
				// State holds alice, as IAM does: the plan adds the others again.
				Config:             groupMembersConfig(provider, group, map[string]string{"alice": "", "nobody": "", "ghost": ""}, nil),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config: groupMembersConfig(provider, group, map[string]string{"alice": "", "bob": ""}, nil),
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
	needsSandbox(t)
	sb, provider := target(t)
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
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config("2"),
				ExpectError: planErrorPattern("HTTP 403", "用户 (bob) 在分级管理员的授权范围内",
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
	needsSandbox(t)
	sb := sandboxtest.Start(t, sandbox.WithModel(editedModel(t, func(m *sandbox.Model) { m.Limits.SubjectMaxGroups = 1 })))
	provider := transports[gatewayTransport].block(sb.URL)
	client := outsideClient(t, sb)
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
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: config,
			ExpectError: planErrorPattern("subject {user alice} can only have 1 groups in system bk_cmdb",
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
	needsSandbox(t)
	sb, provider := target(t)
	client := outsideClient(t, sb)
	group := newGroup(t, client, "dev")
	config := groupMembersConfig(provider, group, map[string]string{"alice": ""}, nil)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
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
					plancheck.ExpectResourceAction(membersAddr, plancheck.ResourceActionCreate),
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
}

// memberInDoubt is what a member call whose outcome is unknown adds.
const memberInDoubt = `IAM may or may not have carried out this call: state (counts its members as added|still counts its members)`

// With max_retries = 2 a call makes 3 attempts: 3 strikes exhaust them.
var memberFaultClasses = []memberFaultClass{
	{name: "refused", fault: func(after int) sandbox.Faults {
		return sandbox.Faults{Fail: &sandbox.FailFault{After: after, Count: 1, Status: 400, Code: 1902412}}
	}, failure: []string{`HTTP 400, code 1902412`}},
	{name: "http 500", fault: func(after int) sandbox.Faults {
		return sandbox.Faults{Fail: &sandbox.FailFault{After: after, Count: 3, Status: 500, Code: 1902500}}
	}, failure: []string{`HTTP 500`, `code 1902500`}},
	{name: "1902000 in http 200", doubt: true, fault: func(after int) sandbox.Faults {
		return sandbox.Faults{Fail: &sandbox.FailFault{After: after, Count: 3, Status: 200, Code: 1902000}}
	}, failure: []string{`code 1902000`, `after 3 attempts`, memberInDoubt}},
	{name: "connection reset after carrying the call out", doubt: true, fault: func(after int) sandbox.Faults {
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
	needsSandbox(t)
	testutil.Terraform(t)
	t.Parallel()
	providerDir := testutil.BuildProvider(t)
	for _, fc := range memberFaultClasses {
		t.Run(strings.ReplaceAll(fc.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			sb := sandboxtest.Start(t, sandbox.WithModel(modelWithUsers(t, 3500, 5000)))
			provider := transports[gatewayTransport].block(sb.URL)
			group := newGroup(t, outsideClient(t, sb), "big")
			w := newCLIWorkspace(t, providerDir)
			for _, step := range memberFaultSteps {
				runMemberFaultStep(t, w, sb, provider, group, step, fc)
			}
		})
	}
}

func runMemberFaultStep(t *testing.T, w *cliWorkspace, sb *sandboxtest.Sandbox, provider string, group int64, step memberFaultStep, fc memberFaultClass) {
	t.Helper()
	args := []string{"destroy", "-auto-approve", "-refresh=false"}
	if step.users != nil {
		users := map[string]string{}
		for _, u := range step.users {
			users[u] = ""
		}
		w.configure(provider, strings.TrimPrefix(groupMembersConfig("", group, users, nil), "\n"))
		args = []string{"apply", "-auto-approve", "-refresh=false"}
	}
	if err := sb.SetFaults(fc.fault(step.after)); err != nil {
		t.Fatal(err)
	}
	out, code := w.run(args...)
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
		w.mustRun(args[:2]...)
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
	if step.users != nil && !w.planIsEmpty() {
		t.Fatalf("%s: the plan after the apply is not empty", step.name)
	}
}

// checkMembersState compares the users the state records for the group
// with those the sandbox holds: exactly, or with upperBound, the sandbox
// may hold fewer but never more.
func checkMembersState(w *cliWorkspace, sb *sandboxtest.Sandbox, group int64, upperBound bool) error {
	raw, err := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate"))
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

// groupMembersValidationCases are the configuration mistakes of a
// bkiam_group_members, each refused at plan time with the attribute and
// the fix.
func groupMembersValidationCases() []planTimeCase {
	config := func(group, users, departments, extra, importID string) string {
		imp := ""
		if importID != "" {
			imp = fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n", membersAddr, importID)
		}
		return imp + fmt.Sprintf("resource \"bkiam_group_members\" \"test\" {\n  system   = \"bk_cmdb\"\n  group_id = %q\n  users = %s\n  departments = %s\n%s}\n",
			group, users, departments, extra)
	}
	alice := `{ alice = "permanent" }`
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	return []planTimeCase{
		{name: "group id not a number", config: config("dev", alice, "{}", "", ""),
			want: []string{"Invalid group id", `group_id must be a user group's numeric id, such as bkiam_group.dev.id or "42"; got "dev".`}},
		{name: "username with white space", config: config("42", `{ " alice" = "permanent" }`, "{}", "", ""),
			want: []string{"Invalid username", `users[" alice"]: " alice" is not a username IAM knows: it is blank, or has white space around it or control characters.`}},
		{name: "username with a comma", config: config("42", `{ "alice,bob" = "permanent" }`, "{}", "", ""),
			want: []string{"Invalid username", `users["alice,bob"]: "alice,bob" holds a comma, which IAM's member delete uses to separate ids, so the member could never be removed.`}},
		{name: "admin", config: config("42", `{ admin = "permanent" }`, "{}", "", ""),
			want: []string{"IAM does not add admin to groups", "admin is IAM's super user: IAM drops it from a member add without an error, so it would never be a member. Remove it."}},
		{name: "department id not a number", config: config("42", alice, `{ "ops" = "permanent" }`, "", ""),
			want: []string{"Invalid department id", `departments["ops"]: department ids are the numeric ids of IAM's organisation, such as "12"; got "ops".`}},
		{name: "expiry neither permanent nor RFC 3339", config: config("42", `{ alice = "tomorrow" }`, "{}", "", ""),
			want: []string{"Invalid member expiry", `users["alice"] must be "permanent" or an RFC 3339 time such as "2027-06-30T00:00:00Z", got "tomorrow".`}},
		{name: "expiry after 2100", config: config("42", alice, `{ "1" = "2101-01-01T00:00:00Z" }`, "", ""),
			want: []string{"Expiry too late", `departments["1"] must be no later than 2100-01-01T00:00:00Z, IAM's permanent, got 2101-01-01T00:00:00Z. Write "permanent" for a permanent membership.`}},
		{name: "expiry in the past", config: config("42", fmt.Sprintf(`{ alice = %q }`, past), "{}", "", ""),
			want: []string{"Expiry in the past", fmt.Sprintf(`users["alice"] is %s, which has passed; IAM adds members only with an expiry in the future. Set a later time, or "permanent".`, past)}},
		{name: "members timeout not a duration", config: config("42", alice, "{}", "  timeouts = { create = \"soon\" }\n", ""),
			want: []string{"Invalid duration", `timeouts.create must be a positive duration such as "30m" or "1h", got "soon".`}},
		{name: "members import ID of the wrong shape", config: config("42", alice, "{}", "", "bk_cmdb/dev"),
			want: []string{"Invalid import ID", `Expected SYSTEM/GROUP_ID, e.g. bk_cmdb/42; got "bk_cmdb/dev".`}},
	}
}

// TestAccGroupMembers_planTimeValidation: every mistake is refused at plan
// time, before any call.
func TestAccGroupMembers_planTimeValidation(t *testing.T) {
	sb, provider := target(t)
	test := planTimeTest(t, provider, groupMembersValidationCases())
	test.CheckDestroy = func(*terraform.State) error {
		if sb != nil {
			if n := iamCalls(sb); n != 0 {
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
	sb := sandboxtest.Start(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      groupMembersConfig(transports[esbTransport].block(sb.URL), 42, map[string]string{"alice": ""}, nil),
			PlanOnly:    true,
			ExpectError: planErrorPattern(managementCases()[0].want...),
		}},
	})
	if n := iamCalls(sb); n != 0 {
		t.Errorf("the refused plan sent %d requests", n)
	}
}

// managementCases are the messages the management resources share
// (management.go), as the acceptance tests provoke them.
func managementCases() []planTimeCase {
	return []planTimeCase{
		{name: "management through ESB", want: []string{"The management API needs the API gateway",
			"is managed through IAM's management API v2, which the API gateway serves and ESB does not. The provider is configured with esb_url: " +
				"set apigw_url (and remove esb_url) in the provider configuration, or use a provider alias configured for the gateway for this resource."}},
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
	needsSandbox(t)
	sb := sandboxtest.Start(t, sandbox.WithModel(modelWithUsers(t, 1001, 1000)))
	provider := transports[gatewayTransport].block(sb.URL)
	group := newGroup(t, outsideClient(t, sb), "dev")
	calls := newCallCounter(sb)
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
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: groupMembersConfig(provider, group, users(0, 600, soon.Format(time.RFC3339)), nil), ConfigPlanChecks: emptyPlanAfterApply},
			{
				PreConfig:        calls.reset,
				Config:           groupMembersConfig(provider, group, users(0, 600, later.Format(time.RFC3339)), nil),
				ConfigPlanChecks: emptyPlanAfterApply,
				Check: resource.ComposeTestCheckFunc(
					checkMembers(sb, group, held(0, 600, later.Unix())),
					// The refresh reads 600 members in two pages of 500; a raise needs no read-back.
					calls.expect(map[string]int{"member:list": 2, "member:expiry": 1}),
				),
			},
			{Config: groupMembersConfig(provider, group, full, nil), ConfigPlanChecks: emptyPlanAfterApply},
			{
				PreConfig:        calls.reset,
				Config:           groupMembersConfig(provider, group, swapped, nil),
				ConfigPlanChecks: emptyPlanAfterApply,
				Check: resource.ComposeTestCheckFunc(
					checkMembers(sb, group, held(1, 1001, bkiam.PermanentExpiry)),
					// The refresh and the add's read-back read 1000 members, two pages each.
					calls.expect(map[string]int{"member:list": 4, "member:delete": 1, "member:add": 1}),
				),
			},
		},
	})
}
