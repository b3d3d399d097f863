package access_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestAccUserAccess_planTimeValidation: bkiam_user_access's refusals fail
// the plan, naming the attribute and the fix: an unknown user, an unknown
// action; and on a 2026 gateway granting neither route to a user's
// groups, the gateway resources and the admin allow-list entry to ask for.
func TestAccUserAccess_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	resource.Test(t, acctest.PlanTimeTest(t, acctest.Transports[acctest.GatewayTransport].Block(sb.URL), acctest.UserAccessValidationCases()))
	newer := generationSandbox(t, "2026", nil, nil, nil)
	resource.Test(t, acctest.PlanTimeTest(t, acctest.Transports[acctest.GatewayTransport].Block(newer.URL), acctest.UserAccessGatewayCases()))
}

// generationSandbox starts a sandbox on the gateway generation, its app
// on the admin allow-list for admin and granted the gateway resources
// grants, on the clock now (nil: the time).
func generationSandbox(t *testing.T, gateway string, admin, grants []string, now func() time.Time) *sandboxtest.Sandbox {
	t.Helper()
	m := sandbox.DefaultModel()
	m.Gateway = gateway
	m.Apps[0].Admin, m.Apps[0].GatewayGrants = admin, grants
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = sandbox.LoadModel(raw); err != nil {
		t.Fatal(err)
	}
	opts := []sandbox.Option{sandbox.WithModel(m)}
	if now != nil {
		opts = append(opts, sandbox.WithNow(now))
	}
	return sandboxtest.Start(t, opts...)
}

// accessSite fills a sandbox through IAM's APIs: groups "direct" (alice
// until 10 days on), "forever" (alice permanently) and "department"
// (department 2, alice's and carol's), "gone" (alice for a minute an hour
// ago, while the sandbox's clock was back); alice holds view_host until
// 20 days on and edit_host permanently. bob is in nothing. It returns the
// groups' ids by name and the expiries.
func accessSite(t *testing.T, sb *sandboxtest.Sandbox, setClock func(time.Time)) (ids map[string]int64, days func(int) int64) {
	t.Helper()
	ctx := context.Background()
	c := acctest.OutsideClient(t, sb)
	now := time.Now().UTC().Truncate(time.Second)
	days = func(n int) int64 { return now.Add(time.Duration(n) * 24 * time.Hour).Unix() }
	gm, direct := acctest.OutsideGroup(t, c, "access-managers", "direct")
	made, err := c.CreateGroups(ctx, "bk_cmdb", strconv.FormatInt(gm, 10), []bkiam.GroupSpec{{Name: "forever"}, {Name: "department"}, {Name: "gone"}})
	if err != nil {
		t.Fatal(err)
	}
	ids = map[string]int64{"direct": direct, "forever": made[0], "department": made[1], "gone": made[2]}
	alice := []bkiam.MemberRef{{Type: "user", ID: "alice"}}
	for _, add := range []struct {
		group   string
		members []bkiam.MemberRef
		at      int64
	}{
		{"direct", alice, days(10)},
		{"forever", alice, bkiam.PermanentExpiry},
		{"department", []bkiam.MemberRef{{Type: "department", ID: "2"}}, bkiam.PermanentExpiry},
	} {
		if err := c.AddMembers(ctx, "bk_cmdb", ids[add.group], add.members, add.at); err != nil {
			t.Fatal(err)
		}
	}
	if setClock != nil {
		setClock(now.Add(-time.Hour))
		if err := c.AddMembers(ctx, "bk_cmdb", ids["gone"], alice, now.Add(-30*time.Minute).Unix()); err != nil {
			t.Fatal(err)
		}
		setClock(time.Time{})
	}
	acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "alice", []string{"view_host"}, []string{"1"}, days(20))
	acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "alice", []string{"edit_host"}, []string{"1"}, bkiam.PermanentExpiry)
	return ids, days
}

const userAccessConfig = `
data "bkiam_user_access" "alice" {
  system  = "bk_cmdb"
  user    = "alice"
  actions = ["view_host", "edit_host", "delete_host"]
}

data "bkiam_user_access" "carol" {
  system  = "bk_cmdb"
  user    = "carol"
  actions = ["view_host"]
}

check "carol_left" {
  assert {
    condition     = data.bkiam_user_access.carol.holds_nothing
    error_message = "carol still holds something"
  }
}
`

