package access_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// The access data sources on the systems a real site runs
// (acctest.BlueKingSandbox): most bk_job actions relate to bk_cmdb's biz
// and host, resource types of another system, which IAM's batch policy
// query refuses to answer without resources. Before issue 61 every read
// that asked it failed: a denied access check, bkiam_effective_permissions,
// bkiam_user_access with actions and bkiam_expiring of a user.

// jobSite fills a BlueKing sandbox through IAM's APIs, as bk_job and its
// users would: alice holds access_business (bk_job, on bk_cmdb's biz) on
// business 2 permanently, execute_script on bk_job's script s1 with
// bk_cmdb's host 1 (a combined resource of two systems) until 10 days on,
// and view_script on s1 until 20 days on; carol holds quick_execute_script
// on every host under business 3 (batch_path) until 5 days on; group
// "job-ops", of a bk_job grade manager, has department 3 (bob's) as a
// member and holds access_business on business 3. dave holds nothing. It
// returns the group's id and the expiries.
func jobSite(t *testing.T) (sb *sandboxtest.Sandbox, group int64, days func(int) int64) {
	t.Helper()
	sb = acctest.BlueKingSandbox(t)
	ctx := context.Background()
	c := acctest.OutsideClient(t, sb)
	now := time.Now().UTC().Truncate(time.Second)
	days = func(n int) int64 { return now.Add(time.Duration(n) * 24 * time.Hour).Unix() }
	acctest.GrantOutside(t, c, "bk_job", "alice", "access_business", bkiam.PermanentExpiry, acctest.Instances("bk_cmdb", "biz", "2"))
	acctest.GrantOutside(t, c, "bk_job", "alice", "execute_script", days(10),
		acctest.Instances("bk_job", "script", "s1"), acctest.Instances("bk_cmdb", "host", "1"))
	acctest.GrantOutside(t, c, "bk_job", "alice", "view_script", days(20), acctest.Instances("bk_job", "script", "s1"))
	if _, err := c.BatchPath(ctx, bkiam.BatchPathRequest{System: "bk_job", Operate: bkiam.OperationGrant, ExpiredAt: days(5),
		Subject: bkiam.Subject{Type: bkiam.SubjectUser, ID: "carol"}, Actions: []bkiam.Action{{ID: "quick_execute_script"}},
		Resources: acctest.Under("bk_cmdb", "host", acctest.Biz("3"))}); err != nil {
		t.Fatal(err)
	}
	business := func(id string) []bkiam.PathResource {
		return []bkiam.PathResource{{System: "bk_cmdb", Type: "biz", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "biz", ID: id, Name: "biz" + id}}}}}
	}
	gm, err := c.CreateGradeManager(ctx, "bk_job", bkiam.GradeManagerSpec{Name: "job-managers", Members: []string{"alice"},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_job", Actions: []bkiam.Action{{ID: "access_business"}}, Resources: business("*")}},
		SubjectScopes:       []bkiam.SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		t.Fatal(err)
	}
	groups, err := c.CreateGroups(ctx, "bk_job", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "job-ops"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddMembers(ctx, "bk_job", groups[0], []bkiam.MemberRef{{Type: "department", ID: "3"}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	if err := c.GrantGroupPolicies(ctx, "bk_job", groups[0], bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: "access_business"}},
		Resources: business("3")}); err != nil {
		t.Fatal(err)
	}
	return sb, groups[0], days
}

// TestAccAccessCheckCrossSystem_planTimeValidation: a check of bk_job's
// access_business with the business under bk_job's system fails the plan
// before any check is sent, saying that biz is bk_cmdb's.
func TestAccAccessCheckCrossSystem_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := acctest.BlueKingSandbox(t)
	resource.Test(t, acctest.PlanTimeTest(t, acctest.Transports[acctest.GatewayTransport].Block(sb.URL), []acctest.PlanTimeCase{{
		Name: "access check: another system's type under the action's system", Config: `
data "bkiam_access_check" "test" {
  system    = "bk_job"
  subject   = { type = "user", id = "alice" }
  actions   = ["access_business"]
  resources = [{ system = "bk_job", type = "biz", id = "2" }]
}

output "allowed" {
  value = data.bkiam_access_check.test.allowed
}
`, Want: []string{"Resources do not match the action", "Action access_business relates to [bk_cmdb/biz], in that order; resources give " +
			`[bk_job/biz]. Give one instance of each, in order (IAM answers a mismatch with a system error). Resource type biz is bk_cmdb's: ` +
			`write the entry's system as "bk_cmdb", the system of the type, which need not be the action's.`}}}))
}

