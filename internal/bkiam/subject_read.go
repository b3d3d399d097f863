package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Reads of what one subject holds, from the backend's own routes (see the package doc, "Reading
// grants back"): one policy by its backend id, and the rows the backend's policy query reads for a
// subject, which its debug output lists. Both are backend routes: the API gateway only, the
// backend envelope.

// ErrPolicyNotFound is the backend's 1901404 "not found:policy not found" for the id GetPolicy
// asked for: no ABAC row has it (never had, deleted, or the id of an RBAC row).
var ErrPolicyNotFound = errors.New("bkiam: IAM has no policy of that id")

// GetPolicy reads one policy by its backend id (GET /api/v1/systems/{system}/policies/{id}, gateway
// only): its subject, action, expression and expiry, expired or not (only IAM's housekeeping takes
// an expired row away). The id is the one the policy list and QuerySubjectRows show, never the
// SaaS policy_id a grant returns. A policy of another system is the backend's 1901403
// (ErrForbidden).
func (c *Client) GetPolicy(ctx context.Context, system string, id int64) (Policy, error) {
	if c.cfg.transport != TransportGateway {
		return Policy{}, ErrReadNeedsGateway
	}
	switch {
	case strings.TrimSpace(system) == "":
		return Policy{}, invalid("policy get", "system is empty")
	case id <= 0:
		return Policy{}, invalid("policy get", "id is %d, want a positive backend id", id)
	}
	path := policyListPath(system) + "/" + strconv.FormatInt(id, 10)
	op := "policy get GET " + path
	var out Policy
	e := c.get(ctx, op, path, nil, func(d []byte) (int, error) {
		p, err := decodeGotPolicy(d, system, id)
		out = p
		return 1, err
	})
	if e != nil {
		if e.kind == kindCode && e.Code == 1901404 && strings.Contains(e.Message, "policy not found") {
			return Policy{}, fmt.Errorf("%w: policy %d of system %s: %w", ErrPolicyNotFound, id, system, e)
		}
		c.explainReadError(e, path, system, "reading a policy")
		return Policy{}, e
	}
	return out, nil
}

// decodeGotPolicy checks the answer of GetPolicy: the row asked for, whole.
func decodeGotPolicy(d []byte, system string, id int64) (Policy, error) {
	var w struct {
		wirePolicy
		System string `json:"system"`
		Action struct {
			ID string `json:"id"`
		} `json:"action"`
	}
	if err := json.Unmarshal(d, &w); err != nil {
		return Policy{}, fmt.Errorf("data is not a policy (%w)", err)
	}
	p, err := w.policy(w.Action.ID)
	switch {
	case err != nil:
		return Policy{}, fmt.Errorf("a policy answer with %w", err)
	case p.ID != id:
		return Policy{}, fmt.Errorf("the answer is policy %d, not the requested %d", p.ID, id)
	case w.System != "" && w.System != system:
		return Policy{}, fmt.Errorf("the answer is a policy of system %s, not %s", w.System, system)
	}
	return p, nil
}

// ErrNoDebug is returned by QuerySubjectRows for an answer, not a manager's, without the debug
// tree: a backend, or a gateway before it, that does not pass ?debug on.
var ErrNoDebug = errors.New("bkiam: IAM answered without its debug output; " +
	"the backend or the gateway before it does not pass ?debug on")

// ErrDebugUnreadable is returned by QuerySubjectRows for a debug tree it cannot read: the tree is
// the backend's undocumented output, and a key renamed or moved by a later release, or an answer
// too large to read whole, means the rows cannot be told from it. It is also an
// ErrUnexpectedResponse. Callers read what the subject holds another way (the policy lists).
var ErrDebugUnreadable = errors.New("bkiam: the debug output of IAM's policy query cannot be read")

