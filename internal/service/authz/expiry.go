package authz

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/heldpolicy"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// IAM keeps one expiry per user and action, the latest any grant gave,
// and only ever raises it, for everything the policy holds: ids, a
// topology path (every host under a business, the web UI's usual grant),
// every instance, an attribute condition, a combination of types. So a
// grant can change the expiry of what it does not manage (alice's hosts
// under business 1, expiring the day after tomorrow, become permanent
// when a grant of host 1 sends the permanent expiry), a configured
// expires_at cannot take effect when IAM's policy already expires later,
// and a grant revives a policy that expired (IAM keeps it a year) with
// everything it held. CheckPlan tells each at plan, from the one
// subject's policy (conns.Data.Expiry, a plan-time view read once per
// process: heldpolicy.Reader), for a planned create or change that grants
// the action.

// CheckPlan warns, for each action a planned create or change of a user
// grant will grant, what the grant does to the expiry IAM keeps.
func (InstanceGrant) CheckPlan(ctx context.Context, data *conns.Data, req protocol.PlanRequest[InstanceGrantModel], diags *protocol.Diagnostics) {
	if data == nil {
		return // the provider is not configured
	}
	next := plannedView(req)
	if !next.Known || next.System == "" || next.Subject.ID == "" {
		return // unknown until apply: nothing to read yet
	}
	var prior *GrantView
	if req.Prior != nil {
		if p := ViewGrant(*req.Prior); p.Known && p.System == next.System && p.Subject == next.Subject {
			prior = &p
		}
	}
	var actions []string
	for _, action := range next.Grant.Actions {
		if prior == nil || grantsAgain(prior.Grant, next.Grant, action) {
			actions = append(actions, action)
		}
	}
	if len(actions) == 0 {
		return
	}
	if next.Subject.Type == bkiam.SubjectGroup {
		widensScope(data, next, actions, diags)
		return // group grants never expire
	}
	if data.Expiry == nil || next.Subject.Type != bkiam.SubjectUser || strings.EqualFold(next.Subject.ID, "admin") {
		return // expiry_conflicts = "off" or ESB; IAM stores no grant to admin
	}
	// A policy that expires when the grant does needs no reading: the
	// grant changes nothing of its expiry.
	want := next.Grant.ExpiresAt
	held, _, err := data.Expiry.Read(ctx, next.System, next.Subject, actions, func(_ string, expiredAt int64) bool { return expiredAt != want })
	if err != nil {
		unreadable(data, diags, subjectName(next.Subject), strings.Join(actions, ", "), err)
		return
	}
	// An action missing from held was written by this process before it
	// was read (an apply's re-plan): the plan read it and decided.
	mine := instanceShape(next.Grant)
	var unseen revivalNotice
	defer unseen.say(diags, protocol.Root("expires_at"), next.System, next.Subject)
	for _, action := range actions {
		h, ok := held[action]
		if !ok {
			continue
		}
		who := fmt.Sprintf("%s's %s", subjectName(next.Subject), action)
		if h.Live == nil && h.Expired == nil {
			if h.Expired, err = recalled(ctx, data, req.Private, next.System, next.Subject, action); err != nil {
				unreadable(data, diags, subjectName(next.Subject), action, err)
				continue
			}
		}
		switch policy := h.Live; {
		case policy == nil && h.Expired != nil:
			if what := mine.beyond(h.Expired.Expr); what != "" {
				conflict(data, diags, "Grant revives an expired policy", revives(who, h.Expired, what, want))
			}
		case policy == nil:
			unseen.add(data, next.System, next.Subject, action, h)
		case policy.ExpiredAt > want && prior != nil && prior.Grant.ExpiresAt > want && instanceShape(prior.Grant).beyond(policy.Expr) == "":
			// A lowering revokes what the grant holds before granting it
			// again, and the policy holds nothing else: the revoke
			// deletes it, and the new expiry takes effect.
		case policy.ExpiredAt > want:
			detail := fmt.Sprintf("%s already holds %s %s in IAM, which keeps one expiry per user and action and only ever raises it: "+
				"this grant, %s, cannot make it end sooner, and its instances stay as long as the policy does.", subjectName(next.Subject),
				action, expiryText(policy.ExpiredAt, "expiring"), expiryText(want, "expiring"))
			if what := mine.beyond(policy.Expr); what != "" {
				detail += fmt.Sprintf(" The policy also holds what this resource does not grant: %s.", what)
			}
			conflict(data, diags, "Expiry cannot take effect", detail+fmt.Sprintf(" To have them end then, revoke the user's other "+
				"grants of %s (the IAM web UI shows them).", action))
		case policy.ExpiredAt < want:
			if what := mine.beyond(policy.Expr); what != "" {
				conflict(data, diags, "Expiry raised beyond this grant",
					fmt.Sprintf("IAM keeps one expiry per user and action, and this grant raises it: %s on %s, %s, becomes %s.",
						who, what, expiryText(policy.ExpiredAt, "expiring"), expiryText(want, "expiring")))
			}
		}
	}
}

