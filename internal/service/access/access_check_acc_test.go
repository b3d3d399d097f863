package access_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccAccessCheck_planTimeValidation: bkiam_access_check's mistakes
// fail the plan before any check is sent, naming the attribute and the
// fix; a typo in the user among them, which IAM would answer "denied".
func TestAccAccessCheck_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	resource.Test(t, acctest.PlanTimeTest(t, acctest.Transports[acctest.GatewayTransport].Block(sb.URL), acctest.AccessCheckValidationCases()))
}

// TestAccAccessCheck: a site filled through IAM's APIs. Group "oncall"
// has department 1 as a member, the parent of alice's department 2. A
// check block asserts that alice may view host 1 and bob may not delete
// it: before the group is granted view_host on host 1 the plan warns
// that alice's assertion failed; once it is granted (through the
// management API) the plan passes, alice allowed through an ancestor
// department's group. admin is allowed as a manager. With check_model
// off, resources of another type are IAM's system error, with its fix,
// not a silent false.
func TestAccAccessCheck(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	c := acctest.OutsideClient(t, sb)
	_, oncall := acctest.OutsideGroup(t, c, "oncall-managers", "oncall")
	if err := c.AddMembers(ctx, "bk_cmdb", oncall, []bkiam.MemberRef{{Type: "department", ID: "1"}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}

	checks := `
data "bkiam_access_check" "alice" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", id = "1" }]
}

data "bkiam_access_check" "bob" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "bob" }
  actions   = ["delete_host"]
  resources = [{ system = "bk_cmdb", type = "host", id = "1" }]
}

data "bkiam_access_check" "admin" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "admin" }
  actions   = ["delete_host"]
  resources = [{ system = "bk_cmdb", type = "host", id = "1" }]
}

check "alice_views_host_1" {
  assert {
    condition     = data.bkiam_access_check.alice.all_allowed
    error_message = "alice may not view host 1."
  }
}

check "bob_does_not_delete_host_1" {
  assert {
    condition     = !data.bkiam_access_check.bob.allowed["delete_host"]
    error_message = "bob may delete host 1."
  }
}

output "admin" {
  value = "${data.bkiam_access_check.admin.all_allowed} ${data.bkiam_access_check.admin.as_manager}"
}
`
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	w.Configure(provider, checks)
	out := strings.Join(strings.Fields(w.MustRun("plan")), " ")
	if !strings.Contains(out, "alice may not view host 1.") || strings.Contains(out, "bob may delete host 1.") {
		t.Errorf("before the grant the plan does not warn of alice alone:\n%s", out)
	}
	if !strings.Contains(out, `admin = "true true"`) {
		t.Errorf("the plan does not show admin allowed as a manager:\n%s", out)
	}

	if err := c.GrantGroupPolicies(ctx, "bk_cmdb", oncall, bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: "view_host"}},
		Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "1"}}}}}}); err != nil {
		t.Fatal(err)
	}
	out = strings.Join(strings.Fields(w.MustRun("plan")), " ")
	if strings.Contains(out, "Check block assertion failed") {
		t.Errorf("after the group's grant, which alice holds through her department's parent, a check still fails:\n%s", out)
	}

	// Without the model's check, resources that are not the action's
	// types reach IAM, which answers a system error: the plan fails, never
	// a silent false.
	w.Configure(strings.Replace(provider, "provider \"bkiam\" {\n", "provider \"bkiam\" {\n  check_model = false\n", 1), `
data "bkiam_access_check" "wrong" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "biz", id = "1" }]
}

output "wrong" {
  value = data.bkiam_access_check.wrong.all_allowed
}
`)
	out, code := w.Run("plan")
	if out = strings.Join(strings.Fields(out), " "); code == 0 || !strings.Contains(out, "Cannot check access") ||
		!strings.Contains(out, "give one instance of each related type, in the order of the system's model") {
		t.Errorf("resources of another type did not fail the plan with IAM's error and its fix (exit %d):\n%s", code, out)
	}
}

// TestAccEffectivePermissions_planTimeValidation: a typo in the user or
// an action fails the plan before any query.
func TestAccEffectivePermissions_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	resource.Test(t, acctest.PlanTimeTest(t, acctest.Transports[acctest.GatewayTransport].Block(sb.URL), acctest.EffectivePermissionsValidationCases()))
}

