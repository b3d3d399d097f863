package authz

import (
	"fmt"
	"strings"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/renewal"
)

// A rolling expiry (expires_in, renew_before) is a user grant's expires_at
// computed by the provider: the apply that creates it sets it to its own
// time plus expires_in, and a plan inside the renewal window moves it on
// by expires_in from the recorded date (internal/renewal says why from
// the recorded date). A renewal is an update like any later expires_at:
// one grant of an instance the actions hold, with the later expiry, which
// IAM gives everything the policy holds (grantplan.Plan).
//
// Nothing in the configuration or the state changes when the window
// opens, so the apply keeps in private state when the next renewal is due
// (protocol.WithRenewAfter), and the seam plans the resource then
// (protocol.Renewer), though it would otherwise answer an unchanged plan
// without decoding it.

// rollingExpiry is expires_in and renew_before, parsed.
type rollingExpiry struct {
	every, before time.Duration // before is 0 without renew_before
}

// rollingOf returns the model's rolling expiry; ok is false when
// expires_in is null, unknown or does not parse (Validate says why).
func rollingOf(m InstanceGrantModel) (r rollingExpiry, ok bool) {
	in, known := m.ExpiresIn.Get()
	if !known {
		return r, false
	}
	var err error
	if r.every, err = renewal.ParseDuration(in); err != nil {
		return r, false
	}
	if before, known := m.RenewBefore.Get(); known {
		if r.before, err = renewal.ParseDuration(before); err != nil {
			return r, false
		}
	}
	return r, true
}

// checkRolling refuses what expires_in and renew_before cannot mean.
func checkRolling(config InstanceGrantModel, subjectType string, subjectKnown bool, diags *protocol.Diagnostics) {
	in, inKnown := config.ExpiresIn.Get()
	before, beforeKnown := config.RenewBefore.Get()
	var every, window time.Duration
	var err error
	if inKnown {
		if every, err = renewal.ParseDuration(in); err != nil {
			diags.AddAttributeError(protocol.Root("expires_in"), "Invalid duration",
				fmt.Sprintf("expires_in: %v. Write how long the grant lasts, e.g. \"90d\".", err))
		}
		switch {
		case !config.ExpiresAt.IsNull():
			diags.AddAttributeError(protocol.Root("expires_in"), "Both expires_at and expires_in",
				"A grant expires at a fixed time (expires_at) or a duration after it is granted (expires_in), not both. Remove one.")
		case subjectKnown && subjectType == bkiam.SubjectGroup:
			diags.AddAttributeError(protocol.Root("expires_in"), "Group grants do not expire",
				"IAM keeps group policies forever and ignores an expiry. Remove expires_in, or grant to users instead.")
		}
	}
	if !beforeKnown {
		return
	}
	if window, err = renewal.ParseDuration(before); err != nil {
		diags.AddAttributeError(protocol.Root("renew_before"), "Invalid duration",
			fmt.Sprintf("renew_before: %v. Write how long before the expiry a plan renews the grant, e.g. \"7d\".", err))
		return
	}
	switch {
	case config.ExpiresIn.IsNull():
		diags.AddAttributeError(protocol.Root("renew_before"), "renew_before without expires_in",
			"renew_before renews a rolling expiry, which expires_in sets. Set expires_in (e.g. \"90d\"), or remove renew_before.")
	case inKnown && every > 0 && window >= every:
		diags.AddAttributeError(protocol.Root("renew_before"), "Renewal window too long",
			fmt.Sprintf("renew_before (%s) must be shorter than expires_in (%s): otherwise every plan would renew the grant.", before, in))
	}
}

