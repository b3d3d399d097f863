package provider_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestAccQueryLeavesCreatorGrants (issue 53): with a bkiam_creator_grant
// of biz 1 for alice in state, whose identity the second query passes as
// managed, the lists of her grants of view_biz and edit_biz (biz's creator
// actions) generate nothing: the creator grant holds a slice of each of
// those policies, and a generated bkiam_instance_grant beside it failed
// the next plan with "Grants shared with another resource". Without
// managed they are generated; bob's grant of view_biz, which no creator
// grant of his holds, is generated either way.
func TestAccQueryLeavesCreatorGrants(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	querier := queryCLI(t)
	sb := sandboxtest.Start(t)
	// Attached: OpenTofu applies, Terraform 1.16 queries the same state.
	server, err := provider.NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	w := acctest.NewAttachedWorkspace(t, server)
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), `
resource "bkiam_creator_grant" "alice" {
  system    = "bk_cmdb"
  type      = "biz"
  creator   = "alice"
  instances = { "1" = "biz 1" }
}

resource "bkiam_instance_grant" "bob" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "bob" }
  actions   = ["view_biz"]
  resources = [{ system = "bk_cmdb", type = "biz", instances = { "2" = "biz 2" } }]
}
`)
	w.MustRun("apply", "-auto-approve")
	applier := w.Terraform
	w.Terraform = querier
	defer func() { w.Terraform = applier }()
	identities := w.MustRun("state", "identities", "-json")
	// Only the creator grant is passed: bob's grant stays listable.
	w.Write("managed.json", strings.Replace(identities, `"bkiam_instance_grant.bob"`, `"ignored.bob"`, 1))
	query := listBlock("bkiam_instance_grant", "view", "system", "bk_cmdb", "action", "view_biz") +
		listBlock("bkiam_instance_grant", "edit", "system", "bk_cmdb", "action", "edit_biz")
	// grantsTo counts the generated grants to user.
	grantsTo := func(file, user string) int {
		raw, err := os.ReadFile(filepath.Join(w.Dir, file))
		if err != nil {
			t.Fatal(err)
		}
		return len(regexp.MustCompile(`(?m)^\s+id\s+= "`+user+`"$`).FindAllIndex(raw, -1))
	}

	w.Write("again.tfquery.hcl", query)
	w.MustRun("query", "-generate-config-out=unfiltered.tf")
	if got := grantsTo("unfiltered.tf", "alice"); got != 2 {
		t.Fatalf("without managed the query generated %d grants to alice, want her two creator-action grants", got)
	}
	w.Remove("unfiltered.tf")

	w.Write("again.tfquery.hcl", strings.ReplaceAll(query, "  config {\n", "  config {\n    managed = jsondecode(file(\"managed.json\"))\n"))
	out := w.MustRun("query", "-generate-config-out=again.tf")
	if alice, bob := grantsTo("again.tf", "alice"), grantsTo("again.tf", "bob"); alice != 0 || bob != 1 {
		t.Errorf("with the creator grant managed the query generated %d grants to alice and %d to bob, want bob's alone", alice, bob)
	}
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "Left out: already managed") ||
		!strings.Contains(flat, "bkiam_creator_grant.alice manages it") {
		t.Errorf("the query did not say it left alice's grants out for the creator grant:\n%s", out)
	}
	w.Remove("again.tfquery.hcl")
}
