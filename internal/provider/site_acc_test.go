package provider_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/policyexpr"
)

// The site lifecycle tests (TestAccSite_*) take every resource and data
// source through its life on whatever IAM the acceptance tests point at:
// the sandbox by default, or a real site (BKIAM_ACC_APIGW_URL …, with the
// names to use in the JSON file BKIAM_ACC_SITE; make testacc-site, and
// docs/development.md). They name nothing of the sandbox's model but what
// the profile says, and they check what IAM holds through IAM's own read
// APIs (the policy list, the model, the management API's reads), never
// through the sandbox's inspection routes, so that they mean the same on
// both. Each leaves IAM as it found it.

// hclMap renders ids as an HCL map of id = id (names equal to ids, so that
// an import, which names instances by id, reads back the configuration).
func hclMap(ids ...string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%q = %q", id, id)
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// TestAccSite_InstanceGrant: a user's grant created, changed, drifted
// (revoked outside, refreshed with detect_drift, granted again), imported
// and destroyed; IAM read through its policy list after every step.
func TestAccSite_InstanceGrant(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	user, ids := p.Users[1], p.Instances
	before := e.HeldInstances(user, p.Actions, p.Type, nil, ids)
	provider := strings.Replace(e.Provider, "provider \"bkiam\" {\n", "provider \"bkiam\" {\n  detect_drift = true\n", 1)
	grant := func(actions []string, instances ...string) string {
		return provider + fmt.Sprintf(`
resource "bkiam_instance_grant" "site" {
  system    = %q
  subject   = { type = "user", id = %q }
  actions   = %s
  resources = [{ system = %q, type = %q, instances = %s }]
}
`, p.System, user, acctest.HCLList(actions), p.System, p.Type, hclMap(instances...))
	}
	addr := "bkiam_instance_grant.site"
	// The policy id is the one a grant answers (the SaaS's); a refresh that
	// read IAM's policy list must not replace it with the list's own id.
	var policyID string
	samePolicyID := resource.TestCheckResourceAttrWith(addr, "policies."+p.Actions[0], func(v string) error {
		if v != policyID {
			return fmt.Errorf("policies.%s is %s, was %s when granted: the policy was not recreated", p.Actions[0], v, policyID)
		}
		return nil
	})
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:           grant(p.Actions[:1], ids[0], ids[1]),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: resource.ComposeAggregateTestCheckFunc(
					e.ExpectHeld(user, p.Actions, p.Type, nil, ids, withBefore(before, map[string][]string{p.Actions[0]: {ids[0], ids[1]}})),
					resource.TestCheckResourceAttrWith(addr, "policies."+p.Actions[0], func(v string) error { policyID = v; return positive(v) }),
				),
			},
			{
				Config:           grant(p.Actions[:2], ids[1], ids[2]),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: resource.ComposeAggregateTestCheckFunc(samePolicyID, e.ExpectHeld(user, p.Actions, p.Type, nil, ids,
					withBefore(before, map[string][]string{p.Actions[0]: {ids[1], ids[2]}, p.Actions[1]: {ids[1], ids[2]}}))),
			},
			{
				// Revoked outside Terraform: the refresh sees it, the plan grants it again.
				PreConfig: func() { e.InstanceCall(bkiam.OperationRevoke, user, p.Actions[0], ids[1]) },
				Config:    grant(p.Actions[:2], ids[1], ids[2]),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(samePolicyID, e.ExpectHeld(user, p.Actions, p.Type, nil, ids,
					withBefore(before, map[string][]string{p.Actions[0]: {ids[1], ids[2]}, p.Actions[1]: {ids[1], ids[2]}}))),
			},
			{
				// Revoked outside again, seen by a refresh alone (apply -refresh-only): state drops
				// the instance and keeps the policy id the grant answered.
				PreConfig:          func() { e.InstanceCall(bkiam.OperationRevoke, user, p.Actions[0], ids[2]) },
				RefreshState:       true,
				ExpectNonEmptyPlan: true, // the plan grants it again: the next step
				Check: resource.ComposeAggregateTestCheckFunc(samePolicyID,
					resource.TestCheckNoResourceAttr(addr, "resources.0.instances."+ids[2]),
					e.ExpectHeld(user, p.Actions, p.Type, nil, ids,
						withBefore(before, map[string][]string{p.Actions[0]: {ids[1]}, p.Actions[1]: {ids[1], ids[2]}}))),
			},
			{
				Config:           grant(p.Actions[:2], ids[1], ids[2]),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: resource.ComposeAggregateTestCheckFunc(samePolicyID, e.ExpectHeld(user, p.Actions, p.Type, nil, ids,
					withBefore(before, map[string][]string{p.Actions[0]: {ids[1], ids[2]}, p.Actions[1]: {ids[1], ids[2]}}))),
			},
			{
				ResourceName:  addr,
				ImportState:   true,
				ImportStateId: fmt.Sprintf("%s/user/%s/%s/%s/%s", p.System, user, strings.Join(p.Actions[:2], ","), p.System, p.Type),
				// The import reads instances and expiry; policy ids come only with a grant's answer.
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"policies"},
			},
		},
		CheckDestroy: e.ExpectHeld(user, p.Actions, p.Type, nil, ids, before),
	})
}

