package rolling

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/renewal"
)

// Attrs are a rolling expiry's three attributes as a resource's model
// holds them: expires_in and renew_before as configured, expires_at as
// planned or recorded (RFC 3339).
type Attrs struct {
	ExpiresIn, RenewBefore, ExpiresAt protocol.StringValue
}

// Model is a resource's model with a rolling expiry.
type Model interface {
	RollingAttrs() Attrs
}

// attrsOf is m's rolling attributes; nil for no model (a create's prior,
// a destroy's plan).
func attrsOf[M Model](m *M) *Attrs {
	if m == nil {
		return nil
	}
	a := (*m).RollingAttrs()
	return &a
}

// Settings are expires_in and renew_before as the configuration writes
// them, for renewal.Check.
func (a Attrs) Settings() (expiresIn, renewBefore renewal.Setting) {
	setting := func(v protocol.StringValue) renewal.Setting {
		s, known := v.Get()
		return renewal.Setting{Value: s, Set: !v.IsNull(), Known: known}
	}
	return setting(a.ExpiresIn), setting(a.RenewBefore)
}

// Rolling is the rolling expiry the attributes set; ok is false when
// expires_in is null, or either duration is unknown or does not parse
// (Check says why).
func (a Attrs) Rolling() (renewal.Rolling, bool) {
	if a.ExpiresIn.IsNull() {
		return renewal.Rolling{}, false
	}
	r, ok, _ := renewal.Check(a.Settings())
	return r, ok
}

// Recorded is what a state with these attributes records of its rolling
// expiry: the expires_in it was set by (renew_before, which a state may
// hold unknown, does not matter) and expires_at.
func (a Attrs) Recorded() renewal.Recorded {
	rec := renewal.Recorded{At: Unix(a.ExpiresAt)}
	if in, ok := a.ExpiresIn.Get(); ok {
		rec.Every, _ = renewal.ParseDuration(in)
	}
	return rec
}

// Recorded is what m, a state, records of its rolling expiry (nothing
// for no state).
func Recorded[M Model](m *M) renewal.Recorded {
	if a := attrsOf(m); a != nil {
		return a.Recorded()
	}
	return renewal.Recorded{}
}

// Unix is an expires_at in unix seconds: 0 when it is null, unknown or
// not RFC 3339.
func Unix(v protocol.StringValue) int64 {
	s, ok := v.Get()
	if !ok {
		return 0
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0
	}
	return t.Unix()
}

// Format is an expiry as expires_at writes it: RFC 3339 in UTC.
func Format(exp int64) string { return time.Unix(exp, 0).UTC().Format(time.RFC3339) }

// Check refuses, on the attribute each concerns, what expires_in and
// renew_before cannot mean (renewal.Check), and returns the rolling
// expiry they set (ok: both parse, or renew_before is unset).
func Check(a Attrs, diags *protocol.Diagnostics) (renewal.Rolling, bool) {
	r, ok, problems := renewal.Check(a.Settings())
	for _, p := range problems {
		diags.AddAttributeError(protocol.Root(p.Attribute), p.Summary, p.Detail)
	}
	return r, ok
}

// Plan is what a plan does to a rolling expiry.
type Plan struct {
	// ExpiresAt is expires_at as planned: null without expires_in, the
	// recorded one while it stays, unknown when the apply sets it (a new
	// period, a renewal, settings known only then).
	ExpiresAt protocol.StringValue
	Decision  renewal.Decision
	Rolling   renewal.Rolling
}

// PlanOf plans planned's expires_at over prior (nil on create) as of
// asOf, the time the state was last read or written (renewal.Plan).
func PlanOf[M Model](prior *M, planned M, asOf time.Time) Plan {
	var out Plan
	next := planned.RollingAttrs()
	if next.ExpiresIn.IsNull() {
		return out
	}
	was := attrsOf(prior)
	r, known := next.Rolling()
	out.Rolling, out.Decision = r, renewal.Plan(Recorded(prior), r, known, asOf, bkiam.PermanentExpiry)
	out.ExpiresAt = protocol.Unknown[string]()
	if out.Decision.Kind == renewal.Keep && was != nil {
		out.ExpiresAt = was.ExpiresAt
	}
	return out
}

// Estimated is the planned expires_at, taken where the plan leaves it
// unknown at the expiry an apply at the plan's time would set (the apply,
// later, can only set a later one), for the checks that judge what the
// apply sends.
func (p Plan) Estimated() protocol.StringValue {
	if p.ExpiresAt.IsUnknown() && p.Decision.Estimate != 0 {
		return protocol.Known(Format(p.Decision.Estimate))
	}
	return p.ExpiresAt
}

