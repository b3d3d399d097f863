package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Reads of what one subject holds, from the backend's own routes (see the package doc, "Reading
// grants back"): one policy by its backend id. A backend route: the API gateway only, the backend
// envelope.

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
