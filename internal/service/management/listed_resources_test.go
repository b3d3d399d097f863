package management

import (
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// TestListedResourcesRefusesAttributes: a group policy that holds
// instances by a condition on their attributes is neither listed nor
// imported (both read it through listedResources), with an error that
// says why, instead of a resource with no instances that the provider
// refuses at plan ("must contain at least 1 element").
func TestListedResourcesRefusesAttributes(t *testing.T) {
	for _, tc := range []struct {
		name string
		tp   bkiam.TypedPaths
		want string
	}{
		{"attributes only", bkiam.TypedPaths{System: "bk_cmdb", Type: "host", Attributes: true}, "condition on their attributes"},
		{"attributes beside instances", bkiam.TypedPaths{System: "bk_cmdb", Type: "host", Attributes: true,
			Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "7"}}}}, "condition on their attributes"},
		{"every instance", bkiam.TypedPaths{System: "bk_cmdb", Type: "host", Any: true}, "every instance"},
		{"instances", bkiam.TypedPaths{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "7"}}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resources, err := listedResources(bkiam.GroupPolicy{Action: "view_host", ResourceGroups: [][]bkiam.TypedPaths{{tc.tp}}})
			switch {
			case tc.want == "" && (err != nil || len(resources) != 1 || resources[0].Instances["7"] == ""):
				t.Fatalf("listed %v, %v; want host 7", resources, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("listed %v, %v; want an error saying %q", resources, err, tc.want)
			}
		})
	}
}
