package policyexpr

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Three-valued evaluation: what IAM's backend would answer for a request, when the request may not
// give everything the expression asks about.
//
// IAM's backend evaluates a policy against the resources a caller sends, each with its id and the
// attributes the caller gives ("attribute": {"_bk_iam_path_": ["/biz,1/"], "os": "linux"}); it
// never looks a resource's path or attributes up itself, and a condition on an attribute the
// request lacks is false. So "false" from IAM means "denied" only when the request gave what the
// policy asks about. Eval tells the two apart: a condition on an attribute the request does not give
// is Unknown here, and AND and OR combine in Kleene's logic (False AND Unknown is False, True OR
// Unknown is True), so an answer that is True or False holds whatever the missing attributes are.
//
// The conditions follow the backend's (bk-iam pkg/abac/pdp/condition, the translated operators of
// its query answers):
//
//   - eq and in: the attribute equals one of the values, as Go's == on decoded JSON: a string never
//     equals a number ("8" is not 8) or a bool; numbers equal when their values do; boolean values
//     are the backend's Bool condition: one value, and an attribute that is one boolean, not a list;
//   - starts_with: both strings, the attribute starts with the value; on _bk_iam_path_ a value ending
//     in ",*/" ("/biz,1/set,*/") drops its "*/" first, so that it covers every set under biz 1;
//   - string_contains: both strings, the attribute contains the value;
//   - gt, gte, lt, lte: one value; two numbers compare as numbers, two strings as strings (the
//     backend's comparison), anything else is false;
//   - any: true;
//   - an attribute given as a list matches when any of its elements does (an empty list matches
//     nothing: an instance without a path is under no prefix);
//   - "id" is the resource's id, whatever the attributes say.
//
// What the backend never writes (not_eq, not_in, contains, ends_with and the other negated
// operators, which parse for the record checks) evaluates Unknown, and so does a condition on a
// resource type the request does not give.

// Truth is a three-valued answer.
type Truth uint8

const (
	False Truth = iota
	True
	Unknown
)

func (t Truth) String() string {
	switch t {
	case True:
		return "true"
	case False:
		return "false"
	}
	return "unknown"
}

// Resource is what a request gives of one resource: its id and the attributes the caller knows.
type Resource struct {
	ID string
	// Attributes are by name: a string, a number (json.Number, float64 or int), a bool, or a list
	// of those ([]string or []any). The topology path is AttributePath ("_bk_iam_path_"), a list of
	// paths "/type,id/…/" to the instance's parent; an empty list says the instance has none. An
	// attribute not in the map is one the caller does not know, and a condition on it is Unknown.
	Attributes map[string]any
}

// Request is the resources of a check, by resource type: the expression names fields by type alone
// ("host.id"), without the system.
type Request map[string]Resource

// Gap is what left a condition Unknown: an attribute the request does not give, a resource type it
// does not give (Attribute ""), or an operator this package does not evaluate (Op).
type Gap struct {
	Type      string
	Attribute string
	Op        string
}

// Verdict is an expression's answer for a request.
type Verdict struct {
	Truth Truth
	// Gaps, when Truth is Unknown, are what the answer waits on: the missing attributes (and
	// types, and unevaluated operators) of the conditions that decide it, sorted and each once.
	// Giving all of them decides the answer.
	Gaps []Gap
}

// Eval evaluates the expression for a request. A nil expression (nothing granted) is False.
func (e *Expr) Eval(r Request) Verdict {
	if e == nil || e.root == nil {
		return Verdict{Truth: False}
	}
	v := r.eval(e.root)
	if v.Truth != Unknown {
		v.Gaps = nil
		return v
	}
	slices.SortFunc(v.Gaps, func(a, b Gap) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Attribute, b.Attribute), cmp.Compare(a.Op, b.Op))
	})
	v.Gaps = slices.Compact(v.Gaps)
	return v
}

