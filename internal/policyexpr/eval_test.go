package policyexpr

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// host is a request of one host: its id and the attributes given as name, value pairs.
func host(id string, attrs ...any) Request {
	r := Resource{ID: id, Attributes: map[string]any{}}
	for i := 0; i+1 < len(attrs); i += 2 {
		r.Attributes[attrs[i].(string)] = attrs[i+1]
	}
	return Request{"host": r}
}

func TestEval(t *testing.T) {
	const (
		underBiz1   = `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}`
		everySet    = `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/set,*/"}`
		linux       = `{"field":"host.os","op":"eq","value":"linux"}`
		level8      = `{"field":"host.level","op":"eq","value":8}`
		levelIn     = `{"field":"host.level","op":"in","value":["8",9]}`
		trusted     = `{"field":"host.trusted","op":"eq","value":true}`
		moreCPUs    = `{"field":"host.cpus","op":"gt","value":4}`
		nameAfterB  = `{"field":"host.name","op":"gte","value":"b"}`
		twoValuesGt = `{"field":"host.cpus","op":"gt","value":[1,2]}`
		containsWeb = `{"field":"host.name","op":"string_contains","value":"web"}`
		notLinux    = `{"field":"host.os","op":"not_eq","value":"linux"}`
		orTwoAttrs  = `{"op":"OR","content":[{"op":"AND","content":[{"field":"host.os","op":"eq","value":"linux"},{"field":"host.id","op":"eq","value":"1"}]},` +
			`{"op":"AND","content":[{"field":"host.env","op":"eq","value":"prod"},{"field":"host.id","op":"eq","value":"2"}]}]}`
		andTwoAttrs = `{"op":"AND","content":[{"field":"host.os","op":"eq","value":"linux"},{"field":"host.env","op":"eq","value":"prod"}]}`
	)
	path := func(p ...string) []string { return p }
	gap := func(typ, attr string) []Gap { return []Gap{{Type: typ, Attribute: attr}} }
	cases := []struct {
		name string
		expr string
		req  Request
		want Truth
		gaps []Gap
	}{
		{"path grant, the host's path under it", underBiz1, host("7", "_bk_iam_path_", path("/biz,1/")), True, nil},
		{"path grant, a deeper path under it", underBiz1, host("7", "_bk_iam_path_", path("/biz,1/set,2/module,3/")), True, nil},
		{"path grant, another business", underBiz1, host("7", "_bk_iam_path_", path("/biz,2/")), False, nil},
		{"path grant, biz 10 is not under biz 1", underBiz1, host("7", "_bk_iam_path_", path("/biz,10/")), False, nil},
		{"path grant, one of two paths under it", underBiz1, host("7", "_bk_iam_path_", []any{"/biz,2/", "/biz,1/set,3/"}), True, nil},
		{"path grant, a host with no path", underBiz1, host("7", "_bk_iam_path_", path()), False, nil},
		{"path grant, the path not given", underBiz1, host("7"), Unknown, gap("host", "_bk_iam_path_")},
		{"every set under biz 1, a set's module", everySet, host("7", "_bk_iam_path_", path("/biz,1/set,2/module,3/")), True, nil},
		{"every set under biz 1, a module not under a set", everySet, host("7", "_bk_iam_path_", path("/biz,1/module,2/")), False, nil},
		{"path and id: another id decides without the path", pathTwo, host("9"), False, nil},
		{"path and id: the id alone does not", pathTwo, host("3"), Unknown, gap("host", "_bk_iam_path_")},
		{"path and id: both", pathTwo, host("3", "_bk_iam_path_", path("/biz,1/set,2/")), True, nil},
		{"an id list decides without the path", sandboxMix, host("1"), True, nil},
		{"the id list does not hold, a prefix might", sandboxMix, host("9"), Unknown, gap("host", "_bk_iam_path_")},
		{"the id list does not hold, nor the prefixes", sandboxMix, host("9", "_bk_iam_path_", path("/biz,3/")), False, nil},
		{"attribute given", linux, host("1", "os", "linux"), True, nil},
		{"attribute given, other", linux, host("1", "os", "windows"), False, nil},
		{"attribute given as a list", linux, host("1", "os", []string{"windows", "linux"}), True, nil},
		{"attribute as an empty list", linux, host("1", "os", []string{}), False, nil},
		{"attribute not given", linux, host("1"), Unknown, gap("host", "os")},
		{"a number is not its text", level8, host("1", "level", "8"), False, nil},
		{"a number equals a number", level8, host("1", "level", json.Number("8")), True, nil},
		{"a number equals a float of its value", level8, host("1", "level", 8.0), True, nil},
		{"in: a string among a string and a number", levelIn, host("1", "level", "8"), True, nil},
		{"in: the string 9 is not the number 9", levelIn, host("1", "level", "9"), False, nil},
		{"in: the number 9", levelIn, host("1", "level", 9), True, nil},
		{"a bool is not its text", trusted, host("1", "trusted", "true"), False, nil},
		{"a bool equals a bool", trusted, host("1", "trusted", true), True, nil},
		{"a bool is never in a list", trusted, host("1", "trusted", []any{true}), False, nil},
		{"a bool condition of two values holds for none", `{"field":"host.trusted","op":"in","value":[true,false]}`, host("1", "trusted", true), False, nil},
		{"gt: numbers", moreCPUs, host("1", "cpus", json.Number("8")), True, nil},
		{"gt: equal numbers", moreCPUs, host("1", "cpus", json.Number("4")), False, nil},
		{"gt: a string against a number", moreCPUs, host("1", "cpus", "8"), False, nil},
		{"gt: a float against an integer", moreCPUs, host("1", "cpus", 4.5), True, nil},
		{"gt: any element of a list", moreCPUs, host("1", "cpus", []any{json.Number("2"), json.Number("16")}), True, nil},
		{"gte: strings compare as strings", nameAfterB, host("1", "name", "b"), True, nil},
		{"gte: strings compare as strings, less", nameAfterB, host("1", "name", "abc"), False, nil},
		{"gt with two values is false", twoValuesGt, host("1", "cpus", json.Number("8")), False, nil},
		{"lt", `{"field":"host.cpus","op":"lt","value":4}`, host("1", "cpus", 3), True, nil},
		{"lte", `{"field":"host.cpus","op":"lte","value":4}`, host("1", "cpus", 4), True, nil},
		{"lte, more", `{"field":"host.cpus","op":"lte","value":4}`, host("1", "cpus", 5), False, nil},
		{"string_contains", containsWeb, host("1", "name", "the-web-1"), True, nil},
		{"string_contains, not", containsWeb, host("1", "name", "db-1"), False, nil},
		{"string_contains, not given", containsWeb, host("1"), Unknown, gap("host", "name")},
		{"an operator the backend never writes", notLinux, host("1", "os", "windows"), Unknown, []Gap{{Type: "host", Attribute: "os", Op: "not_eq"}}},
		{"a type the request does not give", combined, host("7"), Unknown, []Gap{{Type: "biz"}}},
		{"a combination, both given", combined, Request{"biz": {ID: "1"}, "host": {ID: "7"}}, True, nil},
		{"a combination, one type's id fails", combined, Request{"biz": {ID: "2"}, "host": {ID: "7"}}, False, nil},
		{"a combination, the other type missing and the id fails", combined, host("8"), False, nil},
		{"any", anyTyped, Request{"biz": {ID: "3"}}, True, nil},
		{"any of everything", anyEmpty, Request{}, True, nil},
		{"the id is the resource's, not an attribute", eqHost, host("1", "id", "9"), True, nil},
		{"only the alternative that can hold waits", orTwoAttrs, host("1"), Unknown, gap("host", "os")},
		{"an AND waits on both", andTwoAttrs, host("1"), Unknown, []Gap{{Type: "host", Attribute: "env"}, {Type: "host", Attribute: "os"}}},
		{"an AND decided by one", andTwoAttrs, host("1", "os", "windows"), False, nil},
		{"an OR decided by one", `{"op":"OR","content":[` + linux + `,` + underBiz1 + `]}`, host("1", "_bk_iam_path_", path("/biz,1/")), True, nil},
		{"an OR of false and unknown", `{"op":"OR","content":[` + linux + `,` + underBiz1 + `]}`, host("1", "os", "aix"), Unknown, gap("host", "_bk_iam_path_")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mustParse(t, c.expr).Eval(c.req)
			if got.Truth != c.want || !reflect.DeepEqual(got.Gaps, c.gaps) {
				t.Errorf("%s for %v: %s %v, want %s %v", c.expr, c.req, got.Truth, got.Gaps, c.want, c.gaps)
			}
		})
	}
	var none *Expr
	if v := none.Eval(host("1")); v.Truth != False {
		t.Errorf("a nil expression: %v, want false", v)
	}
}

