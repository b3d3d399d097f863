package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Rows with attribute conditions, as IAM's web UI grants them ({"field":"host.os","op":"eq",
// "value":"linux"}, or such conditions AND-ed with instances). The store keeps grants as paths and
// cannot hold one, so each is a row of its own beside the subject's custom policy, as a template
// row is: never touched by a grant or revoke, never in a grant's answer, listed by the read routes
// with its expression as given and counted by the access checks, whose evaluation follows the
// backend's conditions (condition.go).

// ExpressionPolicy is a row with an attribute condition (POST /_sandbox/expression_policies,
// Server.AddExpressionPolicy). Expression is in the read routes' form; ExpiredAt 0 is permanent.
type ExpressionPolicy struct {
	Subject    Subject         `json:"subject"`
	Action     string          `json:"action"`
	Expression json.RawMessage `json:"expression"`
	ExpiredAt  int64           `json:"expired_at,omitempty"`
}

// AddExpressionPolicy gives a subject — a user of the model (or a directory user the authorization
// API synced), a group of the model or of the management API — a new row of action holding
// ep.Expression, which must parse and name only the action's resource types. It returns the row's
// backend id, the id the read routes show. Errors name the bad field.
func (s *Server) AddExpressionPolicy(system string, ep ExpressionPolicy) (int64, error) {
	fail := func(err error) (int64, error) { return 0, fmt.Errorf("expression policy: %w", err) }
	sys := s.model.systems[system]
	if sys == nil {
		return fail(fmt.Errorf("system: unknown system %q", system))
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	_ = st.purgeMgmtLocked(s.now())
	switch subj := ep.Subject; {
	case subj.Type != "user" && subj.Type != "group":
		return fail(fmt.Errorf("subject.type: %q is not user or group", subj.Type))
	case subj.Type == "user" && !s.model.users[subj.ID] && !st.synced[subj.ID]:
		return fail(fmt.Errorf("subject.id: unknown user %q", subj.ID))
	case subj.Type == "group" && !s.groupKnownLocked(subj.ID):
		return fail(fmt.Errorf("subject.id: unknown group %q", subj.ID))
	}
	a := sys.actions[ep.Action]
	switch {
	case a == nil:
		return fail(fmt.Errorf("action: unknown action %q", ep.Action))
	case len(a.related) == 0:
		return fail(fmt.Errorf("action: %q relates to no resource type, which an attribute condition needs", ep.Action))
	}
	cond, err := parseCondition(ep.Expression, a)
	if err == nil {
		err = checkEnvironment(cond)
	}
	if err != nil {
		return fail(err)
	}
	if ep.ExpiredAt < 0 || ep.ExpiredAt > permanentExpiredAt {
		return fail(fmt.Errorf("expired_at: %d is outside 0..%d", ep.ExpiredAt, permanentExpiredAt))
	}
	p := &policy{Key: policyKey{System: system, SubjectType: ep.Subject.Type, SubjectID: ep.Subject.ID, Action: a.ID,
		ExprRow: st.nextID}, ExpiredAt: ep.ExpiredAt, Cond: cond, Paths: map[string][]Node{}}
	if p.ExpiredAt == 0 {
		p.ExpiredAt = permanentExpiredAt
	}
	t := st.begin()
	t.put(p.Key, p) // takes st.nextID as its policy_id, which ExprRow names
	if e := t.commit(); e != nil {
		return fail(errors.New(e.message))
	}
	return p.BackendID, nil
}

// leafOps are the read form's operators of the backend's conditions (condition.go).
var leafOps = []string{"eq", "in", "starts_with", "string_contains", "gt", "gte", "lt", "lte", "any"}

// parseCondition reads an expression of the read routes' form that names only a's resource types.
func parseCondition(raw json.RawMessage, a *Action) (expr, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("expression: required")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("expression: %w", err)
	}
	return conditionNode(v, "expression", a)
}

// conditionNode checks one node and returns it with its content as []expr, the form the
// evaluation walks. A nil a checks no resource type (a state file's rows, checked when added).
func conditionNode(v any, at string, a *Action) (expr, error) {
	node, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: not an object", at)
	}
	op, _ := node["op"].(string)
	if op == "AND" || op == "OR" {
		if err := onlyKeys(node, at, "op", "content"); err != nil {
			return nil, err
		}
		items, _ := node["content"].([]any)
		if len(items) == 0 {
			return nil, fmt.Errorf("%s.content: a non-empty list of conditions is required", at)
		}
		content := make([]expr, len(items))
		for i, item := range items {
			c, err := conditionNode(item, fmt.Sprintf("%s.content[%d]", at, i), a)
			if err != nil {
				return nil, err
			}
			content[i] = c
		}
		return expr{"op": op, "content": content}, nil
	}
	if !slices.Contains(leafOps, op) {
		return nil, fmt.Errorf("%s.op: %q is not AND, OR or an operator the backend holds (%s)", at, node["op"], strings.Join(leafOps, ", "))
	}
	if err := onlyKeys(node, at, "field", "op", "value"); err != nil {
		return nil, err
	}
	field, _ := node["field"].(string)
	typ, attr, found := strings.Cut(field, ".")
	switch {
	case !found || attr == "" || strings.Contains(attr, "."):
		return nil, fmt.Errorf("%s.field: %q is not TYPE.ATTRIBUTE", at, node["field"])
	case a != nil && typ != envType && !slices.Contains(a.typeIDs, typ):
		// A field names a type by its id alone ("biz.id" for bk_cmdb's biz in a bk_job action).
		return nil, fmt.Errorf("%s.field: resource type %q is not one action %s relates to (%s)", at, typ, a.ID, strings.Join(a.typeIDs, ", "))
	}
	if err := checkValue(op, node["value"]); err != nil {
		return nil, fmt.Errorf("%s.value: %w", at, err)
	}
	return expr{"field": field, "op": op, "value": node["value"]}, nil
}

func onlyKeys(node map[string]any, at string, keys ...string) error {
	for k := range node {
		if !slices.Contains(keys, k) {
			return fmt.Errorf("%s: unknown key %q (a node has %s)", at, k, strings.Join(keys, ", "))
		}
	}
	return nil
}

// checkValue checks a leaf's value against its operator, as the SaaS's translator takes it: eq
// one string, number or boolean; in a non-empty list of them, all of one kind; starts_with and
// string_contains a string; the comparisons one number or string; any [].
func checkValue(op string, v any) error {
	switch op {
	case "eq":
		if scalarKind(v) == "" {
			return errors.New("eq takes one string, number or boolean")
		}
	case "in":
		items, _ := v.([]any)
		if len(items) == 0 {
			return errors.New("in takes a non-empty list")
		}
		kind := scalarKind(items[0])
		for _, item := range items {
			if k := scalarKind(item); k == "" || k != kind {
				return errors.New("in takes strings, numbers or booleans, all of one kind")
			}
		}
	case "starts_with", "string_contains":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s takes a string", op)
		}
	case "any":
		if items, ok := v.([]any); !ok || len(items) > 0 {
			return errors.New("any takes []")
		}
	default: // gt, gte, lt, lte
		if k := scalarKind(v); k != "string" && k != "number" {
			return fmt.Errorf("%s takes one number or string", op)
		}
	}
	return nil
}

func scalarKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return ""
}
