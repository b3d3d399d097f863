package acctest

// MemberExpiryCapProvider is a gateway provider block for a site that caps
// membership expiries at two years (max_member_expiry), as IAM's SaaS from
// its July 2026 release does. The plans refused by the cap make no call,
// so the URL need not answer.
const MemberExpiryCapProvider = `
provider "bkiam" {
  apigw_url         = "https://gw.example.com/prod"
  app_code          = "a"
  app_secret        = "b"
  max_member_expiry = "730d"
}
`

// capWhy is what every refusal of the cap says it is.
const capWhy = `max_member_expiry (730d) in the provider configuration says this IAM refuses a membership expiry more than 730d after ` +
	`the call that sets it (IAM's SaaS from its July 2026 release caps member adds and renewals at two years; "permanent" is not capped)`

// MemberExpiryCapCases are the plan-time refusals of max_member_expiry, by
// bkiam_group_members and bkiam_user_groups: a fixed expiry past it, and a
// rolling expiry whose renewals would set one past it. Each Config holds
// its provider block (MemberExpiryCapProvider).
func MemberExpiryCapCases() []PlanTimeCase {
	members := func(users, extra string) string {
		return MemberExpiryCapProvider + "resource \"bkiam_group_members\" \"test\" {\n  system   = \"bk_cmdb\"\n  group_id = \"42\"\n" +
			"  users    = " + users + "\n" + extra + "}\n"
	}
	groups := func(groups, extra string) string {
		return MemberExpiryCapProvider + "resource \"bkiam_user_groups\" \"test\" {\n  system = \"bk_cmdb\"\n  user   = \"alice\"\n" +
			"  groups = " + groups + "\n" + extra + "}\n"
	}
	return []PlanTimeCase{
		{Name: "a member's fixed expiry past the cap", Config: members(`{ alice = "2099-01-01T00:00:00Z", bob = "permanent" }`, ""),
			Want: []string{"Expiry past the site's cap", `users["alice"] is 2099-01-01T00:00:00Z, later than`,
				"the latest expiry the site takes from now: " + capWhy + `. Set an earlier time, or "permanent".`}},
		{Name: "a rolling expiry whose renewals pass the cap", Config: members(`{ alice = "expires_in" }`,
			"  expires_in   = \"730d\"\n  renew_before = \"7d\"\n"),
			Want: []string{"Expiry past the site's cap", capWhy + ": expires_in (730d) moves the expiry on by that much once less than " +
				"renew_before (7d) and the margin (1d) is left, so a renewal sets it up to 738d after its apply. Shorten expires_in to at " +
				`most 722d (or renew_before), or make the memberships that need longer "permanent".`}},
		{Name: "a rolling expiry spread past the cap", Config: members(`{ alice = "expires_in" }`,
			"  expires_in   = \"729d\"\n  renew_jitter = \"3d\"\n"),
			Want: []string{"Expiry past the site's cap", capWhy + ": expires_in (729d) sets the expiry that far after the apply that " +
				"starts a period, and renew_jitter spreads members up to 3d later. Shorten expires_in to at most 727d, or make the " +
				`memberships that need longer "permanent".`}},
		{Name: "a membership's fixed expiry past the cap", Config: groups(`{ "42" = "2099-01-01T00:00:00Z" }`, ""),
			Want: []string{"Expiry past the site's cap", `groups["42"] is 2099-01-01T00:00:00Z, later than`, capWhy}},
		{Name: "memberships following a rolling expiry past the cap", Config: groups(`{ "42" = "expires_in" }`, "  expires_in = \"105w\"\n"),
			Want: []string{"Expiry past the site's cap", capWhy + ": expires_in (735d) sets the expiry that far after the apply that " +
				`starts a period. Shorten expires_in to at most 730d, or make the memberships that need longer "permanent".`}},
	}
}
