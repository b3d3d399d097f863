package sandbox

import (
	"cmp"
	"strings"
)

// The backend's conditions (bk-iam pkg/abac/pdp/condition), as the access checks evaluate a leaf
// of a row's expression against the request's resources. The read form's operators stand for the
// backend's: eq and in for StringEquals, or for NumericEquals and Bool when the values are numbers
// or booleans (the SaaS's translator picks by the first value); starts_with for StringPrefix;
// string_contains for StringContains; gt, gte, lt and lte for the numeric comparisons; any for Any.
// Values compare as decoded JSON, so the string "8" is not the number 8.

// iamPathAttr is the attribute holding an instance's path to its parent.
const iamPathAttr = "_bk_iam_path_"

// evalLeaf evaluates a leaf on the resource of its field's type. A resource of that type missing,
// or an attribute the request did not send, makes it false; an attribute sent as a list holds when
// one of its elements does.
func evalLeaf(e expr, set resourceSet) bool {
	typ, attr := leafType(e)
	r, ok := set[typ]
	if !ok {
		return false
	}
	got := resourceAttr(r, attr)
	values := leafValues(e)
	op, _ := e["op"].(string)
	switch op {
	case "eq", "in":
		if len(values) > 0 {
			if _, isBool := values[0].(bool); isBool {
				return boolEquals(got, values)
			}
		}
		return forOr(got, values, scalarEqual)
	case "starts_with":
		return forOr(got, values, func(a, b any) bool {
			as, okA := a.(string)
			bs, okB := b.(string)
			// A policy path ending at ",*/" is "any instance under its parent".
			if attr == iamPathAttr && strings.HasSuffix(bs, ",*/") {
				bs = bs[:len(bs)-2]
			}
			return okA && okB && strings.HasPrefix(as, bs)
		})
	case "string_contains":
		return forOr(got, values, func(a, b any) bool {
			as, okA := a.(string)
			bs, okB := b.(string)
			return okA && okB && strings.Contains(as, bs)
		})
	case "gt", "gte", "lt", "lte":
		if len(values) != 1 { // the backend compares with one value only
			return false
		}
		return forOr(got, values, func(a, b any) bool {
			c, ok := compareValues(a, b)
			switch op {
			case "gt":
				return ok && c > 0
			case "gte":
				return ok && c >= 0
			case "lt":
				return ok && c < 0
			}
			return ok && c <= 0
		})
	case "any":
		return true
	}
	return false
}

// resourceAttr is an attribute of a resource as the backend's evaluation context holds it: "id"
// is the resource's id whatever the attributes say, and a path is read in its two-part node form.
func resourceAttr(r accessResource, attr string) any {
	switch attr {
	case "id":
		return r.ID
	case iamPathAttr:
		switch v := r.Attribute[attr].(type) {
		case string:
			return []any{standardPath(v)}
		case []any:
			out := make([]any, len(v))
			for i, p := range v {
				s, ok := p.(string)
				if !ok {
					return v // not a list of paths: left as sent, as the backend does
				}
				out[i] = standardPath(s)
			}
			return out
		}
	}
	return r.Attribute[attr]
}

// leafValues is a leaf's value as the list of the backend's condition: a scalar alone.
func leafValues(e expr) []any {
	switch v := e["value"].(type) {
	case []any:
		return v
	case []string:
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = s
		}
		return out
	case nil:
		return nil
	default:
		return []any{v}
	}
}

// forOr is the backend's baseCondition.forOr: any value against the attribute, or against any of
// its elements when it is a list.
func forOr(got any, values []any, match func(a, b any) bool) bool {
	items, isList := got.([]any)
	if !isList {
		items = []any{got}
	}
	for _, g := range items {
		for _, v := range values {
			if match(g, v) {
				return true
			}
		}
	}
	return false
}

// scalarEqual is Go's == on decoded JSON scalars (the backend's StringEquals; for two numbers its
// NumericEquals agrees); any other value equals nothing.
func scalarEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return false
}

// boolEquals is the backend's Bool: one value, an attribute that is a boolean, not a list.
func boolEquals(got any, values []any) bool {
	g, ok := got.(bool)
	return ok && len(values) == 1 && scalarEqual(g, values[0])
}

// compareValues orders two numbers, or two strings (the backend's comparison takes both); any
// other pair does not compare.
func compareValues(a, b any) (int, bool) {
	switch x := a.(type) {
	case float64:
		if y, ok := b.(float64); ok {
			return cmp.Compare(x, y), true
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true
		}
	}
	return 0, false
}

// standardPath writes a caller's path "/system,type,id/…/" as "/type,id/…/", the form of the
// expressions; a path in that form already, or not a path, is left alone.
func standardPath(path string) string {
	if !strings.HasPrefix(path, "/") {
		return path
	}
	var b strings.Builder
	b.WriteByte('/')
	for _, node := range strings.Split(strings.Trim(path, "/"), "/") {
		parts := strings.Split(node, ",")
		switch len(parts) {
		case 2:
			b.WriteString(parts[0] + "," + parts[1] + "/")
		case 3:
			b.WriteString(parts[1] + "," + parts[2] + "/")
		default:
			return path
		}
	}
	out := b.String()
	if !strings.HasSuffix(path, "/") {
		out = strings.TrimSuffix(out, "/")
	}
	return out
}
