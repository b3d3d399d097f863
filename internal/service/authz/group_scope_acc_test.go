package authz_test

import (
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccGroupGrantWidensScope: a grant to a group through the
// authorization API widens the group's grade manager's authorization
// scope (IAM's SaaS does it on every such grant, and no revoke narrows it
// back; seen on the real IAM), so the plan says so, unless the grade
// manager is planned in the same configuration with a scope that already
// covers the grant. A group the plan knows nothing of gets the warning.
func TestAccGroupGrantWidensScope(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
	const base = `
resource "bkiam_grade_manager" "ops" {
  system  = "bk_cmdb"
  name    = "ops"
  members = ["alice"]
  authorization_scopes = [{
    system    = "bk_cmdb"
    actions   = ["view_host"]
    resources = [{ system = "bk_cmdb", type = "host", instances = [{ id = "1" }, { id = "2" }] }]
  }]
  subject_scopes = [{ type = "*", id = "*" }]
}

resource "bkiam_group" "dev" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.ops.id
  name             = "dev"
}
`
	grant := func(name, group, host string) string {
		return `
resource "bkiam_instance_grant" "` + name + `" {
  system    = "bk_cmdb"
  subject   = { type = "group", id = ` + group + ` }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "` + host + `" = "host` + host + `" } }]
}
`
	}
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(provider, base)
	w.MustRun("apply", "-auto-approve")
	const summary = "Group grant widens its grade manager's scope"
	w.Configure(provider, base+grant("inside", "bkiam_group.dev.id", "1")+grant("outside", "bkiam_group.dev.id", "7")+grant("other", `"1"`, "1"))
	diags, code := w.Diagnostics("plan")
	if code != 0 {
		t.Fatalf("the plan exited %d: %v", code, diags)
	}
	for addr, want := range map[string]bool{"bkiam_instance_grant.inside": false, "bkiam_instance_grant.outside": true, "bkiam_instance_grant.other": true} {
		got := acctest.DiagnosticsAbout(diags, summary, addr)
		if (got != "") != want {
			t.Errorf("%s: warned %q, want a warning %v", addr, got, want)
		}
		if want && !strings.Contains(got, "also widens the authorization scope of the group's grade manager to cover view_host") {
			t.Errorf("%s: the warning does not say what it widens: %q", addr, got)
		}
	}
}
