package bkiam

import (
	"context"
	"net/http"
	"testing"
)

// TestGroupPoliciesAttributes: a group policy made in the IAM web UI can
// hold a type's instances by a condition on their attributes (属性) beside
// or instead of instances. Such a type is marked, so that no reader takes
// its paths for everything the group holds; a type of instances only, and
// one of every instance (no condition), are not.
func TestGroupPoliciesAttributes(t *testing.T) {
	body := `{"result":true,"code":0,"message":"OK","data":[{"id":"view_host","policy_id":3,"resource_groups":[{"related_resource_types":[` +
		`{"system_id":"bk_cmdb","type":"host","condition":[{"id":"c1","instances":[],"attributes":[{"id":"os","name":"OS","values":[{"id":"linux","name":"linux"}]}]}]}]}]},` +
		`{"id":"edit_host","policy_id":4,"resource_groups":[{"related_resource_types":[` +
		`{"system_id":"bk_cmdb","type":"host","condition":[{"id":"c2","instances":[{"type":"host","path":[[{"system_id":"bk_cmdb","type":"host","id":"7","name":"h7"}]]}],"attributes":[]}]}]}]},` +
		`{"id":"delete_host","policy_id":5,"resource_groups":[{"related_resource_types":[{"system_id":"bk_cmdb","type":"host","condition":[]}]}]}]}`
	fs := newFakeServer(t, reply(http.StatusOK, body))
	c := mustClient(t, gatewayConfig(fs.URL))
	policies, err := c.GroupPolicies(context.Background(), "bk_cmdb", 9)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]bool{}
	for _, p := range policies {
		tp := p.ResourceGroups[0][0]
		got[p.Action] = [2]bool{tp.Attributes, tp.Any}
	}
	want := map[string][2]bool{"view_host": {true, false}, "edit_host": {false, false}, "delete_host": {false, true}}
	for action, w := range want {
		if got[action] != w {
			t.Errorf("%s: attributes, any = %v, want %v", action, got[action], w)
		}
	}
}
