// Package policyexpr parses the backend expression of an IAM policy (see the package doc of
// internal/bkiam, "Policy expressions") and answers two questions about it: does it still hold a grant
// the provider made (below), and what would IAM answer for a request that may not give every attribute
// the expression asks about (Eval, eval.go: true, false, or unknown until the request gives more). It
// also writes an expression in one canonical form (Canonical), so that the same grants print the same.
//
// The first is a record check. The list API merges everything one subject holds for one action into
// one expression, so a grant can never be found by comparing wholes; it is found by looking for its own atoms in a branch that stands
// on its own. The package evaluates the expression the way IAM would for one concrete request (an
// instance, an instance under ancestors, or a product of ids of several types) with two deliberate
// restrictions that make it a record check rather than a permission check:
//
//   - an atom counts only if it is about the request: an eq/in/any on "<type>.id" of a requested type,
//     a starts_with on "<type>._bk_iam_path_" of a requested type that carries a path, or an any on
//     field "". Everything else (another type, an attribute such as "host.os", a negated or ordering
//     operator) is treated as NOT satisfied, so an AND that contains it is a narrower grant than ours.
//     Under-reporting only makes the provider see drift and grant again, which is idempotent; over-
//     reporting would hide a lost grant.
//   - an OR holds a combination only through one member (see HoldsCombination), because the provider
//     wrote the combination as one group; a product split over several groups is another record.
//
// Eval has no such restrictions: it evaluates every operator the backend writes, as the backend does.
//
// Nothing here does I/O or keeps state; an *Expr is immutable and safe for concurrent use.
package policyexpr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Field attributes the translator writes (internal/bkiam's package doc, "Policy expressions"):
// "<type>.id" and "<type>._bk_iam_path_".
const (
	attrID   = "id"
	attrPath = "_bk_iam_path_"
)

// maxDepth bounds nesting. The translator nests at most three levels (OR of AND of OR); the bound only
// keeps a hostile or corrupt answer from costing unbounded recursion.
const maxDepth = 64

// Operators. AND/OR are upper case and leaf operators lower case, exactly as bk-iam writes them.
const (
	opAnd        = "AND"
	opOr         = "OR"
	opEq         = "eq"
	opIn         = "in"
	opAny        = "any"
	opStartsWith = "starts_with"
)

// opaqueOps are the other operators of bk-iam's condition language. They appear in policies made in the
// IAM UI with attribute conditions, never in a grant of this provider. They parse (so such a subject's
// expression is still readable) but never satisfy a request, see the package comment.
var opaqueOps = map[string]bool{
	"not_eq": true, "not_in": true, "contains": true, "not_contains": true,
	"not_starts_with": true, "ends_with": true, "not_ends_with": true,
	"lt": true, "lte": true, "gt": true, "gte": true, "string_contains": true,
}

// Expr is a parsed policy expression (everything one subject holds for one action, merged).
type Expr struct {
	root *node
}

// node is one condition: a composite (AND/OR with content) or a leaf (field, op, values).
type node struct {
	op      string
	content []*node // AND, OR

	field     string // leaves
	typ, attr string // field split at its last dot; attr "" when the field has no dot
	values    []string
	// valueSet holds values when there are many: a policy of 10 000
	// instances is asked about each of them, and a scan of the list for
	// every one would be quadratic.
	valueSet map[string]bool
	list     bool            // the value was an array (in, any, starts_with with several prefixes)
	raw      json.RawMessage // an opaque operator's value, kept for re-marshalling
	// kinds says, value by value, what JSON type each of values was read
	// from; nil when every one was a string, as IAM writes ids and paths.
	// IAM compares a condition's values with Go's == on decoded JSON, so
	// that a number 8 never equals the string "8" (eval.go).
	kinds []valueKind
}

// valueKind is the JSON type a leaf's value was read from.
type valueKind uint8

const (
	kindString valueKind = iota
	kindNumber
	kindBool
)

// kind is the JSON type of the leaf's i-th value.
func (n *node) kind(i int) valueKind {
	if n.kinds == nil {
		return kindString
	}
	return n.kinds[i]
}

// Node is one ancestor of a path: resource type and id (the expression drops the system).
type Node struct{ Type, ID string }

// Parse parses the JSON of a policy's "expression". Unknown ops or malformed shapes are an error that
// says what and where (e.g. `content[1].op: unknown operator "xor"`); never panics.
func Parse(raw []byte) (*Expr, error) {
	// json.Unmarshal first: a Decoder copies the input into a buffer of its
	// own, a kilobyte per policy of a listing. Numbers (rare: ids are
	// strings) must keep their literal text, and errors their wording, so
	// an expression holding a number, or one Unmarshal refuses, is read
	// again by the Decoder.
	var v any
	if err := json.Unmarshal(raw, &v); err != nil || holdsFloat(v) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		v = nil
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("policy expression: invalid JSON: %w", err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, errors.New("policy expression: invalid JSON: data after the expression")
		}
	}
	n, err := parseNode(v, "", 0)
	if err != nil {
		return nil, fmt.Errorf("policy expression: %w", err)
	}
	n.index()
	return &Expr{root: n}, nil
}

