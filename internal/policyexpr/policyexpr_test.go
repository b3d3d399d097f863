package policyexpr

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Fixtures, named after the rows of the expression table in internal/bkiam's package doc ("Policy
// expressions") and the sandbox's typeExpr; most are verbatim sandbox output
// (internal/sandbox/read_test.go TestPolicyListExpressions).
const (
	eqHost        = `{"field":"host.id","op":"eq","value":"1"}`
	inHost        = `{"field":"host.id","op":"in","value":["1","2"]}`
	inSingle      = `{"field":"host.id","op":"in","value":["1"]}`
	numbers       = `{"op":"OR","content":[{"field":"host.id","op":"eq","value":7},{"field":"host.id","op":"in","value":[8,"9"]}]}`
	pathOne       = `{"op":"AND","content":[{"field":"mini_app.id","op":"eq","value":"m1"},{"field":"mini_app._bk_iam_path_","op":"starts_with","value":"/project,p1/"}]}`
	pathTwo       = `{"op":"AND","content":[{"field":"host.id","op":"in","value":["3","4"]},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/set,2/"}]}`
	collapsed     = `{"field":"mini_app.id","op":"eq","value":"m1"}`
	ancestorOnly  = `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/set,2/"}`
	anyTyped      = `{"field":"biz.id","op":"any","value":[]}`
	anyEmpty      = `{"field":"","op":"any","value":[]}`
	combined      = `{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"eq","value":"7"}]}`
	combinedOR    = `{"op":"OR","content":[{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"eq","value":"7"}]},{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"2"},{"field":"host.id","op":"in","value":["8","9"]}]}]}`
	splitHosts    = `{"op":"OR","content":[{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"eq","value":"7"}]},{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"eq","value":"8"}]}]}`
	combinedAny   = `{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"any","value":[]}]}`
	combinedOfOr  = `{"op":"AND","content":[{"op":"OR","content":[{"field":"biz.id","op":"eq","value":"1"}]},{"field":"host.id","op":"in","value":["7","8"]}]}`
	andInAnd      = `{"op":"AND","content":[{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"eq","value":"7"}]},{"field":"set.id","op":"eq","value":"3"}]}`
	orWrapper     = `{"op":"OR","content":[{"field":"host.id","op":"eq","value":"1"}]}`
	orOfOr        = `{"op":"OR","content":[{"op":"OR","content":[{"field":"host.id","op":"eq","value":"1"}]},{"op":"OR","content":[{"field":"host.id","op":"in","value":["2","3"]}]}]}`
	andInOrInOr   = `{"op":"OR","content":[{"op":"OR","content":[{"op":"AND","content":[{"field":"host.id","op":"eq","value":"4"},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}]}]},{"field":"host.id","op":"eq","value":"5"}]}`
	sandboxMix    = `{"op":"OR","content":[{"field":"host.id","op":"in","value":["1","2"]},{"op":"AND","content":[{"field":"host.id","op":"eq","value":"3"},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}]},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,2/"}]}`
	andSameType   = `{"op":"AND","content":[{"field":"host.id","op":"in","value":["1","2"]},{"field":"host.id","op":"in","value":["2","3"]}]}`
	andOtherType  = `{"op":"AND","content":[{"field":"host.id","op":"eq","value":"1"},{"field":"biz.id","op":"eq","value":"2"}]}`
	andAttribute  = `{"op":"OR","content":[{"op":"AND","content":[{"field":"host.id","op":"eq","value":"1"},{"field":"host.os","op":"eq","value":"linux"}]},{"op":"AND","content":[{"field":"host.id","op":"in","value":["2"]},{"field":"host.id","op":"not_eq","value":"9"}]}]}`
	andWithAnyAll = `{"op":"AND","content":[{"field":"host.id","op":"eq","value":"1"},{"field":"","op":"any","value":[]}]}`
)

