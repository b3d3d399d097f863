package examples

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccModuleTests runs the team_access module's own tests with `tofu
// test` or `terraform test`, as a module author would: the mocked ones
// with no IAM at all, then the integration ones against the IAM sandbox
// with the real provider. Mocked providers need Terraform 1.7 or OpenTofu
// 1.8; Terraform 1.5.7 has no test command, so this runs in make test's
// Terraform 1.16 and OpenTofu passes.
func TestAccModuleTests(t *testing.T) {
	c := testutil.CLI(t)
	if !c.Terraform(1, 7) && !c.Tofu(1, 8) {
		t.Skipf("needs Terraform 1.7 or OpenTofu 1.8 (mock_provider): %s", c)
	}
	cli := c.Path
	providerDir := testutil.BuildProvider(t)
	dir := filepath.Join(t.TempDir(), "team_access")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(testutil.RepoRoot(t), "examples", "modules", "team_access"))); err != nil {
		t.Fatal(err)
	}
	cliConfig := filepath.Join(t.TempDir(), "cli.tfrc")
	if err := os.WriteFile(cliConfig, []byte("provider_installation {\n  dev_overrides {\n    \"bkiam/bkiam\" = \""+providerDir+"\"\n  }\n  direct {}\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(cli, args...)
		testutil.EndWithTest(cmd)
		cmd.Dir = dir
		// Only what the CLI needs: no BlueKing settings from the developer's
		// environment reach the mocked run.
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TF_CLI_CONFIG_FILE=" + cliConfig,
			"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"}, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", c.Name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	tofuTest := func(env []string, args ...string) string {
		t.Helper()
		return run(env, append([]string{"test", "-no-color"}, args...)...)
	}

	// The tests' helper module (tests/access) is installed as a module
	// author installs it; the provider comes from dev_overrides.
	run(nil, "get", "-no-color")
	out := tofuTest(nil, "-filter=tests/mock.tftest.hcl")
	if !strings.Contains(out, "3 passed, 0 failed") {
		t.Fatalf("the mocked tests did not all run and pass:\n%s", out)
	}

	sb := sandboxtest.Start(t)
	out = tofuTest([]string{"BKIAM_APIGW_URL=" + sb.URL, "BKIAM_APP_CODE=" + sandboxtest.AppCode, "BKIAM_APP_SECRET=" + sandboxtest.AppSecret},
		"-filter=tests/sandbox.tftest.hcl")
	if !strings.Contains(out, "3 passed, 0 failed") {
		t.Fatalf("the sandbox tests did not all run and pass:\n%s", out)
	}
	if n := sb.Stats().Requests["batch_instance:grant"]; n == 0 {
		t.Fatal("the sandbox tests granted nothing in IAM")
	}
	if left := sb.Policies(sandbox.PolicyFilter{}).Policies; len(left) != 0 {
		t.Fatalf("%s test left %d policies in IAM", c.Name, len(left))
	}
}