// vocabulary of the random expressions and requests: each attribute with the operators the backend
// writes on it and the values they compare with.
var vocabulary = []struct {
	attr   string
	ops    []string
	values []any
}{
	{"id", []string{"eq", "in", "any"}, []any{"1", "2", "3"}},
	{"_bk_iam_path_", []string{"starts_with"}, []any{"/biz,1/", "/biz,2/", "/biz,1/set,3/", "/biz,1/set,*/"}},
	{"os", []string{"eq", "in", "starts_with", "string_contains"}, []any{"linux", "windows", "lin"}},
	{"level", []string{"eq", "gt", "lt", "gte", "lte"}, []any{json.Number("3"), json.Number("8"), "3"}},
}

// randomLeaf is a condition on a random type and attribute.
func randomLeaf(rng *rand.Rand) map[string]any {
	v := vocabulary[rng.IntN(len(vocabulary))]
	typ := []string{"host", "biz"}[rng.IntN(2)]
	op := v.ops[rng.IntN(len(v.ops))]
	value := v.values[rng.IntN(len(v.values))]
	switch op {
	case "any":
		return map[string]any{"field": typ + ".id", "op": "any", "value": []any{}}
	case "in":
		return map[string]any{"field": typ + "." + v.attr, "op": "in", "value": []any{value, v.values[rng.IntN(len(v.values))]}}
	}
	return map[string]any{"field": typ + "." + v.attr, "op": op, "value": value}
}