func mustParse(t testing.TB, raw string) *Expr {
	t.Helper()
	e, err := Parse([]byte(raw))
	if err != nil {
		t.Fatalf("Parse(%s): %v", raw, err)
	}
	return e
}

func anc(pairs ...string) []Node {
	var out []Node
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, Node{Type: pairs[i], ID: pairs[i+1]})
	}
	return out
}

func TestHoldsInstance(t *testing.T) {
	cases := []struct {
		name, expr, typ, id string
		want                bool
	}{
		{"eq", eqHost, "host", "1", true},
		{"eq other id", eqHost, "host", "2", false},
		{"eq other type", eqHost, "biz", "1", false},
		{"in first", inHost, "host", "1", true},
		{"in second", inHost, "host", "2", true},
		{"in missing", inHost, "host", "3", false},
		{"in single value", inSingle, "host", "1", true},
		{"number eq", numbers, "host", "7", true},
		{"number in", numbers, "host", "8", true},
		{"string among numbers", numbers, "host", "9", true},
		{"path AND is not an instance grant", pathOne, "mini_app", "m1", false},
		{"two-ancestor path AND is not an instance grant", pathTwo, "host", "3", false},
		{"collapsed path is an instance grant", collapsed, "mini_app", "m1", true},
		{"ancestor grant is not an instance grant", ancestorOnly, "host", "9", false},
		{"any typed", anyTyped, "biz", "42", true},
		{"any typed other type", anyTyped, "host", "42", false},
		{"any empty field", anyEmpty, "host", "42", true},
		{"combined AND needs the other type", combined, "host", "7", false},
		{"combined OR", combinedOR, "host", "8", false},
		{"OR wrapper", orWrapper, "host", "1", true},
		{"OR of OR first", orOfOr, "host", "1", true},
		{"OR of OR second", orOfOr, "host", "3", true},
		{"OR of OR missing", orOfOr, "host", "4", false},
		{"AND in OR in OR: only a path", andInOrInOr, "host", "4", false},
		{"AND in OR in OR: sibling eq", andInOrInOr, "host", "5", true},
		{"sandbox mix in", sandboxMix, "host", "2", true},
		{"sandbox mix path only", sandboxMix, "host", "3", false},
		{"AND of same type: intersection", andSameType, "host", "2", true},
		{"AND of same type: outside intersection", andSameType, "host", "1", false},
		{"AND with another type", andOtherType, "host", "1", false},
		{"AND with an attribute condition", andAttribute, "host", "1", false},
		{"AND with a negated condition", andAttribute, "host", "2", false},
		{"AND with empty-field any", andWithAnyAll, "host", "1", true},
		{"AND with empty-field any, other id", andWithAnyAll, "host", "2", false},
		{"empty starts_with is no instance grant", `{"field":"host._bk_iam_path_","op":"starts_with","value":""}`, "host", "1", false},
		{"any on an attribute is not on the id", `{"field":"host.os","op":"any","value":[]}`, "host", "1", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := mustParse(t, tc.expr)
			if got := e.HoldsInstance(tc.typ, tc.id); got != tc.want {
				t.Fatalf("HoldsInstance(%q, %q) on %s = %v, want %v", tc.typ, tc.id, tc.expr, got, tc.want)
			}
			// With no ancestors HoldsPath is HoldsInstance.
			if got := e.HoldsPath(tc.typ, tc.id, nil); got != tc.want {
				t.Fatalf("HoldsPath without ancestors = %v, want %v", got, tc.want)
			}
		})
	}
}

// starSet is a path that ends at an ancestor type with id "*": every set under biz 1.
const starSet = `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/set,*/"}`

