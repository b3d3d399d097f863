package access_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// underBiz is a path grant of every host under business biz, as the web
// UI and CMDB grant: IAM stores it as host._bk_iam_path_ starts_with
// "/biz,BIZ/".
func underBiz(biz string) []bkiam.PathResource {
	return acctest.Under("bk_cmdb", "host", acctest.Biz(biz))
}

// grantUnderBiz grants user action on every host under business biz.
func grantUnderBiz(t *testing.T, c *bkiam.Client, user, action, biz string) {
	t.Helper()
	acctest.GrantUnderOutside(t, c, "bk_cmdb", user, action, "host", bkiam.PermanentExpiry, acctest.Biz(biz))
}

// TestAccAccessCheckPaths: a site granted by topology, as real sites
// are. alice holds delete_host on every host under business 1; the
// on-call group, whose member is department 1 above bob's, holds
// edit_host on every host under business 2. IAM allows an instance of
// such a grant only when the check gives its path: with it, alice may
// delete host 7 of business 1 (also deeper, under a set of it) and not
// host 7 of business 2 or a host without ancestors, and bob may edit
// host 8 of business 2 through his department's group. Without it, the
// answer is conditional: allowed is null, all_allowed null, conditional
// names the action, and the plan warns naming the resource, the action
// and resources[0].paths; an action the subject holds nothing of beside
// it stays a plain false, and makes all_allowed false. The policy is
// read only when IAM denies something, in one call; whether IAM knows a
// user, once per user and provider process. It runs through every CLI,
// as issue 51 asks of an access check over a path grant.
func TestAccAccessCheckPaths(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	c := acctest.OutsideClient(t, sb)
	grantUnderBiz(t, c, "alice", "delete_host", "1")
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", bkiam.GradeManagerSpec{Name: "oncall-managers", Members: []string{"alice"},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "edit_host"}}, Resources: underBiz("2")}},
		SubjectScopes:       []bkiam.SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		t.Fatal(err)
	}
	groups, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "oncall"}})
	if err != nil {
		t.Fatal(err)
	}
	oncall := groups[0]
	if err := c.AddMembers(ctx, "bk_cmdb", oncall, []bkiam.MemberRef{{Type: "department", ID: "1"}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	if err := c.GrantGroupPolicies(ctx, "bk_cmdb", oncall, bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: "edit_host"}}, Resources: underBiz("2")}); err != nil {
		t.Fatal(err)
	}

	providerDir := testutil.BuildProvider(t)
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	w := acctest.NewCLIWorkspace(t, providerDir)
	w.Configure(provider, `
locals {
  checks = {
    alice_biz_1      = { user = "alice", actions = ["delete_host"], host = "7", paths = ["/biz,1/"] }
    alice_set_of_1   = { user = "alice", actions = ["delete_host"], host = "7", paths = ["/biz,2/", "/biz,1/set,3/"] }
    alice_biz_2      = { user = "alice", actions = ["delete_host"], host = "7", paths = ["/biz,2/"] }
    alice_no_parent  = { user = "alice", actions = ["delete_host"], host = "7", paths = [] }
    alice_no_path    = { user = "alice", actions = ["delete_host"], host = "7", paths = null }
    alice_and_denied = { user = "alice", actions = ["delete_host", "view_host"], host = "7", paths = null }
    bob_biz_2        = { user = "bob", actions = ["edit_host"], host = "8", paths = ["/biz,2/"] }
    bob_no_path      = { user = "bob", actions = ["edit_host"], host = "8", paths = null }
  }
}

data "bkiam_access_check" "c" {
  for_each  = local.checks
  system    = "bk_cmdb"
  subject   = { type = "user", id = each.value.user }
  actions   = each.value.actions
  resources = [{ system = "bk_cmdb", type = "host", id = each.value.host, paths = each.value.paths }]
}

output "answers" {
  value = { for k, c in data.bkiam_access_check.c : k => { allowed = c.allowed, all = c.all_allowed, conditional = c.conditional } }
}
`)
	out := strings.Join(strings.Fields(w.MustRun("apply", "-auto-approve")), " ")
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
		"alice_biz_1":      definite("delete_host", yes),
		"alice_set_of_1":   definite("delete_host", yes),
		"alice_biz_2":      definite("delete_host", no),
		"alice_no_parent":  definite("delete_host", no),
		"alice_no_path":    {Allowed: map[string]*bool{"delete_host": nil}, All: nil, Conditional: []string{"delete_host"}},
		"alice_and_denied": {Allowed: map[string]*bool{"delete_host": nil, "view_host": no}, All: no, Conditional: []string{"delete_host"}},
		"bob_biz_2":        definite("edit_host", yes),
		"bob_no_path":      {Allowed: map[string]*bool{"edit_host": nil}, All: nil, Conditional: []string{"edit_host"}},
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		wt, _ := json.Marshal(want)
		t.Errorf("the answers:\n%s\nwant\n%s", g, wt)
	}
	for _, warning := range []string{
		`IAM answers false for user alice's delete_host, and the user's policy allows delete_host on some instances depending on the topology path of bk_cmdb/host/7, ` +
			`which resources[0].paths does not give`,
		`IAM answers false for user bob's edit_host, and the user's policy allows edit_host on some instances depending on the topology path of bk_cmdb/host/8`,
		`To decide it, give resources[0].paths: the path of the instance's ancestors in IAM's form, e.g. ["/biz,1/"] ([] for an instance without ancestors). ` +
			`Until then allowed["delete_host"] is null and conditional lists delete_host.`,
	} {
		if !strings.Contains(out, warning) {
			t.Errorf("the apply does not warn %q:\n%s", warning, out)
		}
	}
	if strings.Contains(out, "alice's view_host") {
		t.Errorf("the apply warns of view_host, which alice holds nothing of:\n%s", out)
	}

	// Whether IAM knows a user is read once per user and provider process,
	// however many data sources name the user.
	users := acctest.NewCLIWorkspace(t, providerDir)
	users.Configure(provider, `
data "bkiam_access_check" "c" {
  for_each  = { alice_7 = ["alice", "7"], alice_8 = ["alice", "8"], alice_9 = ["alice", "9"], bob_7 = ["bob", "7"] }
  system    = "bk_cmdb"
  subject   = { type = "user", id = each.value[0] }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", id = each.value[1] }]
}

data "bkiam_effective_permissions" "alice" {
  system  = "bk_cmdb"
  user    = "alice"
  actions = ["view_host"]
}

output "read" {
  value = [length(data.bkiam_access_check.c), length(data.bkiam_effective_permissions.alice.groups)]
}
`)
	before := sb.Stats().Requests["user_groups"]
	users.MustRun("plan")
	if n := sb.Stats().Requests["user_groups"] - before; n != 2 {
		t.Errorf("five data sources of two users read IAM's user groups %d times in one plan, want 2", n)
	}

	// The policy is read only for a check IAM denies something of: one
	// query for both of alice's actions, none for an allowed check.
	for _, c := range []struct {
		check   string
		queries int
	}{{"alice_biz_1", 0}, {"alice_and_denied", 1}} {
		w := acctest.NewCLIWorkspace(t, providerDir)
		w.Configure(provider, strings.Replace(strings.Replace(`
data "bkiam_access_check" "c" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ACTIONS
  resources = [{ system = "bk_cmdb", type = "host", id = "7", paths = PATHS }]
}

output "all" {
  value = data.bkiam_access_check.c.all_allowed
}
`, "ACTIONS", map[string]string{"alice_biz_1": `["delete_host"]`, "alice_and_denied": `["delete_host", "view_host"]`}[c.check], 1),
			"PATHS", map[string]string{"alice_biz_1": `["/biz,1/"]`, "alice_and_denied": `null`}[c.check], 1))
		before := sb.Stats().Requests["policy_query_by_actions"]
		w.MustRun("plan")
		if n := sb.Stats().Requests["policy_query_by_actions"] - before; n != c.queries {
			t.Errorf("%s: the plan read the policy %d times, want %d", c.check, n, c.queries)
		}
	}
}