// TestAccAccessCheckCrossSystem: bkiam_access_check of bk_job's actions,
// each resource under the system of its type (bk_cmdb's biz and host,
// bk_job's script). alice may access business 2 and not 3; bob may access
// 3 through his department's group, and so may the group itself; alice may
// execute s1 on host 1 and not on host 2; carol may quick-execute on host
// 5 of business 3 when the check gives its path, not on a host of
// business 2, and without the path the answer is conditional (null, with
// the warning naming bk_cmdb/host/5 and resources[0].paths). An audit that
// nobody may execute s1 on host 2, written as the auditing guide says
// (alltrue of all_allowed == false over every user), passes: each answer
// is a plain false, and the plan fails on none. Every denial reads the
// subject's policy (to tell it from a conditional answer), the query IAM
// refused for these actions.
func TestAccAccessCheckCrossSystem(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, group, _ := jobSite(t)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), fmt.Sprintf(`
locals {
  biz    = { for id in ["2", "3"] : id => [{ system = "bk_cmdb", type = "biz", id = id }] }
  script = { system = "bk_job", type = "script", id = "s1" }
  checks = {
    alice_biz_2      = { subject = { type = "user", id = "alice" }, action = "access_business", resources = local.biz["2"] }
    alice_biz_3      = { subject = { type = "user", id = "alice" }, action = "access_business", resources = local.biz["3"] }
    bob_biz_3        = { subject = { type = "user", id = "bob" }, action = "access_business", resources = local.biz["3"] }
    group_biz_3      = { subject = { type = "group", id = "%d" }, action = "access_business", resources = local.biz["3"] }
    alice_s1_host_1  = { subject = { type = "user", id = "alice" }, action = "execute_script", resources = [local.script, { system = "bk_cmdb", type = "host", id = "1" }] }
    alice_s1_host_2  = { subject = { type = "user", id = "alice" }, action = "execute_script", resources = [local.script, { system = "bk_cmdb", type = "host", id = "2" }] }
    carol_host_biz_3 = { subject = { type = "user", id = "carol" }, action = "quick_execute_script", resources = [{ system = "bk_cmdb", type = "host", id = "5", paths = ["/biz,3/"] }] }
    carol_host_biz_2 = { subject = { type = "user", id = "carol" }, action = "quick_execute_script", resources = [{ system = "bk_cmdb", type = "host", id = "5", paths = ["/biz,2/"] }] }
    carol_host_5     = { subject = { type = "user", id = "carol" }, action = "quick_execute_script", resources = [{ system = "bk_cmdb", type = "host", id = "5" }] }
  }
}

data "bkiam_access_check" "c" {
  for_each  = local.checks
  system    = "bk_job"
  subject   = each.value.subject
  actions   = [each.value.action]
  resources = each.value.resources
}

data "bkiam_access_check" "nobody" {
  for_each  = toset(["alice", "bob", "carol", "dave"])
  system    = "bk_job"
  subject   = { type = "user", id = each.key }
  actions   = ["execute_script"]
  resources = [local.script, { system = "bk_cmdb", type = "host", id = "2" }]
}

check "nobody_runs_s1_on_host_2" {
  assert {
    condition     = alltrue([for c in data.bkiam_access_check.nobody : c.all_allowed == false])
    error_message = "Someone may run s1 on host 2."
  }
}

output "answers" {
  value = { for k, c in merge(data.bkiam_access_check.c, data.bkiam_access_check.nobody) : k => { allowed = c.allowed, all = c.all_allowed, conditional = c.conditional } }
}
`, group))
	out, code := w.Run("apply", "-auto-approve")
	if out = strings.Join(strings.Fields(out), " "); code != 0 || strings.Contains(out, "Check block assertion failed") || strings.Contains(out, "Error:") {
		t.Fatalf("the apply exited %d, or the audit failed:\n%s", code, out)
	}
	type answer struct {
		Allowed     map[string]*bool `json:"allowed"`
		All         *bool            `json:"all"`
		Conditional []string         `json:"conditional"`
	}
	var got map[string]answer
	if err := json.Unmarshal([]byte(w.MustRun("output", "-json", "answers")), &got); err != nil {
		t.Fatal(err)
	}
	yes, no := new(bool), new(bool)
	*yes = true
	definite := func(action string, v *bool) answer {
		return answer{Allowed: map[string]*bool{action: v}, All: v, Conditional: []string{}}
	}
	want := map[string]answer{
		"alice_biz_2":      definite("access_business", yes),
		"alice_biz_3":      definite("access_business", no),
		"bob_biz_3":        definite("access_business", yes),
		"group_biz_3":      definite("access_business", yes),
		"alice_s1_host_1":  definite("execute_script", yes),
		"alice_s1_host_2":  definite("execute_script", no),
		"carol_host_biz_3": definite("quick_execute_script", yes),
		"carol_host_biz_2": definite("quick_execute_script", no),
		"carol_host_5":     {Allowed: map[string]*bool{"quick_execute_script": nil}, Conditional: []string{"quick_execute_script"}},
		"alice":            definite("execute_script", no),
		"bob":              definite("execute_script", no),
		"carol":            definite("execute_script", no),
		"dave":             definite("execute_script", no),
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		wt, _ := json.Marshal(want)
		t.Errorf("the answers:\n%s\nwant\n%s", g, wt)
	}
	const warning = "IAM answers false for user carol's quick_execute_script, and the user's policy allows quick_execute_script on some " +
		"instances depending on the topology path of bk_cmdb/host/5, which resources[0].paths does not give"
	if !strings.Contains(out, warning) {
		t.Errorf("the apply does not warn %q:\n%s", warning, out)
	}
	if strings.Contains(out, "Cannot tell an unknown group from a denied one") {
		t.Errorf("the apply cannot tell whether IAM knows group job-ops:\n%s", out)
	}
	if n := strings.Count(out, "depends on what the configuration does not give"); n != 1 {
		t.Errorf("the apply warns of %d conditional answers, want carol_host_5's alone:\n%s", n, out)
	}
}