// withBefore is want plus what the user held before the test.
func withBefore(before, want map[string][]string) map[string][]string {
	out := maps.Clone(want)
	for a, ids := range before {
		out[a] = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(out[a]), ids...))))
	}
	return out
}

func positive(v string) error {
	if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 {
		return fmt.Errorf("%q is not a policy id", v)
	}
	return nil
}

// TestAccSite_CreatorGrant: a creator grant without actions (the model's
// creator configuration bounds what it records), changed, imported and
// destroyed; what the creator holds on each created path read through the
// policy list.
func TestAccSite_CreatorGrant(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	user, c := p.Users[1], p.Creator
	model, err := e.Client.SystemModel(context.Background(), p.System)
	if err != nil {
		t.Fatal(err)
	}
	node := model.CreatorNode(c.Type)
	if node == nil {
		t.Fatalf("system %s has no creator configuration for %s", p.System, c.Type)
	}
	var configured []string
	for _, a := range node.Actions {
		configured = append(configured, a.ID)
	}
	slices.Sort(configured)
	var ancestors []policyexpr.Node
	// key is an instance's key in instances: its path under the parent, if
	// the profile names one, else its id.
	key := func(id string) string { return id }
	if c.ParentType != "" {
		ancestors = []policyexpr.Node{{Type: c.ParentType, ID: c.ParentID}}
		key = func(id string) string {
			return fmt.Sprintf("/%s,%s,%s/%s,%s,%s/", p.System, c.ParentType, c.ParentID, p.System, c.Type, id)
		}
	}
	before := e.HeldInstances(user, configured, c.Type, ancestors, c.Instances)
	provider := strings.Replace(e.Provider, "provider \"bkiam\" {\n", "provider \"bkiam\" {\n  detect_drift = true\n", 1)
	grant := func(ids ...string) string {
		var b strings.Builder
		for _, id := range ids {
			fmt.Fprintf(&b, "    %q = %q\n", key(id), id)
		}
		return provider + fmt.Sprintf(`
resource "bkiam_creator_grant" "site" {
  system    = %q
  type      = %q
  creator   = %q
  instances = {
%s  }
}
`, p.System, c.Type, user, b.String())
	}
	each := func(ids ...string) map[string][]string {
		out := map[string][]string{}
		for _, a := range configured {
			out[a] = ids
		}
		return withBefore(before, out)
	}
	addr := "bkiam_creator_grant.site"
	grantedActions := func(s *terraform.State) error {
		got := []string{}
		for k, v := range s.RootModule().Resources[addr].Primary.Attributes {
			if strings.HasPrefix(k, "granted_actions.") && k != "granted_actions.#" {
				got = append(got, v)
			}
		}
		if slices.Sort(got); !slices.Equal(got, configured) {
			return fmt.Errorf("granted_actions %v, want the creator configuration's %v", got, configured)
		}
		return nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:           grant(c.Instances[0]),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            resource.ComposeAggregateTestCheckFunc(grantedActions, e.ExpectHeld(user, configured, c.Type, ancestors, c.Instances, each(c.Instances[0]))),
			},
			{
				Config:           grant(c.Instances[0], c.Instances[1]),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            e.ExpectHeld(user, configured, c.Type, ancestors, c.Instances, each(c.Instances[0], c.Instances[1])),
			},
			{
				// One created path revoked outside Terraform: the refresh sees it, the plan
				// registers the creator again.
				PreConfig: func() {
					path := []bkiam.PathNode{{System: p.System, Type: c.Type, ID: c.Instances[0], Name: c.Instances[0]}}
					if c.ParentType != "" {
						path = append([]bkiam.PathNode{{System: p.System, Type: c.ParentType, ID: c.ParentID, Name: c.ParentID}}, path...)
					}
					actions := make([]bkiam.Action, len(configured))
					for i, a := range configured {
						actions[i] = bkiam.Action{ID: a}
					}
					if _, err := e.Client.BatchPath(context.Background(), bkiam.BatchPathRequest{System: p.System, Operate: bkiam.OperationRevoke,
						Subject: bkiam.Subject{Type: "user", ID: user}, Actions: actions,
						Resources: []bkiam.PathResource{{System: p.System, Type: c.Type, Paths: [][]bkiam.PathNode{path}}}}); err != nil {
						t.Fatal(err)
					}
				},
				Config: grant(c.Instances[0], c.Instances[1]),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: e.ExpectHeld(user, configured, c.Type, ancestors, c.Instances, each(c.Instances[0], c.Instances[1])),
			},
			{
				Config:           grant(c.Instances[1]),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            e.ExpectHeld(user, configured, c.Type, ancestors, c.Instances, each(c.Instances[1])),
			},
			{
				// Import records system, type and creator; the next apply registers the rest.
				ResourceName:  addr,
				ImportState:   true,
				ImportStateId: fmt.Sprintf("%s/%s/%s", p.System, c.Type, user),
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 || states[0].Attributes["creator"] != user || states[0].Attributes["type"] != c.Type {
						return fmt.Errorf("imported %v", states)
					}
					return nil
				},
			},
		},
		CheckDestroy: e.ExpectHeld(user, configured, c.Type, ancestors, c.Instances, before),
	})
}