func randomTree(rng *rand.Rand, depth int) map[string]any {
	if depth == 0 || rng.IntN(3) == 0 {
		return randomLeaf(rng)
	}
	content := make([]any, 1+rng.IntN(3))
	for i := range content {
		content[i] = randomTree(rng, depth-1)
	}
	return map[string]any{"op": []string{"AND", "OR"}[rng.IntN(2)], "content": content}
}

// randomRequest gives both types, every attribute of the vocabulary, each a value or a list.
func randomRequest(rng *rand.Rand) Request {
	r := Request{}
	for _, typ := range []string{"host", "biz"} {
		res := Resource{ID: []string{"1", "2", "4"}[rng.IntN(3)], Attributes: map[string]any{}}
		for _, v := range vocabulary[1:] {
			switch rng.IntN(4) {
			case 0:
				res.Attributes[v.attr] = []any{}
			case 1:
				res.Attributes[v.attr] = []any{v.values[rng.IntN(len(v.values))], v.values[rng.IntN(len(v.values))]}
			default:
				value := v.values[rng.IntN(len(v.values))]
				if v.attr == "_bk_iam_path_" {
					value = []any{strings.Replace(value.(string), "*", "5", 1) + []string{"", "host,9/", "module,7/"}[rng.IntN(3)]}
				}
				res.Attributes[v.attr] = value
			}
		}
		r[typ] = res
	}
	return r
}

// withholding is r without some of its attributes and types.
func withholding(rng *rand.Rand, r Request) Request {
	out := Request{}
	for typ, res := range r {
		if rng.IntN(5) == 0 {
			continue
		}
		attrs := map[string]any{}
		for k, v := range res.Attributes {
			if rng.IntN(2) == 0 {
				attrs[k] = v
			}
		}
		out[typ] = Resource{ID: res.ID, Attributes: attrs}
	}
	return out
}

