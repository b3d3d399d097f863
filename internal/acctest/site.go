package acctest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/policyexpr"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// SiteProfile names what of a site the lifecycle tests use.
type SiteProfile struct {
	// System is the system granted in; the app must be its client, with
	// the actions and creator type on IAM's allow-list and the management
	// API allowed.
	System string `json:"system"`
	// Users are two users IAM knows (or its user directory): the first is
	// the grade manager's member, the second is granted and made a member.
	Users []string `json:"users"`
	// Type is a resource type of System; Instances three of its ids, and
	// Actions two actions related to Type alone.
	Type      string   `json:"type"`
	Instances []string `json:"instances"`
	Actions   []string `json:"actions"`
	// ExpiryUser is a third user IAM knows, holding nothing of Actions:
	// TestAccSite_Expiry changes the one expiry IAM keeps per user and
	// action, which no test can set back, so it needs a user of its own.
	// Without it that test is skipped.
	ExpiryUser string `json:"expiry_user,omitempty"`
	// Department is a department IAM knows and a user in it (directly or
	// below it): TestAccSite_AccessCheck grants through it. Without it
	// that test grants through the second user's direct membership.
	Department *struct {
		ID   string `json:"id"`
		User string `json:"user"`
	} `json:"department,omitempty"`
	// Creator is a type with a creator configuration in System, with the
	// ancestor every instance is created under (none when ParentType is
	// empty) and two new instance ids.
	Creator struct {
		Type       string   `json:"type"`
		ParentType string   `json:"parent_type"`
		ParentID   string   `json:"parent_id"`
		Instances  []string `json:"instances"`
	} `json:"creator"`
	// CrossSystem is a bk_job-shaped system TestAccSite_CrossSystem registers through IAM's
	// model API (CrossSystemProfile). Without it that test is skipped on a real site.
	CrossSystem *CrossSystemProfile `json:"cross_system,omitempty"`
}

// SandboxProfile is the profile of the sandbox's default model.
func SandboxProfile() *SiteProfile {
	p := &SiteProfile{System: "bk_cmdb", Users: []string{"alice", "bob"}, Type: "host",
		Instances: []string{"1", "2", "3"}, Actions: []string{"view_host", "edit_host"}, ExpiryUser: "carol"}
	p.Department = &struct {
		ID   string `json:"id"`
		User string `json:"user"`
	}{ID: "1", User: "alice"} // alice's department 2 is below 1
	p.Creator.Type, p.Creator.Instances = "biz", []string{"c1", "c2"}
	return p
}

// LoadSiteProfile reads BKIAM_ACC_SITE; without it, a real site must have
// the sandbox's names.
func LoadSiteProfile() (*SiteProfile, error) {
	path := os.Getenv("BKIAM_ACC_SITE")
	if path == "" {
		return SandboxProfile(), nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("BKIAM_ACC_SITE: %w", err)
	}
	p := &SiteProfile{}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("BKIAM_ACC_SITE %s: %w", path, err)
	}
	switch {
	case p.System == "" || p.Type == "" || p.Creator.Type == "":
		return nil, fmt.Errorf("BKIAM_ACC_SITE %s: system, type and creator.type are required", path)
	case len(p.Users) < 2 || len(p.Instances) < 3 || len(p.Actions) < 2 || len(p.Creator.Instances) < 2:
		return nil, fmt.Errorf("BKIAM_ACC_SITE %s: give two users, three instances, two actions and two creator instances", path)
	case (p.Creator.ParentType == "") != (p.Creator.ParentID == ""):
		return nil, fmt.Errorf("BKIAM_ACC_SITE %s: give both creator.parent_type and creator.parent_id, or neither", path)
	}
	return p, nil
}

// SiteEnv is where a site lifecycle test runs.
type SiteEnv struct {
	T        *testing.T
	P        *SiteProfile
	Provider string
	Client   *bkiam.Client
	// Suffix makes the names of grade managers and groups unique, across
	// runs too (grade manager names are unique across IAM).
	Suffix string
}

func NewSiteEnv(t *testing.T) *SiteEnv {
	t.Helper()
	e := &SiteEnv{T: t, P: Profile}
	if Site != nil && Site.Client.APIGatewayURL == "" {
		t.Skip("the site lifecycle tests read IAM through the API gateway: set BKIAM_ACC_APIGW_URL")
	}
	var sb *sandboxtest.Sandbox
	sb, e.Provider = SiteTarget(t)
	e.Client = OutsideClient(t, sb)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	e.Suffix = hex.EncodeToString(b)
	return e
}

