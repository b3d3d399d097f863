package acctest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// UserCleanupSite is what a bkiam_user_cleanup test's sandbox plays: the bk-iam gateway's
// generation ("" before 2026, "2026"), the gateway resources granted to the app and its entries in
// IAM's admin API allow-list.
type UserCleanupSite struct {
	Gateway       string
	Grants, Admin []string
}

// CleanupGranted is a site whose gateway carries the leaver cleanup and lets the app call it.
var CleanupGranted = UserCleanupSite{Gateway: "2026", Grants: []string{"admin_cleanup_users_permission"}, Admin: []string{"subject_permission_cleanup"}}

// CleanupDelay is the sandbox's delay before it carries a leaver cleanup out, in the tests: long
// enough that the apply ends first, as on a real site, short enough not to slow the tests.
const CleanupDelay = 300 * time.Millisecond

// CleanupChecked is CleanupGranted with what the bkiam_user_access data source reads on a 2026
// gateway granted as well: the admin API's subject groups (the user's own memberships) and the
// backend's users/{id}/groups (the groups of the user's departments). The site where the cleanup's
// end is checked with holds_nothing.
var CleanupChecked = UserCleanupSite{Gateway: "2026",
	Grants: []string{"admin_cleanup_users_permission", "admin_list_subject_groups", "open_user_groups"},
	Admin:  []string{"subject_permission_cleanup", "subject_joined_group_list"}}

// Start starts a sandbox of the default model playing the site, with the cleanup delay CleanupDelay;
// opts come after, so that they may override it.
func (s UserCleanupSite) Start(t *testing.T, opts ...sandbox.Option) *sandboxtest.Sandbox {
	t.Helper()
	m := sandbox.DefaultModel()
	m.Gateway = s.Gateway
	for i := range m.Apps {
		m.Apps[i].GatewayGrants = s.Grants
		m.Apps[i].Admin = s.Admin
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = sandbox.LoadModel(raw); err != nil {
		t.Fatal(err)
	}
	return sandboxtest.Start(t, append([]sandbox.Option{sandbox.WithModel(m), sandbox.WithCleanupDelay(CleanupDelay)}, opts...)...)
}

// UserCleanupHCL is a bkiam_user_cleanup action block named x with the given body.
func UserCleanupHCL(body string) string {
	return fmt.Sprintf("action \"bkiam_user_cleanup\" \"x\" {\n  config {\n%s  }\n}\n", body)
}

// UserCleanupCase is a plan-time case of bkiam_user_cleanup, planned with
// terraform plan -invoke=action.bkiam_user_cleanup.x against a sandbox
// playing Site, through the gateway or (ESB) through ESB.
type UserCleanupCase struct {
	PlanTimeCase
	Site UserCleanupSite
	ESB  bool
}

// UserCleanupCases are the plan-time errors of bkiam_user_cleanup.
func UserCleanupCases() []UserCleanupCase {
	alice := "    users = [\"alice\"]\n"
	refused := func(name string, site UserCleanupSite, why ...string) UserCleanupCase {
		return UserCleanupCase{Site: site, PlanTimeCase: PlanTimeCase{Name: name, Config: UserCleanupHCL(alice),
			Want: append([]string{"IAM's leaver cleanup is not available to this app",
				"bkiam_user_cleanup needs the bk-iam gateway resource admin_cleanup_users_permission granted to the app and the app on IAM's " +
					"admin API allow-list for subject_permission_cleanup. Asked whether it may call the route (a call that cleans nothing), the site answered:"},
				why...)}}
	}
	return []UserCleanupCase{
		refused("user cleanup: a gateway before 2026", UserCleanupSite{Admin: []string{"*"}},
			"this site's API gateway does not carry the bk-iam resource admin_cleanup_users_permission"),
		refused("user cleanup: no gateway grant", UserCleanupSite{Gateway: "2026", Admin: []string{"*"}},
			"the app bkiam-sandbox holds no grant of the bk-iam gateway resource admin_cleanup_users_permission: ask the gateway's managers to grant it"),
		refused("user cleanup: not on the admin allow-list", UserCleanupSite{Gateway: "2026", Grants: []string{"*"}, Admin: []string{"subject_joined_group_list"}},
			"ask IAM's managers to add the app bkiam-sandbox to the admin API allow-list for subject_permission_cleanup"),
		{Site: CleanupGranted, ESB: true, PlanTimeCase: PlanTimeCase{Name: "user cleanup: through ESB", Config: UserCleanupHCL(alice),
			Want: []string{"The admin API needs the API gateway", "bkiam_user_cleanup goes through IAM's admin API, which the API gateway serves and ESB does not. " +
				"The provider is configured with esb_url: set apigw_url (and remove esb_url) in the provider configuration, or use a provider " +
				"alias configured for the gateway for this action."}}},
		{Site: CleanupGranted, PlanTimeCase: PlanTimeCase{Name: "user cleanup: before not a time", Config: UserCleanupHCL(alice + "    before = \"last week\"\n    iam_honours_before = true\n"),
			Want: []string{"Invalid before", `before = "last week" is not an RFC 3339 time: give one such as "2026-03-01T00:00:00+08:00" (memberships and roles given after it are kept).`}}},
		{Site: CleanupGranted, PlanTimeCase: PlanTimeCase{Name: "user cleanup: before 1970", Config: UserCleanupHCL(alice + "    before = \"1969-12-31T00:00:00Z\"\n    iam_honours_before = true\n"),
			Want: []string{"Invalid before", `before = "1969-12-31T00:00:00Z" is not after 1970-01-01T00:00:00Z: IAM takes a positive unix time, and reads 0 as ` +
				`no before at all, a full cleanup. Give a later time, or leave before out.`}}},
		{Site: CleanupGranted, PlanTimeCase: PlanTimeCase{Name: "user cleanup: before without the acknowledgement", Config: UserCleanupHCL(alice + "    before = \"2026-01-01T00:00:00Z\"\n"),
			Want: []string{"before needs IAM 1.10", "IAM honours before from release 1.10 on; an older IAM ignores it and removes every membership and role " +
				"of the users, those given after before too. No API tells IAM's version: set iam_honours_before = true to confirm the site runs " +
				"IAM 1.10 or later, or leave before out for a full cleanup."}}},
	}
}