// TestEvalKleeneIsSound: for random expressions of the operators the backend writes and random
// requests, a request that gives everything is decided; one that withholds some of it answers
// either Unknown or what the whole request answers, never the opposite; and an Unknown names in its
// gaps only what was withheld, giving back which decides it as the whole request does.
func TestEvalKleeneIsSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 5))
	unknowns := 0
	for i := range 5000 {
		raw, _ := json.Marshal(randomTree(rng, 3))
		e := mustParse(t, string(raw))
		full := randomRequest(rng)
		whole := e.Eval(full)
		if whole.Truth == Unknown {
			t.Fatalf("%d: %s for a request that gives everything (%v): unknown %v", i, raw, full, whole.Gaps)
		}
		partial := withholding(rng, full)
		v := e.Eval(partial)
		if v.Truth == Unknown {
			unknowns++
		}
		if v.Truth != Unknown && v.Truth != whole.Truth {
			t.Fatalf("%d: %s: %s for %v, but %s for the whole request %v", i, raw, v.Truth, partial, whole.Truth, full)
		}
		if (v.Truth == Unknown) != (len(v.Gaps) > 0) {
			t.Fatalf("%d: %s: %s with gaps %v", i, raw, v.Truth, v.Gaps)
		}
		filled := Request{}
		for typ, res := range partial {
			filled[typ] = Resource{ID: res.ID, Attributes: copyAttrs(res.Attributes)}
		}
		for _, g := range v.Gaps {
			res, given := partial[g.Type]
			_, attrGiven := res.Attributes[g.Attribute]
			if g.Op != "" || (given && (g.Attribute == "" || attrGiven)) {
				t.Fatalf("%d: %s: gap %+v names something %v gives", i, raw, g, partial)
			}
			if !given {
				filled[g.Type] = Resource{ID: full[g.Type].ID, Attributes: map[string]any{}}
			}
		}
		for _, g := range v.Gaps {
			if g.Attribute != "" {
				filled[g.Type].Attributes[g.Attribute] = full[g.Type].Attributes[g.Attribute]
			}
		}
		// A type given back brings gaps of its own attributes: fill until decided.
		for range 3 {
			fv := e.Eval(filled)
			if fv.Truth != Unknown {
				if fv.Truth != whole.Truth {
					t.Fatalf("%d: %s: the gaps filled in answer %s, the whole request %s", i, raw, fv.Truth, whole.Truth)
				}
				break
			}
			for _, g := range fv.Gaps {
				filled[g.Type].Attributes[g.Attribute] = full[g.Type].Attributes[g.Attribute]
			}
		}
	}
	if unknowns < 500 {
		t.Errorf("only %d of 5000 partial requests were unknown: the test withholds too little to say anything", unknowns)
	}
}

func copyAttrs(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// sbBackend sends a body to one of the sandbox's backend policy routes and returns its data.
func sbBackend(t *testing.T, sb *sandboxtest.Sandbox, route, body string) json.RawMessage {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, sb.URL+"/api/v2/policy/systems/bk_cmdb/"+route+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Bkapi-Authorization", sandboxtest.AuthHeader())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Code != 0 {
		t.Fatalf("%s %s: %v %s", route, body, err, raw)
	}
	return out.Data
}

