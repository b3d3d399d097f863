// Package testutil holds helpers for tests that drive the real Terraform
// CLI outside terraform-plugin-testing: the demo's and the examples'.
package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Terraform returns the Terraform CLI the tests use (TF_ACC_TERRAFORM_PATH,
// which make test sets), skipping the test when there is none.
func Terraform(t testing.TB) string {
	t.Helper()
	path := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if path == "" || os.Getenv("TF_ACC") == "" {
		t.Skip("needs the Terraform CLI: set TF_ACC=1 and TF_ACC_TERRAFORM_PATH (make test does)")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// RepoRoot is the repository's root directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the repository")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// BuildProvider builds terraform-provider-bkiam into a fresh directory and
// returns the directory, for a dev_overrides CLI configuration.
func BuildProvider(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "terraform-provider-bkiam"), ".")
	cmd.Dir = RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	return dir
}
