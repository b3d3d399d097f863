package bkiam

import "testing"

// TestScopeCovers: IAM's scope check is a string prefix, not a wildcard
// match (the package doc, "The management API").
func TestScopeCovers(t *testing.T) {
	n := func(typ, id string) PathNode { return PathNode{System: "bk_cmdb", Type: typ, ID: id} }
	path := func(nodes ...PathNode) []PathNode { return nodes }
	hostStar := [][]PathNode{path(n("host", "*"))}
	biz2 := [][]PathNode{path(n("biz", "2"), n("host", "*"))}
	cases := []struct {
		name  string
		scope [][]PathNode
		grant []PathNode
		want  bool
	}{
		{"unlimited scope admits a path", nil, path(n("biz", "2"), n("host", "5")), true},
		{"one-node * admits a plain id", hostStar, path(n("host", "5")), true},
		{"one-node * refuses a path under a business", hostStar, path(n("biz", "2"), n("host", "5")), false},
		{"trailing * admits under its parent", biz2, path(n("biz", "2"), n("host", "5")), true},
		{"trailing * admits the parent's every host", biz2, path(n("biz", "2"), n("host", "*")), true},
		{"another parent is refused", biz2, path(n("biz", "3"), n("host", "5")), false},
		{"a plain id is refused under a parent scope", biz2, path(n("host", "5")), false},
		{"a * above the last node is no wildcard", [][]PathNode{path(n("biz", "*"), n("host", "*"))}, path(n("biz", "2"), n("host", "5")), false},
		{"an exact path admits itself and what is under it", [][]PathNode{path(n("biz", "2"))}, path(n("biz", "2"), n("host", "5")), true},
		{"prefix by string: biz 2 is not biz 20", [][]PathNode{path(n("biz", "2"), n("host", "*"))}, path(n("biz", "20"), n("host", "5")), false},
	}
	for _, c := range cases {
		if got := ScopeCovers(c.scope, c.grant); got != c.want {
			t.Errorf("%s: %t, want %t", c.name, got, c.want)
		}
	}
}