func (r Request) eval(n *node) Verdict {
	switch n.op {
	case opAnd, opOr:
		// AND: False wins, then Unknown, else True; OR: True wins, then Unknown, else False.
		decisive, otherwise := False, True
		if n.op == opOr {
			decisive, otherwise = True, False
		}
		var gaps []Gap
		for _, c := range n.content {
			v := r.eval(c)
			switch v.Truth {
			case decisive:
				return Verdict{Truth: decisive}
			case Unknown:
				gaps = append(gaps, v.Gaps...)
			}
		}
		if gaps != nil {
			return Verdict{Truth: Unknown, Gaps: gaps}
		}
		return Verdict{Truth: otherwise}
	case opAny:
		return Verdict{Truth: True}
	}
	return r.evalLeaf(n)
}

// evaluated are the leaf operators Eval decides; the other opaque ones are Unknown.
var evaluated = map[string]bool{
	opEq: true, opIn: true, opStartsWith: true, opStringContains: true,
	opGt: true, opGte: true, opLt: true, opLte: true,
}

const (
	opStringContains = "string_contains"
	opGt             = "gt"
	opGte            = "gte"
	opLt             = "lt"
	opLte            = "lte"
)

func (r Request) evalLeaf(n *node) Verdict {
	unknown := func(g Gap) Verdict { return Verdict{Truth: Unknown, Gaps: []Gap{g}} }
	res, ok := r[n.typ]
	if !ok {
		return unknown(Gap{Type: n.typ})
	}
	if !evaluated[n.op] || n.attr == "" {
		return unknown(Gap{Type: n.typ, Attribute: n.attr, Op: n.op})
	}
	var got []operand
	if n.attr == attrID {
		got = []operand{{text: res.ID, kind: kindString}}
	} else {
		v, given := res.Attributes[n.attr]
		if !given {
			return unknown(Gap{Type: n.typ, Attribute: n.attr})
		}
		got = operandsOf(v)
	}
	want := n.operands()
	match := func(a, b operand) bool { return a.equal(b) }
	switch n.op {
	case opEq, opIn:
		// Values that are booleans stand for the backend's Bool condition
		// (the SaaS's translator picks by the first value): one value, and an
		// attribute that is one boolean, not a list.
		if len(want) > 0 && want[0].kind == kindBool {
			if len(want) != 1 || len(got) != 1 || isList(res.Attributes[n.attr]) {
				return Verdict{Truth: False}
			}
		}
	case opStartsWith:
		path := n.attr == attrPath
		match = func(a, b operand) bool {
			if a.kind != kindString || b.kind != kindString {
				return false
			}
			prefix := b.text
			if path && strings.HasSuffix(prefix, ",*/") {
				prefix = strings.TrimSuffix(prefix, "*/")
			}
			return strings.HasPrefix(a.text, prefix)
		}
	case opStringContains:
		match = func(a, b operand) bool {
			return a.kind == kindString && b.kind == kindString && strings.Contains(a.text, b.text)
		}
	case opGt, opGte, opLt, opLte:
		if len(want) != 1 { // the backend compares with one value only
			return Verdict{Truth: False}
		}
		op := n.op
		match = func(a, b operand) bool {
			c, ok := a.compare(b)
			if !ok {
				return false
			}
			switch op {
			case opGt:
				return c > 0
			case opGte:
				return c >= 0
			case opLt:
				return c < 0
			}
			return c <= 0
		}
	}
	for _, a := range got {
		for _, b := range want {
			if match(a, b) {
				return Verdict{Truth: True}
			}
		}
	}
	return Verdict{Truth: False}
}

// isList reports whether an attribute was given as a list.
func isList(v any) bool {
	switch v.(type) {
	case []string, []any:
		return true
	}
	return false
}

// operand is one value of a condition or an attribute, with its JSON type.
type operand struct {
	text string
	kind valueKind
}

// kindOther is a value that matches nothing: null, an object, a list inside a list.
const kindOther valueKind = 255

