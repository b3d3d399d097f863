package authz

import (
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
)

// TestInstancePathKeys: the claim keys of the shared-grants ledger tell
// apart every two instances IAM tells apart, ids holding "," "/" or "%"
// included (IAM takes any string as a plain id, but a path string cannot
// carry "," or "/": internal/bkiam's package doc, "Policy expressions"),
// and a path IAM lists has the key of the configured instance it is.
func TestInstancePathKeys(t *testing.T) {
	node := func(typ, id string) bkiam.PathNode { return bkiam.PathNode{System: "bk_cmdb", Type: typ, ID: id} }
	res := func(typ string, ids ...string) grantplan.Resource {
		r := grantplan.Resource{System: "bk_cmdb", Type: typ, Instances: map[string]string{}}
		for _, id := range ids {
			r.Instances[id] = id
		}
		return r
	}
	distinct := []string{
		sharedgrants.InstancePath("bk_cmdb", "host", "5"),
		sharedgrants.InstancePath("bk_cmdb", "host", "5,6"),                             // one id with a comma
		sharedgrants.InstancePath("bk_cmdb", "host", "x/bk_cmdb,host,5"),                // one id that reads as a path
		sharedgrants.InstancePath("bk_cmdb", "host", "/bk_cmdb,host,x/bk_cmdb,host,5/"), // a path (bkiam_group_permission)
		sharedgrants.InstancePath("bk_cmdb", "host", "5%2C6"),                           // an id that reads as an escape
		sharedgrants.InstancePath("bk_cmdb", "host", "/bk_cmdb,biz,2%2F/bk_cmdb,host,5/"),
		combinationPath([]grantplan.Resource{res("biz", "1"), res("host", "5,6")}), // a combination of one host "5,6"
		combinationPath([]grantplan.Resource{res("biz", "1"), res("host", "5", "6")}),
	}
	seen := map[string]int{}
	for i, k := range distinct {
		if j, dup := seen[k]; dup {
			t.Errorf("keys %d and %d are both %q", j, i, k)
		}
		seen[k] = i
	}
	same := []struct {
		listed []bkiam.PathNode
		key    string
	}{
		{[]bkiam.PathNode{node("host", "5")}, "5"},
		{[]bkiam.PathNode{node("host", "5,6")}, "5,6"},
		{[]bkiam.PathNode{node("host", "a/b")}, "a/b"},
		{[]bkiam.PathNode{node("biz", "2"), node("host", "5%")}, "/bk_cmdb,biz,2/bk_cmdb,host,5%/"},
		{[]bkiam.PathNode{node("host", "5")}, "/bk_cmdb,host,5/"}, // a one-node path is its id, to IAM too
	}
	for _, c := range same {
		if got, want := sharedgrants.PathClaim(c.listed), sharedgrants.InstancePath("bk_cmdb", "host", c.key); got != want {
			t.Errorf("listed %v: key %q, configured %q: key %q", c.listed, got, c.key, want)
		}
	}
}
