package examples

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccAuditGuide runs the auditing guide's configuration
// (examples/guides/audit, docs/guides/audit-access.md) as the guide does,
// on a site filled through IAM's APIs as the web UI or a script would:
// the on-call group's member is department 1, above alice's and carol's
// department 2 and bob's department 3; none of the team is a member
// directly.
//   - Before the group is granted anything, the plan warns that no member
//     may view either host, naming each; the gate's plan (the guide's
//     postcondition, examples/guides/audit-gate) fails.
//   - Once the group is granted view_host on both hosts (held through a
//     parent department), the plan passes, and so does the gate's.
//   - A script's grant of delete_host on host 2 to bob makes the plan warn
//     of bob alone.
//   - The apply stores the report: what each member may do, and the group
//     among each member's groups.
func TestAccAuditGuide(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	c := acctest.OutsideClient(t, sb)
	_, oncall := acctest.OutsideGroup(t, c, "platform", "oncall")
	if err := c.AddMembers(ctx, "bk_cmdb", oncall, []bkiam.MemberRef{{Type: "department", ID: "1"}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}

	providerDir := testutil.BuildProvider(t)
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	workspace := func(example string) *acctest.CLIWorkspace {
		t.Helper()
		config, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "examples", "guides", example, "main.tf"))
		if err != nil {
			t.Fatal(err)
		}
		w := acctest.NewCLIWorkspace(t, providerDir)
		w.Configure(provider, string(config))
		return w
	}
	w, gate := workspace("audit"), workspace("audit-gate")
	plan := func() string {
		t.Helper()
		return strings.Join(strings.Fields(w.MustRun("plan")), " ")
	}

	out := plan()
	if want := "Not allowed to view: alice on host 1, alice on host 2, bob on host 1, bob on host 2, carol on host 1, carol on host 2."; !strings.Contains(out, want) {
		t.Errorf("before the group's grant the plan does not warn %q:\n%s", want, out)
	}
	if strings.Contains(out, "Allowed to delete") {
		t.Errorf("before any grant of delete_host the plan warns of one:\n%s", out)
	}
	if out, code := gate.Run("plan"); code != 1 || !strings.Contains(strings.Join(strings.Fields(out), " "), "Not allowed to view: bob on host 2.") {
		t.Errorf("before the group's grant the gate's plan does not fail naming bob on host 2 (exit %d):\n%s", code, out)
	}

	if err := c.GrantGroupPolicies(ctx, "bk_cmdb", oncall, bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: "view_host"}},
		Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{
			{{System: "bk_cmdb", Type: "host", ID: "1"}}, {{System: "bk_cmdb", Type: "host", ID: "2"}}}}}}); err != nil {
		t.Fatal(err)
	}
	if out := plan(); strings.Contains(out, "Not allowed") || strings.Contains(out, "Allowed to delete") {
		t.Errorf("after the group's grant, which the team holds through a parent department, the plan still warns:\n%s", out)
	}
	gate.MustRun("plan")

	if _, err := c.BatchInstance(ctx, bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant,
		ExpiredAt: bkiam.PermanentExpiry, Subject: bkiam.Subject{Type: "user", ID: "bob"}, Actions: []bkiam.Action{{ID: "delete_host"}},
		Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: "2", Name: "host2"}}}}}); err != nil {
		t.Fatal(err)
	}
	if out := plan(); !strings.Contains(out, "Allowed to delete: bob on host 2.") || strings.Contains(out, "Not allowed") {
		t.Errorf("after bob's grant of delete_host the plan does not warn of bob alone:\n%s", out)
	}

	// The report, as the guide reads it: apply (which changes nothing in
	// IAM) stores the outputs, terraform output prints them.
	w.MustRun("apply", "-auto-approve")
	var access map[string]map[string][]string
	if err := json.Unmarshal([]byte(w.MustRun("output", "-json", "team_access")), &access); err != nil {
		t.Fatal(err)
	}
	both, none := []string{"1", "2"}, []string{}
	want := map[string]map[string][]string{
		"alice": {"view_host": both, "edit_host": none, "delete_host": none},
		"bob":   {"view_host": both, "edit_host": none, "delete_host": {"2"}},
		"carol": {"view_host": both, "edit_host": none, "delete_host": none},
	}
	if !reflect.DeepEqual(access, want) {
		t.Errorf("team_access = %v, want %v", access, want)
	}
	var memberOf map[string][]string
	if err := json.Unmarshal([]byte(w.MustRun("output", "-json", "team_groups")), &memberOf); err != nil {
		t.Fatal(err)
	}
	for _, user := range []string{"alice", "bob", "carol"} {
		if !slices.Contains(memberOf[user], fmt.Sprint(oncall)) {
			t.Errorf("team_groups[%s] = %v, without the on-call group %d", user, memberOf[user], oncall)
		}
	}
}
