package provider_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// TestAccSite_UserAccess: bkiam_user_access on whatever IAM the tests
// point at (the real one with make testacc-site, whose gateway is of the
// generation before 2026). Through IAM's APIs, not the provider: a grade
// manager with two groups, the second user a member of the first until
// ten days on, the profile's department (when it names one) a member of
// the second; the second user granted the first action on the first
// instance. The data source then lists the first group as the second
// user's, direct, with that expiry; the own policy with its id; and, for
// the department's user, the second group as reached through a
// department. Everything made is removed at the end.
func TestAccSite_UserAccess(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	ctx := context.Background()
	user, action := p.Users[1], p.Actions[0]
	hosts := []bkiam.PathResource{{System: p.System, Type: p.Type, Paths: [][]bkiam.PathNode{{{System: p.System, Type: p.Type, ID: "*"}}}}}
	gm, err := e.Client.CreateGradeManager(ctx, p.System, bkiam.GradeManagerSpec{Name: "tfacc-access-" + e.Suffix, Members: []string{p.Users[0]},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: p.System, Actions: []bkiam.Action{{ID: action}}, Resources: hosts}},
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
		{Name: "tfacc-direct-" + e.Suffix}, {Name: "tfacc-department-" + e.Suffix}})
	if err != nil {
		t.Fatal(err)
	}
	expiry := time.Now().UTC().Truncate(time.Second).Add(10 * 24 * time.Hour)
	if err := e.Client.AddMembers(ctx, p.System, ids[0], []bkiam.MemberRef{{Type: "user", ID: user}}, expiry.Unix()); err != nil {
		t.Fatal(err)
	}
	if d := p.Department; d != nil {
		if err := e.Client.AddMembers(ctx, p.System, ids[1], []bkiam.MemberRef{{Type: "department", ID: d.ID}}, bkiam.PermanentExpiry); err != nil {
			t.Fatal(err)
		}
	}
	e.InstanceCall(bkiam.OperationGrant, user, action, p.Instances[0])
	t.Cleanup(func() { e.InstanceCall(bkiam.OperationRevoke, user, action, p.Instances[0]) })

	const u = "data.bkiam_user_access.member"
	config := fmt.Sprintf(`
data "bkiam_user_access" "member" {
  system  = %q
  user    = %q
  actions = [%q]
}
`, p.System, user, action)
	checks := []resource.TestCheckFunc{
		resource.TestCheckResourceAttr(u, fmt.Sprintf("groups.%d.name", ids[0]), "tfacc-direct-"+e.Suffix),
		resource.TestCheckResourceAttr(u, fmt.Sprintf("groups.%d.direct", ids[0]), "true"),
		resource.TestCheckResourceAttr(u, fmt.Sprintf("groups.%d.expires_at", ids[0]), expiry.Format(time.RFC3339)),
		resource.TestCheckResourceAttrSet(u, "policies."+action+".policy_id"),
		resource.TestCheckResourceAttrSet(u, "policies."+action+".expires_at"),
		resource.TestCheckResourceAttr(u, "holds_nothing", "false"),
	}
	if d := p.Department; d != nil {
		const dep = "data.bkiam_user_access.department"
		config += fmt.Sprintf(`
data "bkiam_user_access" "department" {
  system = %q
  user   = %q
}
`, p.System, d.User)
		checks = append(checks,
			resource.TestCheckResourceAttr(dep, fmt.Sprintf("groups.%d.through_department", ids[1]), "true"),
			resource.TestCheckResourceAttr(dep, fmt.Sprintf("groups.%d.direct", ids[1]), "false"),
			resource.TestCheckNoResourceAttr(dep, fmt.Sprintf("groups.%d.expires_at", ids[1])),
		)
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories, Steps: []resource.TestStep{{
		Config: e.Provider + config,
		Check:  resource.ComposeAggregateTestCheckFunc(checks...),
	}}})
}