// holdsFloat reports whether json.Unmarshal read a number anywhere in v.
func holdsFloat(v any) bool {
	switch x := v.(type) {
	case float64:
		return true
	case []any:
		for _, e := range x {
			if holdsFloat(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if holdsFloat(e) {
				return true
			}
		}
	}
	return false
}

// at joins a location and a key for error messages: "" + "op" = "op", "content[1]" + "op" = "content[1].op".
func at(loc, key string) string {
	if loc == "" {
		return key
	}
	return loc + "." + key
}

func parseNode(v any, loc string, depth int) (*node, error) {
	where := loc
	if where == "" {
		where = "expression"
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("%s: nested deeper than %d levels", where, maxDepth)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an object, got %s", where, kindOf(v))
	}
	opv, ok := obj["op"]
	if !ok {
		return nil, fmt.Errorf("%s: missing", at(loc, "op"))
	}
	op, ok := opv.(string)
	if !ok {
		return nil, fmt.Errorf("%s: want a string, got %s", at(loc, "op"), kindOf(opv))
	}
	switch op {
	case opAnd, opOr:
		return parseComposite(obj, op, loc, depth)
	case opEq, opIn, opAny, opStartsWith:
	default:
		if !opaqueOps[op] {
			return nil, fmt.Errorf("%s: unknown operator %q", at(loc, "op"), op)
		}
	}
	fv, ok := obj["field"]
	if !ok {
		return nil, fmt.Errorf("%s: missing for operator %q", at(loc, "field"), op)
	}
	field, ok := fv.(string)
	if !ok {
		return nil, fmt.Errorf("%s: want a string, got %s", at(loc, "field"), kindOf(fv))
	}
	n := &node{op: op, field: field}
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		n.typ, n.attr = field[:i], field[i+1:]
	} else {
		n.typ = field
	}
	val, hasVal := obj["value"]
	vloc := at(loc, "value")
	var err error
	switch op {
	case opEq:
		if !hasVal {
			return nil, fmt.Errorf("%s: missing", vloc)
		}
		var s string
		var k valueKind
		s, k, err = scalar(val, vloc)
		n.values, n.kinds = []string{s}, kindsOf(k)
	case opIn:
		n.values, n.kinds, err = scalars(val, hasVal, vloc)
		n.list = true
	case opAny:
		// bk-iam writes value [] and ignores it; so do we, whatever it is.
		n.list = true
	case opStartsWith:
		if arr, isArr := val.([]any); isArr {
			n.list = true
			n.values, n.kinds, err = scalars(arr, true, vloc)
		} else if !hasVal {
			err = fmt.Errorf("%s: missing", vloc)
		} else {
			var s string
			var k valueKind
			s, k, err = scalar(val, vloc)
			n.values, n.kinds = []string{s}, kindsOf(k)
		}
	default: // opaque: keep the value as it came, for re-marshalling only
		n.raw, err = json.Marshal(val)
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

func parseComposite(obj map[string]any, op, loc string, depth int) (*node, error) {
	cloc := at(loc, "content")
	cv, ok := obj["content"]
	if !ok {
		return nil, fmt.Errorf("%s: missing for operator %q", cloc, op)
	}
	arr, ok := cv.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an array, got %s", cloc, kindOf(cv))
	}
	// An empty AND would be "true" (everything) and an empty OR "false": bk-iam never writes either,
	// so one is a corrupt answer, not a grant to guess about.
	if len(arr) == 0 {
		return nil, fmt.Errorf("%s: empty %s", cloc, op)
	}
	n := &node{op: op, content: make([]*node, len(arr))}
	for i, c := range arr {
		child, err := parseNode(c, fmt.Sprintf("%s[%d]", cloc, i), depth+1)
		if err != nil {
			return nil, err
		}
		n.content[i] = child
	}
	return n, nil
}

// scalar reads one id or path: a string, or leniently a number (its literal decimal text) or a bool,
// and which of them it was.
func scalar(v any, loc string) (string, valueKind, error) {
	switch x := v.(type) {
	case string:
		return x, kindString, nil
	case json.Number:
		return x.String(), kindNumber, nil
	case bool:
		return strconv.FormatBool(x), kindBool, nil
	}
	return "", kindString, fmt.Errorf("%s: want a string or number, got %s", loc, kindOf(v))
}

// kindsOf is a one-value leaf's kinds: nil for a string.
func kindsOf(k valueKind) []valueKind {
	if k == kindString {
		return nil
	}
	return []valueKind{k}
}

func scalars(v any, has bool, loc string) ([]string, []valueKind, error) {
	if !has {
		return nil, nil, fmt.Errorf("%s: missing", loc)
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, nil, fmt.Errorf("%s: want an array, got %s", loc, kindOf(v))
	}
	out := make([]string, len(arr))
	var kinds []valueKind
	for i, e := range arr {
		s, k, err := scalar(e, fmt.Sprintf("%s[%d]", loc, i))
		if err != nil {
			return nil, nil, err
		}
		out[i] = s
		if k != kindString && kinds == nil {
			kinds = make([]valueKind, len(arr))
		}
		if kinds != nil {
			kinds[i] = k
		}
	}
	return out, kinds, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// want is what a request asks of one resource type: every id in ids (or, with all, every instance), and
// when path is set, that the ids sit under that backend path ("/type,id/type,id/").
type want struct {
	ids  []string
	all  bool
	path string
}

// request is a grant to look for, with its types numbered for the coverage sets.
type request struct {
	types map[string]int
	wants []want
}

// result of evaluating a node for a request: sat says the node is true for every id of the request;
// covers[i] says it also constrains requested type i positively (an atom on it, or a wildcard), so
// that "AND[biz.id eq 1]" does not pass for a biz×host product it says nothing about.
type result struct {
	sat    bool
	covers []bool
}

func (r *request) eval(n *node) result {
	res := result{covers: make([]bool, len(r.wants))}
	switch n.op {
	case opAnd:
		for _, c := range n.content {
			cr := r.eval(c)
			if !cr.sat {
				return result{covers: res.covers}
			}
			orInto(res.covers, cr.covers)
		}
		res.sat = true
	case opOr:
		// Coverage is the union over the members that hold; this only matters for an OR nested in an
		// AND (one type's conditions OR-ed), where any holding member does constrain its type.
		for _, c := range n.content {
			if cr := r.eval(c); cr.sat {
				res.sat = true
				orInto(res.covers, cr.covers)
			}
		}
	default:
		if n.op == opAny && n.field == "" {
			// An action without a resource type: any covers every request.
			res.sat = true
			for i := range res.covers {
				res.covers[i] = true
			}
			return res
		}
		i, ok := r.types[n.typ]
		if !ok {
			return res // another type, or an opaque field: not about this request
		}
		if leafHolds(n, r.wants[i]) {
			res.sat, res.covers[i] = true, true
		}
	}
	return res
}

func orInto(dst, src []bool) {
	for i, b := range src {
		dst[i] = dst[i] || b
	}
}

// leafHolds reports whether a leaf on one requested type holds for what the request asks of it.
func leafHolds(n *node, w want) bool {
	switch {
	case n.attr == attrID && n.op == opAny:
		return true
	case n.attr == attrID && (n.op == opEq || n.op == opIn):
		return !w.all && n.subset(w.ids)
	case n.attr == attrPath && n.op == opStartsWith:
		if w.path == "" {
			return false // a path grant is not a plain instance grant
		}
		for _, v := range n.values {
			if coversPath(v, w.path) {
				return true
			}
		}
	}
	return false
}

// coversPath reports whether the starts_with value v covers a grant under path p. Exact equality is the
// grant itself. A proper prefix that ends at a node boundary ("/project,p1/" for "/project,p1/dir,d/")
// is an ancestor grant: IAM lets it through for every resource below, ours included, so we count it as
// held. The cost of that choice: if our exact record is revoked while a broader one remains, no drift is
// shown, which matches what the subject can actually do; the opposite choice would re-grant a narrower
// record forever next to a broader one. A prefix that cuts a node ("/project,p" for "/project,p1/") is
// not a boundary: the translator never writes one, and accepting it would let p1 cover p10.
//
// A prefix ending in ",*/" ("/biz,1/set,*/") was written for a path whose last node is an ancestor
// type with id "*": every node of that type under the rest. IAM's backend and SDKs strip the "*/"
// and prefix-match, so "/biz,1/set,2/" and "/biz,1/set,2/module,3/" are covered and "/biz,1/module,2/"
// is not; so does this.
func coversPath(v, p string) bool {
	if v == p {
		return true
	}
	if stem, ok := strings.CutSuffix(v, ",*/"); ok {
		return strings.HasPrefix(p, stem+",") && len(p) > len(stem)+2
	}
	return strings.HasSuffix(v, "/") && strings.HasPrefix(p, v)
}

// index builds the value sets of long leaves, once, at parse time, so
// that an Expr is read-only afterwards and safe to share.
func (n *node) index() {
	for _, c := range n.content {
		c.index()
	}
	if len(n.values) > 8 {
		n.valueSet = make(map[string]bool, len(n.values))
		for _, v := range n.values {
			n.valueSet[v] = true
		}
	}
}

// subset reports whether every id is among the leaf's values.
func (n *node) subset(ids []string) bool {
	if n.valueSet != nil {
		for _, id := range ids {
			if !n.valueSet[id] {
				return false
			}
		}
		return true
	}
	values := n.values
	for _, id := range ids {
		found := false
		for _, v := range values {
			if v == id {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// holds reports whether a branch that stands on its own satisfies the whole request: the root, or a
// member of an OR reached only through ORs. An AND or a leaf there must hold and constrain every type;
// an AND is never entered, because its members are only valid together.
func (r *request) holds(n *node) bool {
	if n.op == opOr {
		for _, c := range n.content {
			if r.holds(c) {
				return true
			}
		}
		return false
	}
	res := r.eval(n)
	if !res.sat {
		return false
	}
	for _, c := range res.covers {
		if !c {
			return false
		}
	}
	return true
}

func (e *Expr) holds(r *request) bool {
	if e == nil || e.root == nil || len(r.wants) == 0 {
		return false
	}
	return r.holds(e.root)
}

// HoldsInstance reports whether the expression grants instance id of resource type typ ("host"):
// some eq/in atom on "typ.id" contains id, or an any atom on "typ.id" (or field "") covers it,
// within a branch that can be satisfied on its own: an atom inside an AND only counts if every other
// member of that AND is satisfied for this instance too (an AND with a _bk_iam_path_ condition is a
// path grant, NOT a plain instance grant — see HoldsPath).
func (e *Expr) HoldsInstance(typ, id string) bool {
	return e.holds(&request{types: map[string]int{typ: 0}, wants: []want{{ids: []string{id}}}})
}

// HoldsPath reports whether the path grant ancestors… → (typ, id) is held: an AND of "typ.id ∋ id" and
// "typ._bk_iam_path_ starts_with /A1type,A1id/A2type,A2id/" exists (the value is the ancestors' path,
// exactly as the sandbox/real translator writes it), or a bare "typ.id ∋ id" (the collapse for actions
// that ignore the path), or an any on typ.id. With no ancestors it is HoldsInstance.
//
// A starts_with value that is an ancestor of ours (a proper prefix ending at a node boundary) also
// counts, inside such an AND or bare (the grant of everything under an ancestor): see coversPath.
func (e *Expr) HoldsPath(typ, id string, ancestors []Node) bool {
	if len(ancestors) == 0 {
		return e.HoldsInstance(typ, id)
	}
	return e.holds(&request{types: map[string]int{typ: 0}, wants: []want{{ids: []string{id}, path: BackendPath(ancestors)}}})
}

// BackendPath renders ancestors the way the translator writes a _bk_iam_path_ value: "/type,id/type,id/"
// (no system), "" for none.
func BackendPath(ancestors []Node) string {
	if len(ancestors) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('/')
	for _, a := range ancestors {
		b.WriteString(a.Type)
		b.WriteByte(',')
		b.WriteString(a.ID)
		b.WriteByte('/')
	}
	return b.String()
}

// HoldsCombination reports whether a grant over several resource types at once (a combined resource:
// ids by type, every id of every type granted together as one product) is held: some single AND
// (at any nesting level, or the root when it is an AND) whose members cover, for every type, every
// listed id (via eq/in/any atoms on "type.id"). Otherwise the whole combination counts as gone.
//
// "Any nesting level" means any depth of ORs: an AND nested in another AND is narrowed by its siblings,
// which must hold too. The AND must constrain every listed type and nothing else (a member on a type
// not in ids is a narrower grant). An empty id list for a type asks for "any instance" of it (the grant
// sent instances: [] for that type, which the translator writes as an any atom); an empty ids is
// never held.
func (e *Expr) HoldsCombination(ids map[string][]string) bool {
	r := &request{types: make(map[string]int, len(ids))}
	for t, list := range ids {
		r.types[t] = len(r.wants)
		r.wants = append(r.wants, want{ids: list, all: len(list) == 0})
	}
	return e.holds(r)
}

// Instances returns, for a single resource type, the instance ids the expression grants directly
// (eq/in atoms on typ.id that stand on their own, not inside an AND with a path or another type), and
// whether it grants any instance (an any atom). Used by import to write what a subject holds.
//
// ids are sorted and unique; they are listed even when any is true (the caller decides whether an
// explicit id next to "any" matters). An AND of typ.id atoms only grants the ids all of them allow.
// For every returned id HoldsInstance is true, and with any it is true for every id.
func (e *Expr) Instances(typ string) (ids []string, anyInstance bool) {
	if e == nil || e.root == nil {
		return nil, false
	}
	set, anyInst, ok := standalone(e.root, typ)
	if !ok {
		return nil, false
	}
	for id := range set {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, anyInst
}

// standalone returns the ids a node grants by itself for typ (ok false when it is not a plain instance
// grant of typ at all), and whether it grants every instance.
func standalone(n *node, typ string) (ids map[string]bool, anyInst, ok bool) {
	switch n.op {
	case opOr:
		ids = map[string]bool{}
		for _, c := range n.content {
			cids, cany, cok := standalone(c, typ)
			if !cok {
				continue
			}
			ok = true
			anyInst = anyInst || cany
			for id := range cids {
				ids[id] = true
			}
		}
		return ids, anyInst, ok
	case opAnd:
		anyInst = true // the identity of the intersection
		for _, c := range n.content {
			cids, cany, cok := standalone(c, typ)
			if !cok {
				return nil, false, false
			}
			if cany {
				continue
			}
			if anyInst {
				ids, anyInst = cids, false
				continue
			}
			for id := range ids {
				if !cids[id] {
					delete(ids, id)
				}
			}
		}
		return ids, anyInst, true
	case opAny:
		if n.field == "" || (n.typ == typ && n.attr == attrID) {
			return map[string]bool{}, true, true
		}
	case opEq, opIn:
		if n.typ == typ && n.attr == attrID {
			ids = make(map[string]bool, len(n.values))
			for _, v := range n.values {
				ids[v] = true
			}
			return ids, false, true
		}
	}
	return nil, false, false
}

// MarshalJSON writes the parsed tree back in the backend's shape (numbers as the strings they were
// read as), so a logged or re-parsed expression gives the same verdicts.
func (e *Expr) MarshalJSON() ([]byte, error) {
	if e == nil || e.root == nil {
		return []byte("null"), nil
	}
	return json.Marshal(e.root.toJSON())
}

func (n *node) toJSON() any {
	switch n.op {
	case opAnd, opOr:
		content := make([]any, len(n.content))
		for i, c := range n.content {
			content[i] = c.toJSON()
		}
		return map[string]any{"op": n.op, "content": content}
	}
	var value any
	switch {
	case n.raw != nil:
		value = n.raw
	case n.list:
		vals := n.values
		if vals == nil {
			vals = []string{}
		}
		value = vals
	case len(n.values) == 1:
		value = n.values[0]
	}
	return map[string]any{"field": n.field, "op": n.op, "value": value}
}

// Mentions reports whether any atom of the expression is about resource
// type typ (its id or its path), or covers every type (an any on field
// ""). A creator's policies for unrelated actions mention other types only,
// which tells them apart from an action of typ whose grants were revoked.
func (e *Expr) Mentions(typ string) bool {
	var walk func(n *node) bool
	walk = func(n *node) bool {
		if len(n.content) > 0 {
			for _, c := range n.content {
				if walk(c) {
					return true
				}
			}
			return false
		}
		return n.field == "" || n.field == typ+".id" || n.field == typ+"._bk_iam_path_"
	}
	return walk(e.root)
}
