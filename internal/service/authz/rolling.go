package authz

import (
	"fmt"
	"strings"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/renewal"
	"github.com/bkiam/terraform-provider-bkiam/internal/rolling"
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
// (rolling.WithRenewal), and the seam plans the resource then
// (protocol.Renewer), though it would otherwise answer an unchanged plan
// without decoding it.

// RollingAttrs are the grant's rolling expiry attributes (rolling.Model).
func (m InstanceGrantModel) RollingAttrs() rolling.Attrs {
	return rolling.Attrs{ExpiresIn: m.ExpiresIn, RenewBefore: m.RenewBefore, ExpiresAt: m.ExpiresAt}
}

// checkRolling refuses what expires_in and renew_before cannot mean.
func checkRolling(config InstanceGrantModel, subjectType string, subjectKnown bool, diags *protocol.Diagnostics) {
	rolling.Check(config.RollingAttrs(), diags)
	if !config.ExpiresIn.IsKnown() {
		return // null, or unknown until apply (for_each over values, say): it may be null
	}
	switch {
	case !config.ExpiresAt.IsNull() && !config.ExpiresAt.IsUnknown():
		diags.AddAttributeError(protocol.Root("expires_in"), "Both expires_at and expires_in",
			"A grant expires at a fixed time (expires_at) or a duration after it is granted (expires_in), not both. Remove one.")
	case subjectKnown && subjectType == bkiam.SubjectGroup:
		diags.AddAttributeError(protocol.Root("expires_in"), "Group grants do not expire",
			"IAM keeps group policies forever and ignores an expiry. Remove expires_in, or grant to users instead.")
	}
}

// planRolling decides a rolling grant's expires_at (renewal.Plan, as of
// the time the state was read): the recorded one, or unknown until the
// apply that starts a new period or renews it. It returns the expiry the
// apply is estimated to send (0: not known), by which the plan's checks
// judge it.
func planRolling(planned *InstanceGrantModel, prior *InstanceGrantModel, asOf time.Time, diags *protocol.Diagnostics) int64 {
	plan := rolling.PlanOf(prior, *planned, asOf)
	planned.ExpiresAt = plan.ExpiresAt
	r, d := plan.Rolling, plan.Decision
	switch {
	case d.Restarts() && d.Estimate != 0 && d.Estimate < d.Recorded:
		diags.AddAttributeWarning(protocol.Root("expires_in"), "Expiry lowered by revoking and granting again",
			fmt.Sprintf("The new expires_in ends the grant about %s, before its recorded expiry, %s. IAM can raise an expiry "+
				"but not lower it, so the apply revokes the grant and grants it again: access lapses for the moment between "+
				"the two calls.", formatExpiry(d.Estimate), formatExpiry(d.Recorded)))
	case d.Kind == renewal.Renew:
		g := ViewGrant(*planned)
		diags.AddAttributeWarning(protocol.Root("expires_at"), "Renewing the grant",
			fmt.Sprintf("Less than renew_before is left, or will be within %s: the apply renews %s's %s on %s, from %s %s. "+
				"It sends one grant of one of them: IAM raises the expiry of everything a policy holds on any grant into it.",
				renewal.Describe(r.Margin()), subjectName(g.Subject), describeActions(g.Grant.Actions),
				describeInstances(g.Grant.Resources), formatExpiry(d.Recorded), renewal.Until(r, d, asOf)))
	}
	return d.Estimate
}

// plannedView is the planned grant, a rolling expires_at the plan leaves
// unknown taken at the expiry the apply is estimated to send.
func plannedView(req protocol.PlanRequest[InstanceGrantModel]) GrantView {
	g := ViewGrant(req.Proposed)
	if _, ok := req.Proposed.RollingAttrs().Rolling(); ok && !g.Known {
		g = withEstimate(g, rolling.PlanOf(req.Prior, req.Proposed, req.Time()).Decision.Estimate)
	}
	return g
}

// renewedOutside returns the expiry a rolling grant's state should
// record when IAM keeps every one of its actions (now, as read back)
// past the recorded expires_at: the earliest of them.
func renewedOutside(state InstanceGrantModel, now grantplan.Holdings, iamExpiry map[string]int64) (int64, bool) {
	recorded, ok := expiryOf(state.ExpiresAt)
	if state.ExpiresIn.IsNull() || !ok || len(now) == 0 {
		return 0, false
	}
	earliest := int64(0)
	for action := range now {
		at := iamExpiry[action]
		if at <= recorded {
			return 0, false
		}
		if earliest == 0 || at < earliest {
			earliest = at
		}
	}
	return earliest, true
}

// reportRenewal tells, after an apply that renewed a rolling grant, whose
// grant it renewed and to when: an apply that renews many grants reports
// each (a summary of its own, which Terraform does not fold into
// "similar warnings").
func reportRenewal(prior, state *InstanceGrantModel, diags *protocol.Diagnostics) {
	from, to, ok := rolling.Renewed(prior, state)
	if !ok {
		return
	}
	g := ViewGrant(*state)
	what := "The grant now expires"
	if len(g.Grant.Resources) > 0 {
		what = describeInstances(g.Grant.Resources) + " now expire"
	}
	diags.AddWarning(fmt.Sprintf("Renewed %s's %s", subjectName(g.Subject), describeActions(g.Grant.Actions)),
		fmt.Sprintf("%s at %s, renewed from %s.", what, formatExpiry(to), formatExpiry(from)))
}

// checkRollingAhead refuses to plan a change of a rolling grant whose
// recorded expiry, which the plan keeps, has passed: IAM would refuse the
// grant. It says why the plan did not renew it.
func checkRollingAhead(planned InstanceGrantModel, now time.Time, diags *protocol.Diagnostics) {
	at, ok := expiryOf(planned.ExpiresAt)
	if !ok || at > now.Unix() {
		return
	}
	diags.AddAttributeError(protocol.Root("expires_at"), "Rolling expiry passed",
		fmt.Sprintf("The grant's rolling expiry (expires_at %s) has passed, and IAM refuses a grant with an expiry that is not in "+
			"the future. %s", formatExpiry(at), rolling.PassedFix(planned.RollingAttrs())))
}

// formatExpiry is an expiry as expires_at writes it: RFC 3339 in UTC.
func formatExpiry(exp int64) string { return rolling.Format(exp) }

// expiryOf is an expires_at in unix seconds.
func expiryOf(v protocol.StringValue) (int64, bool) {
	s, ok := v.Get()
	if !ok {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t.Unix(), err == nil
}

// RenewDue reports whether a rolling grant's renewal window has opened
// (protocol.Renewer).
func (InstanceGrant) RenewDue(private protocol.PrivateState, asOf time.Time) bool {
	return protocol.RenewDueAfter(private, asOf)
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
