package provider_test

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// TestAccSite_UserGroups: bkiam_user_groups on whatever IAM the tests
// point at. Through IAM's APIs, not the provider: a grade manager with
// three groups; the second user a member of the first until ten days on
// and of the third (which the resource never lists) for good; the first
// user a member of the first for good. The resource then holds the
// second user in the first two groups: the first's expiry raised in
// place (its membership's created_at unchanged), the second added; then
// the first's expiry lowered (IAM lowers only by removing and adding
// again); an import by SYSTEM/user/USER/G1,G2 reads both back; the second
// group leaves the map; the destroy removes the user from exactly the
// first group. The third group's membership and the first user's are
// never touched. IAM is read through the group's member list (not the
// member's-groups route the provider reads), and the sandbox's Go API
// not at all.
//
// The real IAM run here (bk-iam-saas 1605dc3c, bk-iam 8b09c983) needs no
// more than its seeded allow-list ("*" for bk_tfdemo covers
// v2_member_groups_detail_list). Its member's-groups details route
// answers an expired membership with its past expiry; a known user in
// none of the listed groups with []; a user or department it does not
// know with 1902000 quoting the backend's GetLocalSubjectPK failure (the
// sandbox answers the same: internal/sandbox/mgmt_member_groups.go).
func TestAccSite_UserGroups(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	ctx := context.Background()
	other, user := p.Users[0], p.Users[1]
	hosts := []bkiam.PathResource{{System: p.System, Type: p.Type, Paths: [][]bkiam.PathNode{{{System: p.System, Type: p.Type, ID: "*"}}}}}
	gm, err := e.Client.CreateGradeManager(ctx, p.System, bkiam.GradeManagerSpec{Name: "tfacc-usergroups-" + e.Suffix, Members: []string{other},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: p.System, Actions: []bkiam.Action{{ID: p.Actions[0]}}, Resources: hosts}},
		SubjectScopes:       []bkiam.SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Client.DeleteGradeManager(context.Background(), p.System, gm); err != nil {
			t.Errorf("removing grade manager %d: %v", gm, err)
		}
	})
	ids, err := e.Client.CreateGroups(ctx, p.System, strconv.FormatInt(gm, 10), []bkiam.GroupSpec{
		{Name: "tfacc-ug-held-" + e.Suffix}, {Name: "tfacc-ug-new-" + e.Suffix}, {Name: "tfacc-ug-outside-" + e.Suffix}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, g := range ids {
			if err := e.Client.DeleteGroup(context.Background(), p.System, g); err != nil {
				t.Errorf("removing group %d: %v", g, err)
			}
		}
	})
	held, added, outside := ids[0], ids[1], ids[2]
	day := func(n int) int64 {
		return time.Now().UTC().Truncate(24 * time.Hour).Add(time.Duration(n) * 24 * time.Hour).Unix()
	}
	soon, later, lowered := day(10), day(20), day(5)
	rfc := func(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }
	for _, m := range []struct {
		group, exp int64
		who        string
	}{{held, soon, user}, {outside, bkiam.PermanentExpiry, user}, {held, bkiam.PermanentExpiry, other}} {
		if err := e.Client.AddMembers(ctx, p.System, m.group, []bkiam.MemberRef{{Type: "user", ID: m.who}}, m.exp); err != nil {
			t.Fatal(err)
		}
	}
	createdAt := func() int64 {
		rows, err := e.Client.MemberGroupDetails(ctx, p.System, "user", user, []int64{held})
		if err != nil || len(rows) != 1 {
			t.Fatalf("reading %s's membership in group %d: %v %v", user, held, rows, err)
		}
		return rows[0].CreatedAt
	}
	joined := createdAt()
	// created_at is in seconds: a membership made again in the same
	// second as the first would look the same.
	time.Sleep(time.Until(time.Unix(time.Now().Unix()+1, 0)))

	// expect checks, through the groups' member lists, that the user is
	// in exactly the groups of want, until those expiries, and that the
	// first user is still in the first group for good.
	expect := func(want map[int64]int64) resource.TestCheckFunc {
		return func(*terraform.State) error {
			got := map[int64]int64{}
			for _, g := range ids {
				members, err := e.Client.GroupMembers(ctx, p.System, g)
				if err != nil {
					return fmt.Errorf("listing the members of group %d: %w", g, err)
				}
				for _, m := range members {
					switch {
					case m.Type == "user" && m.ID == user:
						got[g] = m.ExpiredAt
					case g == held && m.Type == "user" && m.ID == other && m.ExpiredAt != bkiam.PermanentExpiry:
						return fmt.Errorf("%s's membership in group %d, outside the resource, now expires at %s", other, g, rfc(m.ExpiredAt))
					}
				}
			}
			if !maps.Equal(got, want) {
				return fmt.Errorf("IAM says %s is in %v, want %v", user, got, want)
			}
			return nil
		}
	}
	config := func(groups map[int64]int64) string {
		s := fmt.Sprintf("resource \"bkiam_user_groups\" \"test\" {\n  system = %q\n  user   = %q\n  groups = {\n", p.System, user)
		for g, exp := range groups {
			v := "permanent"
			if exp != bkiam.PermanentExpiry {
				v = rfc(exp)
			}
			s += fmt.Sprintf("    %q = %q\n", strconv.FormatInt(g, 10), v)
		}
		return e.Provider + s + "  }\n}\n"
	}
	perm := bkiam.PermanentExpiry
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(map[int64]int64{held: later, added: perm}),
				Check: resource.ComposeAggregateTestCheckFunc(
					expect(map[int64]int64{held: later, added: perm, outside: perm}),
					resource.TestCheckResourceAttr(acctest.UserGroupsAddr, "id", p.System+"/user/"+user),
					func(*terraform.State) error {
						if got := createdAt(); got != joined {
							return fmt.Errorf("%s's membership in group %d was made again (created_at %d, was %d): its expiry was not raised in place", user, held, got, joined)
						}
						return nil
					},
				),
			},
			{
				Config: config(map[int64]int64{held: lowered, added: perm}),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(acctest.UserGroupsAddr, plancheck.ResourceActionUpdate),
				}},
				Check: expect(map[int64]int64{held: lowered, added: perm, outside: perm}),
			},
			{
				ResourceName:            acctest.UserGroupsAddr,
				ImportState:             true,
				ImportStateId:           fmt.Sprintf("%s/user/%s/%d,%d", p.System, user, held, added),
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				Config: config(map[int64]int64{held: lowered}),
				Check:  expect(map[int64]int64{held: lowered, outside: perm}),
			},
		},
		CheckDestroy: expect(map[int64]int64{outside: perm}),
	})
}