// revives is the detail of a grant that revives an expired policy.
func revives(who string, expired *heldpolicy.Policy, what string, want int64) string {
	return fmt.Sprintf("%s expired at %s, and IAM keeps an expired policy (a year) and merges the next grant into it: this "+
		"grant brings back everything it held, with the grant's expiry (%s), including what this resource does not grant: %s. "+
		"To keep those expired, revoke them first (the IAM web UI shows a user's expired permissions).",
		who, time.Unix(expired.ExpiredAt, 0).UTC().Format(time.RFC3339), expiryText(want, "expiring"), what)
}

// revivalNotice collects the actions of one grant whose user holds nothing
// live of them and of which IAM lists no expired policy either: IAM keeps a
// user's expired policy a year and merges the next grant into it, while its
// list shows an expired policy for one day only (and, past
// expiry_scan_limit, is not read at all). say tells them plainly in one
// warning, whatever expiry_conflicts says: it is what IAM does not let the
// provider know, not a conflict the plan found. Each user's action is told
// once per process, however many resources grant it.
type revivalNotice struct {
	actions []string
	limited []*bkiam.ScanLimitError
}

func (n *revivalNotice) add(data *conns.Data, system string, subject bkiam.Subject, action string, h heldpolicy.Held) {
	if !data.Expiry.FirstNotice(system, subject, action) {
		return
	}
	n.actions = append(n.actions, action)
	if h.Limited != nil {
		n.limited = append(n.limited, h.Limited)
	}
}

