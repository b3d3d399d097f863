package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/tfcli"
)

// terraform runs the Terraform CLI in the demo's working directory.
type terraform struct {
	path string
	// name is what a user types, terraform or tofu, as the demo shows
	// its commands; version is the CLI and its version.
	name, version string
	dir           string
	env           []string
	out           io.Writer
	args          []string // added to every command that takes them (-no-color)
}

func newTerraform(ctx context.Context, opts Options, work, url string, out io.Writer) (*terraform, error) {
	providerDir, err := filepath.Abs(opts.ProviderDir)
	if err != nil {
		return nil, err
	}
	// Terraform runs in the scratch directory: resolve its path first.
	terraformPath, err := filepath.Abs(opts.Terraform)
	if err != nil {
		return nil, err
	}
	cliConfig := filepath.Join(work, "terraform.tfrc")
	config := fmt.Sprintf(`provider_installation {
  dev_overrides {
    "bkiam/bkiam" = %q
  }
  direct {}
}
`, providerDir)
	if err := os.WriteFile(cliConfig, []byte(config), 0o600); err != nil {
		return nil, err
	}
	cli, err := tfcli.Identify(ctx, terraformPath)
	if err != nil {
		return nil, err
	}
	tf := &terraform{path: terraformPath, name: cli.Name, version: cli.String(), dir: filepath.Join(work, "demo"), out: out}
	if !opts.Color {
		tf.args = []string{"-no-color"}
	}
	// The user's own settings must not leak in: a BKIAM_ESB_URL in the
	// environment would make the provider refuse two endpoints, and a
	// TF_CLI_CONFIG_FILE would replace the dev_overrides.
	for _, kv := range os.Environ() {
		name := kv[:strings.IndexByte(kv+"=", '=')]
		if strings.HasPrefix(name, "BKIAM_") || strings.HasPrefix(name, "BK_") || strings.HasPrefix(name, "BKPAAS_") ||
			strings.HasPrefix(name, "TF_") {
			continue
		}
		tf.env = append(tf.env, kv)
	}
	tf.env = append(tf.env,
		"TF_CLI_CONFIG_FILE="+cliConfig,
		"TF_IN_AUTOMATION=1",
		"CHECKPOINT_DISABLE=1",
		"BKIAM_APIGW_URL="+url,
		"BKIAM_APP_CODE=bkiam-sandbox",
		"BKIAM_APP_SECRET=sandbox-secret",
	)
	return tf, nil
}

// run runs one command and fails on a non-zero exit.
func (tf *terraform) run(ctx context.Context, args ...string) error {
	code, err := tf.exitCode(ctx, args...)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("terraform %s exited %d", args[0], code)
	}
	return nil
}

// exitCode runs one command and returns its exit code. Terraform and the
// provider it starts run in a process group of their own: on cancellation
// the group gets an interrupt, as from Ctrl-C, and whatever is left of it
// when the command ends is killed, so no process outlives the demo.
func (tf *terraform) exitCode(ctx context.Context, args ...string) (int, error) {
	full := append([]string{args[0]}, tf.args...)
	if args[0] == "get" {
		full = args // takes no -no-color
	} else {
		full = append(full, args[1:]...)
	}
	fmt.Fprintf(tf.out, "$ %s %s\n", tf.name, strings.Join(full, " "))
	cmd := exec.CommandContext(ctx, tf.path, full...)
	cmd.Dir = tf.dir
	cmd.Env = tf.env
	cmd.Stdout = tf.out
	cmd.Stderr = tf.out
	ownProcessGroup(cmd)
	cmd.Cancel = func() error { return interruptGroup(cmd) }
	cmd.WaitDelay = 30 * time.Second
	err := cmd.Run()
	killGroup(cmd)
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return 0, fmt.Errorf("stopped during terraform %s: %w", args[0], ctx.Err())
	case errors.As(err, &exit):
		return exit.ExitCode(), nil
	case err != nil:
		return 0, fmt.Errorf("running terraform %s: %w", args[0], err)
	}
	return 0, nil
}