func TestHoldsPath(t *testing.T) {
	cases := []struct {
		name, expr, typ, id string
		ancestors           []Node
		want                bool
	}{
		{"one ancestor", pathOne, "mini_app", "m1", anc("project", "p1"), true},
		{"one ancestor, other ancestor", pathOne, "mini_app", "m1", anc("project", "p2"), false},
		{"one ancestor, other id", pathOne, "mini_app", "m2", anc("project", "p1"), false},
		{"one ancestor, other type", pathOne, "project", "m1", anc("project", "p1"), false},
		{"ancestor covering ours (proper prefix)", pathOne, "mini_app", "m1", anc("project", "p1", "dir", "d"), true},
		{"grant narrower than ours", pathTwo, "host", "3", anc("biz", "1"), false},
		{"two ancestors", pathTwo, "host", "4", anc("biz", "1", "set", "2"), true},
		{"two ancestors, other set", pathTwo, "host", "4", anc("biz", "1", "set", "3"), false},
		{"two ancestors reversed", pathTwo, "host", "4", anc("set", "2", "biz", "1"), false},
		{"collapsed", collapsed, "mini_app", "m1", anc("project", "p1"), true},
		{"collapsed, other id", collapsed, "mini_app", "m2", anc("project", "p1"), false},
		{"path ending at our parent covers us", ancestorOnly, "host", "9", anc("biz", "1", "set", "2"), true},
		{"path ending at an ancestor covers us", ancestorOnly, "host", "9", anc("biz", "1", "set", "2", "module", "5"), true},
		{"path ending below our parent does not", ancestorOnly, "host", "9", anc("biz", "1"), false},
		{"prefix must end at a node boundary", `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1"}`, "host", "9", anc("biz", "10"), false},
		{"any typed", anyTyped, "biz", "1", anc("org", "o"), true},
		{"any empty field", anyEmpty, "host", "1", anc("biz", "1"), true},
		{"sandbox mix: AND", sandboxMix, "host", "3", anc("biz", "1"), true},
		{"sandbox mix: ancestor grant", sandboxMix, "host", "77", anc("biz", "2"), true},
		{"sandbox mix: plain id under any path", sandboxMix, "host", "1", anc("biz", "9"), true},
		{"sandbox mix: none", sandboxMix, "host", "77", anc("biz", "3"), false},
		{"AND in OR in OR", andInOrInOr, "host", "4", anc("biz", "1"), true},
		{"path AND with a foreign member", `{"op":"AND","content":[{"field":"host.id","op":"eq","value":"1"},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"},{"field":"biz.id","op":"eq","value":"1"}]}`, "host", "1", anc("biz", "1"), false},
		// A prefix ending in ",*/" is every node of that type under the path
		// (internal/bkiam's package doc, "Policy expressions").
		{"star prefix: our set under biz 1", starSet, "host", "9", anc("biz", "1", "set", "2"), true},
		{"star prefix: a module below our set", starSet, "host", "9", anc("biz", "1", "set", "2", "module", "3"), true},
		{"star prefix: a module straight under biz 1", starSet, "host", "9", anc("biz", "1", "module", "2"), false},
		{"star prefix: another biz", starSet, "host", "9", anc("biz", "10", "set", "2"), false},
		{"star prefix: the star's own parent", starSet, "host", "9", anc("biz", "1"), false},
		{"star prefix over a creator path", `{"field":"mini_app._bk_iam_path_","op":"starts_with","value":"/project,*/"}`, "mini_app", "m1", anc("project", "project1"), true},
		{"several prefixes in one starts_with", `{"op":"AND","content":[{"field":"host.id","op":"eq","value":"1"},{"field":"host._bk_iam_path_","op":"starts_with","value":["/biz,2/","/biz,1/"]}]}`, "host", "1", anc("biz", "1"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := mustParse(t, tc.expr)
			if got := e.HoldsPath(tc.typ, tc.id, tc.ancestors); got != tc.want {
				t.Fatalf("HoldsPath(%q, %q, %v) on %s = %v, want %v", tc.typ, tc.id, tc.ancestors, tc.expr, got, tc.want)
			}
		})
	}
}

