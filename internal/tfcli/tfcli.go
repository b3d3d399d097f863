// Package tfcli tells which CLI a binary is: Terraform or OpenTofu, and
// which version. The tests, the demo and the benchmarks drive whichever
// binary they are given (make test runs Terraform 1.16.4, Terraform 1.5.7
// and OpenTofu 1.12.6), and a few of their expectations depend on it: the
// registry a provider source resolves to, the commands a CLI has (test
// since Terraform 1.7; query since 1.14, Terraform only), and the name a
// user types.
package tfcli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

// CLI is one Terraform-compatible command-line binary.
type CLI struct {
	// Path is the binary as given.
	Path string
	// Name is what users type: "terraform" or "tofu".
	Name string
	// Major, Minor and Patch are its version.
	Major, Minor, Patch int
}

// versionLine is the first line of `terraform version` and `tofu version`.
var versionLine = regexp.MustCompile(`(?m)^(Terraform|OpenTofu) v(\d+)\.(\d+)\.(\d+)`)

// Identify runs `path version` and reads the answer. The CLI runs with no
// CLI configuration file, so that one it cannot read (OpenTofu and
// Terraform 1.16 warn about it on stdout) does not get in the way, and
// without a checkpoint call.
func Identify(ctx context.Context, path string) (CLI, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "version")
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+os.DevNull, "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		return CLI{}, fmt.Errorf("%s version: %w", path, err)
	}
	return parse(path, out)
}

func parse(path string, out []byte) (CLI, error) {
	m := versionLine.FindSubmatch(out)
	if m == nil {
		return CLI{}, fmt.Errorf("%s version printed no Terraform or OpenTofu version: %q", path, out)
	}
	c := CLI{Path: path, Name: "terraform"}
	if string(m[1]) == "OpenTofu" {
		c.Name = "tofu"
	}
	// The patterns are digits: Atoi cannot fail short of overflow.
	c.Major, _ = strconv.Atoi(string(m[2]))
	c.Minor, _ = strconv.Atoi(string(m[3]))
	c.Patch, _ = strconv.Atoi(string(m[4]))
	return c, nil
}

// IsTofu reports whether the CLI is OpenTofu.
func (c CLI) IsTofu() bool { return c.Name == "tofu" }

// AtLeast reports whether the CLI's version is major.minor or later.
func (c CLI) AtLeast(major, minor int) bool {
	return c.Major > major || c.Major == major && c.Minor >= minor
}

// Terraform reports whether the CLI is Terraform major.minor or later
// (not OpenTofu, whose versions are numbered on their own).
func (c CLI) Terraform(major, minor int) bool { return !c.IsTofu() && c.AtLeast(major, minor) }

// Tofu reports whether the CLI is OpenTofu major.minor or later.
func (c CLI) Tofu(major, minor int) bool { return c.IsTofu() && c.AtLeast(major, minor) }

// String is the CLI as its version command names it: "Terraform v1.16.4".
func (c CLI) String() string {
	product := "Terraform"
	if c.IsTofu() {
		product = "OpenTofu"
	}
	return fmt.Sprintf("%s v%d.%d.%d", product, c.Major, c.Minor, c.Patch)
}
