package acctest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

const MembersAddr = "bkiam_group_members.test"

// MembersHCL renders a users or departments map: id → expiry ("" for
// permanent).
func MembersHCL(m map[string]string) string {
	var b strings.Builder
	b.WriteString("{\n")
	for _, id := range slices.Sorted(maps.Keys(m)) {
		exp := m[id]
		if exp == "" {
			exp = "permanent"
		}
		fmt.Fprintf(&b, "    %q = %q\n", id, exp)
	}
	b.WriteString("  }")
	return b.String()
}

// GroupMembersConfig renders a bkiam_group_members of group in bk_cmdb.
func GroupMembersConfig(provider string, group int64, users, departments map[string]string) string {
	var b strings.Builder
	b.WriteString(provider)
	fmt.Fprintf(&b, "resource \"bkiam_group_members\" \"test\" {\n  system   = \"bk_cmdb\"\n  group_id = \"%d\"\n", group)
	if users != nil {
		fmt.Fprintf(&b, "  users = %s\n", MembersHCL(users))
	}
	if departments != nil {
		fmt.Fprintf(&b, "  departments = %s\n", MembersHCL(departments))
	}
	b.WriteString("}\n")
	return b.String()
}

// GroupMembersRollingConfig renders a bkiam_group_members of group in
// bk_cmdb with a rolling expiry: users valued "expires_in" follow it;
// renewBefore "" leaves renew_before out.
func GroupMembersRollingConfig(provider string, group int64, users map[string]string, expiresIn, renewBefore string) string {
	config := strings.TrimSuffix(GroupMembersConfig(provider, group, users, nil), "}\n")
	config += fmt.Sprintf("  expires_in = %q\n", expiresIn)
	if renewBefore != "" {
		config += fmt.Sprintf("  renew_before = %q\n", renewBefore)
	}
	return config + "}\n"
}

// ModelWithUsers is the default model with users u00000… added and the
// group member limit set.
func ModelWithUsers(t testing.TB, users, memberLimit int) *sandbox.Model {
	t.Helper()
	return EditedModel(t, func(m *sandbox.Model) {
		for i := range users {
			m.Users = append(m.Users, fmt.Sprintf("u%05d", i))
		}
		m.Limits.GroupMemberLimit = memberLimit
	})
}

