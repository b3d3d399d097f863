package sandbox

import (
	"crypto/md5" //nolint:gosec // the backend's expression signature is an md5, not a secret
	"encoding/hex"
	"strings"
)

// A row's expression as the backend stores it, for the debug output's policies (debug.go): written
// from the read routes' form, never read back.

// internalExpression is a row's expression in the backend's own form, with its signature (an md5
// of the text): {"StringEquals":{"bk_cmdb.host.id":["1"]}}, {"OR":{"content":[…]}}; "" for an
// action related to no type, which has none.
func internalExpression(a *Action, p *policy) (string, string) {
	if len(a.related) == 0 {
		return "", ""
	}
	text := string(marshalJSON(backendCondition(a, p.expression(a))))
	sum := md5.Sum([]byte(text)) //nolint:gosec // a signature, as the backend's
	return text, hex.EncodeToString(sum[:])
}

// backendCondition writes an expression of the read routes' form as the backend stores it: the
// operator names of its conditions, fields with the system of their type (the action's related
// type of that id: "bk_cmdb.biz.id" in a bk_job action), values in lists.
func backendCondition(a *Action, e expr) map[string]any {
	op, _ := e["op"].(string)
	if op == "AND" || op == "OR" {
		var content []any
		for _, c := range contentOf(e) {
			content = append(content, backendCondition(a, c))
		}
		return map[string]any{op: map[string]any{"content": content}}
	}
	field, _ := e["field"].(string)
	if field != "" {
		system := a.system
		if typ, _ := leafType(e); a.typeSystem(typ) != "" {
			system = a.typeSystem(typ)
		}
		field = system + "." + field
	}
	values := []any{}
	switch v := e["value"].(type) {
	case []any:
		values = append(values, v...)
	case []string:
		for _, s := range v {
			values = append(values, s)
		}
	default:
		values = append(values, v)
	}
	return map[string]any{backendOperator(op, values): map[string]any{field: values}}
}

// backendOperator is the backend's condition for an operator of the read form (bk-iam
// pkg/abac/pdp/condition; the SaaS's translator picks Bool and NumericEquals for bool and number
// values of eq and in).
func backendOperator(op string, values []any) string {
	switch op {
	case "eq", "in":
		if len(values) > 0 {
			switch values[0].(type) {
			case bool:
				return "Bool"
			case float64:
				return "NumericEquals"
			}
		}
		return "StringEquals"
	case "starts_with":
		return "StringPrefix"
	case "string_contains":
		return "StringContains"
	case "gt", "gte", "lt", "lte":
		return "Numeric" + strings.ToUpper(op[:1]) + op[1:]
	case "any":
		return "Any"
	}
	return op
}
