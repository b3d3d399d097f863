package authz

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// IAM keeps one expiry per user and action, the latest any grant gave,
// and only ever raises it. So a grant can change the expiry of instances
// it does not manage (alice's host 9, expiring next week, becomes
// permanent when a grant of host 1 sends the permanent expiry), and a
// configured expires_at cannot take effect when IAM's policy already
// expires later. CheckPlan tells both at plan, with detect_drift, from
// the policy list the refresh has read (bkiam.ScanCache: no call of its
// own, except after -refresh=false, one scan per action).

// CheckPlan warns, for each action a planned create or change of a user
// grant will grant, what the grant does to the expiry IAM keeps.
func (InstanceGrant) CheckPlan(ctx context.Context, data *conns.Data, req protocol.PlanRequest[InstanceGrantModel], diags *protocol.Diagnostics) {
	if data == nil || data.Scans == nil {
		return // detect_drift off: IAM's policies are not read
	}
	next := ViewGrant(req.Proposed)
	if !next.Known || next.Subject.Type != subjectUser {
		return // group grants never expire
	}
	var prior *GrantView
	if req.Prior != nil {
		if p := ViewGrant(*req.Prior); p.Known && p.System == next.System && p.Subject == next.Subject {
			prior = &p
		}
	}
	for _, action := range next.Grant.Actions {
		if prior != nil && !grantsAgain(prior.Grant, next.Grant, action) {
			continue
		}
		policy, err := heldPolicy(ctx, data.Scans, next.System, action, next.Subject)
		if err != nil {
			diags.AddWarning("Cannot read the expiry IAM keeps",
				fmt.Sprintf("detect_drift could not read %s's policy for %s, so the plan cannot say what this grant does to its "+
					"expiry: %v.", subjectName(next.Subject), action, err))
			return
		}
		if policy == nil {
			continue
		}
		want := next.Grant.ExpiresAt
		switch {
		case policy.expiredAt > want:
			conflict(data, diags, "Expiry cannot take effect",
				fmt.Sprintf("%s already holds %s %s in IAM, which keeps one expiry per user and action and only ever raises it: "+
					"this grant, %s, cannot make it end sooner, and its instances stay as long as the policy does. To have them "+
					"end then, revoke the user's other grants of %s (the IAM web UI shows them).", subjectName(next.Subject), action,
					expiryText(policy.expiredAt, "expiring"), expiryText(want, "expiring"), action))
		case policy.expiredAt < want && len(next.Grant.Resources) == 1:
			r := next.Grant.Resources[0]
			ids, _ := policy.expr.Instances(r.Type)
			var others []string
			for _, id := range ids {
				if _, managed := r.Instances[id]; !managed {
					others = append(others, id)
				}
			}
			if len(others) > 0 {
				conflict(data, diags, "Expiry raised beyond this grant",
					fmt.Sprintf("IAM keeps one expiry per user and action, and this grant raises it: %s's %s on %d %s/%s "+
						"instances this resource does not manage (%s), %s, becomes %s.", subjectName(next.Subject), action,
						len(others), r.System, r.Type, protocol.SomeIDs(others), expiryText(policy.expiredAt, "expiring"), expiryText(want, "expiring")))
			}
		}
	}
}

// conflict reports an expiry conflict on expires_at: a warning, or an
// error with expiry_conflicts = "error".
func conflict(data *conns.Data, diags *protocol.Diagnostics, summary, detail string) {
	if data.ExpiryConflictsFail {
		diags.AddAttributeError(protocol.Root("expires_at"), summary, detail+
			" The plan fails because the provider sets expiry_conflicts = \"error\".")
		return
	}
	diags.AddAttributeWarning(protocol.Root("expires_at"), summary, detail)
}

// grantsAgain reports whether an update from prior to next grants
// action: it is new, its expiry changes, or an instance is added.
func grantsAgain(prior, next grantplan.Grant, action string) bool {
	if !slices.Contains(prior.Actions, action) || prior.ExpiresAt != next.ExpiresAt || len(prior.Resources) != len(next.Resources) {
		return true
	}
	for i, r := range next.Resources {
		for _, id := range slices.Sorted(maps.Keys(r.Instances)) {
			if _, held := prior.Resources[i].Instances[id]; !held {
				return true
			}
		}
	}
	return false
}

var _ protocol.PlanChecker[InstanceGrantModel, *conns.Data] = InstanceGrant{}
