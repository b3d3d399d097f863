package authz

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/heldpolicy"
	"github.com/bkiam/terraform-provider-bkiam/internal/policyexpr"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// detect_drift: IAM cannot read a grant back by the policy id a grant
// returns, but it can list an action's policies, every subject's, with
// the expression each subject holds. So a refresh looks up each recorded
// action's policy of the subject in that list, scanned once per action
// and shared by every resource (bkiam.ScanCache), and keeps of what state
// records only what the expression still holds. It never adds what state
// does not record: a grant made outside Terraform is not this resource's.

// stillHeld returns the part of held that IAM still holds: for each
// action, the recorded instances its policy's expression still grants; a
// combined resource counts only whole (an AND over all its types), and an
// action with no resource type as long as its policy exists. Actions of
// which nothing is left are left out. An error leaves the caller's state
// as it was: a read that fails must never drop a record. iamExpiry is,
// for each action IAM still holds, the expiry IAM keeps for the subject's
// policy (the latest of its rows), which can differ from the recorded one:
// IAM keeps one expiry per subject and action, and any grant raises it.
func stillHeld(ctx context.Context, scans *bkiam.ScanCache, system string, subject bkiam.Subject, held grantplan.Holdings) (now grantplan.Holdings, iamExpiry map[string]int64, err error) {
	now, iamExpiry = grantplan.Holdings{}, map[string]int64{}
	for _, action := range slices.Sorted(maps.Keys(held)) {
		h := held[action]
		policy, err := heldpolicy.Read(ctx, scans, system, action, subject)
		if err != nil {
			return nil, nil, err
		}
		if policy == nil {
			continue
		}
		iamExpiry[action] = policy.ExpiredAt
		expr := policy.Expr
		switch len(h.Resources) {
		case 0:
			now[action] = h
		case 1:
			r := h.Resources[0]
			kept := map[string]string{}
			for id, name := range r.Instances {
				if expr.HoldsInstance(r.Type, id) {
					kept[id] = name
				}
			}
			if len(kept) > 0 {
				// What is held is now known exactly: no longer in doubt.
				now[action] = grantplan.Holding{ExpiresAt: h.ExpiresAt,
					Resources: []grantplan.Resource{{System: r.System, Type: r.Type, Instances: kept}}}
			}
		default:
			ids := map[string][]string{}
			for _, r := range h.Resources {
				ids[r.Type] = slices.Collect(maps.Keys(r.Instances))
			}
			if expr.HoldsCombination(ids) {
				now[action] = h
			}
		}
	}
	for action := range iamExpiry {
		if _, ok := now[action]; !ok {
			delete(iamExpiry, action)
		}
	}
	return now, iamExpiry, nil
}

