package management

import (
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// TestPathKeyOf: a path IAM lists has the claim key of the configured
// instance it is, and one whose notation cannot carry an id is refused
// naming it (the other half of the instance path keys is authz's
// TestInstancePathKeys).
func TestPathKeyOf(t *testing.T) {
	node := func(typ, id string) bkiam.PathNode { return bkiam.PathNode{System: "bk_cmdb", Type: typ, ID: id} }
	if _, err := pathKeyOf([]bkiam.PathNode{node("biz", "2,3"), node("host", "5")}); err == nil || !strings.Contains(err.Error(), `"2,3"`) {
		t.Errorf("a listed path with an id holding a comma: %v", err)
	}
	if k, err := pathKeyOf([]bkiam.PathNode{node("biz", "2"), node("host", "5")}); err != nil || k != "/bk_cmdb,biz,2/bk_cmdb,host,5/" {
		t.Errorf("a listed path: %q, %v", k, err)
	}
}