// TestAccEffectivePermissions: a site filled through IAM's APIs. alice
// holds view_host on host 10 herself, and through group "oncall" (whose
// member is department 1, the parent of her department) view_host on
// host 1. bkiam_effective_permissions shows view_host on hosts 1 and 10
// as one merged answer, delete_host as nothing, the group among her
// groups, and admin's answer as a manager's: everything. dave, in no
// department and no group, has groups [], not null.
func TestAccEffectivePermissions(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	c := acctest.OutsideClient(t, sb)
	acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "alice", []string{"view_host"}, []string{"10"}, bkiam.PermanentExpiry)
	_, oncall := acctest.OutsideGroup(t, c, "oncall-managers", "oncall")
	if err := c.AddMembers(ctx, "bk_cmdb", oncall, []bkiam.MemberRef{{Type: "department", ID: "1"}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	if err := c.GrantGroupPolicies(ctx, "bk_cmdb", oncall, bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: "view_host"}},
		Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "1"}}}}}}); err != nil {
		t.Fatal(err)
	}
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), `
data "bkiam_effective_permissions" "alice" {
  system  = "bk_cmdb"
  user    = "alice"
  actions = ["view_host", "delete_host"]
}

data "bkiam_effective_permissions" "admin" {
  system  = "bk_cmdb"
  user    = "admin"
  actions = ["delete_host"]
}

output "alice" {
  value = jsonencode({
    view   = data.bkiam_effective_permissions.alice.permissions["view_host"].instances
    delete = data.bkiam_effective_permissions.alice.permissions["delete_host"].none
    groups = data.bkiam_effective_permissions.alice.groups
  })
}

output "admin" {
  value = "${data.bkiam_effective_permissions.admin.permissions["delete_host"].any} ${data.bkiam_effective_permissions.admin.as_manager}"
}

data "bkiam_effective_permissions" "dave" {
  system  = "bk_cmdb"
  user    = "dave"
  actions = ["view_host"]
}

output "dave_groups" {
  value = data.bkiam_effective_permissions.dave.groups == null ? "null" : jsonencode(data.bkiam_effective_permissions.dave.groups)
}
`)
	out := strings.Join(strings.Fields(w.MustRun("plan")), " ")
	want := fmt.Sprintf(`alice = jsonencode( { + delete = true + groups = [ + "%d", ] + view = { + "bk_cmdb/host" = [ + "1", + "10", ] } } )`, oncall)
	if !strings.Contains(out, want) {
		t.Errorf("the plan does not show alice's effective permissions %q:\n%s", want, out)
	}
	if !strings.Contains(out, `admin = "true true"`) {
		t.Errorf("the plan does not show admin's answer as a manager's:\n%s", out)
	}
	if !strings.Contains(out, `dave_groups = jsonencode([])`) {
		t.Errorf("the plan does not show dave, in no group, with groups []:\n%s", out)
	}
}

// TestAccAccessThroughSubjectTemplate: a site filled through IAM's
// management routes as another system's tooling would. Group "mirror" is
// created with sync_subject_template, so IAM keeps a read-only subject
// template of its members; its member is department 3, bob's. Group
// "viewers", granted view_host on host 5, has that template as a member
// (type template) and nobody else. bob may then view host 5 through the
// template: bkiam_access_check allows it and bkiam_effective_permissions
// shows host 5, while its groups list the mirror group (joined through his
// department) and not the viewers, which IAM's user-groups route does not
// follow templates to. carol, in no department of the template, may not.
func TestAccAccessThroughSubjectTemplate(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	c := acctest.OutsideClient(t, sb)
	gm, _ := acctest.OutsideGroup(t, c, "platform", "")
	var mirror []int64
	acctest.ManagementCall(t, sb, http.MethodPost, fmt.Sprintf("/api/v2/open/management/systems/bk_cmdb/grade_managers/%d/groups/", gm),
		`{"groups": [{"name": "mirror", "description": ""}], "sync_subject_template": true}`, &mirror)
	if err := c.AddMembers(ctx, "bk_cmdb", mirror[0], []bkiam.MemberRef{{Type: "department", ID: "3"}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	var templates struct {
		Results []struct {
			ID int64 `json:"id"`
		} `json:"results"`
	}
	acctest.ManagementCall(t, sb, http.MethodGet, fmt.Sprintf("/api/v2/open/management/systems/bk_cmdb/grade_managers/%d/subject_templates/", gm), "", &templates)
	if len(templates.Results) != 1 {
		t.Fatalf("IAM lists %d subject templates of the grade manager, want the mirror group's one", len(templates.Results))
	}
	viewers, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "viewers"}})
	if err != nil {
		t.Fatal(err)
	}
	acctest.ManagementCall(t, sb, http.MethodPost, fmt.Sprintf("/api/v2/open/management/systems/bk_cmdb/groups/%d/members/", viewers[0]),
		fmt.Sprintf(`{"members": [{"type": "template", "id": "%d"}], "expired_at": %d}`, templates.Results[0].ID, bkiam.PermanentExpiry), nil)
	if err := c.GrantGroupPolicies(ctx, "bk_cmdb", viewers[0], bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: "view_host"}},
		Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "5"}}}}}}); err != nil {
		t.Fatal(err)
	}

	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), `
data "bkiam_access_check" "view" {
  for_each  = toset(["bob", "carol"])
  system    = "bk_cmdb"
  subject   = { type = "user", id = each.key }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", id = "5" }]
}

data "bkiam_effective_permissions" "bob" {
  system  = "bk_cmdb"
  user    = "bob"
  actions = ["view_host"]
}

output "bob" {
  value = jsonencode({
    allowed = { for user, c in data.bkiam_access_check.view : user => c.all_allowed }
    view    = data.bkiam_effective_permissions.bob.permissions["view_host"].instances
    groups  = data.bkiam_effective_permissions.bob.groups
  })
}
`)
	out := strings.Join(strings.Fields(w.MustRun("plan")), " ")
	want := fmt.Sprintf(`bob = jsonencode( { + allowed = { + bob = true + carol = false } + groups = [ + "%d", ] + view = { + "bk_cmdb/host" = [ + "5", ] } } )`, mirror[0])
	if !strings.Contains(out, want) {
		t.Errorf("the plan does not show bob's access through the template %q:\n%s", want, out)
	}
}