// DescribeExpiryDrift renders the actions of now whose expiry in IAM
// (iamExpiry) is not the one recorded, for the warning a refresh gives:
// "view_host until 2026-11-29T00:00:00Z in IAM, recorded permanent".
func DescribeExpiryDrift(now grantplan.Holdings, iamExpiry map[string]int64) string {
	var parts []string
	for _, action := range slices.Sorted(maps.Keys(now)) {
		recorded, kept := now[action].ExpiresAt, iamExpiry[action]
		if kept == 0 || kept == recorded {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s in IAM, recorded %s", action, expiryText(kept, "until"), expiryText(recorded, "until")))
	}
	return strings.Join(parts, "; ")
}

// expiryText is an expiry as the warnings say it: "permanent", or word
// ("until", "expiring") and its RFC 3339 time.
func expiryText(expiresAt int64, word string) string {
	if expiresAt >= bkiam.PermanentExpiry {
		return "permanent"
	}
	return word + " " + time.Unix(expiresAt, 0).UTC().Format(time.RFC3339)
}

// DescribeLoss renders what IAM no longer holds of held, for the warning
// a refresh gives: "view_host on 2 of 3 bk_cmdb/host instances (1, 2)".
func DescribeLoss(held, now grantplan.Holdings) string {
	var parts []string
	for _, action := range slices.Sorted(maps.Keys(held)) {
		h, n := held[action], now[action]
		if _, ok := now[action]; !ok {
			parts = append(parts, action+" entirely")
			continue
		}
		for i, r := range h.Resources {
			if len(r.Instances) == len(n.Resources[i].Instances) {
				continue
			}
			var lost []string
			for id := range r.Instances {
				if _, ok := n.Resources[i].Instances[id]; !ok {
					lost = append(lost, id)
				}
			}
			parts = append(parts, fmt.Sprintf("%s on %d of %d %s/%s instances (%s)", action, len(lost), len(r.Instances),
				r.System, r.Type, protocol.SomeIDs(lost)))
		}
	}
	return strings.Join(parts, "; ")
}

func subjectName(s bkiam.Subject) string { return heldpolicy.SubjectName(s) }

// importedHoldings reads what the subject holds of actions on one
// resource type, for an import: every instance its policy grants
// directly, named by its id (IAM keeps no names). A policy over every
// instance cannot be imported: the resource never grants one.
func importedHoldings(ctx context.Context, scans *bkiam.ScanCache, system string, subject bkiam.Subject, actions []string, resource grantplan.Resource) (grantplan.Holdings, error) {
	held := grantplan.Holdings{}
	for _, action := range actions {
		policy, err := heldpolicy.Read(ctx, scans, system, action, subject)
		if err != nil {
			return nil, err
		}
		if policy == nil {
			continue
		}
		ids, anyInstance := policy.Expr.Instances(resource.Type)
		if anyInstance {
			return nil, fmt.Errorf("%s holds %s on every %s/%s instance (a grant with an empty instance list); "+
				"bkiam_instance_grant never grants that, so it cannot be imported", subjectName(subject), action, resource.System, resource.Type)
		}
		if len(ids) == 0 {
			continue
		}
		instances := make(map[string]string, len(ids))
		for _, id := range ids {
			instances[id] = id
		}
		held[action] = grantplan.Holding{ExpiresAt: policy.ExpiredAt,
			Resources: []grantplan.Resource{{System: resource.System, Type: resource.Type, Instances: instances}}}
	}
	if len(held) == 0 {
		return nil, fmt.Errorf("%s holds none of %s on %s/%s instances directly; there is nothing to import",
			subjectName(subject), strings.Join(actions, ", "), resource.System, resource.Type)
	}
	return held, nil
}

// creatorStillHeld returns the paths of held that IAM still holds for the
// creator: a path counts while every recorded action that relates to the
// type still grants it (an AND of the instance and its ancestors' path, or
// the bare instance where the action ignores paths); registering a creator
// grants all of them at once, so a path missing one action is registered
// again. Without an actions attribute, granted can include the creator's
// unrelated actions (IAM's answer lists them), so an action counts only
// when its policy mentions the type; a related action revoked whole is
// then not seen, which setting actions avoids.
func creatorStillHeld(ctx context.Context, scans *bkiam.ScanCache, c creatorView, held grantplan.CreatorHoldings) (grantplan.CreatorHoldings, error) {
	subject := bkiam.Subject{Type: bkiam.SubjectUser, ID: c.creator}
	var exprs []*policyexpr.Expr
	for _, action := range c.granted {
		policy, err := heldpolicy.Read(ctx, scans, c.target.System, action, subject)
		if err != nil {
			return nil, err
		}
		switch {
		case policy != nil && (c.actions != nil || policy.Expr.Mentions(c.target.Type)):
			exprs = append(exprs, policy.Expr)
		case policy == nil && c.actions != nil:
			exprs = append(exprs, nil) // an expected action revoked whole: nothing is held
		}
	}
	now := grantplan.CreatorHoldings{}
	for path, h := range held {
		ancestors := make([]policyexpr.Node, len(h.Instance.Ancestors))
		for i, a := range h.Instance.Ancestors {
			ancestors[i] = policyexpr.Node{Type: a.Type, ID: a.ID}
		}
		holds := true
		for _, expr := range exprs {
			if expr == nil || !expr.HoldsPath(c.target.Type, h.Instance.ID, ancestors) {
				holds = false
				break
			}
		}
		if holds {
			h.Doubt = false // known now
			now[path] = h
		}
	}
	return now, nil
}