// TestAccSite_GroupsAsCode: a grade manager, a group, its members and a
// permission, with the data sources that find the first two by name:
// created, changed (a member renewed through the expiry route), drifted (a member removed and a permission revoked
// outside Terraform), imported and destroyed; what IAM holds read through
// the management API.
func TestAccSite_GroupsAsCode(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	ctx := context.Background()
	gmName, groupName := "tf-acc-"+e.Suffix, "tf-acc-dev-"+e.Suffix
	scope := make([]string, len(p.Instances))
	for i, id := range p.Instances {
		scope[i] = fmt.Sprintf("{ id = %q }", id)
	}
	config := func(description string, members map[string]string, permitted ...string) string {
		var m []string
		for _, u := range slices.Sorted(maps.Keys(members)) {
			m = append(m, fmt.Sprintf("%s = %q", u, members[u]))
		}
		return e.Provider + fmt.Sprintf(`
resource "bkiam_grade_manager" "site" {
  system  = %[1]q
  name    = %[2]q
  members = [%[3]q]
  authorization_scopes = [{
    system    = %[1]q
    actions   = %[4]s
    resources = [{ system = %[1]q, type = %[5]q, instances = [%[6]s] }]
  }]
  subject_scopes = [{ type = "*", id = "*" }]
}

resource "bkiam_group" "site" {
  system           = %[1]q
  grade_manager_id = bkiam_grade_manager.site.id
  name             = %[7]q
  description      = %[8]q
}

resource "bkiam_group_members" "site" {
  system   = %[1]q
  group_id = bkiam_group.site.id
  users    = { %[9]s }
}

resource "bkiam_group_permission" "site" {
  system    = %[1]q
  group_id  = bkiam_group.site.id
  actions   = [%[10]q]
  resources = [{ system = %[1]q, type = %[5]q, instances = %[11]s }]
}

data "bkiam_grade_manager" "site" {
  system = %[1]q
  name   = bkiam_grade_manager.site.name
}

data "bkiam_group" "site" {
  system           = %[1]q
  grade_manager_id = data.bkiam_grade_manager.site.id
  name             = bkiam_group.site.name
}
`, p.System, gmName, p.Users[0], acctest.HCLList(p.Actions), p.Type, strings.Join(scope, ", "), groupName, description,
			strings.Join(m, ", "), p.Actions[0], hclMap(permitted...))
	}
	var gmID, groupID int64
	ids := func(s *terraform.State) error {
		var err1, err2 error
		gmID, err1 = strconv.ParseInt(s.RootModule().Resources["bkiam_grade_manager.site"].Primary.ID, 10, 64)
		groupID, err2 = strconv.ParseInt(s.RootModule().Resources["bkiam_group.site"].Primary.ID, 10, 64)
		return errors.Join(err1, err2)
	}
	// inIAM checks through the management API: the grade manager's members,
	// the group's name and description, its members, and the instances of
	// its permission.
	inIAM := func(description string, members []string, permitted ...string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			if err := ids(s); err != nil {
				return err
			}
			gm, err := e.Client.GradeManager(ctx, p.System, gmID)
			if err != nil {
				return fmt.Errorf("the grade manager: %w", err)
			}
			if gm.Name != gmName || !slices.Equal(gm.Members, []string{p.Users[0]}) {
				return fmt.Errorf("IAM's grade manager %+v", gm)
			}
			group, err := e.Client.GroupByName(ctx, p.System, gmID, groupName)
			if err != nil || group == nil || group.ID != groupID || group.Description != description {
				return fmt.Errorf("IAM's group %+v (%w), want id %d, description %q", group, err, groupID, description)
			}
			listed, err := e.Client.GroupMembers(ctx, p.System, groupID)
			if err != nil {
				return err
			}
			var got []string
			for _, m := range listed {
				got = append(got, m.Type+"/"+m.ID)
			}
			slices.Sort(got)
			var want []string
			for _, u := range members {
				want = append(want, "user/"+u)
			}
			if slices.Sort(want); !slices.Equal(got, want) {
				return fmt.Errorf("IAM's members %v, want %v", got, want)
			}
			policies, err := e.Client.GroupPolicies(ctx, p.System, groupID)
			if err != nil {
				return err
			}
			var instances []string
			for _, gp := range policies {
				if gp.Action != p.Actions[0] {
					return fmt.Errorf("the group holds %s too", gp.Action)
				}
				for _, rg := range gp.ResourceGroups {
					for _, tp := range rg {
						for _, path := range tp.Paths {
							instances = append(instances, path[len(path)-1].ID)
						}
					}
				}
			}
			if slices.Sort(instances); !slices.Equal(instances, permitted) {
				return fmt.Errorf("IAM's permission of %s covers %v, want %v", p.Actions[0], instances, permitted)
			}
			return nil
		}
	}
	both := map[string]string{p.Users[0]: "permanent", p.Users[1]: "permanent"}
	dataSources := resource.ComposeAggregateTestCheckFunc(
		resource.TestCheckResourceAttrPair("data.bkiam_grade_manager.site", "id", "bkiam_grade_manager.site", "id"),
		resource.TestCheckResourceAttrPair("data.bkiam_group.site", "id", "bkiam_group.site", "id"),
	)
	importStep := func(addr string, id func(s *terraform.State) string, ignore ...string) resource.TestStep {
		return resource.TestStep{ResourceName: addr, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: ignore,
			ImportStateIdFunc: func(s *terraform.State) (string, error) { return id(s), ids(s) }}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:           config("first", map[string]string{p.Users[1]: "2030-01-01T00:00:00Z"}, p.Instances[0]),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check:            resource.ComposeAggregateTestCheckFunc(inIAM("first", []string{p.Users[1]}, p.Instances[0]), dataSources),
			},
			{
				// A member renewed (its expiry raised through IAM's expiry route) and one added.
				Config:           config("second", both, p.Instances[0], p.Instances[1]),
				ConfigPlanChecks: acctest.EmptyPlanAfterApply,
				Check: resource.ComposeAggregateTestCheckFunc(inIAM("second", p.Users, p.Instances[0], p.Instances[1]),
					func(*terraform.State) error {
						listed, err := e.Client.GroupMembers(ctx, p.System, groupID)
						if err != nil {
							return err
						}
						for _, m := range listed {
							if m.ExpiredAt != bkiam.PermanentExpiry {
								return fmt.Errorf("IAM's member %s expires at %d, want permanent", m.ID, m.ExpiredAt)
							}
						}
						return nil
					}),
			},
			{
				// A member removed, the group's description changed and a permission revoked
				// outside Terraform: the refresh sees all three, the plan restores them.
				PreConfig: func() {
					if err := e.Client.DeleteMembers(ctx, p.System, groupID, "user", []string{p.Users[1]}); err != nil {
						t.Fatal(err)
					}
					if err := e.Client.UpdateGroup(ctx, p.System, groupID, groupName, "changed outside"); err != nil {
						t.Fatal(err)
					}
					if err := e.Client.RevokeGroupPolicies(ctx, p.System, groupID, bkiam.GroupPolicyRequest{System: p.System,
						Actions: []bkiam.Action{{ID: p.Actions[0]}}, Resources: []bkiam.PathResource{{System: p.System, Type: p.Type,
							Paths: [][]bkiam.PathNode{{{System: p.System, Type: p.Type, ID: p.Instances[1], Name: p.Instances[1]}}}}}}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config("second", both, p.Instances[0], p.Instances[1]),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("bkiam_group.site", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("bkiam_group_members.site", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("bkiam_group_permission.site", plancheck.ResourceActionUpdate),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: inIAM("second", p.Users, p.Instances[0], p.Instances[1]),
			},
			// What IAM cannot read back comes from the configuration at the next apply.
			importStep("bkiam_grade_manager.site", func(*terraform.State) string { return fmt.Sprintf("%s/%d", p.System, gmID) },
				"authorization_scopes", "subject_scopes", "group_name", "sync_perm", "timeouts"),
			importStep("bkiam_group.site", func(*terraform.State) string { return fmt.Sprintf("%s/%d/%d", p.System, gmID, groupID) }),
			importStep("bkiam_group_members.site", func(*terraform.State) string { return fmt.Sprintf("%s/%d", p.System, groupID) }),
			{
				// IAM names a group permission's instances by the system's resource provider, not by
				// the names a grant sent: the import reads IAM's names, so compare the ids.
				ResourceName: "bkiam_group_permission.site", ImportState: true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					return fmt.Sprintf("%s/%d/%s", p.System, groupID, p.Actions[0]), ids(s)
				},
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 {
						return fmt.Errorf("imported %d objects", len(states))
					}
					a := states[0].Attributes
					var got []string
					for k := range a {
						if id, ok := strings.CutPrefix(k, "resources.0.instances."); ok && id != "%" {
							got = append(got, id)
						}
					}
					if slices.Sort(got); a["actions.0"] != p.Actions[0] || !slices.Equal(got, []string{p.Instances[0], p.Instances[1]}) {
						return fmt.Errorf("imported actions %s on %v, want %s on %v", a["actions.0"], got, p.Actions[0], p.Instances[:2])
					}
					return nil
				},
			},
		},
		CheckDestroy: func(*terraform.State) error {
			if _, err := e.Client.GradeManager(ctx, p.System, gmID); !errors.Is(err, bkiam.ErrNotOwned) {
				return fmt.Errorf("after destroy, reading the grade manager: %w, want it gone", err)
			}
			return nil
		},
	})
}

// TestAccSite_SystemDataSource: the model IAM serves for the system, with
// the profile's actions on its type and the creator configuration of the
// creator type.
func TestAccSite_SystemDataSource(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	checks := []resource.TestCheckFunc{
		resource.TestCheckResourceAttr("data.bkiam_system.site", "system", p.System),
		resource.TestCheckResourceAttrSet("data.bkiam_system.site", "creator_actions."+p.Creator.Type+".actions.#"),
	}
	for _, a := range p.Actions {
		checks = append(checks, resource.TestCheckResourceAttr("data.bkiam_system.site", "actions."+a+".related_resource_types.0.id", p.Type))
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: e.Provider + fmt.Sprintf("data \"bkiam_system\" \"site\" {\n  system = %q\n}\n", p.System),
			Check:  resource.ComposeAggregateTestCheckFunc(checks...),
		}},
	})
}
