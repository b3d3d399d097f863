// Package testutil holds helpers for tests that drive the real Terraform
// CLI outside terraform-plugin-testing: the demo's and the examples'.
package testutil

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/tfcli"
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

// BuildProvider builds terraform-provider-bkiam, once per test process,
// and returns the directory that holds it, for a dev_overrides CLI
// configuration. The tests that use it only run it, so they share one
// build: each build links the whole provider, a second of CPU, and a
// package's tests asked for one each. Main removes the directory when
// the tests end.
func BuildProvider(t testing.TB) string {
	t.Helper()
	return providerBuild.dir(t)
}

// BuildFloorProvider builds terraform-provider-floor, the empty provider
// of make bench (internal/bench/floor), as BuildProvider builds the
// provider: once per test process, into a directory of its own.
func BuildFloorProvider(t testing.TB) string {
	t.Helper()
	return floorBuild.dir(t)
}

// build is a binary of the module that the tests build once per process.
type build struct {
	binary, pkg string // the file's name, the package's path from the repository's root
	once        sync.Once
	into        string // the directory the binary is built into
	err         error
}

var (
	providerBuild = &build{binary: "terraform-provider-bkiam", pkg: "."}
	floorBuild    = &build{binary: "terraform-provider-floor", pkg: "./internal/bench/floor"}
	builds        = []*build{providerBuild, floorBuild}
)

// dir builds the binary the first time it is asked for, and returns the
// directory that holds it.
func (b *build) dir(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", b.binary+"-")
		if err != nil {
			b.err = err
			return
		}
		b.into = dir
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b.binary), b.pkg)
		cmd.Dir = RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatalf("building %s: %v", b.binary, b.err)
	}
	return b.into
}

// Main runs the tests of a package that drives a CLI (its TestMain), then
// removes what BuildProvider and BuildFloorProvider built.
func Main(m *testing.M) {
	code := m.Run()
	for _, b := range builds {
		if b.into != "" {
			_ = os.RemoveAll(b.into)
		}
	}
	os.Exit(code)
}

// CLIEnv prepares the process environment for driving the CLI named by
// TF_ACC_TERRAFORM_PATH, Terraform or OpenTofu, and returns it
// (tfcli.Identify). Two things differ between them:
//
//   - the registry a provider source without a host resolves to:
//     bkiam/bkiam is registry.terraform.io/bkiam/bkiam to Terraform and
//     registry.opentofu.org/bkiam/bkiam to OpenTofu. terraform-plugin-testing
//     serves the provider under TF_ACC_PROVIDER_HOST, which is set to match
//     unless already set;
//   - a CLI configuration file that cannot be read: OpenTofu and Terraform
//     1.16 warn on stdout, which breaks the version check of
//     terraform-plugin-testing, so a TF_CLI_CONFIG_FILE naming a missing
//     file is replaced by an empty one.
//
// Call it from TestMain, before any test runs; without
// TF_ACC_TERRAFORM_PATH it returns the zero CLI.
func CLIEnv() (tfcli.CLI, error) {
	if f := os.Getenv("TF_CLI_CONFIG_FILE"); f != "" {
		if _, err := os.Stat(f); err != nil {
			if err := os.Setenv("TF_CLI_CONFIG_FILE", os.DevNull); err != nil {
				return tfcli.CLI{}, err
			}
		}
	}
	path := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if path == "" {
		return tfcli.CLI{}, nil
	}
	cli, err := tfcli.Identify(context.Background(), path)
	if err != nil {
		return tfcli.CLI{}, err
	}
	host := "registry.terraform.io"
	if cli.IsTofu() {
		host = "registry.opentofu.org"
	}
	if os.Getenv("TF_ACC_PROVIDER_HOST") == "" {
		if err := os.Setenv("TF_ACC_PROVIDER_HOST", host); err != nil {
			return tfcli.CLI{}, err
		}
	}
	return cli, nil
}

// CLI identifies the CLI of Terraform(t), skipping the test when there is
// none.
func CLI(t testing.TB) tfcli.CLI {
	t.Helper()
	cli, err := tfcli.Identify(context.Background(), Terraform(t))
	if err != nil {
		t.Fatal(err)
	}
	return cli
}

// CLISubsetEnv names the variable make test sets on its passes of
// Terraform 1.5.7 and OpenTofu: there, only the tests whose outcome can
// differ between CLIs run (docs/development.md), and the pass of
// Terraform 1.16 runs the rest.
const CLISubsetEnv = "BKIAM_TEST_CLI_SUBSET"

// SameOnEveryCLI marks a test whose outcome cannot differ between CLIs:
// what it checks is the provider's own doing, which every CLI reaches
// through the same protocol calls, and why says so. It skips the test on
// the passes that run only what can differ (CLISubsetEnv); everywhere
// else, make testacc and make testacc-site included, the test runs.
func SameOnEveryCLI(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(CLISubsetEnv) != "" {
		t.Skipf("the same on every CLI, run on the Terraform 1.16 pass (%s=1 here): %s", CLISubsetEnv, why)
	}
}
