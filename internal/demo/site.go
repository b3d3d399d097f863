package demo

import (
	"context"
	"fmt"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// ExampleSite is what FillExampleSite made: the ids IAM gave.
type ExampleSite struct {
	GradeManager, Dev, Ops int64
}

// FillExampleSite makes, through IAM's APIs as the IAM web UI and scripts
// would (not through Terraform), what a team's site holds before it picks
// up the provider: a grade manager "platform" of bk_cmdb with the groups
// "dev" and "ops"; dev's members (alice for good, bob until 2031-06-30,
// department 2) and its permission edit_host on host 7 and on every host
// of business 2; ops's member carol; and custom grants of view_host on
// hosts to alice (1, 2), to dave (3, until 2031-06-30) and to the group
// ops (4, 5). It needs the sandbox's model (the systems, users and
// departments of make sandbox). The adoption guide
// (docs/guides/adopt-a-site.md) starts from it (bkiam-sandbox
// -example-site), and TestAccQuery imports it.
func FillExampleSite(ctx context.Context, c *bkiam.Client) (ExampleSite, error) {
	var site ExampleSite
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", bkiam.GradeManagerSpec{Name: "platform", Description: "the platform team",
		Members: []string{"alice"},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "view_host"}, {ID: "edit_host"}},
			Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{
				{{System: "bk_cmdb", Type: "biz", ID: "2"}, {System: "bk_cmdb", Type: "host", ID: "*"}},
				{{System: "bk_cmdb", Type: "host", ID: "*"}}}}}}},
		SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		return site, fmt.Errorf("creating the grade manager: %w", err)
	}
	groups, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "dev", Description: "developers"}, {Name: "ops"}})
	if err != nil {
		return site, fmt.Errorf("creating the groups: %w", err)
	}
	site = ExampleSite{GradeManager: gm, Dev: groups[0], Ops: groups[1]}
	until := time.Date(2031, 6, 30, 0, 0, 0, 0, time.UTC).Unix()
	for _, add := range []struct {
		group   int64
		members []bkiam.MemberRef
		expiry  int64
	}{
		{site.Dev, []bkiam.MemberRef{{Type: "user", ID: "alice"}, {Type: "department", ID: "2"}}, bkiam.PermanentExpiry},
		{site.Dev, []bkiam.MemberRef{{Type: "user", ID: "bob"}}, until},
		{site.Ops, []bkiam.MemberRef{{Type: "user", ID: "carol"}}, bkiam.PermanentExpiry},
	} {
		if err := c.AddMembers(ctx, "bk_cmdb", add.group, add.members, add.expiry); err != nil {
			return site, fmt.Errorf("adding members to group %d: %w", add.group, err)
		}
	}
	if err := c.GrantGroupPolicies(ctx, "bk_cmdb", site.Dev, bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: "edit_host"}},
		Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{
			{{System: "bk_cmdb", Type: "host", ID: "7", Name: "host7"}},
			{{System: "bk_cmdb", Type: "biz", ID: "2", Name: "biz2"}, {System: "bk_cmdb", Type: "host", ID: "*"}}}}}}); err != nil {
		return site, fmt.Errorf("granting the dev group's permission: %w", err)
	}
	for _, g := range []struct {
		subject bkiam.Subject
		ids     []string
		expiry  int64
	}{
		{bkiam.Subject{Type: "user", ID: "alice"}, []string{"1", "2"}, bkiam.PermanentExpiry},
		{bkiam.Subject{Type: "user", ID: "dave"}, []string{"3"}, until},
		{bkiam.Subject{Type: "group", ID: fmt.Sprint(site.Ops)}, []string{"4", "5"}, bkiam.PermanentExpiry},
	} {
		var instances []bkiam.Instance
		for _, id := range g.ids {
			instances = append(instances, bkiam.Instance{ID: id, Name: "host " + id})
		}
		if _, err := c.BatchInstance(ctx, bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant, Subject: g.subject,
			Actions: []bkiam.Action{{ID: "view_host"}}, Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: instances}},
			ExpiredAt: g.expiry}); err != nil {
			return site, fmt.Errorf("granting view_host to %s %s: %w", g.subject.Type, g.subject.ID, err)
		}
	}
	return site, nil
}
