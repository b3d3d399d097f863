package rolling

import (
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/renewal"
)

// Cap is how long a site lets a group membership last from the call that
// sets it (the provider's max_member_expiry; 0: no cap). IAM's SaaS from
// its July 2026 release (bk-iam-saas #3143) refuses, on its management
// API's member add and expiry update, an expiry more than two years out,
// permanent aside; IAM 1.8 to 1.10 takes any expiry up to permanent. The
// provider cannot ask IAM its release, so the user says it, and the plans
// of the membership resources refuse what the site would (CheckFixed,
// CheckRolling) instead of the apply failing halfway.
type Cap time.Duration

// capSummary is the summary of every refusal of the cap.
const capSummary = "Expiry past the site's cap"

// why says what the cap is, for the refusals' details.
func (c Cap) why() string {
	return fmt.Sprintf("max_member_expiry (%s) in the provider configuration says this IAM refuses a membership expiry more than %s "+
		"after the call that sets it (IAM's SaaS from its July 2026 release caps member adds and renewals at two years; "+
		"\"permanent\" is not capped)", renewal.Describe(time.Duration(c)), renewal.Describe(time.Duration(c)))
}

// CheckFixed refuses, at the attribute at, a membership expiry the plan
// sends (value as configured, exp in unix seconds) that is more than the
// cap after now: the apply comes later, so one within the cap now is
// within it then.
func (c Cap) CheckFixed(at *tftypes.AttributePath, value string, exp int64, now time.Time, diags *protocol.Diagnostics) {
	latest := now.Add(time.Duration(c)).Unix()
	if c <= 0 || exp == bkiam.PermanentExpiry || exp <= latest {
		return
	}
	diags.AddAttributeError(at, capSummary,
		fmt.Sprintf("%s is %s, later than %s, the latest expiry the site takes from now: %s. Set an earlier time, or "+
			"\"permanent\".", protocol.PathString(at), value, Format(latest), c.why()))
}

// CheckRolling refuses a rolling expiry an apply would set past the cap:
// the apply that starts a period sets expires_in after its own time, and
// a renewal, which moves the recorded expiry on by expires_in once less
// than renew_before and the margin is left, up to expires_in +
// renew_before + the margin after its own. spread is how much later than
// expires_at a member may expire (renew_jitter). Nothing is said of an
// expiry that reaches IAM's permanent, which the cap lets through.
func (c Cap) CheckRolling(a Attrs, spread time.Duration, diags *protocol.Diagnostics) {
	r, ok := a.Rolling()
	if c <= 0 || !ok {
		return
	}
	ahead := r.Every + spread
	how := fmt.Sprintf("expires_in (%s) sets the expiry that far after the apply that starts a period", renewal.Describe(r.Every))
	if r.Before > 0 {
		ahead += r.Before + r.Margin()
		how = fmt.Sprintf("expires_in (%s) moves the expiry on by that much once less than renew_before (%s) and the margin (%s) "+
			"is left, so a renewal sets it up to %s after its apply", renewal.Describe(r.Every), renewal.Describe(r.Before),
			renewal.Describe(r.Margin()), renewal.Describe(r.Every+r.Before+r.Margin()))
	}
	if spread > 0 {
		how += fmt.Sprintf(", and renew_jitter spreads members up to %s later", renewal.Describe(spread))
	}
	if ahead <= time.Duration(c) || time.Now().Add(r.Every).Unix() >= bkiam.PermanentExpiry {
		return
	}
	fix := "Shorten expires_in"
	if room := time.Duration(c) - (ahead - r.Every); room > 0 {
		fix = fmt.Sprintf("Shorten expires_in to at most %s", renewal.Describe(room))
	}
	if r.Before > 0 {
		fix += " (or renew_before)"
	}
	diags.AddAttributeError(protocol.Root("expires_in"), capSummary,
		fmt.Sprintf("%s: %s. %s, or make the memberships that need longer \"permanent\".", c.why(), how, fix))
}