func TestHoldsCombination(t *testing.T) {
	cases := []struct {
		name, expr string
		ids        map[string][]string
		want       bool
	}{
		{"combined", combined, map[string][]string{"biz": {"1"}, "host": {"7"}}, true},
		{"combined, extra host", combined, map[string][]string{"biz": {"1"}, "host": {"7", "8"}}, false},
		{"combined, a type fewer", combined, map[string][]string{"biz": {"1"}}, false},
		{"combined, a type more", combined, map[string][]string{"biz": {"1"}, "host": {"7"}, "set": {"3"}}, false},
		{"OR of ANDs, second group", combinedOR, map[string][]string{"biz": {"2"}, "host": {"8", "9"}}, true},
		{"OR of ANDs, part of a group", combinedOR, map[string][]string{"biz": {"2"}, "host": {"9"}}, true},
		{"OR of ANDs, bizzes split", combinedOR, map[string][]string{"biz": {"1", "2"}, "host": {"7"}}, false},
		{"OR of ANDs, mixed groups", combinedOR, map[string][]string{"biz": {"1"}, "host": {"7", "8"}}, false},
		{"hosts split across two ANDs", splitHosts, map[string][]string{"biz": {"1"}, "host": {"7", "8"}}, false},
		{"hosts split, one of them", splitHosts, map[string][]string{"biz": {"1"}, "host": {"8"}}, true},
		{"any host, asked as any", combinedAny, map[string][]string{"biz": {"1"}, "host": nil}, true},
		{"any host, asked as ids", combinedAny, map[string][]string{"biz": {"1"}, "host": {"5"}}, true},
		{"eq host, asked as any", combined, map[string][]string{"biz": {"1"}, "host": {}}, false},
		{"AND of an OR member", combinedOfOr, map[string][]string{"biz": {"1"}, "host": {"8", "7"}}, true},
		{"AND narrowed by a sibling", andInAnd, map[string][]string{"biz": {"1"}, "host": {"7"}}, false},
		{"AND with empty-field any", `{"op":"AND","content":[{"field":"","op":"any","value":[]}]}`, map[string][]string{"biz": {"1"}, "host": {"7"}}, true},
		{"single type is HoldsInstance", inHost, map[string][]string{"host": {"1", "2"}}, true},
		{"types split across an OR", `{"op":"OR","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"eq","value":"7"}]}`, map[string][]string{"biz": {"1"}, "host": {"7"}}, false},
		{"single type split over an OR", orOfOr, map[string][]string{"host": {"1", "2"}}, false},
		{"empty request", combined, map[string][]string{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := mustParse(t, tc.expr)
			if got := e.HoldsCombination(tc.ids); got != tc.want {
				t.Fatalf("HoldsCombination(%v) on %s = %v, want %v", tc.ids, tc.expr, got, tc.want)
			}
		})
	}
}

