package authz_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// identityShapesConfig: an action related to no resource type, and a
// combined resource (a business and its hosts in one grant). Instance names
// are the ids, as an import reads them (IAM keeps no names).
const identityShapesConfig = `
resource "bkiam_instance_grant" "no_type" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "carol" }
  actions   = ["create_biz"]
  resources = []
}

resource "bkiam_instance_grant" "combined" {
  system  = "bk_cmdb"
  subject = { type = "user", id = "bob" }
  actions = ["edit_biz_host"]
  resources = [
    { system = "bk_cmdb", type = "biz", instances = { "1" = "1" } },
    { system = "bk_cmdb", type = "host", instances = { "7" = "7", "8" = "8" } },
  ]
}
`

// TestAccIdentityShapesImportBack: the identity Terraform stores for a
// grant of an action related to no resource type, and for one of a
// combined resource, imports back in a fresh workspace through
// `import { identity = {…} }` exactly as the state file holds it,
// and the plan after the import is empty. Until the identity codec took
// these shapes, both imports were refused ("Invalid import identity").
func TestAccIdentityShapesImportBack(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	if !acctest.CLI.AtLeast(1, 12) {
		t.Skipf("%s has no resource identity (Terraform and OpenTofu 1.12)", acctest.CLI)
	}
	sb := sandboxtest.Start(t)
	providerDir := testutil.BuildProvider(t)
	provider := acctest.DriftProvider(sb, "")

	made := acctest.NewCLIWorkspace(t, providerDir)
	made.Configure(provider, identityShapesConfig)
	made.MustRun("apply", "-auto-approve")
	if !made.PlanIsEmpty() {
		t.Fatal("the plan after creating the grants is not empty")
	}
	identities := storedIdentities(t, made)

	var imports strings.Builder
	for _, name := range []string{"no_type", "combined"} {
		addr := "bkiam_instance_grant." + name
		id, ok := identities[addr]
		if !ok {
			t.Fatalf("the state file holds no identity for %s: %v", addr, identities)
		}
		t.Logf("%s's identity: %s", addr, id)
		fmt.Fprintf(&imports, "import {\n  to       = %s\n  identity = %s\n}\n\n", addr, id)
	}

	adopted := acctest.NewCLIWorkspace(t, providerDir)
	adopted.Configure(provider, identityShapesConfig)
	adopted.Write("imports.tf", imports.String())
	out := adopted.MustRun("plan")
	if !strings.Contains(out, "Plan: 2 to import, 0 to add, 0 to change, 0 to destroy.") {
		t.Fatalf("the plan importing by the stored identities is not two imports alone:\n%s", out)
	}
	adopted.MustRun("apply", "-auto-approve")
	if !adopted.PlanIsEmpty() {
		out, _ := adopted.Run("plan")
		t.Fatalf("the plan after importing by the stored identities is not empty:\n%s", out)
	}
	// The imported states are what the creating workspace records, but
	// for the policy ids (IAM's policy list, which import reads, does not
	// show them).
	for _, name := range []string{"no_type", "combined"} {
		addr := "bkiam_instance_grant." + name
		want, got := stateValues(t, made, addr), stateValues(t, adopted, addr)
		delete(want, "policies")
		delete(got, "policies")
		if w, g := mustJSON(t, want), mustJSON(t, got); w != g {
			t.Errorf("%s imported as\n%s\nwant what the create recorded:\n%s", addr, g, w)
		}
	}
}

// storedResource is a resource of the state file: its address, values
// and the identity Terraform stored.
type storedResource struct {
	Address  string
	Values   map[string]any
	Identity json.RawMessage
}

func stored(t *testing.T, w *acctest.CLIWorkspace) []storedResource {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(w.Dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Instances []struct {
				Attributes map[string]any  `json:"attributes"`
				Identity   json.RawMessage `json:"identity"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatal(err)
	}
	var out []storedResource
	for _, r := range state.Resources {
		for _, in := range r.Instances {
			out = append(out, storedResource{Address: r.Type + "." + r.Name, Values: in.Attributes, Identity: in.Identity})
		}
	}
	return out
}

// storedIdentities are the identities the state file holds, by
// address, as HCL object expressions (JSON's objects and lists are HCL's).
func storedIdentities(t *testing.T, w *acctest.CLIWorkspace) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range stored(t, w) {
		if len(r.Identity) == 0 || string(r.Identity) == "null" {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(r.Identity, &fields); err != nil {
			t.Fatal(err)
		}
		var attrs []string
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range fields {
				if !yield(k) {
					return
				}
			}
		}) {
			attrs = append(attrs, k+" = "+string(fields[k]))
		}
		out[r.Address] = "{ " + strings.Join(attrs, ", ") + " }"
	}
	return out
}

func stateValues(t *testing.T, w *acctest.CLIWorkspace, addr string) map[string]any {
	t.Helper()
	for _, r := range stored(t, w) {
		if r.Address == addr {
			return r.Values
		}
	}
	t.Fatalf("no %s in state", addr)
	return nil
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
