package rolling

import (
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/renewal"
)

// model is a resource's model that is nothing but its rolling expiry.
type model Attrs

func (m model) RollingAttrs() Attrs { return Attrs(m) }

func rollingModel(in, before, at string) model {
	m := model{ExpiresIn: protocol.Known(in)}
	if before != "" {
		m.RenewBefore = protocol.Known(before)
	}
	if at != "" {
		m.ExpiresAt = protocol.Known(at)
	}
	return m
}

// TestPlanOf: what a user sees of expires_at in the plan: null without
// expires_in, the recorded date between renewals, known after apply for a
// new period or a renewal, with the date the apply would set estimated.
func TestPlanOf(t *testing.T) {
	now := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	recorded := now.Add(30 * renewal.Day)
	due := now.Add(3 * renewal.Day)
	for _, tc := range []struct {
		name          string
		prior         *model
		planned       model
		kind          renewal.Kind
		wantAt        protocol.StringValue
		wantEstimated string
	}{
		{name: "no expires_in", planned: model{}, kind: renewal.Keep},
		{name: "create", planned: rollingModel("90d", "7d", ""), kind: renewal.Start,
			wantAt: protocol.Unknown[string](), wantEstimated: Format(now.Add(90 * renewal.Day).Unix())},
		{name: "between renewals", prior: ptr(rollingModel("90d", "7d", Format(recorded.Unix()))),
			planned: rollingModel("90d", "7d", Format(recorded.Unix())), kind: renewal.Keep,
			wantAt: protocol.Known(Format(recorded.Unix())), wantEstimated: Format(recorded.Unix())},
		{name: "renewal due", prior: ptr(rollingModel("90d", "7d", Format(due.Unix()))),
			planned: rollingModel("90d", "7d", Format(due.Unix())), kind: renewal.Renew,
			wantAt: protocol.Unknown[string](), wantEstimated: Format(due.Add(90 * renewal.Day).Unix())},
		{name: "new expires_in", prior: ptr(rollingModel("90d", "7d", Format(recorded.Unix()))),
			planned: rollingModel("30d", "7d", Format(recorded.Unix())), kind: renewal.Start,
			wantAt: protocol.Unknown[string](), wantEstimated: Format(now.Add(30 * renewal.Day).Unix())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PlanOf(tc.prior, tc.planned, now)
			if p.Decision.Kind != tc.kind || p.ExpiresAt != tc.wantAt {
				t.Fatalf("PlanOf = %v, expires_at %#v; want %v, %#v", p.Decision.Kind, p.ExpiresAt, tc.kind, tc.wantAt)
			}
			if got, _ := p.Estimated().Get(); got != tc.wantEstimated {
				t.Errorf("Estimated = %q, want %q", got, tc.wantEstimated)
			}
		})
	}
}

// TestAtApplyAndRenewed: the apply sets the date its plan left unknown
// (the recorded one plus expires_in for a renewal), reports the renewal
// from and to when, and records when the next one is due.
func TestAtApplyAndRenewed(t *testing.T) {
	now := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	due := now.Add(3 * renewal.Day)
	prior := rollingModel("90d", "7d", Format(due.Unix()))
	planned := rollingModel("90d", "7d", "")
	planned.ExpiresAt = protocol.Unknown[string]()
	at := AtApply(&prior, planned, now)
	want := due.Add(90 * renewal.Day)
	if got, _ := at.Get(); got != Format(want.Unix()) {
		t.Fatalf("AtApply = %q, want %q", got, Format(want.Unix()))
	}
	// A known expires_at is the plan's.
	if got := AtApply(&prior, prior, now); got != prior.ExpiresAt {
		t.Errorf("AtApply of a known expires_at = %#v, want the plan's %#v", got, prior.ExpiresAt)
	}
	state := planned
	state.ExpiresAt = at
	from, to, ok := Renewed(&prior, &state)
	if !ok || from != due.Unix() || to != want.Unix() {
		t.Errorf("Renewed = %d, %d, %v; want %d, %d, true", from, to, ok, due.Unix(), want.Unix())
	}
	if _, _, ok := Renewed(nil, &state); ok {
		t.Error("a create reported a renewal")
	}
	if _, _, ok := Renewed(&state, &state); ok {
		t.Error("an apply that kept the date reported a renewal")
	}
	// The next renewal is due a week and the margin (a day) before the new date.
	after := WithRenewal(nil, &state)
	if !protocol.RenewDueAfter(after, want.Add(-8*renewal.Day+time.Second)) || protocol.RenewDueAfter(after, want.Add(-8*renewal.Day)) {
		t.Errorf("renewal recorded as %q, want due from %s", after, want.Add(-8*renewal.Day))
	}
	if got := WithRenewal[model](after, nil); protocol.RenewDueAfter(got, want) {
		t.Error("a resource that is gone keeps its renewal")
	}
}

func ptr[T any](v T) *T { return &v }
