package policyexpr

import (
	"slices"
	"strings"
)

// An expression is an OR of alternatives, each an AND of conditions: the shapes IAM writes (an id
// list, a path prefix, every instance, an attribute condition, a combination of several types) are
// alternatives of one or two conditions. Alternatives flattens an expression into that form, so
// that a caller can ask of each way the expression grants whether it is one it knows (a grant of
// its own) or something else, and say what the something else is.

// Condition is one leaf of an expression: an operator on a field of a resource type.
type Condition struct {
	// Type is the resource type ("host"); "" for an any over everything.
	Type string
	// Attribute is the field after the type: "id", "_bk_iam_path_", or an attribute such as "os".
	Attribute string
	// Op is the operator as IAM writes it: eq, in, starts_with, any, or another.
	Op string
	// Values are the operator's values as text (numbers as their literal text); none for any. An
	// opaque operator's values are its JSON.
	Values []string
}

// EnvironmentType is the type of an environment condition's fields: IAM writes a policy's time
// window (a period_daily environment: a time zone, hours, weekdays) as conditions on
// "_bk_iam_env_.tz", "_bk_iam_env_.hms" and "_bk_iam_env_.weekday", which the backend evaluates
// against its clock. No resource type has them: such a condition narrows when an alternative
// grants, never what.
const EnvironmentType = "_bk_iam_env_"

// Environment reports whether the condition is on IAM's environment (EnvironmentType), not on a
// resource.
func (c Condition) Environment() bool { return c.Type == EnvironmentType }

// Attribute names the expression writes for an id and a topology path.
const (
	AttributeID   = attrID
	AttributePath = attrPath
)

// IDs reports whether the condition grants instances by id (eq or in on TYPE.id), and which.
func (c Condition) IDs() ([]string, bool) {
	if c.Attribute == attrID && (c.Op == opEq || c.Op == opIn) {
		return c.Values, true
	}
	return nil, false
}

// Prefixes reports whether the condition grants by topology (starts_with on TYPE._bk_iam_path_),
// and under which path prefixes.
func (c Condition) Prefixes() ([]string, bool) {
	if c.Attribute == attrPath && c.Op == opStartsWith {
		return c.Values, true
	}
	return nil, false
}

// Every reports whether the condition holds for every instance of its type (an any on TYPE.id),
// or for everything (an any on field "", Type "").
func (c Condition) Every() bool {
	return c.Op == opAny && (c.Type == "" || c.Attribute == attrID)
}

// String renders the condition for a message: "host 1", "host 1, 2", "host under /biz,1/",
// "every host", "everything", or "host.os eq linux" for any other.
func (c Condition) String() string {
	if ids, ok := c.IDs(); ok {
		return c.Type + " " + strings.Join(ids, ", ")
	}
	if prefixes, ok := c.Prefixes(); ok {
		return c.Type + " under " + strings.Join(prefixes, " or ")
	}
	if c.Every() {
		if c.Type == "" {
			return "everything"
		}
		return "every " + c.Type
	}
	field := c.Type
	if c.Attribute != "" {
		field += "." + c.Attribute
	}
	return field + " " + c.Op + " " + strings.Join(c.Values, ", ")
}

// Alternative is one way an expression grants: its conditions, which hold together.
type Alternative []Condition

// Types returns the resource types the alternative's conditions name, sorted, "" and the
// environment (EnvironmentType) left out.
func (a Alternative) Types() []string {
	var out []string
	for _, c := range a {
		if c.Type != "" && !c.Environment() && !slices.Contains(out, c.Type) {
			out = append(out, c.Type)
		}
	}
	slices.Sort(out)
	return out
}

// IDsOf returns the ids the alternative grants of typ by id: the intersection of its id conditions
// on typ (each holds, so an instance must be in all); ok false when it has none.
func (a Alternative) IDsOf(typ string) (ids []string, ok bool) {
	for _, c := range a {
		got, isID := c.IDs()
		switch {
		case !isID || c.Type != typ:
		case !ok:
			ids, ok = slices.Clone(got), true
		default:
			ids = slices.DeleteFunc(ids, func(id string) bool { return !slices.Contains(got, id) })
		}
	}
	return ids, ok
}

// String renders the alternative for a message: its conditions joined by " and ".
func (a Alternative) String() string {
	var parts, window []string
	for _, c := range a {
		if c.Environment() {
			window = append(window, c.Attribute+" "+c.Op+" "+strings.Join(c.Values, ", "))
			continue
		}
		parts = append(parts, c.String())
	}
	if len(window) > 0 {
		parts = append(parts, "within IAM's time window ("+strings.Join(window, "; ")+")")
	}
	return strings.Join(parts, " and ")
}

// MaxAlternatives bounds Alternatives: an AND of ORs multiplies out, and an expression whose
// alternatives are more than this is reported as too complex rather than expanded.
const MaxAlternatives = 10000

// Alternatives returns the expression as an OR of alternatives (its disjunctive normal form, in
// the expression's order), and false when it has more than MaxAlternatives of them. An id list
// stays one condition, whatever its length. A nil expression has none.
func (e *Expr) Alternatives() ([]Alternative, bool) {
	if e == nil || e.root == nil {
		return nil, true
	}
	return alternatives(e.root)
}

func alternatives(n *node) ([]Alternative, bool) {
	switch n.op {
	case opOr:
		var out []Alternative
		for _, c := range n.content {
			alts, ok := alternatives(c)
			if !ok || len(out)+len(alts) > MaxAlternatives {
				return nil, false
			}
			out = append(out, alts...)
		}
		return out, true
	case opAnd:
		out := []Alternative{nil}
		for _, c := range n.content {
			alts, ok := alternatives(c)
			if !ok || len(out)*len(alts) > MaxAlternatives {
				return nil, false
			}
			product := make([]Alternative, 0, len(out)*len(alts))
			for _, left := range out {
				for _, right := range alts {
					product = append(product, slices.Concat(left, right))
				}
			}
			out = product
		}
		return out, true
	}
	return []Alternative{{n.condition()}}, true
}

// condition is a leaf as a Condition.
func (n *node) condition() Condition {
	c := Condition{Type: n.typ, Attribute: n.attr, Op: n.op, Values: n.values}
	if n.raw != nil {
		c.Values = []string{string(n.raw)}
	}
	if n.op == opAny {
		c.Values = nil
		if n.field == "" {
			c.Type, c.Attribute = "", ""
		}
	}
	return c
}