// TestAccEffectivePermissionsCrossSystem: bkiam_effective_permissions of
// bk_job's actions, a local one among them, shows what IAM holds under
// the system of each type: alice's access_business as bk_cmdb/biz 2, her
// view_script as bk_job/script s1, her execute_script (script and host) as
// a combination; carol's quick_execute_script as the path /biz,3/ of
// bk_cmdb/host; bob's access_business on business 3 through his
// department's group; dave's as none.
func TestAccEffectivePermissionsCrossSystem(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, _, _ := jobSite(t)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), `
data "bkiam_effective_permissions" "p" {
  for_each = toset(["alice", "bob", "carol", "dave"])
  system   = "bk_job"
  user     = each.key
  actions  = ["access_business", "view_script", "execute_script", "quick_execute_script"]
}

output "permissions" {
  value = { for user, p in data.bkiam_effective_permissions.p : user => p.permissions }
}
`)
	w.MustRun("apply", "-auto-approve")
	type permission struct {
		Expression  string              `json:"expression"`
		Any         bool                `json:"any"`
		None        bool                `json:"none"`
		Conditional bool                `json:"conditional"`
		Instances   map[string][]string `json:"instances"`
		Paths       map[string][]string `json:"paths"`
	}
	var got map[string]map[string]permission
	if err := json.Unmarshal([]byte(w.MustRun("output", "-json", "permissions")), &got); err != nil {
		t.Fatal(err)
	}
	empty := map[string][]string{}
	none := permission{Expression: "{}", None: true, Instances: empty, Paths: empty}
	business := func(id string) permission {
		return permission{Expression: `{"field":"biz.id","op":"eq","value":"` + id + `"}`, Instances: map[string][]string{"bk_cmdb/biz": {id}}, Paths: empty}
	}
	want := map[string]map[string]permission{
		"alice": {
			"access_business": business("2"),
			"view_script":     {Expression: `{"field":"script.id","op":"eq","value":"s1"}`, Instances: map[string][]string{"bk_job/script": {"s1"}}, Paths: empty},
			"execute_script": {Expression: `{"content":[{"field":"host.id","op":"eq","value":"1"},{"field":"script.id","op":"eq","value":"s1"}],"op":"AND"}`,
				Conditional: true, Instances: empty, Paths: empty},
			"quick_execute_script": none,
		},
		"bob": {"access_business": business("3"), "view_script": none, "execute_script": none, "quick_execute_script": none},
		"carol": {"access_business": none, "view_script": none, "execute_script": none,
			"quick_execute_script": {Expression: `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,3/"}`, Instances: empty,
				Paths: map[string][]string{"bk_cmdb/host": {"/biz,3/"}}}},
		"dave": {"access_business": none, "view_script": none, "execute_script": none, "quick_execute_script": none},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		wt, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("the permissions\n%s\nwant\n%s", g, wt)
	}
}