// SubjectRows is what the backend's query route with debug output says of one subject.
type SubjectRows struct {
	// Known is set when IAM knows the subject: its debug output shows its key. A user never synced
	// into IAM, or a group that does not exist, is unknown, and holds nothing.
	Known bool
	// PK is the subject's internal key (0 when unknown).
	PK int64
	// AsManager is set when the backend answered as for a manager (admin, a super manager, one of
	// the system's managers): no debug output, so nothing is known of the subject's rows, and
	// Conditions are the backend's "any" for every action.
	AsManager bool
	// Rows are, by action, every row the backend's policy query read for the subject: its own
	// (SubjectPK == PK) and those of the groups it reaches (directly, through departments and
	// their ancestors, through subject templates), unexpired as the backend's database tells it
	// (expired_at >= its now). Rows IAM keeps as RBAC relations are not among them: the backend
	// reads those apart, and Conditions still count them. An action without rows has none.
	Rows map[string][]DebugRow
	// Conditions are, by action, the merged expression the route answered ({} for nothing).
	Conditions map[string]json.RawMessage
}

// DebugRow is one row of SubjectRows: its backend id (the policy list's and GetPolicy's), the key
// of the subject holding it, and its expiry.
type DebugRow struct{ ID, SubjectPK, ExpiredAt int64 }

// QuerySubjectRows asks the backend's policy query with its debug output (?debug=1&force=1) for
// subject and actions, and reads the debug trees (readDebugTree). Actions alone names (those
// related to another system's resource type) are asked one by one through the single-action
// query, the others through query_by_actions, MaxQueryActions a call (queryEach). force bypasses
// the backend's caches, so that the rows are the database's now. An answer without a tree is
// ErrNoDebug; a tree that lacks what it should hold, or an answer too large to read, is
// ErrDebugUnreadable, never a guess.
func (c *Client) QuerySubjectRows(ctx context.Context, system string, subject Subject, actions []string, alone AskAlone) (*SubjectRows, error) {
	if err := c.checkSubjectQuery("subject rows query", system, subject, actions); err != nil {
		return nil, err
	}
	if slices.Contains(actions, "") {
		return nil, invalid("subject rows query", "an action is empty")
	}
	actions = uniqueStrings(actions) // the backend answers an action as often as it is asked
	const suffix = "?debug=1&force=1"
	op := "subject rows query"
	calls, err := c.queryEach(ctx, op, system, subject, actions, alone, suffix, "reading a subject's rows")
	if errors.Is(err, ErrBodyTooLarge) {
		return nil, fmt.Errorf("%w: %w: %w", ErrDebugUnreadable, ErrUnexpectedResponse, err)
	}
	if err != nil {
		return nil, err
	}
	out := &SubjectRows{Rows: map[string][]DebugRow{}}
	if out.Conditions, out.AsManager, err = conditionsOf(op, calls); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDebugUnreadable, err)
	}
	if out.AsManager {
		return out, nil
	}
	for i, call := range calls {
		var top struct {
			Debug json.RawMessage `json:"debug"`
		}
		if err := json.Unmarshal(call.raw, &top); err != nil || len(top.Debug) == 0 || string(top.Debug) == "null" {
			return nil, fmt.Errorf("%w (%s)", ErrNoDebug, op)
		}
		var tree *debugTree
		if call.alone {
			tree, err = readDebugEntry(top.Debug, subject, call.actions[0])
		} else {
			tree, err = readDebugTree(top.Debug, subject, call.actions)
		}
		if err == nil && i > 0 && (tree.known != out.Known || tree.pk != out.PK) {
			err = fmt.Errorf("the subject's key is %d (known %t), where an answer before says %d (known %t)", tree.pk, tree.known, out.PK, out.Known)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w: %s: %w", ErrDebugUnreadable, ErrUnexpectedResponse, op, err)
		}
		out.Known, out.PK = tree.known, tree.pk
		maps.Copy(out.Rows, tree.rows)
	}
	return out, nil
}

// uniqueStrings is in without repeats, in its order.
func uniqueStrings(in []string) []string {
	seen := make(map[string]bool, len(in))
	out := make([]string, 0, len(in))
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
