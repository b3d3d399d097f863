package examples

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccListResourceExamples: every list resource's example (the docs'
// Example Usage) is formatted and valid against a fresh build of the
// provider, through a CLI with terraform query (Terraform 1.14+:
// `terraform validate -query`). The list resources themselves are tested
// against the sandbox by TestAccQuery.
func TestAccListResourceExamples(t *testing.T) {
	if cli := testutil.CLI(t); !cli.Terraform(1, 14) {
		t.Skipf("%s has no terraform query (Terraform 1.14)", cli)
	}
	terraform := testutil.Terraform(t)
	providerDir := testutil.BuildProvider(t)
	root := filepath.Join(testutil.RepoRoot(t), "examples", "list-resources")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	cliConfig := filepath.Join(t.TempDir(), "terraform.tfrc")
	if err := os.WriteFile(cliConfig, []byte("provider_installation {\n  dev_overrides {\n    \"bkiam/bkiam\" = \""+providerDir+
		"\"\n  }\n  direct {}\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if len(entries) < 5 {
		t.Fatalf("found %d list resource examples, want one for each of the five list resources", len(entries))
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			dir := t.TempDir()
			example, err := os.ReadFile(filepath.Join(root, e.Name(), "list-resource.tfquery.hcl"))
			if err != nil {
				t.Fatal(err)
			}
			// The provider configured as the docs configure it, from the environment.
			files := map[string]string{"list-resource.tfquery.hcl": string(example), "versions.tf": versionsTF + "\nprovider \"bkiam\" {}\n"}
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, args := range [][]string{{"fmt", "-check", "-diff", "-no-color", "list-resource.tfquery.hcl"}, {"validate", "-query", "-no-color"}} {
				cmd := exec.Command(terraform, args...)
				testutil.EndWithTest(cmd)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("terraform %s on examples/list-resources/%s: %v\n%s", strings.Join(args, " "), e.Name(), err, out)
				}
			}
		})
	}
}
