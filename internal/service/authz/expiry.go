package authz

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/heldpolicy"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// IAM keeps one expiry per user and action, the latest any grant gave,
// and only ever raises it. So a grant can change the expiry of instances
// it does not manage (alice's host 9, expiring next week, becomes
// permanent when a grant of host 1 sends the permanent expiry), and a
// configured expires_at cannot take effect when IAM's policy already
// expires later. CheckPlan tells both at plan, from the subject's policy
// in the action's policy list: with detect_drift the scan the refresh
// made (no call of its own, except after -refresh=false), otherwise a
// scan of its own, once per action and process, made only for a planned
// create or change that grants the action (conns.Data.ExpiryScans).

// CheckPlan warns, for each action a planned create or change of a user
// grant will grant, what the grant does to the expiry IAM keeps.
func (InstanceGrant) CheckPlan(ctx context.Context, data *conns.Data, req protocol.PlanRequest[InstanceGrantModel], diags *protocol.Diagnostics) {
	if data == nil || data.ExpiryScans == nil {
		return // expiry_conflicts = "off", or the provider is not configured
	}
	next := ViewGrant(req.Proposed)
	if !next.Known || next.System == "" || next.Subject.ID == "" {
		return // unknown until apply: nothing to read yet
	}
	if next.Subject.Type != subjectUser || strings.EqualFold(next.Subject.ID, "admin") {
		return // group grants never expire; IAM stores no grant to admin
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
		policy, err := heldpolicy.Read(ctx, data.ExpiryScans, next.System, action, next.Subject)
		if err != nil {
			unreadable(data, diags, subjectName(next.Subject), action, err)
			return
		}
		if policy == nil {
			continue
		}
		want := next.Grant.ExpiresAt
		switch {
		case policy.ExpiredAt > want && prior != nil && prior.Grant.ExpiresAt > want && !holdsBeyond(policy, prior.Grant):
			// A lowering revokes what the grant holds before granting it
			// again, and the policy holds nothing else: the revoke
			// deletes it, and the new expiry takes effect.
		case policy.ExpiredAt > want:
			conflict(data, diags, "Expiry cannot take effect",
				fmt.Sprintf("%s already holds %s %s in IAM, which keeps one expiry per user and action and only ever raises it: "+
					"this grant, %s, cannot make it end sooner, and its instances stay as long as the policy does. To have them "+
					"end then, revoke the user's other grants of %s (the IAM web UI shows them).", subjectName(next.Subject), action,
					expiryText(policy.ExpiredAt, "expiring"), expiryText(want, "expiring"), action))
		case policy.ExpiredAt < want && len(next.Grant.Resources) == 1:
			r := next.Grant.Resources[0]
			ids, _ := policy.Expr.Instances(r.Type)
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
						len(others), r.System, r.Type, protocol.SomeIDs(others), expiryText(policy.ExpiredAt, "expiring"), expiryText(want, "expiring")))
			}
		}
	}
}

// conflict reports an expiry conflict on expires_at: a warning, or an
// error with expiry_conflicts = "error".
func conflict(data *conns.Data, diags *protocol.Diagnostics, summary, detail string) {
	conflictAt(data, diags, protocol.Root("expires_at"), summary, detail)
}

// conflictAt is conflict on the attribute at path.
func conflictAt(data *conns.Data, diags *protocol.Diagnostics, path *tftypes.AttributePath, summary, detail string) {
	if data.ExpiryConflictsFail {
		diags.AddAttributeError(path, summary, detail+
			" The plan fails because the provider sets expiry_conflicts = \"error\".")
		return
	}
	diags.AddAttributeWarning(path, summary, detail)
}

// unreadable reports that the policy a grant changes could not be read:
// a warning, or with expiry_conflicts = "error" an error, since the plan
// cannot then guarantee anything.
func unreadable(data *conns.Data, diags *protocol.Diagnostics, subject, action string, err error) {
	detail := fmt.Sprintf("The provider could not read %s's policy for %s, so the plan cannot say what this grant does to the one "+
		"expiry IAM keeps per user and action: %v. Set expiry_conflicts = \"off\" to plan without reading it.", subject, action, err)
	if data.ExpiryConflictsFail {
		diags.AddError("Cannot read the expiry IAM keeps", detail+" The plan fails because the provider sets expiry_conflicts = \"error\".")
		return
	}
	diags.AddWarning("Cannot read the expiry IAM keeps", detail)
}

