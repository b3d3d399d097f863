package access_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccEffectivePermissionsShapes: alice holds, herself and through
// the on-call group her department's parent is in, what real sites grant:
// view_host on host 9 (hers) and 10 (the group's), edit_host on every
// host under business 2 (the group's), delete_host on every host under
// business 1, edit_biz_host on business 1 with host 7 (a combined
// resource) and view_biz on every business. bkiam_effective_permissions
// shows the ids in instances, the prefixes in paths, every business in
// any, the combination as conditional, each key SYSTEM/TYPE; and the same
// with check_model off. The grants are made in one order on one site and
// in the other on a second: IAM merges the rows in the order it stores
// them, and the expression is the same on both.
func TestAccEffectivePermissionsShapes(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.SameOnEveryCLI(t, "the values of a data source's read are the provider's")
	ctx := context.Background()
	site := func(aliceFirst bool) *sandboxtest.Sandbox {
		sb := sandboxtest.Start(t)
		c := acctest.OutsideClient(t, sb)
		gm, err := c.CreateGradeManager(ctx, "bk_cmdb", bkiam.GradeManagerSpec{Name: "oncall-managers", Members: []string{"alice"},
			AuthorizationScopes: []bkiam.AuthorizationScope{
				{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "view_host"}}, Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host",
					Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "*"}}}}}},
				{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "edit_host"}}, Resources: underBiz("2")}},
			SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}}})
		if err != nil {
			t.Fatal(err)
		}
		groups, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "oncall"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddMembers(ctx, "bk_cmdb", groups[0], []bkiam.MemberRef{{Type: "department", ID: "1"}}, bkiam.PermanentExpiry); err != nil {
			t.Fatal(err)
		}
		hers := func() {
			acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "alice", []string{"view_host"}, []string{"9"}, bkiam.PermanentExpiry)
			grantUnderBiz(t, c, "alice", "delete_host", "1")
		}
		theGroups := func() {
			if err := c.GrantGroupPolicies(ctx, "bk_cmdb", groups[0], bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: "view_host"}},
				Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "10"}}}}}}); err != nil {
				t.Fatal(err)
			}
			if err := c.GrantGroupPolicies(ctx, "bk_cmdb", groups[0], bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: "edit_host"}}, Resources: underBiz("2")}); err != nil {
				t.Fatal(err)
			}
		}
		if aliceFirst {
			hers()
			theGroups()
		} else {
			theGroups()
			hers()
		}
		if _, err := c.BatchInstance(ctx, bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant, ExpiredAt: bkiam.PermanentExpiry,
			Subject: bkiam.Subject{Type: "user", ID: "alice"}, Actions: []bkiam.Action{{ID: "edit_biz_host"}},
			Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "biz", Instances: []bkiam.Instance{{ID: "1", Name: "biz1"}}},
				{System: "bk_cmdb", Type: "host", Instances: []bkiam.Instance{{ID: "7", Name: "host7"}}}}}); err != nil {
			t.Fatal(err)
		}
		// Every business: an empty instance list, which the client refuses to send.
		acctest.ManagementCall(t, sb, "POST", "/api/v1/open/authorization/batch_instance/", `{"system": "bk_cmdb", "operate": "grant", `+
			`"subject": {"type": "user", "id": "alice"}, "actions": [{"id": "view_biz"}], "resources": [{"system": "bk_cmdb", "type": "biz", "instances": []}]}`, nil)
		return sb
	}
	config := `
data "bkiam_effective_permissions" "alice" {
  system  = "bk_cmdb"
  user    = "alice"
  actions = ["view_host", "edit_host", "delete_host", "edit_biz_host", "view_biz"]
}

output "permissions" {
  value = data.bkiam_effective_permissions.alice.permissions
}
`
	type permission struct {
		Expression  string              `json:"expression"`
		Any         bool                `json:"any"`
		None        bool                `json:"none"`
		Conditional bool                `json:"conditional"`
		Instances   map[string][]string `json:"instances"`
		Paths       map[string][]string `json:"paths"`
	}
	hosts := func(v ...string) map[string][]string { return map[string][]string{"bk_cmdb/host": v} }
	none := map[string][]string{}
	under := func(biz string) string {
		return `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,` + biz + `/"}`
	}
	want := map[string]permission{
		"view_host":   {Expression: `{"field":"host.id","op":"in","value":["10","9"]}`, Instances: hosts("10", "9"), Paths: none},
		"edit_host":   {Expression: under("2"), Instances: none, Paths: hosts("/biz,2/")},
		"delete_host": {Expression: under("1"), Instances: none, Paths: hosts("/biz,1/")},
		"edit_biz_host": {Expression: `{"content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"eq","value":"7"}],"op":"AND"}`,
			Conditional: true, Instances: none, Paths: none},
		"view_biz": {Expression: `{"field":"biz.id","op":"any","value":[]}`, Any: true, Instances: none, Paths: none},
	}
	providerDir := testutil.BuildProvider(t)
	for _, c := range []struct {
		name       string
		aliceFirst bool
		checkModel bool
	}{{"her grants first", true, true}, {"the group's first, check_model off", false, false}} {
		sb := site(c.aliceFirst)
		provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
		if !c.checkModel {
			provider = acctest.NoModelChecks(provider)
		}
		w := acctest.NewCLIWorkspace(t, providerDir)
		w.Configure(provider, config)
		w.MustRun("apply", "-auto-approve")
		var got map[string]permission
		if err := json.Unmarshal([]byte(w.MustRun("output", "-json", "permissions")), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			g, _ := json.MarshalIndent(got, "", " ")
			wt, _ := json.MarshalIndent(want, "", " ")
			t.Errorf("%s: alice's permissions\n%s\nwant\n%s", c.name, g, wt)
		}
	}
}