// EditedModel is the default model changed by edit, then loaded as the
// sandbox loads a model file (which derives what the model implies).
func EditedModel(t testing.TB, edit func(m *sandbox.Model)) *sandbox.Model {
	t.Helper()
	m := sandbox.DefaultModel()
	edit(m)
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sandbox.LoadModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// GroupMembersValidationCases are the configuration mistakes of a
// bkiam_group_members, each refused at plan time with the attribute and
// the fix.
func GroupMembersValidationCases() []PlanTimeCase {
	config := func(group, users, departments, extra, importID string) string {
		imp := ""
		if importID != "" {
			imp = fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n", MembersAddr, importID)
		}
		return imp + fmt.Sprintf("resource \"bkiam_group_members\" \"test\" {\n  system   = \"bk_cmdb\"\n  group_id = %q\n  users = %s\n  departments = %s\n%s}\n",
			group, users, departments, extra)
	}
	alice := `{ alice = "permanent" }`
	rolling := `{ alice = "expires_in" }`
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	return []PlanTimeCase{
		{Name: "two resources own one group's members", Config: config("42", alice, "{}", "", "") +
			strings.Replace(config("42", `{ bob = "permanent" }`, "{}", "", ""), `"test"`, `"again"`, 1),
			Want: []string{"Owned by another resource", `This resource owns the members of group 42 whole, and so does bkiam_group_members "bk_cmdb/42" ` +
				"of this configuration: each would undo what only the other declares on every apply. Keep one resource per object. To let one go " +
				"without changing IAM, replace its block with a removed block (lifecycle { destroy = false }); terraform query, given the " +
				"identities in state (managed), generates nothing already managed."}},
		{Name: "group id not a number", Config: config("dev", alice, "{}", "", ""),
			Want: []string{"Invalid group id", `group_id must be a user group's numeric id, such as bkiam_group.dev.id or "42"; got "dev".`}},
		{Name: "username with white space", Config: config("42", `{ " alice" = "permanent" }`, "{}", "", ""),
			Want: []string{"Invalid username", `users[" alice"]: " alice" is not a username IAM knows: it is blank, or has white space around it or control characters.`}},
		{Name: "username with a comma", Config: config("42", `{ "alice,bob" = "permanent" }`, "{}", "", ""),
			Want: []string{"Invalid username", `users["alice,bob"]: "alice,bob" holds a comma, which IAM's member delete uses to separate ids, so the member could never be removed.`}},
		{Name: "admin", Config: config("42", `{ admin = "permanent" }`, "{}", "", ""),
			Want: []string{"IAM does not add admin to groups", "admin is IAM's super user: IAM drops it from a member add without an error, so it would never be a member. Remove it."}},
		{Name: "department id not a number", Config: config("42", alice, `{ "ops" = "permanent" }`, "", ""),
			Want: []string{"Invalid department id", `departments["ops"]: department ids are the numeric ids of IAM's organisation, such as "12"; got "ops".`}},
		{Name: "expiry neither permanent nor RFC 3339", Config: config("42", `{ alice = "tomorrow" }`, "{}", "", ""),
			Want: []string{"Invalid member expiry", `users["alice"] must be "permanent", "expires_in" or an RFC 3339 time such as "2027-06-30T00:00:00Z", got "tomorrow".`}},
		{Name: "expiry after 2100", Config: config("42", alice, `{ "1" = "2101-01-01T00:00:00Z" }`, "", ""),
			Want: []string{"Expiry too late", `departments["1"] must be no later than 2100-01-01T00:00:00Z, IAM's permanent, got 2101-01-01T00:00:00Z. Write "permanent" for a permanent membership.`}},
		{Name: "expiry in the past", Config: config("42", fmt.Sprintf(`{ alice = %q }`, past), "{}", "", ""),
			Want: []string{"Expiry in the past", fmt.Sprintf(`users["alice"] is %s, which has passed; IAM adds members only with an expiry in the future. Set a later time, or "permanent".`, past)}},
		{Name: "expires_in not a duration", Config: config("42", rolling, "{}", "  expires_in = \"3 months\"\n", ""),
			Want: []string{"Invalid duration", `expires_in: "3 months" is not a duration such as "90d", "12h", "1w" or "1d12h". Write a number and a unit, ` +
				`s, m, h, d (24 hours) or w (7 days), or several, such as "90d", "1w" or "1d12h".`}},
		{Name: "renew_before not a whole number of seconds", Config: config("42", rolling, "{}", "  expires_in   = \"1h\"\n  renew_before = \"1.5s\"\n", ""),
			Want: []string{"Invalid duration", `renew_before: "1.5s" is not a whole number of seconds: IAM keeps expiries in seconds. Write a number and a unit`}},
		{Name: "renew_before without expires_in", Config: config("42", alice, "{}", "  renew_before = \"7d\"\n", ""),
			Want: []string{"renew_before without expires_in", `renew_before says when to renew the rolling expiry that expires_in sets, and expires_in is not set. ` +
				`Set expires_in as well (for example expires_in = "90d" with renew_before = "7d"), or remove renew_before.`}},
		{Name: "renew_before not shorter than expires_in", Config: config("42", rolling, "{}", "  expires_in   = \"1w\"\n  renew_before = \"7d\"\n", ""),
			Want: []string{"renew_before not shorter than expires_in", `renew_before (7d) must be shorter than expires_in (1w): a renewal adds expires_in to ` +
				`the expiry, which must take it out of the renewal window. Shorten renew_before (a week of 90 days, for example) or lengthen expires_in.`}},
		{Name: "renew_jitter without expires_in", Config: config("42", alice, "{}", "  renew_jitter = \"3d\"\n", ""),
			Want: []string{"renew_jitter without expires_in", `renew_jitter spreads the expiries of the members that follow expires_in, and ` +
				`expires_in is not set. Set expires_in (for example expires_in = "90d" with renew_jitter = "3d"), or remove renew_jitter.`}},
		{Name: "renew_jitter not a duration", Config: config("42", rolling, "{}", "  expires_in   = \"30d\"\n  renew_jitter = \"a few days\"\n", ""),
			Want: []string{"Invalid duration", `renew_jitter: "a few days" is not a duration such as "90d", "12h", "1w" or "1d12h". ` +
				`Write a whole number of days, such as "3d" or "1w".`}},
		{Name: "renew_jitter not in whole days", Config: config("42", rolling, "{}", "  expires_in   = \"30d\"\n  renew_jitter = \"36h\"\n", ""),
			Want: []string{"renew_jitter not in whole days", `renew_jitter (36h) must be a whole number of days, such as "3d": members are ` +
				`spread over days, and added and renewed in one call per day.`}},
		{Name: "renew_jitter not shorter than expires_in", Config: config("42", rolling, "{}", "  expires_in   = \"3d\"\n  renew_jitter = \"3d\"\n", ""),
			Want: []string{"renew_jitter not shorter than expires_in", `renew_jitter (3d) must be shorter than expires_in (3d): a member would ` +
				`expire after the next renewal's date.`}},
		{Name: "member follows an unset expires_in", Config: config("42", `{ alice = "permanent", bob = "expires_in", carol = "expires_in" }`, "{}", "", ""),
			Want: []string{"Member follows an unset expires_in", `users["bob"] (and 1 other members) is "expires_in", which follows the resource's rolling ` +
				`expiry, but expires_in is not set. Set expires_in (for example "90d"), or give the member "permanent" or an RFC 3339 time.`}},
		{Name: "members timeout not a duration", Config: config("42", alice, "{}", "  timeouts = { create = \"soon\" }\n", ""),
			Want: []string{"Invalid duration", `timeouts.create must be a positive duration such as "30m" or "1h", got "soon".`}},
		{Name: "members import ID of the wrong shape", Config: config("42", alice, "{}", "", "bk_cmdb/dev"),
			Want: []string{"Invalid import ID", `Expected SYSTEM/GROUP_ID, e.g. bk_cmdb/42; got "bk_cmdb/dev".`}},
	}
}

// ManagementCases are the messages the management resources share
// (management.go), as the acceptance tests provoke them.
func ManagementCases() []PlanTimeCase {
	return []PlanTimeCase{
		{Name: "management through ESB", Want: []string{"The management API needs the API gateway",
			"is managed through IAM's management API v2, which the API gateway serves and ESB does not. The provider is configured with esb_url: " +
				"set apigw_url (and remove esb_url) in the provider configuration, or use a provider alias configured for the gateway for this resource."}},
	}
}
