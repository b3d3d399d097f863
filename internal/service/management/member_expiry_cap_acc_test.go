package management_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// cappedSite is a sandbox playing IAM's SaaS of July 2026, which refuses a
// membership expiry more than two years out (permanent aside), with a
// group made outside Terraform.
type cappedSite struct {
	sb *sandboxtest.Sandbox
	// capped and plain are gateway provider blocks that say the cap
	// (max_member_expiry = "730d") and that do not.
	capped, plain string
	group         int64
	// threeYears is a date past the cap; start the test's start.
	threeYears string
	start      int64
	calls      *acctest.CallCounter
}

func newCappedSite(t *testing.T) cappedSite {
	t.Helper()
	acctest.NeedsSandbox(t)
	acctest.Parallel(t)
	c := cappedSite{sb: sandboxtest.Start(t, sandbox.WithModel(acctest.EditedModel(t, func(m *sandbox.Model) { m.SaaS = "2026" }))),
		threeYears: time.Now().AddDate(3, 0, 0).UTC().Truncate(time.Second).Format(time.RFC3339), start: time.Now().Unix()}
	c.plain = acctest.Transports[acctest.GatewayTransport].Block(c.sb.URL)
	c.capped = strings.Replace(c.plain, "  max_retries = 2\n", "  max_retries = 2\n  max_member_expiry = \"730d\"\n", 1)
	_, c.group = acctest.OutsideGroup(t, acctest.OutsideClient(t, c.sb), "cap-managers", "dev")
	c.calls = acctest.NewCallCounter(c.sb)
	return c
}

// noMemberCalls is a PreConfig: the steps before sent no member add or
// expiry update.
func (c cappedSite) noMemberCalls(t *testing.T) func() {
	return func() {
		if got := c.calls.SinceLast(); got["member:add"]+got["member:expiry"] != 0 {
			t.Errorf("the refused plans sent member calls: %v", got)
		}
	}
}

// heldUntil is a step check: user of group expires within a minute of want.
func heldUntil(sb *sandboxtest.Sandbox, group int64, user string, want int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, m := range sb.Members(group) {
			if m.Type == "user" && m.ID == user {
				if m.ExpiredAt < want-60 || m.ExpiredAt > want+60 {
					return fmt.Errorf("%s expires at %d, want about %d", user, m.ExpiredAt, want)
				}
				return nil
			}
		}
		return fmt.Errorf("%s is no member of group %d", user, group)
	}
}

// TestAccMemberExpiryCap_planTime: with max_member_expiry, every expiry
// past the cap is refused at plan time, naming it, before any call.
func TestAccMemberExpiryCap_planTime(t *testing.T) {
	acctest.Parallel(t)
	resource.Test(t, acctest.PlanTimeTest(t, "", acctest.MemberExpiryCapCases()))
}

// TestAccGroupMembersExpiryCap: on the capped site, with max_member_expiry
// set, a plan that would give a member an expiry past the cap fails naming
// it, and sends nothing: a date three years out, and a rolling expiry
// (730d, renew_before 7d) whose renewals would set one past it. A rolling
// expiry within it (700d) is created. Without max_member_expiry the site
// refuses at apply, and the error names the setting.
func TestAccGroupMembersExpiryCap(t *testing.T) {
	c := newCappedSite(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: acctest.GroupMembersConfig(c.capped, c.group, map[string]string{"alice": c.threeYears}, nil), PlanOnly: true,
				ExpectError: acctest.PlanErrorPattern("Expiry past the site's cap", `users["alice"] is `+c.threeYears+", later than",
					"Set an earlier time, or \"permanent\".")},
			{Config: acctest.GroupMembersRollingConfig(c.capped, c.group, map[string]string{"alice": "expires_in"}, "730d", "7d"), PlanOnly: true,
				ExpectError: acctest.PlanErrorPattern("Expiry past the site's cap", "so a renewal sets it up to 738d after its apply",
					"Shorten expires_in to at most 722d (or renew_before)")},
			{PreConfig: c.noMemberCalls(t), Config: acctest.GroupMembersRollingConfig(c.capped, c.group, map[string]string{"alice": "expires_in"}, "700d", "7d"),
				Check: heldUntil(c.sb, c.group, "alice", c.start+700*24*3600)},
			{Config: acctest.GroupMembersConfig(c.plain, c.group, map[string]string{"alice": c.threeYears}, nil),
				ExpectError: acctest.PlanErrorPattern("IAM refused the membership's expiry", "set max_member_expiry in the provider configuration")},
		},
	})
}

// TestAccUserGroupsExpiryCap: as TestAccGroupMembersExpiryCap, for bob's
// memberships: a date three years out and an expires_in of 105 weeks are
// refused at plan time, naming the cap, before any call; 100 weeks are
// taken.
func TestAccUserGroupsExpiryCap(t *testing.T) {
	c := newCappedSite(t)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: userGroupsConfig(c.capped, `user = "bob"`, map[int64]string{c.group: c.threeYears}, ""), PlanOnly: true,
				ExpectError: acctest.PlanErrorPattern("Expiry past the site's cap", fmt.Sprintf(`groups["%d"] is %s, later than`, c.group, c.threeYears))},
			{Config: userGroupsConfig(c.capped, `user = "bob"`, map[int64]string{c.group: "expires_in"}, "  expires_in = \"105w\"\n"), PlanOnly: true,
				ExpectError: acctest.PlanErrorPattern("Expiry past the site's cap", "expires_in (735d) sets the expiry that far after the apply",
					"Shorten expires_in to at most 730d")},
			{PreConfig: c.noMemberCalls(t), Config: userGroupsConfig(c.capped, `user = "bob"`, map[int64]string{c.group: "expires_in"}, "  expires_in = \"100w\"\n"),
				Check: heldUntil(c.sb, c.group, "bob", c.start+700*24*3600)},
		},
	})
}
