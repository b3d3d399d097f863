package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccSite_CrossSystem is issue 61's truth on a real site: an action of a
// bk_job-shaped system related to a resource type of another, CMDB-shaped,
// system (BKIAM_ACC_SITE's cross_system, registered first through IAM's
// model API as a BlueKing app registers its model at deploy; on the sandbox,
// bk_job's access_business on bk_cmdb's biz of the BlueKing model). The
// user is granted the action on the first business until 30 days on; the
// access check answers the first allowed and the second denied, and the
// effective permissions list the first business; a second grant of the
// second business until 10 days on fails at plan (expiry_conflicts =
// "error"): IAM keeps the later expiry, and the check read it through the
// single-action query, where IAM's batch query refuses such an action
// (1901500). The destroy leaves the user holding nothing of the action.
func TestAccSite_CrossSystem(t *testing.T) {
	acctest.Parallel(t)
	testutil.SameOnEveryCLI(t, "the answers IAM gives the provider's reads are the same whichever CLI asks")
	var (
		p        *acctest.CrossSystemProfile
		provider string
		client   *bkiam.Client
		err      error
	)
	if acctest.Site != nil {
		if p = acctest.Profile.CrossSystem; p == nil {
			t.Skip("BKIAM_ACC_SITE gives no cross_system: a bk_job-shaped system to register (docs/development.md)")
		}
		gw := acctest.Site.Client.APIGatewayURL
		if gw == "" {
			t.Skip("registers through IAM's model API, behind the API gateway: set BKIAM_ACC_APIGW_URL")
		}
		acctest.RegisterCrossSystem(t, gw, p)
		provider = acctest.CrossSystemProvider(gw, p)
		client, err = bkiam.New(bkiam.Config{APIGatewayURL: gw, AppCode: p.System, AppSecret: p.AppSecret})
		if err != nil {
			t.Fatal(err)
		}
	} else {
		p = acctest.SandboxCrossSystem()
		sb := acctest.BlueKingSandbox(t)
		provider = fmt.Sprintf("\nprovider \"bkiam\" {\n  apigw_url        = %q\n  app_code         = %q\n  app_secret       = %q\n  expiry_conflicts = \"error\"\n}\n",
			sb.URL, sandboxtest.AppCode, sandboxtest.AppSecret)
		client = acctest.OutsideClient(t, sb)
	}
	remote, first, second := p.Remote.System, p.Instances[0], p.Instances[1]
	at := func(days int) string {
		return time.Now().Add(time.Duration(days) * 24 * time.Hour).UTC().Format(time.RFC3339)
	}
	later, sooner := at(30), at(10)
	config := func(secondGrant bool) string {
		c := fmt.Sprintf(`
resource "bkiam_instance_grant" "first" {
  system     = %[1]q
  subject    = { type = "user", id = %[2]q }
  actions    = [%[3]q]
  resources  = [{ system = %[4]q, type = "biz", instances = { %[5]q = "biz %[5]s" } }]
  expires_at = %[7]q
}

data "bkiam_access_check" "c" {
  for_each   = toset([%[5]q, %[6]q])
  system     = %[1]q
  subject    = { type = "user", id = %[2]q }
  actions    = [%[3]q]
  resources  = [{ system = %[4]q, type = "biz", id = each.key }]
  depends_on = [bkiam_instance_grant.first]
}

data "bkiam_effective_permissions" "u" {
  system     = %[1]q
  user       = %[2]q
  actions    = [%[3]q]
  depends_on = [bkiam_instance_grant.first]
}

output "answers" {
  value = {
    allowed   = { for k, c in data.bkiam_access_check.c : k => c.allowed[%[3]q] }
    instances = data.bkiam_effective_permissions.u.permissions[%[3]q].instances
  }
}
`, p.System, p.User, p.Action, remote, first, second, later)
		if secondGrant {
			c += fmt.Sprintf(`
resource "bkiam_instance_grant" "second" {
  system     = %[1]q
  subject    = { type = "user", id = %[2]q }
  actions    = [%[3]q]
  resources  = [{ system = %[4]q, type = "biz", instances = { %[5]q = "biz %[5]s" } }]
  expires_at = %[6]q
}
`, p.System, p.User, p.Action, remote, second, sooner)
		}
		return c
	}
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(provider, config(false))
	t.Cleanup(func() {
		if out, code := w.Run("destroy", "-auto-approve"); code != 0 {
			t.Errorf("the destroy exited %d:\n%s", code, out)
		}
		policies, err := client.ScanPolicies(context.Background(), bkiam.PolicyKindABAC, p.System, p.Action)
		if err != nil {
			t.Fatal(err)
		}
		for _, pol := range policies {
			if bkiam.SameSubject(pol.Subject, bkiam.Subject{Type: "user", ID: p.User}) {
				t.Errorf("after the destroy %s still holds %s: %s", p.User, p.Action, pol.Expression)
			}
		}
	})
	if out, code := w.Run("apply", "-auto-approve"); code != 0 {
		t.Fatalf("the apply exited %d:\n%s", code, out)
	}
	var got struct {
		Allowed   map[string]bool     `json:"allowed"`
		Instances map[string][]string `json:"instances"`
	}
	if err := json.Unmarshal([]byte(w.MustRun("output", "-json", "answers")), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Allowed[first] || got.Allowed[second] || len(got.Allowed) != 2 {
		t.Errorf("the access checks: %v, want %s allowed and %s denied", got.Allowed, first, second)
	}
	if ids := got.Instances[remote+"/biz"]; len(ids) != 1 || ids[0] != first {
		t.Errorf("the effective permissions: %v, want %s/biz [%s]", got.Instances, remote, first)
	}
	if !w.PlanIsEmpty() {
		t.Error("the plan after the apply is not empty")
	}
	w.Configure(provider, config(true))
	out, code := w.Run("plan")
	if flat := strings.Join(strings.Fields(out), " "); code == 0 || !strings.Contains(flat, "Error: Expiry cannot take effect") ||
		!strings.Contains(flat, "already holds "+p.Action+" expiring "+later) {
		t.Errorf("the plan of a second grant expiring sooner exited %d, and does not fail naming the expiry IAM keeps:\n%s", code, out)
	}
	w.Configure(provider, config(false))
}