// planRolling decides a rolling grant's expires_at: unknown until the
// apply that sets it (a create, a new expires_in), the recorded one
// moved on inside the renewal window, else the recorded one.
func planRolling(planned *InstanceGrantModel, prior *InstanceGrantModel, now time.Time, diags *protocol.Diagnostics) {
	r, ok := rollingOf(*planned)
	if !ok {
		planned.ExpiresAt = protocol.Unknown[string]()
		return
	}
	// The same duration written otherwise ("7d", "1w") is the same period.
	was, same := rollingOf(prior0(prior))
	same = same && prior != nil && was.every == r.every
	var recorded int64
	if same {
		recorded, ok = expiryOf(prior.ExpiresAt)
	}
	if !same || !ok {
		planned.ExpiresAt = protocol.Unknown[string]()
		if was, held := expiryOf(prior0(prior).ExpiresAt); prior != nil && held && renewal.First(now, r.every, bkiam.PermanentExpiry) < was {
			diags.AddAttributeWarning(protocol.Root("expires_in"), "Expiry lowered by revoking and granting again",
				fmt.Sprintf("The new expires_in ends the grant about %s, before its recorded expiry, %s. IAM can raise an expiry "+
					"but not lower it, so the apply revokes the grant and grants it again: access lapses for the moment between "+
					"the two calls.", time.Unix(renewal.First(now, r.every, bkiam.PermanentExpiry), 0).UTC().Format(time.RFC3339),
					time.Unix(was, 0).UTC().Format(time.RFC3339)))
		}
		return
	}
	planned.ExpiresAt = prior.ExpiresAt
	if r.before == 0 {
		return // never renewed
	}
	if next := renewal.Next(recorded, now, r.every, r.before, bkiam.PermanentExpiry); next != recorded {
		planned.ExpiresAt = protocol.Known(time.Unix(next, 0).UTC().Format(time.RFC3339))
		g := ViewGrant(*planned)
		diags.AddAttributeWarning(protocol.Root("expires_at"), "Renewing the grant",
			fmt.Sprintf("Less than renew_before is left: the apply renews %s's %s on %s until %s (from %s), with one grant of "+
				"one of them: IAM raises the expiry of everything a policy holds on any grant into it.", subjectName(g.Subject),
				describeActions(g.Grant.Actions), describeInstances(g.Grant.Resources), time.Unix(next, 0).UTC().Format(time.RFC3339),
				time.Unix(recorded, 0).UTC().Format(time.RFC3339)))
	}
}

// prior0 is *prior, or the zero model.
func prior0(prior *InstanceGrantModel) InstanceGrantModel {
	if prior == nil {
		return InstanceGrantModel{}
	}
	return *prior
}

// expiryOf is an expires_at in unix seconds.
func expiryOf(v protocol.StringValue) (int64, bool) {
	s, ok := v.Get()
	if !ok {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t.Unix(), err == nil
}

// setRollingExpiry fills in, at apply, the expires_at a plan left
// unknown: the apply's time plus expires_in.
func setRollingExpiry(planned *InstanceGrantModel, now time.Time) {
	if planned == nil || !planned.ExpiresAt.IsUnknown() {
		return
	}
	if r, ok := rollingOf(*planned); ok {
		planned.ExpiresAt = protocol.Known(time.Unix(renewal.First(now, r.every, bkiam.PermanentExpiry), 0).UTC().Format(time.RFC3339))
	}
}

// withRenewal records in private when the state's next renewal is due,
// or forgets it for a grant that is not renewed.
func withRenewal(private protocol.PrivateState, state *InstanceGrantModel) protocol.PrivateState {
	var after int64
	if state != nil {
		if r, ok := rollingOf(*state); ok && r.before > 0 {
			if at, ok := expiryOf(state.ExpiresAt); ok {
				after = at - int64(r.before/time.Second)
			}
		}
	}
	return protocol.WithRenewAfter(private, after)
}

// RenewDue reports whether a rolling grant's renewal window has opened
// (protocol.Renewer).
func (InstanceGrant) RenewDue(private protocol.PrivateState, now time.Time) bool {
	return protocol.RenewDueAfter(private, now)
}

var _ protocol.Renewer = InstanceGrant{}

// PlansNull: an expires_at the configuration no longer sets, without
// expires_in, means permanent, while Terraform proposes the recorded date
// (the attribute is computed, for a rolling expiry), so the proposal looks
// unchanged; Plan makes it permanent (PlanRequest.ConfigNull).
func (InstanceGrant) PlansNull(prior InstanceGrantModel, configNull func(string) bool) bool {
	return !prior.ExpiresAt.IsNull() && prior.ExpiresIn.IsNull() && configNull("expires_at")
}

var _ protocol.NullPlanner[InstanceGrantModel] = InstanceGrant{}

// describeActions renders actions for a message: "edit_host, view_host".
func describeActions(actions []string) string { return strings.Join(actions, ", ") }

// describeInstances renders what a grant holds for a message: "450
// bk_cmdb/host instances", or "them" for actions with no resource type.
func describeInstances(resources []grantplan.Resource) string {
	if len(resources) == 0 {
		return "them"
	}
	parts := make([]string, len(resources))
	for i, r := range resources {
		parts[i] = fmt.Sprintf("%d %s/%s instances", len(r.Instances), r.System, r.Type)
	}
	return strings.Join(parts, " and ")
}