func (n *revivalNotice) say(diags *protocol.Diagnostics, at *tftypes.AttributePath, system string, subject bkiam.Subject) {
	if len(n.actions) == 0 {
		return
	}
	actions := strings.Join(n.actions, ", ")
	listed := "and IAM lists no expired policy of " + map[bool]string{true: "it", false: "them"}[len(n.actions) == 1]
	for _, l := range n.limited {
		listed += fmt.Sprintf("; IAM's policy list of %s holds %d policies, more than expiry_scan_limit (%d), so the "+
			"provider did not look for one there", l.Action, l.Count, l.Limit)
	}
	diags.AddAttributeWarning(at, "An expired policy may come back",
		fmt.Sprintf("%s holds no live policy of %s in %s, %s. IAM keeps a user's expired policy for a year and merges the "+
			"next grant into it, bringing back everything it held with the new expiry, but shows an expired policy to an app "+
			"only during the day after it expired (the provider also reads by id the policies it has seen before). If one "+
			"of these expired before that, this grant revives what it held, which this plan cannot show. The IAM web UI "+
			"shows a user's expired permissions.", subjectName(subject), actions, system, listed))
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
// which of the creator's policies it makes permanent or revives: IAM
// grants a creator every action of the type's creator configuration,
// permanently, and the one expiry of the creator's policy for each action
// goes with it, so what the creator holds of those actions through other
// grants stops expiring (or, expired, comes back for good).
func (CreatorGrant) CheckPlan(ctx context.Context, data *conns.Data, req protocol.PlanRequest[CreatorGrantModel], diags *protocol.Diagnostics) {
	if data == nil || data.Expiry == nil {
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
	actions, related := creatorCheckActions(ctx, data, req.Proposed.System, next, diags)
	creator := bkiam.Subject{Type: bkiam.SubjectUser, ID: next.creator}
	// A permanent policy needs no reading: a creator grant changes nothing
	// of its expiry.
	held, _, err := data.Expiry.Read(ctx, next.target.System, creator, actions,
		func(_ string, expiredAt int64) bool { return expiredAt < bkiam.PermanentExpiry })
	if err != nil {
		unreadable(data, diags, subjectName(creator), strings.Join(actions, ", "), err)
		return
	}
	var unseen revivalNotice
	defer unseen.say(diags, protocol.Root("instances"), next.target.System, creator)
	for _, action := range actions {
		h, ok := held[action]
		if !ok {
			continue // written by this process first: the plan decided
		}
		mine := creatorShape(next.target, next.instances, related[action])
		who := fmt.Sprintf("%s's %s", subjectName(creator), action)
		if h.Live == nil && h.Expired == nil {
			if h.Expired, err = recalled(ctx, data, req.Private, next.target.System, creator, action); err != nil {
				unreadable(data, diags, subjectName(creator), action, err)
				continue
			}
		}
		switch policy := h.Live; {
		case policy == nil && h.Expired != nil:
			if what := mine.beyond(h.Expired.Expr); what != "" {
				conflictAt(data, diags, protocol.Root("instances"), "Creator grant revives an expired policy",
					revives(who, h.Expired, what, bkiam.PermanentExpiry))
			}
		case policy == nil:
			unseen.add(data, next.target.System, creator, action, h)
		case policy.ExpiredAt >= bkiam.PermanentExpiry:
		default:
			if what := mine.beyond(policy.Expr); what != "" {
				conflictAt(data, diags, protocol.Root("instances"), "Creator grant makes a policy permanent",
					fmt.Sprintf("IAM grants a creator permanently, and keeps one expiry per user and action: registering these instances "+
						"makes %s on %s, %s, permanent.", who, what, expiryText(policy.ExpiredAt, "expiring")))
			}
		}
	}
}

// creatorCheckActions returns the actions a creator grant of next gives,
// which the expiry check reads: IAM grants every action of the type's
// creator configuration whatever the actions attribute says, so the
// configured ones and the model's; and, by action, whether it relates to
// the type (one that relates to none IAM grants whole). Without the model
// (check_model = false) only the configured ones can be read, which it
// says.
func creatorCheckActions(ctx context.Context, data *conns.Data, system protocol.StringValue, next creatorView, diags *protocol.Diagnostics) ([]string, map[string]bool) {
	related := map[string]bool{}
	actions := slices.Clone(next.actions)
	// The model CheckModel has read (and reported on: its errors are not
	// repeated here).
	model := verify.SystemModel(ctx, data, protocol.Root("system"), system, &protocol.Diagnostics{})
	if model == nil {
		for _, a := range actions {
			related[a] = true
		}
		if len(actions) > 0 {
			conflictAt(data, diags, protocol.Root("actions"), "Creator actions not checked",
				fmt.Sprintf("IAM grants a creator every action of the type's creator configuration, whatever actions says, and makes "+
					"each policy permanent. The expiry check read the creator's policies of %s only: with check_model = false the "+
					"provider does not read the model that lists the others. Set check_model = true to check them all.",
					strings.Join(actions, ", ")))
		}
		return actions, related
	}
	if node := model.CreatorNode(next.target.Type); node != nil {
		for _, a := range node.Actions {
			actions = append(actions, a.ID)
		}
	}
	actions = unique(actions)
	for _, id := range actions {
		related[id] = true
		if a := model.Action(id); a != nil {
			related[id] = len(a.RelatedResourceTypes) > 0
		}
	}
	return actions, related
}

var _ protocol.PlanChecker[CreatorGrantModel, *conns.Data] = CreatorGrant{}