// TestEvalAgreesWithTheSandbox: the sandbox decides access on its own code (internal/sandbox, which
// imports nothing of this package). alice holds delete_host on hosts 1 and 2, on host 3 under biz 1,
// and on every host under biz 2. For each host and path, the expression the
// sandbox answers to query_by_actions, evaluated with the path given, says what its auth_by_actions
// says; evaluated without the path, it says the same or Unknown, and Unknown only where the answer
// depends on the path.
func TestEvalAgreesWithTheSandbox(t *testing.T) {
	sb := sandboxtest.Start(t)
	user := `"subject":{"type":"user","id":"alice"}`
	sbPost(t, sb, "batch_instance", `{"system":"bk_cmdb","operate":"grant",`+user+`,"actions":[{"id":"delete_host"}],`+
		`"resources":[{"system":"bk_cmdb","type":"host","instances":`+instances("1", "2")+`}]}`)
	star := `{"system":"bk_cmdb","type":"host","id":"*","name":""}`
	sbPost(t, sb, "batch_path", `{"system":"bk_cmdb","operate":"grant",`+user+`,"actions":[{"id":"delete_host"}],`+
		`"resources":[{"system":"bk_cmdb","type":"host","paths":[[`+pathNode("bk_cmdb", "biz", "1")+`,`+pathNode("bk_cmdb", "host", "3")+`],[`+
		pathNode("bk_cmdb", "biz", "2")+`,`+star+`]]}]}`)
	var rows []struct {
		Condition json.RawMessage `json:"condition"`
	}
	if err := json.Unmarshal(sbBackend(t, sb, "query_by_actions", `{`+user+`,"actions":[{"id":"delete_host"}],"resources":[]}`), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("query_by_actions: %v %v", rows, err)
	}
	e := mustParse(t, string(rows[0].Condition))
	t.Logf("alice's delete_host: %s", rows[0].Condition)
	paths := [][]string{nil, {}, {"/biz,1/"}, {"/biz,2/"}, {"/biz,2/set,5/"}, {"/biz,3/"}, {"/biz,1/", "/biz,2/"}, {"/biz,20/"}}
	for _, id := range []string{"1", "2", "3", "4"} {
		dependsOnPath := false
		var answers []bool
		for _, p := range paths {
			attribute := map[string]any{}
			req := host(id)
			if p != nil {
				attribute["_bk_iam_path_"] = p
				req = host(id, "_bk_iam_path_", p)
			}
			res, _ := json.Marshal([]map[string]any{{"system": "bk_cmdb", "type": "host", "id": id, "attribute": attribute}})
			var answer map[string]bool
			if err := json.Unmarshal(sbBackend(t, sb, "auth_by_actions", `{`+user+`,"actions":[{"id":"delete_host"}],"resources":`+string(res)+`}`), &answer); err != nil {
				t.Fatal(err)
			}
			got := e.Eval(req)
			want := False
			if answer["delete_host"] {
				want = True
			}
			if p == nil {
				if got.Truth != Unknown && got.Truth != want {
					t.Errorf("host %s without a path: %s, the sandbox %s", id, got.Truth, want)
				}
				defer func(got Verdict) {
					if (got.Truth == Unknown) != dependsOnPath {
						t.Errorf("host %s without a path: %s %v, while its answer depends on the path: %t", id, got.Truth, got.Gaps, dependsOnPath)
					}
				}(got)
				continue
			}
			answers = append(answers, answer["delete_host"])
			if got.Truth != want {
				t.Errorf("host %s under %q: %s, the sandbox %s", id, p, got.Truth, want)
			}
		}
		dependsOnPath = slices.Contains(answers, true) && slices.Contains(answers, false)
	}
}

// TestCanonical: an expression whose members and id lists come in another order, or repeat, has
// the same canonical form; the form parses again to itself and keeps every verdict; numbers stay
// numbers.
func TestCanonical(t *testing.T) {
	same := [][]string{
		{
			`{"op":"OR","content":[{"field":"host.id","op":"in","value":["2","1"]},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}]}`,
			`{"op":"OR","content":[{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"},{"field":"host.id","op":"in","value":["1","2","1"]}]}`,
		},
		{
			`{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"1"},{"op":"OR","content":[{"field":"host.id","op":"eq","value":"7"},{"field":"host.os","op":"eq","value":"linux"}]}]}`,
			`{"content":[{"content":[{"value":"linux","field":"host.os","op":"eq"},{"field":"host.id","op":"eq","value":"7"}],"op":"OR"},{"field":"biz.id","op":"eq","value":"1"}],"op":"AND"}`,
		},
		{numbers, `{"op":"OR","content":[{"field":"host.id","op":"in","value":["9",8]},{"field":"host.id","op":"eq","value":7}]}`},
	}
	for _, group := range same {
		var first []byte
		for _, raw := range group {
			e := mustParse(t, raw)
			c, err := e.Canonical()
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = c
			} else if string(c) != string(first) {
				t.Errorf("%s canonical\n  %s\nwant\n  %s", raw, c, first)
			}
			again, err := mustParse(t, string(c)).Canonical()
			if err != nil || string(again) != string(c) {
				t.Errorf("%s: the canonical form %s is not its own: %s %v", raw, c, again, err)
			}
			if v1, v2 := verdicts(e, raw), verdicts(mustParse(t, string(c)), raw); v1 != v2 {
				t.Errorf("%s -> %s: verdicts differ\n%s\n%s", raw, c, v1, v2)
			}
		}
	}
	c, _ := mustParse(t, numbers).Canonical()
	if want := `{"content":[{"field":"host.id","op":"eq","value":7},{"field":"host.id","op":"in","value":["9",8]}],"op":"OR"}`; string(c) != want {
		t.Errorf("canonical %s, want %s", c, want)
	}
	var none *Expr
	if c, err := none.Canonical(); err != nil || string(c) != "null" {
		t.Errorf("a nil expression: %s %v", c, err)
	}
}

