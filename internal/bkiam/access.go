package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Access checks (issue 42): the IAM backend's policy routes answer whether a subject may do an
// action, counting everything IAM counts — the subject's own policies, its groups' (joined
// directly, through a department or an ancestor department), permission-template rows — and
// leaving out what has expired. Like the policy list they are backend routes, reached through the
// API gateway only, and answer the backend envelope.
//
// Two answers need care. The super manager, the system's managers and admin are allowed without
// any policy being read; the backend says so in its message, and AccessAnswer.AsManager carries it,
// so that a check of a manager is not mistaken for one of its grants. An unknown user is answered
// false, not an error.

// MaxAuthActions is the backend's limit of actions per auth_by_actions call.
const MaxAuthActions = 10

// managerMessage is the backend's message for a subject allowed as a manager, whatever it holds.
const managerMessage = "ok, as super_manager or system_manager"

// AuthResource is one resource of an access check: an instance of a type, in the order of the
// action's related resource types, with what the caller knows of it.
type AuthResource struct {
	System string `json:"system"`
	Type   string `json:"type"`
	ID     string `json:"id"`
	// Attribute is sent as the resource's "attribute" ({} when nil: the backend requires the
	// key). The backend never looks an instance's path or attributes up: a policy granted by
	// topology ("host._bk_iam_path_" starts_with "/biz,1/") allows the instance only when its
	// path is sent here, "_bk_iam_path_": ["/biz,1/"], and one granted on an attribute ("host.os"
	// eq "linux") only when the attribute is; otherwise the answer is false.
	Attribute map[string]any `json:"attribute,omitempty"`
}

// AccessAnswer is the backend's answer for a set of actions.
type AccessAnswer struct {
	// Allowed is, by action, whether the subject may do it on the resources.
	Allowed map[string]bool
	// AsManager is set when the backend allowed the subject as a super manager or one of the
	// system's managers, without reading any policy.
	AsManager bool
}

// ActionCondition is the effective expression of one action for a subject.
type ActionCondition struct {
	Action    string
	Condition json.RawMessage
}

// AuthByActions asks whether subject may do each action on resources (none: actions related to
// no resource type, or "on anything" as the backend reads an empty list), in calls of at most
// MaxAuthActions actions (POST /api/v2/policy/systems/{system}/auth_by_actions/).
func (c *Client) AuthByActions(ctx context.Context, system string, subject Subject, actions []string, resources []AuthResource) (AccessAnswer, error) {
	answer := AccessAnswer{Allowed: map[string]bool{}}
	if err := c.checkSubjectQuery("access check", system, subject, actions); err != nil {
		return answer, err
	}
	path := fmt.Sprintf("/api/v2/policy/systems/%s/auth_by_actions/", system)
	for chunk := range slices.Chunk(actions, MaxAuthActions) {
		body := map[string]any{"subject": subject, "actions": wireActions(chunk), "resources": wireResources(resources)}
		op := fmt.Sprintf("access check POST %s for %s %s", path, subject.Type, subject.ID)
		var got map[string]bool
		raw, err := c.backendPost(ctx, op, path, system, "checking access", body, &got)
		if err != nil {
			return answer, err
		}
		asManager := answeredAsManager(raw)
		for _, a := range chunk {
			allowed, ok := got[a]
			if !ok {
				return answer, fmt.Errorf("bkiam: %s: the answer says nothing of action %s", op, a)
			}
			answer.Allowed[a] = allowed
		}
		answer.AsManager = answer.AsManager || asManager
	}
	return answer, nil
}

// QueryByActions returns, for each action (in their order, each once), the expression IAM
// evaluates for subject: the merged effective permission, {} for none. Actions alone names
// (related to another system's resource type) are asked through the single-action query, the
// others through query_by_actions (queryEach). asManager is set when the backend answered as for a
// manager.
func (c *Client) QueryByActions(ctx context.Context, system string, subject Subject, actions []string, alone AskAlone) (conditions []ActionCondition, asManager bool, err error) {
	if err := c.checkSubjectQuery("effective permission query", system, subject, actions); err != nil {
		return nil, false, err
	}
	if slices.Contains(actions, "") {
		return nil, false, invalid("effective permission query", "an action is empty")
	}
	actions = uniqueStrings(actions)
	op := "effective permission query"
	calls, err := c.queryEach(ctx, op, system, subject, actions, alone, "", "checking access")
	if err != nil {
		return nil, false, err
	}
	byAction, asManager, err := conditionsOf(op, calls)
	if err != nil {
		return nil, false, err
	}
	for _, a := range actions {
		conditions = append(conditions, ActionCondition{Action: a, Condition: byAction[a]})
	}
	return conditions, asManager, nil
}

// checkSubjectQuery refuses, before any call, a question about a subject that the backend's policy
// routes cannot answer: not through the gateway, or with something missing.
func (c *Client) checkSubjectQuery(op, system string, subject Subject, actions []string) error {
	if c.cfg.transport != TransportGateway {
		return ErrReadNeedsGateway
	}
	switch {
	case strings.TrimSpace(system) == "":
		return invalid(op, "system is empty")
	case subject.Type == "" || subject.ID == "":
		return invalid(op, "subject is incomplete")
	case len(actions) == 0:
		return invalid(op, "no actions")
	}
	return nil
}

func queryByActionsRoute(system string) string {
	return "/api/v2/policy/systems/" + url.PathEscape(system) + "/query_by_actions/"
}