func TestInstances(t *testing.T) {
	cases := []struct {
		name, expr, typ string
		ids             []string
		any             bool
	}{
		{"eq", eqHost, "host", []string{"1"}, false},
		{"in", inHost, "host", []string{"1", "2"}, false},
		{"numbers", numbers, "host", []string{"7", "8", "9"}, false},
		{"other type", inHost, "biz", nil, false},
		{"path AND", pathOne, "mini_app", nil, false},
		{"collapsed", collapsed, "mini_app", []string{"m1"}, false},
		{"ancestor grant", ancestorOnly, "host", nil, false},
		{"any typed", anyTyped, "biz", nil, true},
		{"any empty field", anyEmpty, "host", nil, true},
		{"combined", combinedOR, "host", nil, false},
		{"OR wrapper", orWrapper, "host", []string{"1"}, false},
		{"OR of OR", orOfOr, "host", []string{"1", "2", "3"}, false},
		{"AND in OR in OR", andInOrInOr, "host", []string{"5"}, false},
		{"sandbox mix", sandboxMix, "host", []string{"1", "2"}, false},
		{"AND of same type", andSameType, "host", []string{"2"}, false},
		{"AND with another type", andOtherType, "host", nil, false},
		{"AND with conditions", andAttribute, "host", nil, false},
		{"AND with empty-field any", andWithAnyAll, "host", []string{"1"}, false},
		{"ids next to any", `{"op":"OR","content":[{"field":"host.id","op":"in","value":["2","1","2"]},{"field":"host.id","op":"any","value":[]}]}`, "host", []string{"1", "2"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := mustParse(t, tc.expr)
			ids, anyInst := e.Instances(tc.typ)
			if !reflect.DeepEqual(ids, tc.ids) || anyInst != tc.any {
				t.Fatalf("Instances(%q) on %s = %q, %v; want %q, %v", tc.typ, tc.expr, ids, anyInst, tc.ids, tc.any)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat(`{"op":"OR","content":[`, maxDepth+2) + eqHost + strings.Repeat(`]}`, maxDepth+2)
	cases := []struct{ name, raw, want string }{
		{"empty", ``, "invalid JSON"},
		{"truncated", `{"op":"AND","content":[`, "invalid JSON"},
		{"trailing data", eqHost + ` {}`, "data after the expression"},
		{"null", `null`, "expression: want an object, got null"},
		{"array", `[]`, "expression: want an object, got an array"},
		{"unknown op at root", `{"field":"host.id","op":"xor","value":"1"}`, `op: unknown operator "xor"`},
		{"unknown op nested", `{"op":"OR","content":[` + eqHost + `,{"field":"host.id","op":"xor","value":"1"}]}`, `content[1].op: unknown operator "xor"`},
		{"lower-case and", `{"op":"and","content":[` + eqHost + `]}`, `op: unknown operator "and"`},
		{"missing op", `{"field":"host.id","value":"1"}`, "op: missing"},
		{"op not a string", `{"op":1}`, "op: want a string, got a number"},
		{"missing content", `{"op":"AND"}`, `content: missing for operator "AND"`},
		{"content not an array", `{"op":"OR","content":{}}`, "content: want an array, got an object"},
		{"empty AND", `{"op":"AND","content":[]}`, "content: empty AND"},
		{"empty OR deep", `{"op":"OR","content":[{"op":"AND","content":[{"op":"OR","content":[]}]}]}`, "content[0].content[0].content: empty OR"},
		{"content member not an object", `{"op":"OR","content":["x"]}`, "content[0]: want an object, got a string"},
		{"missing field", `{"op":"eq","value":"1"}`, `field: missing for operator "eq"`},
		{"field not a string", `{"op":"eq","field":null,"value":"1"}`, "field: want a string, got null"},
		{"eq missing value", `{"field":"host.id","op":"eq"}`, "value: missing"},
		{"eq array value", `{"field":"host.id","op":"eq","value":["1"]}`, "value: want a string or number, got an array"},
		{"eq null value", `{"field":"host.id","op":"eq","value":null}`, "value: want a string or number, got null"},
		{"in scalar value", `{"field":"host.id","op":"in","value":"1"}`, "value: want an array, got a string"},
		{"in object element", `{"op":"AND","content":[{"field":"host.id","op":"in","value":["1",{}]}]}`, "content[0].value[1]: want a string or number, got an object"},
		{"starts_with object", `{"field":"host._bk_iam_path_","op":"starts_with","value":{}}`, "value: want a string or number, got an object"},
		{"starts_with missing", `{"field":"host._bk_iam_path_","op":"starts_with"}`, "value: missing"},
		{"too deep", deep, "nested deeper than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Parse([]byte(tc.raw))
			if err == nil || e != nil {
				t.Fatalf("Parse(%s) = %v, %v; want an error", tc.raw, e, err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "policy expression: ") {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestParseLenient: shapes bk-iam can write that no grant of ours makes still parse, so one odd policy
// of a subject does not make its whole expression unreadable.
func TestParseLenient(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"field":"host.os","op":"not_in","value":["win"]}`:                false,
		`{"field":"host.cpu","op":"gte","value":4}`:                        false,
		`{"field":"host.name","op":"string_contains","value":"web"}`:       false,
		`{"field":"host.id","op":"any"}`:                                   true,
		`{"field":"host.id","op":"any","value":null}`:                      true,
		`{"field":"host.enabled","op":"eq","value":true}`:                  false,
		`{"field":"host.id","op":"eq","value":"1","extra":1}`:              true,
		`{"op":"OR","content":[{"field":"host.id","op":"in","value":[]}]}`: false,
	} {
		if got := mustParse(t, raw).HoldsInstance("host", "1"); got != want {
			t.Errorf("%s: HoldsInstance(host, 1) = %v, want %v", raw, got, want)
		}
	}
}

func TestNilExpr(t *testing.T) {
	var e *Expr
	if e.HoldsInstance("host", "1") || e.HoldsPath("host", "1", anc("biz", "1")) || e.HoldsCombination(map[string][]string{"host": {"1"}}) {
		t.Fatal("a nil Expr holds nothing")
	}
	if ids, anyInst := e.Instances("host"); ids != nil || anyInst {
		t.Fatal("a nil Expr has no instances")
	}
}

func TestBackendPath(t *testing.T) {
	if got := BackendPath(anc("biz", "1", "set", "2")); got != "/biz,1/set,2/" {
		t.Fatalf("BackendPath = %q", got)
	}
	if got := BackendPath(nil); got != "" {
		t.Fatalf("BackendPath(nil) = %q", got)
	}
}

// TestRoundTrip: every fixture re-marshals to a form that parses to the same verdicts (numbers become
// strings, the only change).
func TestRoundTrip(t *testing.T) {
	for _, raw := range []string{eqHost, numbers, pathTwo, ancestorOnly, anyEmpty, combinedOR, andInOrInOr, sandboxMix, andAttribute} {
		e := mustParse(t, raw)
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		e2 := mustParse(t, string(b))
		if v1, v2 := verdicts(e, raw), verdicts(e2, raw); v1 != v2 {
			t.Fatalf("%s -> %s: verdicts differ\n%s\n%s", raw, b, v1, v2)
		}
	}
	b, _ := json.Marshal(mustParse(t, numbers))
	if want := `{"content":[{"field":"host.id","op":"eq","value":"7"},{"field":"host.id","op":"in","value":["8","9"]}],"op":"OR"}`; string(b) != want {
		t.Fatalf("re-marshal %s, want %s", b, want)
	}
}

// probes collects what an expression talks about, to ask it questions about itself: types, ids,
// ancestor lists from its starts_with values, plus a few that appear nowhere.
func probes(raw string) (types, ids []string, ancestors [][]Node) {
	seenT, seenI, seenA := map[string]bool{}, map[string]bool{}, map[string]bool{}
	addT := func(s string) {
		if !seenT[s] && len(types) < 6 {
			seenT[s] = true
			types = append(types, s)
		}
	}
	addI := func(s string) {
		if !seenI[s] && len(ids) < 8 {
			seenI[s] = true
			ids = append(ids, s)
		}
	}
	addT("host")
	addI("1")
	addI("zz-none")
	ancestors = append(ancestors, nil, anc("biz", "1"))
	if e, err := Parse([]byte(raw)); err == nil {
		var walk func(n *node)
		walk = func(n *node) {
			for _, c := range n.content {
				walk(c)
			}
			if n.content != nil {
				return
			}
			addT(n.typ)
			for _, v := range n.values {
				addI(v)
				if n.attr == attrPath && !seenA[v] && len(ancestors) < 6 {
					seenA[v] = true
					ancestors = append(ancestors, splitPath(v))
				}
			}
		}
		walk(e.root)
	}
	return types, ids, ancestors
}

// splitPath is the inverse of BackendPath for well-formed values; anything else gives some nodes.
func splitPath(v string) []Node {
	var out []Node
	for _, part := range strings.Split(strings.Trim(v, "/"), "/") {
		typ, id, _ := strings.Cut(part, ",")
		out = append(out, Node{Type: typ, ID: id})
	}
	return out
}

// verdicts asks e every question the probes of raw allow and checks the functions against each other:
// Instances agrees with HoldsInstance, a plain instance grant also holds every path grant of it, and a
// one-type combination is an instance.
func verdicts(e *Expr, raw string) string {
	types, ids, ancestors := probes(raw)
	var b strings.Builder
	for _, typ := range types {
		inst, anyInst := e.Instances(typ)
		fmt.Fprintf(&b, "I %q %q %v\n", typ, inst, anyInst)
		listed := map[string]bool{}
		for _, id := range inst {
			listed[id] = true
			if !e.HoldsInstance(typ, id) {
				b.WriteString("INCONSISTENT: Instances lists an id HoldsInstance denies\n")
			}
		}
		for _, id := range ids {
			hi := e.HoldsInstance(typ, id)
			fmt.Fprintf(&b, "HI %q %q %v\n", typ, id, hi)
			if hi != (listed[id] || anyInst) {
				b.WriteString("INCONSISTENT: HoldsInstance vs Instances\n")
			}
			if hi != e.HoldsCombination(map[string][]string{typ: {id}}) {
				b.WriteString("INCONSISTENT: HoldsInstance vs one-type HoldsCombination\n")
			}
			for _, a := range ancestors {
				hp := e.HoldsPath(typ, id, a)
				fmt.Fprintf(&b, "HP %q %q %v %v\n", typ, id, a, hp)
				if hi && !hp {
					b.WriteString("INCONSISTENT: an instance grant must hold its path grants\n")
				}
			}
		}
		for _, typ2 := range types {
			if typ2 == typ {
				continue
			}
			for _, id := range ids[:min(3, len(ids))] {
				c := map[string][]string{typ: {id}, typ2: ids[:min(2, len(ids))]}
				fmt.Fprintf(&b, "HC %v %v\n", c, e.HoldsCombination(c))
				c[typ2] = nil
				fmt.Fprintf(&b, "HC %v %v\n", c, e.HoldsCombination(c))
			}
		}
	}
	return b.String()
}

func TestVerdictsConsistent(t *testing.T) {
	for _, raw := range []string{eqHost, inHost, inSingle, numbers, pathOne, pathTwo, collapsed, ancestorOnly, anyTyped, anyEmpty,
		combined, combinedOR, splitHosts, combinedAny, combinedOfOr, andInAnd, orWrapper, orOfOr, andInOrInOr, sandboxMix,
		andSameType, andOtherType, andAttribute, andWithAnyAll} {
		if v := verdicts(mustParse(t, raw), raw); strings.Contains(v, "INCONSISTENT") {
			t.Errorf("%s:\n%s", raw, v)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, raw := range []string{eqHost, inHost, numbers, pathOne, pathTwo, ancestorOnly, anyEmpty, combinedOR, splitHosts,
		andInOrInOr, sandboxMix, andAttribute, andWithAnyAll, `{"op":"xor"}`, `[]`, ``} {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, err := Parse(raw)
		if err != nil {
			if e != nil {
				t.Fatalf("Parse returned an Expr with error %v", err)
			}
			return
		}
		v1 := verdicts(e, string(raw))
		if strings.Contains(v1, "INCONSISTENT") {
			t.Fatalf("%s:\n%s", raw, v1)
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
		e2, err := Parse(b)
		if err != nil {
			t.Fatalf("re-marshalled %s does not parse: %v", b, err)
		}
		if v2 := verdicts(e2, string(raw)); v1 != v2 {
			t.Fatalf("%s -> %s: verdicts differ\n%s\n%s", raw, b, v1, v2)
		}
	})
}