// TestAccAccessCheckNullInConditions: what a check block and a
// postcondition do with a conditional answer's null, on each CLI, as
// the auditing guide and the data source's page say. alice holds
// delete_host on every host under business 1; the checks of host 7
// give no path (null) and of host 9 its path (true), and of host 8 a
// path under business 2 (false).
//   - A condition that is the null itself fails the plan (exit 1), in a
//     check block as in a postcondition: "Condition expression must
//     return either true or false, not null"; so does its negation
//     ("argument must not be null").
//   - alltrue over a list holding the null is false, and anytrue over one
//     is true only through another element: "everyone may" written with
//     alltrue warns, and "nobody may" written as !anytrue passes
//     silently; written as alltrue of all_allowed == false, it warns.
//   - null && true is false on Terraform 1.16 and OpenTofu, and an error
//     on Terraform 1.5.7: there "nobody may" written as !anytrue of
//     all_allowed && !as_manager passes silently.
func TestAccAccessCheckNullInConditions(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	grantUnderBiz(t, acctest.OutsideClient(t, sb), "alice", "delete_host", "1")
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	checks := `
data "bkiam_access_check" "host" {
  for_each  = { "7" = null, "9" = ["/biz,1/"], "8" = ["/biz,2/"] }
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["delete_host"]
  resources = [{ system = "bk_cmdb", type = "host", id = each.key, paths = each.value }]
}
`
	cli := testutil.CLI(t)
	for _, c := range []struct {
		name, config string
		exit         int
		want         string
	}{
		{"a null condition", `
check "c" {
  assert {
    condition     = data.bkiam_access_check.host["7"].all_allowed
    error_message = "MARK"
  }
}`, 1, "Condition expression must return either true or false, not null."},
		{"a null condition's negation", `
check "c" {
  assert {
    condition     = !data.bkiam_access_check.host["7"].all_allowed
    error_message = "MARK"
  }
}`, 1, "argument must not be null"},
		{"a null postcondition", `
data "bkiam_access_check" "p" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["delete_host"]
  resources = [{ system = "bk_cmdb", type = "host", id = "7" }]
  lifecycle {
    postcondition {
      condition     = self.all_allowed
      error_message = "MARK"
    }
  }
}`, 1, "Condition expression must return either true or false, not null."},
		{"everyone may, with alltrue", `
check "c" {
  assert {
    condition     = alltrue([data.bkiam_access_check.host["7"].all_allowed, data.bkiam_access_check.host["9"].all_allowed])
    error_message = "MARK"
  }
}`, 0, "Check block assertion failed"},
		{"nobody may, with !anytrue", `
check "c" {
  assert {
    condition     = !anytrue([data.bkiam_access_check.host["7"].all_allowed, data.bkiam_access_check.host["8"].all_allowed])
    error_message = "MARK"
  }
}`, 0, ""},
		{"nobody may, with == false", `
check "c" {
  assert {
    condition     = alltrue([for c in [data.bkiam_access_check.host["7"], data.bkiam_access_check.host["8"]] : c.all_allowed == false])
    error_message = "MARK"
  }
}`, 0, "Check block assertion failed"},
		{"nobody may, with !anytrue of &&", `
check "c" {
  assert {
    condition     = !anytrue([for c in [data.bkiam_access_check.host["7"], data.bkiam_access_check.host["8"]] : c.all_allowed && !c.as_manager])
    error_message = "MARK"
  }
}`, map[bool]int{true: 1, false: 0}[!cli.AtLeast(1, 6) && !cli.IsTofu()], map[bool]string{true: "argument must not be null", false: ""}[!cli.AtLeast(1, 6) && !cli.IsTofu()]},
		{"null && true", `
output "and" {
  value = data.bkiam_access_check.host["7"].all_allowed && true
}`, map[bool]int{true: 1, false: 0}[!cli.AtLeast(1, 6) && !cli.IsTofu()], map[bool]string{true: "argument must not be null", false: "and = false"}[!cli.AtLeast(1, 6) && !cli.IsTofu()]},
	} {
		w.Configure(provider, checks+c.config)
		out, code := w.Run("plan")
		out = strings.Join(strings.Fields(out), " ")
		if code != c.exit || !strings.Contains(out, c.want) || (c.want == "" && strings.Contains(out, "MARK")) {
			t.Errorf("%s on %s: exit %d, want %d with %q:\n%s", c.name, cli, code, c.exit, c.want, out)
		}
	}
}
