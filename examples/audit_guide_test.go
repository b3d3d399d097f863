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
// each example directory copied whole (its versions.tf declares the
// provider, which a first plan of the copy needs) with a provider block
// beside it, on a site filled through IAM's APIs as the web UI or a script
// would: the on-call group's member is department 1, above alice's and
// carol's department 2 and bob's department 3; none of the team is a
// member directly.
//   - Before the group is granted anything, the plan warns that no member
//     may view either host, naming each; the gate's plan (the guide's
//     postcondition, examples/guides/audit-gate) fails.
//   - Once the group is granted view_host on both hosts (held through a
//     parent department), the plan passes, and so does the gate's.
//   - A grant of delete_host on every host of business 1 to bob, as the
//     web UI grants it, makes the plan warn of bob on both hosts, which
//     the check gives the path of; without the paths, it names him as
//     conditional rather than passing.
//   - The apply stores the report: what each member may do (bob's
//     deletes under /biz,1/), and the group among each member's groups.
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
	read := func(example, file string) string {
		t.Helper()
		config, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "examples", "guides", example, file))
		if err != nil {
			t.Fatal(err)
		}
		return string(config)
	}
	workspace := func(example string) *acctest.CLIWorkspace {
		t.Helper()
		w := acctest.NewCLIWorkspace(t, providerDir)
		w.Write("versions.tf", read(example, "versions.tf"))
		w.Write("main.tf", read(example, "main.tf"))
		w.Write("provider.tf", provider)
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

	// Every host of business 1, as the web UI and CMDB grant: IAM holds
	// host._bk_iam_path_ starts_with "/biz,1/".
	acctest.GrantUnderOutside(t, c, "bk_cmdb", "bob", "delete_host", "host", bkiam.PermanentExpiry, acctest.Biz("1"))
	if out := plan(); !strings.Contains(out, "Allowed to delete: bob on host 1, bob on host 2.") || strings.Contains(out, "Not allowed") {
		t.Errorf("after bob's grant of delete_host on business 1 the plan does not warn of bob alone:\n%s", out)
	}
	// The guide's configuration without the hosts' paths: IAM answers
	// false, and the check names bob as conditional instead of passing.
	noPaths := acctest.NewCLIWorkspace(t, providerDir)
	noPaths.Write("versions.tf", read("audit", "versions.tf"))
	noPaths.Write("main.tf", strings.ReplaceAll(read("audit", "main.tf"), `["/biz,1/"]`, "null"))
	noPaths.Write("provider.tf", provider)
	if out := strings.Join(strings.Fields(noPaths.MustRun("plan")), " "); !strings.Contains(out,
		"Allowed to delete: bob on host 1 (conditional), bob on host 2 (conditional).") || !strings.Contains(out, "IAM's answer for delete_host depends on what the configuration does not give") {
		t.Errorf("without the hosts' paths the plan does not name bob as conditional:\n%s", out)
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
		"bob":   {"view_host": both, "edit_host": none, "delete_host": {"under /biz,1/"}},
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
