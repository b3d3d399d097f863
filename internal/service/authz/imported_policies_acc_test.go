package authz_test

import (
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccImportedGrantRecordsNoListedPolicyIDs: an import with
// detect_drift leaves policies empty, although the policy-list rows it
// reads carry ids: those are the backend's, which number the policies
// otherwise than the SaaS ids a grant answers (the create records 1, the
// list shows 1001 for the same policy). Recorded, they made the first
// grant after the import (one more instance) take the policy for revoked
// whole outside Terraform and grant everything again: two grant calls
// for one. The grant then records the SaaS id, as a create does.
func TestAccImportedGrantRecordsNoListedPolicyIDs(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	if !acctest.CLI.AtLeast(1, 5) {
		t.Skipf("%s has no import blocks", acctest.CLI)
	}
	sb := sandboxtest.Start(t)
	providerDir := testutil.BuildProvider(t)
	provider := acctest.DriftProvider(sb, "")
	grant := func(instances string) string {
		return `
resource "bkiam_instance_grant" "g" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { ` + instances + ` } }]
}
`
	}
	policies := func(w *acctest.CLIWorkspace) string {
		t.Helper()
		return mustJSON(t, stateValues(t, w, "bkiam_instance_grant.g")["policies"])
	}

	made := acctest.NewCLIWorkspace(t, providerDir)
	made.Configure(provider, grant(`"1" = "1"`))
	made.MustRun("apply", "-auto-approve")
	created := policies(made)

	adopted := acctest.NewCLIWorkspace(t, providerDir)
	adopted.Configure(provider, grant(`"1" = "1"`))
	adopted.Write("import.tf", `import {
  to = bkiam_instance_grant.g
  id = "bk_cmdb/user/alice/view_host/bk_cmdb/host"
}
`)
	adopted.MustRun("apply", "-auto-approve")
	if got := policies(adopted); got != "{}" {
		t.Fatalf("the import recorded policies %s, want none (the list's ids are not a grant's)", got)
	}
	if !adopted.PlanIsEmpty() {
		t.Fatal("the plan after the import is not empty")
	}
	adopted.Remove("import.tf")
	adopted.Configure(provider, grant(`"1" = "1", "2" = "2"`))
	before := sb.Stats().Requests["batch_instance:grant"]
	adopted.MustRun("apply", "-auto-approve")
	if n := sb.Stats().Requests["batch_instance:grant"] - before; n != 1 {
		t.Errorf("adding one instance after the import sent %d grant calls, want 1", n)
	}
	if got := policies(adopted); got != created {
		t.Errorf("after its first grant the imported resource records policies %s, want the create's %s", got, created)
	}
}
