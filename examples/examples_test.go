// Package examples checks that every example configuration is formatted
// and valid against a fresh build of the provider, as users will run them,
// and that each resource's example applies against the IAM sandbox.
package examples

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
	"github.com/bkiam/terraform-provider-bkiam/internal/tfcli"
)

// versionsTF is added to example directories that do not declare the
// provider themselves (the per-resource examples, which the docs show
// as they are): without it Terraform would look for hashicorp/bkiam.
const versionsTF = `terraform {
  required_providers {
    bkiam = {
      source = "bkiam/bkiam"
    }
  }
}
`

func TestAccExamples(t *testing.T) {
	terraform := testutil.Terraform(t)
	providerDir := testutil.BuildProvider(t)
	root := filepath.Join(testutil.RepoRoot(t), "examples")

	// Work on a copy: validate writes .terraform directories.
	work := t.TempDir()
	if err := os.CopyFS(work, os.DirFS(root)); err != nil {
		t.Fatal(err)
	}
	cliConfig := filepath.Join(t.TempDir(), "terraform.tfrc")
	config := `provider_installation {
  dev_overrides {
    "bkiam/bkiam" = "` + providerDir + `"
  }
  direct {}
}
`
	if err := os.WriteFile(cliConfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	dirs := exampleDirs(t, work)
	if len(dirs) < 5 {
		t.Fatalf("found only %d example directories: %v", len(dirs), dirs)
	}
	for _, dir := range dirs {
		rel, _ := filepath.Rel(work, dir)
		t.Run(rel, func(t *testing.T) {
			var env []string
			run := func(args ...string) {
				t.Helper()
				cmd := exec.Command(terraform, args...)
				testutil.EndWithTest(cmd)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
				cmd.Env = append(cmd.Env, env...)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("terraform %s in examples/%s: %v\n%s", strings.Join(args, " "), rel, err, out)
				}
			}
			run("fmt", "-check", "-diff", "-no-color")
			// import-by-identity.tf is the docs' import example (Terraform
			// 1.12+), of objects this configuration does not create:
			// formatted like the rest, then left out of validate and apply.
			if err := os.Remove(filepath.Join(dir, "import-by-identity.tf")); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if !declaresProvider(t, dir) {
				if err := os.WriteFile(filepath.Join(dir, "zz_versions_test.tf"), []byte(versionsTF), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if strings.HasPrefix(filepath.ToSlash(rel), "actions/") && !cliHasActions(t, terraform) {
				return // formatted; only Terraform 1.14 and later know action blocks
			}
			run("get") // installs local modules; providers come from dev_overrides
			run("validate", "-no-color")
			if strings.HasPrefix(filepath.ToSlash(rel), "data-sources/") {
				// A data source's example reads the sandbox and plans empty.
				sb := sandboxtest.Start(t)
				env = []string{"BKIAM_APIGW_URL=" + sb.URL, "BKIAM_APP_CODE=" + sandboxtest.AppCode, "BKIAM_APP_SECRET=" + sandboxtest.AppSecret}
				read := "model_query"
				switch filepath.Base(rel) {
				case "bkiam_group", "bkiam_grade_manager":
					// They find a grade manager and its group made outside the configuration.
					outsideGroup(t, sb, "developers")
					read = map[string]string{"bkiam_group": "group:list", "bkiam_grade_manager": "grade_manager:list"}[filepath.Base(rel)]
				case "bkiam_effective_permissions":
					read = "policy_query_by_actions"
				case "bkiam_access_check":
					read = "policy_auth_by_actions"
				case "bkiam_user_access":
					read = "user_groups"
				case "bkiam_expiring":
					// The on-call group, made outside the configuration; its members and alice's grants are read.
					outsideGroup(t, sb, "oncall")
					read = "member:list"
				}
				run("apply", "-auto-approve", "-no-color")
				run("plan", "-detailed-exitcode", "-no-color")
				if sb.Stats().Requests[read] == 0 {
					t.Fatalf("examples/%s made no %s call", rel, read)
				}
				return
			}
			if strings.HasPrefix(filepath.ToSlash(rel), "actions/") {
				// An action's example plans and invokes each action against a
				// sandbox whose gateway carries the route and lets the app call it.
				sb := acctest.CleanupGranted.Start(t)
				env = []string{"BKIAM_APIGW_URL=" + sb.URL, "BKIAM_APP_CODE=" + sandboxtest.AppCode, "BKIAM_APP_SECRET=" + sandboxtest.AppSecret}
				for _, name := range []string{"leaver", "leaver_since"} {
					run("apply", "-auto-approve", "-no-color", "-invoke=action.bkiam_user_cleanup."+name)
				}
				if n := sb.Stats().Requests["admin:cleanup"]; n < 4 {
					t.Fatalf("examples/%s made %d cleanup calls, want a probe and a cleanup per action", rel, n)
				}
				return
			}
			if !strings.HasPrefix(filepath.ToSlash(rel), "resources/") {
				return // the demo applies examples/demo; examples/provider names a real site
			}
			// A resource's example, as the docs show it, applies against the
			// sandbox (configured through the environment, as the examples
			// leave the provider block out), plans empty, and destroys
			// everything it granted.
			sb := sandboxtest.Start(t)
			env = []string{"BKIAM_APIGW_URL=" + sb.URL, "BKIAM_APP_CODE=" + sandboxtest.AppCode, "BKIAM_APP_SECRET=" + sandboxtest.AppSecret}
			run("apply", "-auto-approve", "-no-color")
			if len(sb.Policies(sandbox.PolicyFilter{}).Policies) == 0 && len(sb.GradeManagers()) == 0 {
				t.Fatalf("applying examples/%s granted nothing and created no grade manager", rel)
			}
			run("plan", "-detailed-exitcode", "-no-color") // exit 2 (a change) fails
			run("destroy", "-auto-approve", "-no-color")
			if left := sb.Policies(sandbox.PolicyFilter{}).Policies; len(left) != 0 {
				t.Fatalf("destroying examples/%s left %d policies in IAM", rel, len(left))
			}
			if m := sb.Management(); len(m.GradeManagers) != 0 || len(m.Groups) != 0 {
				t.Fatalf("destroying examples/%s left %d grade managers and %d groups in IAM", rel, len(m.GradeManagers), len(m.Groups))
			}
		})
	}
}

// cliHasActions reports whether the CLI knows action blocks (Terraform 1.14
// and later; not Terraform 1.5.7 or OpenTofu 1.12).
func cliHasActions(t *testing.T, terraform string) bool {
	t.Helper()
	cli, err := tfcli.Identify(context.Background(), terraform)
	if err != nil {
		t.Fatal(err)
	}
	return cli.Terraform(1, 14)
}

// exampleDirs lists the directories under root that hold .tf files.
// outsideGroup creates, as another team would, a grade manager of bk_cmdb
// with a group called name, and returns the grade manager's id.
func outsideGroup(t *testing.T, sb *sandboxtest.Sandbox, name string) int64 {
	t.Helper()
	gm, _ := acctest.OutsideGroup(t, acctest.OutsideClient(t, sb), "platform", name)
	return gm
}

func exampleDirs(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".tf") && !seen[filepath.Dir(path)] {
			seen[filepath.Dir(path)] = true
			dirs = append(dirs, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func declaresProvider(t *testing.T, dir string) bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), `source = "bkiam/bkiam"`) {
			return true
		}
	}
	return false
}