// TestAccUserAccessAndExpiringCrossSystem: a user's own policies and what
// of them lapses, of actions mixing bk_job's own (view_script, on its
// script; create_whitelist, on no type) with actions on bk_cmdb's types
// (access_business, execute_script). bkiam_user_access lists alice's
// access_business as permanent, execute_script until 10 days on and
// view_script until 20 days on, with their backend ids, and holds_nothing
// is true for dave. bkiam_expiring over 15 days lists execute_script, over
// 30 days view_script too, and a check block over it warns naming them;
// the permanent access_business never lapses.
func TestAccUserAccessAndExpiringCrossSystem(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb, _, days := jobSite(t)
	config := func(within string) string {
		return fmt.Sprintf(`
locals {
  actions = ["access_business", "execute_script", "view_script", "create_whitelist"]
}

data "bkiam_user_access" "u" {
  for_each = toset(["alice", "dave"])
  system   = "bk_job"
  user     = each.key
  actions  = local.actions
}

data "bkiam_expiring" "alice" {
  system  = "bk_job"
  user    = "alice"
  actions = local.actions
  within  = %[1]q
}

check "nothing_lapses" {
  assert {
    condition     = data.bkiam_expiring.alice.lapsing == 0
    error_message = "Lapsing within %[1]s: ${join(", ", [for g in data.bkiam_expiring.alice.grants : "${g.action} on ${g.expires_at}"])}."
  }
}

output "access" {
  value = { for user, a in data.bkiam_user_access.u : user => { policies = a.policies, holds_nothing = a.holds_nothing } }
}
`, within)
	}
	rfc := func(at int64) string { return time.Unix(at, 0).UTC().Format(time.RFC3339) }
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	w.Configure(provider, config("15d"))
	out := strings.Join(strings.Fields(w.MustRun("apply", "-auto-approve")), " ")
	if want := fmt.Sprintf("Lapsing within 15d: execute_script on %s.", rfc(days(10))); !strings.Contains(out, want) {
		t.Errorf("the apply over 15 days does not warn %q:\n%s", want, out)
	}
	type policy struct {
		ExpiresAt string `json:"expires_at"`
		PolicyID  string `json:"policy_id"`
	}
	var got map[string]struct {
		Policies     map[string]policy `json:"policies"`
		HoldsNothing bool              `json:"holds_nothing"`
	}
	if err := json.Unmarshal([]byte(w.MustRun("output", "-json", "access")), &got); err != nil {
		t.Fatal(err)
	}
	wantExpiry := map[string]string{"access_business": "permanent", "execute_script": rfc(days(10)), "view_script": rfc(days(20))}
	for action, at := range wantExpiry {
		if p := got["alice"].Policies[action]; p.ExpiresAt != at || p.PolicyID == "" {
			t.Errorf("alice's %s: %+v, want expiring %s with its policy id", action, p, at)
		}
	}
	if len(got["alice"].Policies) != len(wantExpiry) || got["alice"].HoldsNothing || len(got["dave"].Policies) != 0 || !got["dave"].HoldsNothing {
		t.Errorf("the users' access: %+v, want alice's three policies and dave holding nothing", got)
	}
	w.Configure(provider, config("30d"))
	out = strings.Join(strings.Fields(w.MustRun("plan")), " ")
	if want := fmt.Sprintf("Lapsing within 30d: execute_script on %s, view_script on %s.", rfc(days(10)), rfc(days(20))); !strings.Contains(out, want) {
		t.Errorf("the plan over 30 days does not warn %q:\n%s", want, out)
	}
}
