package authz_test

import (
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
)

// TestProtocolRollingPlans: what a plan does to a rolling expiry, from a
// grant created with expires_in = "7d" and renew_before = "1d": the
// create leaves expires_at to the apply, which records about a week on;
// the same period written otherwise ("1w") keeps the recorded date and
// sends nothing; a longer one starts a new period at the apply; a shorter
// one warns that the apply lowers the expiry; removing expires_in makes
// the grant permanent, though Terraform proposes the recorded date.
func TestProtocolRollingPlans(t *testing.T) {
	rolling := func(in, before string) *authz.InstanceGrantModel {
		m := acctest.HostsOf([]string{"view_host"}, "1")
		m.ExpiresIn, m.RenewBefore = protocol.Known(in), protocol.Known(before)
		return m
	}
	env := acctest.NewProtoEnv(t, nil)
	plan := acctest.InstanceProto.Plan(t, env.Server, nil, nil, rolling("7d", "1d"))
	if planned := acctest.InstanceProto.Model(t, plan.PlannedState); !planned.ExpiresAt.IsUnknown() {
		t.Fatalf("a create plans expires_at %+v, want it known after apply", planned.ExpiresAt)
	}
	created := acctest.InstanceProto.Apply(t, env.Server, nil, plan, rolling("7d", "1d"))
	acctest.ExpectDiags(t, created.Diagnostics)
	state := acctest.InstanceProto.Model(t, created.NewState)
	recorded, _ := state.ExpiresAt.Get()
	at, err := time.Parse(time.RFC3339, recorded)
	if err != nil || at.Before(time.Now().Add(7*24*time.Hour-time.Minute)) || at.After(time.Now().Add(7*24*time.Hour)) {
		t.Fatalf("the create recorded expires_at %q, want about a week on", recorded)
	}

	for _, tc := range []struct {
		name   string
		config *authz.InstanceGrantModel
		want   func(planned protocol.StringValue) bool
		warn   string
	}{
		{"same period written otherwise", rolling("1w", "1d"), func(p protocol.StringValue) bool { return p == state.ExpiresAt }, ""},
		{"longer period", rolling("14d", "1d"), protocol.StringValue.IsUnknown, ""},
		{"shorter period", rolling("2d", "1d"), protocol.StringValue.IsUnknown, "Expiry lowered by revoking and granting again"},
		{"no expires_in", acctest.HostsOf([]string{"view_host"}, "1"), protocol.StringValue.IsNull, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := acctest.InstanceProto.Plan(t, env.Server, created.NewState, created.Private, tc.config)
			if tc.warn == "" {
				acctest.ExpectDiags(t, plan.Diagnostics)
			} else {
				acctest.ExpectDiags(t, plan.Diagnostics, acctest.ProtoWarning(tc.warn, protocol.Root("expires_in")))
			}
			if planned := acctest.InstanceProto.Model(t, plan.PlannedState); !tc.want(planned.ExpiresAt) {
				t.Errorf("planned expires_at %+v (recorded %q)", planned.ExpiresAt, recorded)
			}
		})
	}
}

// TestRollingClaimsReadNoClock: a rolling grant planned for create claims
// its actions with no expiry (0 compares with no other): two such grants
// of one action, planned either side of a second, used to claim the
// clock's now plus expires_in, and the ledger warned at random that they
// grant one policy two expiries.
func TestRollingClaimsReadNoClock(t *testing.T) {
	m := acctest.HostsOf([]string{"view_host"}, "1")
	m.ExpiresIn, m.RenewBefore, m.ExpiresAt = protocol.Known("7d"), protocol.Known("1d"), protocol.Unknown[string]()
	first := authz.InstanceGrant{}.Claims(*m)
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
	second := authz.InstanceGrant{}.Claims(*m)
	if first.Actions["view_host"].ExpiresAt != 0 || second.Actions["view_host"].ExpiresAt != 0 {
		t.Errorf("a rolling grant not yet applied claims view_host expiring %d, then %d, a second later; want 0 (not known)",
			first.Actions["view_host"].ExpiresAt, second.Actions["view_host"].ExpiresAt)
	}
	if len(first.Actions["view_host"].Paths) != 1 {
		t.Errorf("claims %+v, want host 1's path", first.Actions)
	}
}

// TestProtocolRollingExpiryPassed: a change of a rolling grant whose
// recorded expiry has passed is refused at plan, saying why it was not
// renewed: without renew_before it never is; with it, the plan went by a
// state last read before the expiry passed (-refresh=false).
func TestProtocolRollingExpiryPassed(t *testing.T) {
	env := acctest.NewProtoEnv(t, nil)
	state := acctest.HostsOf([]string{"view_host"}, "1")
	state.ID = protocol.Known("bk_cmdb/user/alice")
	state.ExpiresIn = protocol.Known("1h")
	state.ExpiresAt = protocol.Known(time.Now().Add(-time.Minute).UTC().Format(time.RFC3339))
	more := acctest.HostsOf([]string{"view_host"}, "1", "2")
	more.ExpiresIn = protocol.Known("1h")
	plan := acctest.InstanceProto.Plan(t, env.Server, acctest.InstanceProto.Value(t, state), nil, more)
	acctest.ExpectDiags(t, plan.Diagnostics, acctest.ProtoError("Without renew_before the rolling expiry is never renewed", protocol.Root("expires_at")))

	state.RenewBefore, more.RenewBefore = protocol.Known("10m"), protocol.Known("10m")
	var diags protocol.Diagnostics
	stale := protocol.WithReadAt(protocol.WithRenewAfter(nil, time.Now().Add(-20*time.Minute).Unix()), time.Now().Add(-time.Hour)).Bytes(&diags)
	plan = acctest.InstanceProto.Plan(t, env.Server, acctest.InstanceProto.Value(t, state), stale, more)
	acctest.ExpectDiags(t, plan.Diagnostics, acctest.ProtoError("plan with a refresh, which renews it", protocol.Root("expires_at")))
	// Read now, the same plan renews instead.
	plan = acctest.InstanceProto.Plan(t, env.Server, acctest.InstanceProto.Value(t, state), nil, more)
	if planned := acctest.InstanceProto.Model(t, plan.PlannedState); !planned.ExpiresAt.IsUnknown() {
		t.Errorf("a plan as of now plans expires_at %+v, want unknown: it renews", planned.ExpiresAt)
	}
}