// operands are a leaf's values; an opaque operator's come from its JSON.
func (n *node) operands() []operand {
	if n.raw != nil {
		dec := json.NewDecoder(bytes.NewReader(n.raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return nil
		}
		return operandsOf(v)
	}
	out := make([]operand, len(n.values))
	for i, v := range n.values {
		out[i] = operand{text: v, kind: n.kind(i)}
	}
	return out
}

// operandsOf reads an attribute or a value: a list gives its elements.
func operandsOf(v any) []operand {
	switch x := v.(type) {
	case []string:
		out := make([]operand, len(x))
		for i, s := range x {
			out[i] = operand{text: s, kind: kindString}
		}
		return out
	case []any:
		out := make([]operand, len(x))
		for i, e := range x {
			out[i] = operandOf(e)
		}
		return out
	}
	return []operand{operandOf(v)}
}

func operandOf(v any) operand {
	switch x := v.(type) {
	case string:
		return operand{text: x, kind: kindString}
	case bool:
		return operand{text: strconv.FormatBool(x), kind: kindBool}
	case json.Number:
		return operand{text: x.String(), kind: kindNumber}
	case float64:
		return operand{text: strconv.FormatFloat(x, 'g', -1, 64), kind: kindNumber}
	case int:
		return operand{text: strconv.Itoa(x), kind: kindNumber}
	case int64:
		return operand{text: strconv.FormatInt(x, 10), kind: kindNumber}
	}
	return operand{kind: kindOther}
}

func (a operand) equal(b operand) bool {
	if a.kind != b.kind || a.kind == kindOther {
		return false
	}
	if a.kind == kindNumber {
		c, ok := a.compare(b)
		return ok && c == 0
	}
	return a.text == b.text
}

// compare orders two numbers by value (as integers when both are, else as floats) or two strings
// by their bytes; ok is false for anything else, as in the backend.
func (a operand) compare(b operand) (int, bool) {
	switch {
	case a.kind == kindString && b.kind == kindString:
		return strings.Compare(a.text, b.text), true
	case a.kind == kindNumber && b.kind == kindNumber:
		if x, err := strconv.ParseInt(a.text, 10, 64); err == nil {
			if y, err := strconv.ParseInt(b.text, 10, 64); err == nil {
				return cmp.Compare(x, y), true
			}
		}
		x, errX := strconv.ParseFloat(a.text, 64)
		y, errY := strconv.ParseFloat(b.text, 64)
		if errX != nil || errY != nil {
			return 0, false
		}
		return cmp.Compare(x, y), true
	}
	return 0, false
}

// Canonical returns the expression as JSON in one form for one meaning: the members of every AND
// and OR sorted (and each once), and the values of every in, and of a starts_with given several
// prefixes, sorted and each once. IAM merges a subject's rows into one expression in no fixed
// order, so the same grants can come back in another order on each read; their canonical forms
// are equal. Values keep their JSON types (a number stays a number), unlike MarshalJSON.
func (e *Expr) Canonical() ([]byte, error) {
	if e == nil || e.root == nil {
		return []byte("null"), nil
	}
	v, err := e.root.canonical()
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func (n *node) canonical() (any, error) {
	switch n.op {
	case opAnd, opOr:
		content := make([]json.RawMessage, 0, len(n.content))
		for _, c := range n.content {
			v, err := c.canonical()
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			content = append(content, b)
		}
		return map[string]any{"op": n.op, "content": sortedSet(content)}, nil
	}
	var value any
	switch {
	case n.raw != nil:
		value = n.raw
	case n.list:
		values := make([]json.RawMessage, 0, len(n.values))
		for i := range n.values {
			b, err := n.typedValue(i)
			if err != nil {
				return nil, err
			}
			values = append(values, b)
		}
		value = sortedSet(values)
	case len(n.values) == 1:
		b, err := n.typedValue(0)
		if err != nil {
			return nil, err
		}
		value = b
	}
	return map[string]any{"field": n.field, "op": n.op, "value": value}, nil
}

// sortedSet sorts JSON values by their bytes, each once: the order IAM merged them in is not kept.
func sortedSet(vs []json.RawMessage) []json.RawMessage {
	slices.SortFunc(vs, func(a, b json.RawMessage) int { return bytes.Compare(a, b) })
	return slices.CompactFunc(vs, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) })
}

// typedValue is the leaf's i-th value as the JSON it was read from.
func (n *node) typedValue(i int) (json.RawMessage, error) {
	switch n.kind(i) {
	case kindNumber, kindBool:
		return json.RawMessage(n.values[i]), nil
	}
	return json.Marshal(n.values[i])
}