// holdsBeyond reports whether the policy grants anything the grant does
// not hold: instances of its types that it does not name, every instance,
// or any instance when the grant has no instance list to compare.
func holdsBeyond(policy *heldpolicy.Policy, g grantplan.Grant) bool {
	if len(g.Resources) != 1 {
		return true // a combined resource or no type: not told apart here
	}
	r := g.Resources[0]
	ids, anyInstance := policy.Expr.Instances(r.Type)
	if anyInstance {
		return true
	}
	for _, id := range ids {
		if _, held := r.Instances[id]; !held {
			return true
		}
	}
	return false
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

// CheckPlan warns, for a planned creator grant that registers instances,
// which of the creator's policies it makes permanent: IAM grants a
// creator permanently, and the one expiry of the creator's policy for
// each creator action goes with it, so instances the creator holds of
// that action through another grant stop expiring.
func (CreatorGrant) CheckPlan(ctx context.Context, data *conns.Data, req protocol.PlanRequest[CreatorGrantModel], diags *protocol.Diagnostics) {
	if data == nil || data.ExpiryScans == nil {
		return
	}
	next := viewCreator(req.Proposed)
	if next.target.System == "" || next.target.Type == "" || next.creator == "" || next.instances == nil {
		return // unknown until apply
	}
	if strings.EqualFold(next.creator, "admin") {
		return // IAM stores no grant to admin
	}
	registers := len(next.instances) > 0
	if req.Prior != nil {
		prior := viewCreator(*req.Prior)
		if prior.target == next.target && prior.creator == next.creator && prior.instances != nil {
			held := grantplan.CreatorHeld(prior.target, prior.instances)
			registers = false
			for path := range grantplan.CreatorHeld(next.target, next.instances) {
				if _, ok := held[path]; !ok {
					registers = true
				}
			}
		}
	}
	if !registers {
		return // a removal grants nothing
	}
	actions := next.actions
	if actions == nil {
		// The type's creator actions, from the model CheckModel has read
		// (and reported on: its errors are not repeated here).
		actions = creatorConfigActions(ctx, data, req.Proposed.System, next.target.Type, &protocol.Diagnostics{})
	}
	creator := bkiam.Subject{Type: subjectUser, ID: next.creator}
	for _, action := range actions {
		policy, err := heldpolicy.Read(ctx, data.ExpiryScans, next.target.System, action, creator)
		if err != nil {
			unreadable(data, diags, subjectName(creator), action, err)
			return
		}
		if policy == nil || policy.ExpiredAt >= bkiam.PermanentExpiry {
			continue
		}
		ids, anyInstance := policy.Expr.Instances(next.target.Type)
		var others []string
		for _, id := range ids {
			if _, managed := next.instances[id]; !managed {
				others = append(others, id)
			}
		}
		what := fmt.Sprintf("%d %s/%s instances this resource does not manage (%s)", len(others), next.target.System, next.target.Type,
			protocol.SomeIDs(others))
		switch {
		case anyInstance:
			what = fmt.Sprintf("every %s/%s instance", next.target.System, next.target.Type)
		case len(others) == 0 && policy.Expr.Mentions(next.target.Type):
			continue // the policy holds only this resource's instances
		case len(others) == 0:
			what = "what the policy grants on other resource types"
		}
		conflictAt(data, diags, protocol.Root("instances"), "Creator grant makes a policy permanent",
			fmt.Sprintf("IAM grants a creator permanently, and keeps one expiry per user and action: registering these instances "+
				"makes %s's %s on %s, %s, permanent.", subjectName(creator), action, what, expiryText(policy.ExpiredAt, "expiring")))
	}
}

var _ protocol.PlanChecker[CreatorGrantModel, *conns.Data] = CreatorGrant{}