// TestCanonicalKeepsEval: random expressions answer every random request the same before and after
// Canonical.
func TestCanonicalKeepsEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 6))
	for i := range 2000 {
		raw, _ := json.Marshal(randomTree(rng, 3))
		e := mustParse(t, string(raw))
		c, err := e.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		ce := mustParse(t, string(c))
		for range 5 {
			r := withholding(rng, randomRequest(rng))
			if v1, v2 := e.Eval(r), ce.Eval(r); !reflect.DeepEqual(v1, v2) {
				t.Fatalf("%d: %s -> %s: %v, then %v for %v", i, raw, c, v1, v2, r)
			}
		}
	}
}

// FuzzCanonical: whatever parses has a canonical form that parses, is its own canonical form, and
// answers probe requests as the expression does.
func FuzzCanonical(f *testing.F) {
	for _, raw := range []string{eqHost, inHost, numbers, pathTwo, ancestorOnly, anyEmpty, combinedOR, andInOrInOr, sandboxMix,
		andAttribute, `{"op":"OR","content":[{"field":"host.level","op":"gt","value":4},{"field":"host.on","op":"eq","value":true}]}`} {
		f.Add([]byte(raw))
	}
	probes := []Request{host("1"), host("1", "_bk_iam_path_", []string{"/biz,1/set,2/"}), host("3", "os", "linux", "level", json.Number("8")),
		{"biz": {ID: "1"}, "host": {ID: "7"}}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, err := Parse(raw)
		if err != nil {
			return
		}
		c, err := e.Canonical()
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		ce, err := Parse(c)
		if err != nil {
			t.Fatalf("%s: canonical %s does not parse: %v", raw, c, err)
		}
		if again, err := ce.Canonical(); err != nil || string(again) != string(c) {
			t.Fatalf("%s: canonical %s, then %s (%v)", raw, c, again, err)
		}
		for _, p := range probes {
			if v1, v2 := e.Eval(p), ce.Eval(p); !reflect.DeepEqual(v1, v2) {
				t.Fatalf("%s -> %s: %v, then %v for %v", raw, c, v1, v2, p)
			}
		}
	})
}

// sandboxLeaves are conditions on hosts in the forms the sandbox's rows with attribute conditions
// take (POST /_sandbox/expression_policies), each operator with the values the backend compares.
var sandboxLeaves = []string{
	`{"field":"host.id","op":"eq","value":"1"}`,
	`{"field":"host.id","op":"in","value":["1","2"]}`,
	`{"field":"host.id","op":"any","value":[]}`,
	`{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}`,
	`{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,2/set,*/"}`,
	`{"field":"host._bk_iam_path_","op":"string_contains","value":"/set,3/"}`,
	`{"field":"host.os","op":"eq","value":"linux"}`,
	`{"field":"host.os","op":"in","value":["linux","windows"]}`,
	`{"field":"host.os","op":"starts_with","value":"lin"}`,
	`{"field":"host.os","op":"string_contains","value":"nd"}`,
	`{"field":"host.level","op":"eq","value":8}`,
	`{"field":"host.level","op":"in","value":[3,8]}`,
	`{"field":"host.level","op":"gt","value":3}`,
	`{"field":"host.level","op":"lte","value":8}`,
	`{"field":"host.level","op":"gte","value":"5"}`,
	`{"field":"host.level","op":"lt","value":"5"}`,
	`{"field":"host.trusted","op":"eq","value":true}`,
	`{"field":"host.trusted","op":"eq","value":false}`,
}