// AtApply is the expires_at an apply at now records for planned: the
// plan's, unless the plan left it unknown for the apply to decide
// (renewal.AtApply, from what prior records).
func AtApply[M Model](prior *M, planned M, now time.Time) protocol.StringValue {
	next := planned.RollingAttrs()
	if !next.ExpiresAt.IsUnknown() {
		return next.ExpiresAt
	}
	if r, ok := next.Rolling(); ok {
		return protocol.Known(Format(renewal.AtApply(Recorded(prior), r, now, bkiam.PermanentExpiry)))
	}
	return next.ExpiresAt
}

// Settle sets, in req's plan, the expires_at the plan left unknown for the
// apply to decide (AtApply, at now): a new period, or a renewal. set
// writes a model's expires_at.
func Settle[M Model](req *protocol.ApplyRequest[M], now time.Time, set func(*M, protocol.StringValue)) {
	if req.Planned == nil || !(*req.Planned).RollingAttrs().ExpiresAt.IsUnknown() {
		return
	}
	planned := *req.Planned
	set(&planned, AtApply(req.Prior, planned, now))
	req.Planned = &planned
}

// WithRenewal records in private when a plan first renews state's rolling
// expiry (renewal.Rolling.RenewsFrom), for the seam's protocol.Renewer, or
// forgets it when state has none, or is gone.
func WithRenewal[M Model](private protocol.PrivateState, state *M) protocol.PrivateState {
	var after int64
	if a := attrsOf(state); a != nil {
		if r, ok := a.Rolling(); ok {
			after = r.RenewsFrom(Unix(a.ExpiresAt))
		}
	}
	return protocol.WithRenewAfter(private, after)
}

// Renewed reports whether an apply from prior to state renewed the
// rolling expiry (the same expires_in, a later expires_at), and from and
// to when, for the apply's report.
func Renewed[M Model](prior, state *M) (from, to int64, ok bool) {
	was, now := Recorded(prior), Recorded(state)
	if prior == nil || state == nil || was.At == 0 || was.Every == 0 || was.Every != now.Every || now.At <= was.At {
		return 0, 0, false
	}
	return was.At, now.At, true
}

// PassedFix says, for a rolling expiry that has passed when a plan would
// send it, why the plan did not renew it and what to do.
func PassedFix(a Attrs) string {
	if a.RenewBefore.IsNull() {
		return "Without renew_before the rolling expiry is never renewed: set renew_before to renew it, or change expires_in to " +
			"start a new period at the apply."
	}
	// A plan goes by the state's last read (renewal.Plan): one without a
	// refresh did not see the window open.
	return "A plan goes by the time the state was last refreshed or applied, and this one's state was not refreshed since the " +
		"expiry passed (-refresh=false): plan with a refresh, which renews it."
}

// Followers are the entries of a resource that follow its rolling expiry
// (valued "expires_in"): members of a group, groups of a person.
type Followers struct {
	// Noun is what an entry is, in the singular: "member", "group".
	Noun string
	// Where says where the entries are valued, for messages: " in users
	// or departments", or "".
	Where string
	// First is the first follower's path (nil when there is none), Count
	// how many there are; Known is false when an unknown value may be one
	// more.
	First *tftypes.AttributePath
	Count int
	Known bool
}

// CheckFollowers refuses followers of an unset expires_in, and warns of
// an expires_in that nothing follows.
func CheckFollowers(a Attrs, f Followers, diags *protocol.Diagnostics) {
	title := strings.ToUpper(f.Noun[:1]) + f.Noun[1:]
	switch {
	case a.ExpiresIn.IsNull() && f.Count > 0:
		also := ""
		if f.Count > 1 {
			also = fmt.Sprintf(" (and %d other %ss)", f.Count-1, f.Noun)
		}
		diags.AddAttributeError(f.First, title+" follows an unset expires_in",
			fmt.Sprintf("%s%s is \"expires_in\", which follows the resource's rolling expiry, but expires_in is not set. Set "+
				"expires_in (for example \"90d\"), or give the %s \"permanent\" or an RFC 3339 time.", protocol.PathString(f.First), also, f.Noun))
	case a.ExpiresIn.IsKnown() && f.Known && f.Count == 0:
		diags.AddAttributeWarning(protocol.Root("expires_in"), "No "+f.Noun+" follows expires_in",
			fmt.Sprintf("expires_in sets the expiry of the %ss valued \"expires_in\"%s, and no %s is. Give the %ss that should follow "+
				"it the value \"expires_in\", or remove expires_in (and renew_before).", f.Noun, f.Where, f.Noun, f.Noun))
	}
}