// queryByActions posts subject and actions to the backend's query_by_actions route, with query
// appended to it ("" or "?debug=1&force=1"), and returns each action's condition in the answer's
// order and the answer whole (its envelope's message and debug output are beside the data). what
// names the read in an error's advice.
func (c *Client) queryByActions(ctx context.Context, op, system string, subject Subject, actions []string, query, what string) ([]ActionCondition, []byte, error) {
	var rows []struct {
		Action struct {
			ID string `json:"id"`
		} `json:"action"`
		Condition json.RawMessage `json:"condition"`
	}
	body := map[string]any{"subject": subject, "actions": wireActions(actions), "resources": []any{}}
	raw, err := c.backendPost(ctx, op, queryByActionsRoute(system)+query, system, what, body, &rows)
	if err != nil {
		return nil, nil, err
	}
	conditions := make([]ActionCondition, 0, len(rows))
	for _, r := range rows {
		conditions = append(conditions, ActionCondition{Action: r.Action.ID, Condition: r.Condition})
	}
	return conditions, raw, nil
}

func wireActions(actions []string) []map[string]string {
	out := make([]map[string]string, len(actions))
	for i, a := range actions {
		out[i] = map[string]string{"id": a}
	}
	return out
}

func wireResources(resources []AuthResource) []map[string]any {
	out := make([]map[string]any, len(resources))
	for i, r := range resources {
		attribute := r.Attribute
		if attribute == nil {
			attribute = map[string]any{}
		}
		out[i] = map[string]any{"system": r.System, "type": r.Type, "id": r.ID, "attribute": attribute}
	}
	return out
}

// backendPost sends one POST of body to a backend route (path, its query included) and decodes
// the answer's data into out; it returns the answer whole. what names the call in an error's
// advice ("checking access").
func (c *Client) backendPost(ctx context.Context, op, path, system, what string, body, out any) ([]byte, error) {
	wire, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("bkiam: %s: %w", op, err)
	}
	raw, e := c.backendCall(ctx, op, http.MethodPost, c.cfg.base+path, wire, func(d []byte) (int, error) {
		return 1, json.Unmarshal(d, out)
	})
	if e != nil {
		c.explainAccessError(e, path)
		c.explainReadError(e, path, system, what)
		return nil, e
	}
	return raw, nil
}

// answeredAsManager reports whether a backend answer's message says the subject was allowed as a
// manager, without any policy being read.
func answeredAsManager(raw []byte) bool {
	env, _ := decodeEnvelope(raw)
	return strings.Contains(env.Message, managerMessage)
}

// explainAccessError adds the fix to the access routes' refusals of a request to path (its query
// included): resources that are not the action's related types (the backend's system error,
// 1901500, not a 400) and an action the system does not have (1901400). The policy queries are
// sent without resources, by the provider itself: a mismatch there is IAM refusing the read, and
// the advice says so instead of asking for resources nobody gave.
func (c *Client) explainAccessError(e *Error, path string) {
	if e.kind != kindCode {
		return
	}
	route, _, _ := strings.Cut(path, "?")
	mismatch := e.Code == 1901500 && strings.Contains(e.Message, "request resources not match action")
	const queried = "; the provider sent no resources (a policy query reads the subject's whole policy of each action): "
	var advice string
	switch {
	case mismatch && strings.HasSuffix(route, "/query_by_actions/"):
		advice = queried + "IAM's batch query refuses an action related to another system's resource type that way, " +
			"which the provider asks alone through the single-action query (POST …/query/) instead"
	case mismatch && strings.HasSuffix(route, "/query/"):
		advice = queried + "this IAM refuses it even on the single-action query, which bk-iam answers without " +
			"resources for an action related to another system's resource type (QueryV2); the configuration has nothing to give"
	case mismatch:
		advice = "; the resources do not match the action's related resource types: give one instance of each related " +
			"type, in the order of the system's model (the bkiam_system data source lists each action's related types), " +
			"each under the system of its type (bk_cmdb for bk_job's access_business on bk_cmdb's biz)"
	case e.Is(ErrSubjectFrozen):
		advice = "; IAM has frozen the subject (its admin API freezes a leaver): the backend's policy routes refuse it, and " +
			"IAM denies it every action until it is unfrozen"
	case e.Code == 1901400 && strings.Contains(e.Message, "action.id invalid"):
		advice = "; the system has no such action: check the action id against the system's actions (the bkiam_system " +
			"data source lists them)"
	default:
		return
	}
	e.Message = c.cleanMessage(e.Message + advice)
}

// ErrUnknownSubject is returned by UserGroups for a user IAM does not know.
var ErrUnknownSubject = errors.New("bkiam: IAM does not know the user")

// UserGroups returns the ids of the groups a user belongs to, unexpired, directly or through a
// department or an ancestor department (GET /api/v1/open/users/{id}/groups?inherit=true); an
// empty slice, not nil, for a user in none. Its
// point here is its answer for a user IAM does not know, ErrUnknownSubject: the access checks
// answer such a user false, not an error. The route is not public on the gateway: an app may need
// it granted, and a refusal is an ordinary error.
func (c *Client) UserGroups(ctx context.Context, user string) ([]string, error) {
	if c.cfg.transport != TransportGateway {
		return nil, ErrReadNeedsGateway
	}
	if strings.TrimSpace(user) == "" {
		return nil, invalid("user groups", "user is empty")
	}
	path := "/api/v1/open/users/" + url.PathEscape(user) + "/groups"
	op := "user groups GET " + path
	ids := []string{} // a user in no group: none, not nil
	e := c.get(ctx, op, path, url.Values{"inherit": {"true"}}, func(d []byte) (int, error) {
		var rows []struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(d, &rows); err != nil {
			return 0, err
		}
		for _, r := range rows {
			ids = append(ids, strings.Trim(string(r.ID), `"`))
		}
		return len(rows), nil
	})
	if e != nil {
		if e.kind == kindCode && e.Code == 1901404 {
			return nil, fmt.Errorf("%w: %s", ErrUnknownSubject, e.Message)
		}
		return nil, e
	}
	return ids, nil
}
