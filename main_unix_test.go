//go:build unix

package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/parentwatch"
	"github.com/bkiam/terraform-provider-bkiam/internal/parentwatch/parentwatchtest"
)

// serveEnv makes the test binary, run again, the provider: main() instead of
// the tests.
const serveEnv = "BKIAM_TEST_SERVE_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestProviderExitsWithItsCLI serves the provider as Terraform does, the child
// of a process that is then killed as a go test -timeout kills its CLIs: the
// served provider must exit soon after, and a -debug provider, which a person
// starts, must keep running.
func TestProviderExitsWithItsCLI(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("locating the test binary: %v", err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		first string // how the provider's stdout starts once it serves
		exits bool
	}{
		// go-plugin's handshake: core protocol 1, plugin protocol 6.
		{name: "served", first: "1|6|", exits: true},
		{name: "debug", args: []string{"-debug"}, first: "Provider started."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := []string{
				serveEnv + "=1",
				// What Terraform sets for its plugins, without which
				// go-plugin refuses to serve.
				"TF_PLUGIN_MAGIC_COOKIE=d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
				// The socket is left behind by a provider that does not
				// stop cleanly, as neither case here does.
				"PLUGIN_UNIX_SOCKET_DIR=" + t.TempDir(),
			}
			o := parentwatchtest.Start(t, env, append([]string{exe}, tc.args...)...)
			if line, ev := o.Next(60 * time.Second); ev != parentwatchtest.Line || !strings.HasPrefix(line, tc.first) {
				t.Fatalf("the provider's first word: %v %q, want %q…", ev, line, tc.first)
			}
			// Serving, with the parent alive: four looks at it, no exit.
			if line, ev := o.Drain(4 * parentwatch.DefaultInterval); ev != parentwatchtest.Nothing {
				t.Fatalf("the provider exited while its parent lives (last word %q)", line)
			}

			o.EndShell(t, true)
			// Four looks at the parent, and for an exit a second more: the
			// race runtime sleeps at exit.
			wait := 4 * parentwatch.DefaultInterval
			if tc.exits {
				wait += time.Second
			}
			line, ev := o.Drain(wait)
			if !tc.exits {
				if ev != parentwatchtest.Nothing {
					t.Fatalf("the -debug provider exited when the process that started it was killed (last word %q)", line)
				}
				return
			}
			if ev != parentwatchtest.End {
				t.Fatalf("the provider still runs %v after its parent was killed", wait)
			}
			o.AssertExited(t)
			const why = "the process that started this provider (pid "
			if stderr := o.Stderr(t); !strings.Contains(stderr, why) {
				t.Errorf("the provider's stderr does not say why it exited (%q…):\n%s", why, stderr)
			}
		})
	}
}