// TestAccUserAccessOlderGateway: on the gateway before 2026 (the real
// IAM's here), alice's direct groups carry the expiry the app's groups'
// details tell, the department's group is reported apart
// (through_department, department_only_groups), her own policies carry
// their expiry and backend id, and holds_nothing is false for her and
// true for carol, who reaches a group only through her department.
func TestAccUserAccessOlderGateway(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	ids, days := accessSite(t, sb, nil)
	rfc := func(at int64) string { return time.Unix(at, 0).UTC().Format(time.RFC3339) }
	const a, c = "data.bkiam_user_access.alice", "data.bkiam_user_access.carol"
	g := func(name, attr string) string { return fmt.Sprintf("groups.%d.%s", ids[name], attr) }
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories, Steps: []resource.TestStep{{
		Config: acctest.Transports[acctest.GatewayTransport].Block(sb.URL) + userAccessConfig,
		Check: resource.ComposeAggregateTestCheckFunc(
			resource.TestCheckResourceAttr(a, "groups.%", "3"),
			resource.TestCheckResourceAttr(a, g("direct", "name"), "direct"),
			resource.TestCheckResourceAttr(a, g("direct", "expires_at"), rfc(days(10))),
			resource.TestCheckResourceAttr(a, g("direct", "direct"), "true"),
			resource.TestCheckNoResourceAttr(a, g("direct", "through_department")),
			resource.TestCheckResourceAttr(a, g("forever", "expires_at"), "permanent"),
			resource.TestCheckResourceAttr(a, g("department", "direct"), "false"),
			resource.TestCheckResourceAttr(a, g("department", "through_department"), "true"),
			resource.TestCheckNoResourceAttr(a, g("department", "expires_at")),
			resource.TestCheckResourceAttr(a, "department_only_groups", "1"),
			resource.TestCheckResourceAttr(a, "policies.%", "2"),
			resource.TestCheckResourceAttr(a, "policies.view_host.expires_at", rfc(days(20))),
			resource.TestCheckResourceAttrSet(a, "policies.view_host.policy_id"),
			resource.TestCheckResourceAttr(a, "policies.edit_host.expires_at", "permanent"),
			resource.TestCheckResourceAttr(a, "holds_nothing", "false"),
			resource.TestCheckResourceAttr(a, "read_through.#", "3"),
			resource.TestCheckResourceAttr(a, "read_through.0", "user_groups"),
			resource.TestCheckResourceAttr(a, "read_through.1", "member_group_details"),
			resource.TestCheckResourceAttr(c, "groups.%", "1"),
			resource.TestCheckResourceAttr(c, "department_only_groups", "1"),
			resource.TestCheckResourceAttr(c, "policies.%", "0"),
			resource.TestCheckResourceAttr(c, "holds_nothing", "true"),
		),
	}}})
}

// TestAccUserAccessNewerGateway: on the 2026 gateway with both routes
// granted, alice's memberships come from the admin API, the expired one
// too (expired, not direct); with the admin API alone, groups reached
// only through a department are not listed and through_department is
// null, with a warning; with users/{id}/groups alone, the older path.
func TestAccUserAccessNewerGateway(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	rfc := func(at int64) string { return time.Unix(at, 0).UTC().Format(time.RFC3339) }
	const a, c = "data.bkiam_user_access.alice", "data.bkiam_user_access.carol"
	for _, tc := range []struct {
		name          string
		admin, grants []string
		checks        func(ids map[string]int64, days func(int) int64) []resource.TestCheckFunc
	}{
		{"both routes", []string{"subject_joined_group_list"}, []string{"admin_list_subject_groups", "open_user_groups"},
			func(ids map[string]int64, days func(int) int64) []resource.TestCheckFunc {
				g := func(name, attr string) string { return fmt.Sprintf("groups.%d.%s", ids[name], attr) }
				return []resource.TestCheckFunc{
					resource.TestCheckResourceAttr(a, "groups.%", "4"),
					resource.TestCheckResourceAttr(a, g("direct", "expires_at"), rfc(days(10))),
					resource.TestCheckResourceAttr(a, g("gone", "direct"), "false"),
					resource.TestCheckResourceAttr(a, g("gone", "expired"), "true"),
					resource.TestCheckResourceAttrSet(a, g("gone", "expires_at")),
					resource.TestCheckResourceAttr(a, g("department", "through_department"), "true"),
					resource.TestCheckResourceAttr(a, "holds_nothing", "false"),
					resource.TestCheckResourceAttr(a, "read_through.0", "admin_subject_groups"),
					resource.TestCheckResourceAttr(a, "read_through.1", "user_groups"),
					resource.TestCheckResourceAttr(c, "holds_nothing", "true"),
					resource.TestCheckResourceAttr(c, "department_only_groups", "1"),
				}
			}},
		{"the admin API alone", []string{"*"}, []string{"admin_list_subject_groups"},
			func(ids map[string]int64, _ func(int) int64) []resource.TestCheckFunc {
				return []resource.TestCheckFunc{
					resource.TestCheckResourceAttr(a, "groups.%", "3"),
					resource.TestCheckNoResourceAttr(a, fmt.Sprintf("groups.%d.name", ids["department"])),
					resource.TestCheckNoResourceAttr(a, fmt.Sprintf("groups.%d.through_department", ids["direct"])),
					resource.TestCheckResourceAttr(a, "read_through.#", "2"),
					resource.TestCheckResourceAttr(c, "groups.%", "0"),
					resource.TestCheckResourceAttr(c, "holds_nothing", "true"),
				}
			}},
		{"users/{id}/groups alone", nil, []string{"open_user_groups"},
			func(ids map[string]int64, days func(int) int64) []resource.TestCheckFunc {
				return []resource.TestCheckFunc{
					resource.TestCheckResourceAttr(a, "groups.%", "3"),
					resource.TestCheckResourceAttr(a, fmt.Sprintf("groups.%d.expires_at", ids["direct"]), rfc(days(10))),
					resource.TestCheckResourceAttr(a, "read_through.0", "user_groups"),
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var back time.Time
			clock := func() time.Time {
				if !back.IsZero() {
					return back
				}
				return time.Now()
			}
			sb := generationSandbox(t, "2026", tc.admin, tc.grants, clock)
			ids, days := accessSite(t, sb, func(at time.Time) { back = at })
			resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories, Steps: []resource.TestStep{{
				Config: acctest.Transports[acctest.GatewayTransport].Block(sb.URL) + userAccessConfig,
				Check:  resource.ComposeAggregateTestCheckFunc(tc.checks(ids, days)...),
			}}})
		})
	}
}
