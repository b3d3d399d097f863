package provider_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
)

// siteHolding is what the site query test reads of IAM through its own
// APIs, before and after the import: the group's members and
// permissions, and every subject's policies of the granted action.
type siteHolding struct {
	members  []bkiam.Member
	policies []bkiam.GroupPolicy
	grants   []bkiam.Policy
}

// TestAccSite_Query: the adoption guide on whatever IAM the tests point
// at, a real one included (make testacc-site TF_CLI=terraform-1.16): a
// grade manager, its group, a member, a group permission and a user's
// grant made through IAM's APIs are listed by terraform query, generated
// and imported; IAM's reads are the same after, and the next plan is
// empty. Terraform 1.14 and later; on OpenTofu 1.12, Terraform 1.16
// lists and generates and OpenTofu applies, as the guide says.
func TestAccSite_Query(t *testing.T) {
	acctest.Parallel(t)
	querier := queryCLI(t)
	e := acctest.NewSiteEnv(t)
	p, ctx := e.P, context.Background()
	gm, err := e.Client.CreateGradeManager(ctx, p.System, bkiam.GradeManagerSpec{Name: "tf-acc-q-" + e.Suffix, Members: []string{p.Users[0]},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: p.System, Actions: []bkiam.Action{{ID: p.Actions[0]}},
			Resources: []bkiam.PathResource{{System: p.System, Type: p.Type, Paths: [][]bkiam.PathNode{{{System: p.System, Type: p.Type, ID: p.Instances[0]}}}}}}},
		SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Client.DeleteGradeManager(context.Background(), p.System, gm); err != nil {
			t.Errorf("cleaning up grade manager %d: %v", gm, err)
		}
	})
	groups, err := e.Client.CreateGroups(ctx, p.System, fmt.Sprint(gm), []bkiam.GroupSpec{{Name: "tf-acc-q-dev-" + e.Suffix, Description: "adopted"}})
	if err != nil {
		t.Fatal(err)
	}
	group := groups[0]
	t.Cleanup(func() { _ = e.Client.DeleteGroup(context.Background(), p.System, group) })
	if err := e.Client.AddMembers(ctx, p.System, group, []bkiam.MemberRef{{Type: "user", ID: p.Users[1]}}, bkiam.PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	if err := e.Client.GrantGroupPolicies(ctx, p.System, group, bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: p.Actions[0]}},
		Resources: []bkiam.PathResource{{System: p.System, Type: p.Type, Paths: [][]bkiam.PathNode{{{System: p.System, Type: p.Type, ID: p.Instances[0]}}}}}}); err != nil {
		t.Fatal(err)
	}
	grant := bkiam.BatchInstanceRequest{System: p.System, Operate: bkiam.OperationGrant, Subject: bkiam.Subject{Type: "user", ID: p.Users[1]},
		Actions: []bkiam.Action{{ID: p.Actions[1]}}, ExpiredAt: bkiam.PermanentExpiry,
		Resources: []bkiam.InstanceResource{{System: p.System, Type: p.Type, Instances: []bkiam.Instance{{ID: p.Instances[1], Name: p.Instances[1]}, {ID: p.Instances[2], Name: p.Instances[2]}}}}}
	if _, err := e.Client.BatchInstance(ctx, grant); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		revoke := grant
		revoke.Operate = bkiam.OperationRevoke
		if _, err := e.Client.BatchInstance(context.Background(), revoke); err != nil {
			t.Errorf("cleaning up the grant: %v", err)
		}
	})
	read := func() siteHolding {
		t.Helper()
		var h siteHolding
		var err error
		if h.members, err = e.Client.GroupMembers(ctx, p.System, group); err != nil {
			t.Fatal(err)
		}
		if h.policies, err = e.Client.GroupPolicies(ctx, p.System, group); err != nil {
			t.Fatal(err)
		}
		if h.grants, err = e.Client.ScanPolicies(ctx, bkiam.PolicyKindABAC, p.System, p.Actions[1]); err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(h.grants, func(a, b bkiam.Policy) int {
			return strings.Compare(a.Subject.Type+a.Subject.ID, b.Subject.Type+b.Subject.ID)
		})
		return h
	}

	server, err := provider.NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	w := acctest.NewAttachedWorkspace(t, server)
	w.Configure(strings.Replace(e.Provider, "provider \"bkiam\" {\n", "provider \"bkiam\" {\n  detect_drift = true\n", 1), "")
	applier := w.Terraform
	w.Terraform = querier
	// IAM's action_id filter: the group holds the first action, not the second.
	filtered := fmt.Sprintf(`list "bkiam_group" "holds" {
  provider = bkiam
  config {
    system           = %[1]q
    grade_manager_id = "%[2]d"
    action           = %[3]q
  }
}

list "bkiam_group" "lacks" {
  provider = bkiam
  config {
    system           = %[1]q
    grade_manager_id = "%[2]d"
    action           = %[4]q
  }
}
`, p.System, gm, p.Actions[0], p.Actions[1])
	w.Write("filtered.tfquery.hcl", filtered)
	out := w.MustRun("query")
	if !strings.Contains(out, fmt.Sprintf("list.bkiam_group.holds   grade_manager_id=%d,id=%d,", gm, group)) || strings.Contains(out, "list.bkiam_group.lacks   ") {
		t.Errorf("the action filter did not list exactly the group holding %s:\n%s", p.Actions[0], out)
	}
	w.Remove("filtered.tfquery.hcl")
	query := fmt.Sprintf(`list "bkiam_group" "site" {
  provider = bkiam
  config {
    system           = %[1]q
    grade_manager_id = "%[2]d"
  }
}

list "bkiam_group_members" "site" {
  provider = bkiam
  config {
    system           = %[1]q
    grade_manager_id = "%[2]d"
  }
}

list "bkiam_group_permission" "site" {
  provider = bkiam
  config {
    system   = %[1]q
    group_id = "%[3]d"
  }
}

list "bkiam_instance_grant" "site" {
  provider = bkiam
  config {
    system       = %[1]q
    action       = %[4]q
    subject_type = "user"
  }
}
`, p.System, gm, group, p.Actions[1])
	w.Write("site.tfquery.hcl", query)
	out = w.MustRun("query", "-generate-config-out=generated.tf")
	generated, err := os.ReadFile(filepath.Join(w.Dir, "generated.tf"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	flat := strings.Join(strings.Fields(string(generated)), " ")
	// Terraform quotes a map key only where HCL needs it.
	flat = strings.ReplaceAll(flat, `"`+p.Instances[2]+`" =`, p.Instances[2]+" =")
	for _, want := range []string{fmt.Sprintf(`name = "tf-acc-q-dev-%s"`, e.Suffix), fmt.Sprintf(`%s = "permanent"`, p.Users[1]),
		fmt.Sprintf(`id = %q type = "user"`, p.Users[1]), fmt.Sprintf(`%s = %q`, p.Instances[2], p.Instances[2])} {
		if !strings.Contains(flat, want) {
			t.Errorf("the generated configuration has no %s:\n%s", want, generated)
		}
	}
	w.Remove("site.tfquery.hcl")
	w.Terraform = applier
	before := read()
	out = w.MustRun("apply", "-auto-approve")
	if !strings.Contains(out, " imported, 0 added, 0 changed, 0 destroyed") {
		t.Errorf("the apply of the generated configuration did more than import:\n%s", out)
	}
	if after := read(); !reflect.DeepEqual(before, after) {
		t.Errorf("importing changed what IAM holds:\nbefore %+v\nafter  %+v", before, after)
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after importing is not empty")
	}
}
