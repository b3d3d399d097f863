package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
)

// The backend answers a subject's effective permission through two routes, and neither answers
// every action:
//
//   - query_by_actions (POST /api/v2/policy/systems/{s}/query_by_actions/) answers many actions in
//     one call, but always checks that the request gives one resource of every related type of
//     another system (bk-iam BatchQueryV2ByActions calls pdp.Query with its remote check on). Most
//     BlueKing systems scope their actions to CMDB's business or host: for bk_job's access_business
//     (related to bk_cmdb's biz), asked with no resources, it answers the system error 1901500
//     "… request resources not match action", and the whole call fails, every other action of it
//     with it. A placeholder remote resource does not help: the answer is then IAM's for that one
//     instance.
//   - the single-action query (POST /api/v2/policy/systems/{s}/query/, bk-iam QueryV2) skips that
//     check when no resources are given and answers the action's whole expression, with the same
//     debug output.
//
// So queryEach asks an action related to another system's type alone, and the others in batches;
// a batch the backend refuses for that reason (the caller did not know the model, or it changed)
// is asked again action by action.

// MaxQueryActions bounds the actions of one query_by_actions call. The route has no limit of its
// own, but its debug output repeats each action's expression about four times, and an answer over
// maxResponseBytes cannot be read: ten actions keep the tree small.
const MaxQueryActions = 10

// queryParallel is how many query calls of one question run at once: an action asked alone is a
// call of its own, and a system such as DBM registers hundreds.
const queryParallel = 4

// AskAlone tells which actions the batch query cannot answer without resources: those related to
// a resource type of another system. nil knows none (the batch is tried, and a refused batch is
// asked again action by action).
type AskAlone func(action string) bool

// AloneIn is the AskAlone of a system's model: an action the model relates to a resource type of
// another system. nil for no model.
func AloneIn(m *SystemModel) AskAlone {
	if m == nil {
		return nil
	}
	return func(action string) bool {
		a := m.Action(action)
		return a != nil && a.RelatesElsewhere(m.System)
	}
}

// RelatesElsewhere reports whether the action, of system, relates to a resource type of another
// system (bk_job's access_business to bk_cmdb's biz).
func (a ModelAction) RelatesElsewhere(system string) bool {
	return slices.ContainsFunc(a.RelatedResourceTypes, func(t RelatedResourceType) bool { return t.System != "" && t.System != system })
}

// queryCall is one call of queryEach: the actions it asked, and its answer.
type queryCall struct {
	actions []string
	// alone marks the single-action route, whose debug output is the action's entry itself
	// where the batch route hangs one entry per action under a root.
	alone      bool
	conditions []ActionCondition
	raw        []byte // the answer whole: its message and debug output are beside the data
}

// queryEach asks the backend the effective expression of each of actions (unique, none empty) for
// subject: those alone names through the single-action route, the others in batches of
// MaxQueryActions. A batch refused because an action needs a remote resource is asked again action
// by action. suffix is appended to each route ("" or "?debug=1&force=1"); op names the read in
// errors ("subject rows query", each call adding its route and the subject), what in an error's
// advice. The calls come back in the order of actions.
func (c *Client) queryEach(ctx context.Context, op, system string, subject Subject, actions []string, alone AskAlone,
	suffix, what string) ([]queryCall, error) {
	var plan []queryCall
	var batch []string
	flush := func() {
		if len(batch) > 0 {
			plan = append(plan, queryCall{actions: batch})
			batch = nil
		}
	}
	for _, a := range actions {
		if alone != nil && alone(a) {
			plan = append(plan, queryCall{actions: []string{a}, alone: true})
			continue
		}
		batch = append(batch, a)
		if len(batch) == MaxQueryActions {
			flush()
		}
	}
	flush()
	results := make([][]queryCall, len(plan))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(queryParallel)
	for i, call := range plan {
		g.Go(func() error {
			got, err := c.queryCall(gctx, op, system, subject, call, suffix, what)
			if call.alone || !isQueryResourceMismatch(err) {
				results[i] = []queryCall{got}
				return err
			}
			// An action of the batch needs a remote resource: ask each alone.
			for _, a := range call.actions {
				one, err := c.queryCall(gctx, op, system, subject, queryCall{actions: []string{a}, alone: true}, suffix, what)
				if err != nil {
					return err
				}
				results[i] = append(results[i], one)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return slices.Concat(results...), nil
}

// queryCall sends one call of queryEach.
func (c *Client) queryCall(ctx context.Context, op, system string, subject Subject, call queryCall, suffix, what string) (queryCall, error) {
	route := queryByActionsRoute(system)
	if call.alone {
		route = queryRoute(system)
	}
	op = fmt.Sprintf("%s POST %s%s for %s %s", op, route, suffix, subject.Type, subject.ID)
	if call.alone {
		var condition json.RawMessage
		body := map[string]any{"subject": subject, "action": map[string]string{"id": call.actions[0]}, "resources": []any{}}
		raw, err := c.backendPost(ctx, op, route+suffix, system, what, body, &condition)
		if err != nil {
			return call, err
		}
		call.conditions, call.raw = []ActionCondition{{Action: call.actions[0], Condition: condition}}, raw
		return call, nil
	}
	conditions, raw, err := c.queryByActions(ctx, op, system, subject, call.actions, suffix, what)
	if err != nil {
		return call, err
	}
	call.conditions, call.raw = conditions, raw
	return call, nil
}

// isQueryResourceMismatch reports the backend's refusal of a query whose resources do not give
// every related type of another system: the system error 1901500 "… request resources not match
// action" (HTTP 500, or 200 with ?debug).
func isQueryResourceMismatch(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.kind == kindCode && e.Code == 1901500 && strings.Contains(e.Message, "request resources not match action")
}

func queryRoute(system string) string {
	return "/api/v2/policy/systems/" + url.PathEscape(system) + "/query/"
}

// conditionsOf collects the conditions of calls by action, checking that each asked action was
// answered, and whether any call was answered as for a manager.
func conditionsOf(op string, calls []queryCall) (map[string]json.RawMessage, bool, error) {
	out := map[string]json.RawMessage{}
	asManager := false
	for _, call := range calls {
		for _, d := range call.conditions {
			out[d.Action] = d.Condition
		}
		for _, a := range call.actions {
			if _, ok := out[a]; !ok {
				return nil, false, fmt.Errorf("%w: %s: the answer says nothing of action %s", ErrUnexpectedResponse, op, a)
			}
		}
		asManager = asManager || answeredAsManager(call.raw)
	}
	return out, asManager, nil
}