// sandboxAttributes are what a request may give of each attribute, as JSON.
var sandboxAttributes = map[string][]string{
	"_bk_iam_path_": {`["/biz,1/"]`, `["/biz,2/set,3/"]`, `["/biz,3/","/biz,1/set,4/"]`, `[]`},
	"os":            {`"linux"`, `"windows"`, `["aix","linux"]`, `[]`},
	"level":         {`3`, `8`, `"8"`, `[2,9]`, `"42"`},
	"trusted":       {`true`, `false`, `[true]`, `"true"`},
}

func randomSandboxTree(rng *rand.Rand, depth int) string {
	if depth == 0 || rng.IntN(3) == 0 {
		return sandboxLeaves[rng.IntN(len(sandboxLeaves))]
	}
	content := make([]string, 1+rng.IntN(3))
	for i := range content {
		content[i] = randomSandboxTree(rng, depth-1)
	}
	return `{"op":"` + []string{"AND", "OR"}[rng.IntN(2)] + `","content":[` + strings.Join(content, ",") + `]}`
}

// TestEvalAgreesWithTheSandboxOnAttributes: rows with attribute conditions, as IAM's web UI grants
// them, in the sandbox, which evaluates them in its own code (internal/sandbox/condition.go). For
// random expressions and requests, a request that gives every attribute is answered by Eval as by the
// sandbox's auth_by_actions; one that gives some is answered the same or Unknown (the sandbox, as
// IAM, takes a missing attribute for false), and a True of Eval is always the sandbox's.
func TestEvalAgreesWithTheSandboxOnAttributes(t *testing.T) {
	sb := sandboxtest.Start(t)
	rng := rand.New(rand.NewPCG(51, 7))
	names := []string{"_bk_iam_path_", "os", "level", "trusted"}
	decided, unknown := 0, 0
	for range 300 {
		if err := sb.Reset(); err != nil {
			t.Fatal(err)
		}
		raw := randomSandboxTree(rng, 3)
		if _, err := sb.AddExpressionPolicy("bk_cmdb", sandbox.ExpressionPolicy{Subject: sandbox.Subject{Type: "user", ID: "alice"},
			Action: "delete_host", Expression: json.RawMessage(raw)}); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		e := mustParse(t, raw)
		for range 6 {
			id := []string{"1", "2", "3"}[rng.IntN(3)]
			all := rng.IntN(2) == 0
			var given []string
			for _, name := range names {
				if all || rng.IntN(2) == 0 {
					values := sandboxAttributes[name]
					given = append(given, fmt.Sprintf("%q:%s", name, values[rng.IntN(len(values))]))
				}
			}
			attribute := "{" + strings.Join(given, ",") + "}"
			var answer map[string]bool
			if err := json.Unmarshal(sbBackend(t, sb, "auth_by_actions", `{"subject":{"type":"user","id":"alice"},"actions":[{"id":"delete_host"}],`+
				`"resources":[{"system":"bk_cmdb","type":"host","id":"`+id+`","attribute":`+attribute+`}]}`), &answer); err != nil {
				t.Fatal(err)
			}
			var attrs map[string]any
			if err := json.Unmarshal([]byte(attribute), &attrs); err != nil {
				t.Fatal(err)
			}
			got := e.Eval(Request{"host": {ID: id, Attributes: attrs}})
			want := map[bool]Truth{true: True, false: False}[answer["delete_host"]]
			switch {
			case all && got.Truth != want:
				t.Errorf("%s for host %s %s: %s %v, the sandbox %s", raw, id, attribute, got.Truth, got.Gaps, want)
			case got.Truth != Unknown && got.Truth != want:
				t.Errorf("%s for host %s %s: %s, the sandbox %s", raw, id, attribute, got.Truth, want)
			case got.Truth == Unknown:
				unknown++
			default:
				decided++
			}
		}
	}
	if decided < 500 || unknown < 100 {
		t.Errorf("%d answers decided, %d unknown: the test asks too little to say anything", decided, unknown)
	}
}