// Holds is what subject holds of action through IAM's policy list: the
// union of its rows' expressions (nil when none).
func (e *SiteEnv) Holds(subjectType, subjectID, action string) []*policyexpr.Expr {
	e.T.Helper()
	policies, err := e.Client.ScanPolicies(context.Background(), bkiam.PolicyKindABAC, e.P.System, action)
	if err != nil {
		e.T.Fatalf("reading the policies of %s: %v", action, err)
	}
	var out []*policyexpr.Expr
	for _, p := range policies {
		if p.Subject.Type != subjectType || p.Subject.ID != subjectID {
			continue
		}
		expr, err := policyexpr.Parse(p.Expression)
		if err != nil {
			e.T.Fatalf("%s's policy of %s: %v", subjectID, action, err)
		}
		out = append(out, expr)
	}
	return out
}

// HeldInstances is, for each action, which of ids user holds (a plain
// instance of typ, or under ancestors).
func (e *SiteEnv) HeldInstances(user string, actions []string, typ string, ancestors []policyexpr.Node, ids []string) map[string][]string {
	e.T.Helper()
	out := map[string][]string{}
	for _, a := range actions {
		for _, expr := range e.Holds("user", user, a) {
			for _, id := range ids {
				held := expr.HoldsInstance(typ, id)
				if ancestors != nil {
					held = expr.HoldsPath(typ, id, ancestors)
				}
				if held && !slices.Contains(out[a], id) {
					out[a] = append(out[a], id)
				}
			}
		}
		slices.Sort(out[a])
	}
	return out
}

// ExpectHeld checks, through IAM's reads, that user holds exactly want
// of ids.
func (e *SiteEnv) ExpectHeld(user string, actions []string, typ string, ancestors []policyexpr.Node, ids []string, want map[string][]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got := e.HeldInstances(user, actions, typ, ancestors, ids)
		for a := range got {
			if len(got[a]) == 0 {
				delete(got, a)
			}
		}
		if !maps.EqualFunc(got, want, slices.Equal) {
			return fmt.Errorf("IAM says %s holds %v of %s %v, want %v", user, got, typ, ids, want)
		}
		return nil
	}
}

// InstanceCall grants or revokes action on one instance for user, outside
// Terraform.
func (e *SiteEnv) InstanceCall(op bkiam.Operation, user, action, id string) {
	e.T.Helper()
	_, err := e.Client.BatchInstance(context.Background(), bkiam.BatchInstanceRequest{
		System: e.P.System, Operate: op, ExpiredAt: bkiam.PermanentExpiry,
		Subject: bkiam.Subject{Type: "user", ID: user}, Actions: []bkiam.Action{{ID: action}},
		Resources: []bkiam.InstanceResource{{System: e.P.System, Type: e.P.Type, Instances: []bkiam.Instance{{ID: id, Name: id}}}},
	})
	if err != nil {
		e.T.Fatalf("%s outside Terraform: %v", op, err)
	}
}

// GradeManagerHCL is a bkiam_grade_manager "site" of the profile's
// system named name, its first user a member, scoped to action on
// instances of the profile's type; extra goes inside the block.
func (e *SiteEnv) GradeManagerHCL(name, action, extra string, instances ...string) string {
	p := e.P
	scope := make([]string, len(instances))
	for i, id := range instances {
		scope[i] = fmt.Sprintf("{ id = %q }", id)
	}
	return fmt.Sprintf(`
resource "bkiam_grade_manager" "site" {
  system  = %[1]q
  name    = %[2]q
  members = [%[3]q]
  authorization_scopes = [{
    system    = %[1]q
    actions   = [%[4]q]
    resources = [{ system = %[1]q, type = %[5]q, instances = [%[6]s] }]
  }]
  subject_scopes = [{ type = "*", id = "*" }]
%[7]s}
`, p.System, name, p.Users[0], action, p.Type, strings.Join(scope, ", "), extra)
}

// GroupBase is a grade manager "site" of the profile's system, whose
// member is the first user and whose groups may be granted action on
// instances (by id), and its group "site"; both named after what (and the
// test's suffix), as the site tests make them.
func (e *SiteEnv) GroupBase(what, action string, instances ...string) string {
	return e.GradeManagerHCL("tf-acc-"+what+"-"+e.Suffix, action, "", instances...) + fmt.Sprintf(`
resource "bkiam_group" "site" {
  system           = %q
  grade_manager_id = bkiam_grade_manager.site.id
  name             = %q
}
`, e.P.System, "tf-acc-"+what+"-dev-"+e.Suffix)
}

// ParentType is the first parent type of the profile's type in its system's
// model, for a grant by topology (every instance under a parent); the test
// is skipped when the model names none.
func (e *SiteEnv) ParentType(t *testing.T) bkiam.TypeRef {
	t.Helper()
	p := e.P
	model, err := e.Client.SystemModel(context.Background(), p.System)
	if err != nil {
		t.Fatal(err)
	}
	rt := model.ResourceType(p.Type)
	if rt == nil || len(rt.Parents) == 0 {
		t.Skipf("resource type %s has no parent type in %s's model: no topology to grant by", p.Type, p.System)
	}
	return rt.Parents[0]
}
