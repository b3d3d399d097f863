package release

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// The versions the install test releases: a team installs the first, then
// upgrades to the second once it is published.
const (
	firstVersion  = "0.0.1"
	secondVersion = "0.0.2"
)

// otherPlatform is the platform the first release is built for beside the
// host's, so that providers lock has a second platform to record. One is
// enough: each platform is a whole cross-compilation.
func otherPlatform() string {
	if HostPlatform() == "linux_arm64" {
		return "linux_amd64"
	}
	return "linux_arm64"
}

// releases builds the two releases once per test process, each in its own
// directory: the first for the host and otherPlatform, the second for the
// host alone. They are built, laid out as mirrors and hashed by
// cmd/release, as make release and make mirror do: in the test process,
// under the race detector, zipping and unzipping the provider would take
// ten times as long.
var releases struct {
	once              sync.Once
	tool, first, next string
	hashes            map[string][]string // version platform → h1:, zh:
	err               error
}

func buildReleases(t *testing.T) (tool, first, next string) {
	t.Helper()
	releases.once.Do(func() {
		releases.err = func() error {
			root := testutil.RepoRoot(t)
			base, err := os.MkdirTemp("", "bkiam-release-test-")
			if err != nil {
				return err
			}
			releases.tool = filepath.Join(base, "release")
			releases.first, releases.next = filepath.Join(base, "first"), filepath.Join(base, "next")
			if _, err := releaseTool(root, "go", "build", "-o", releases.tool, "./cmd/release"); err != nil {
				return err
			}
			releases.hashes = map[string][]string{}
			for _, r := range []struct{ version, out, platforms string }{
				{firstVersion, releases.first, HostPlatform() + "," + otherPlatform()},
				{secondVersion, releases.next, HostPlatform()},
			} {
				if _, err := releaseTool(root, releases.tool, "build", "-version", r.version, "-platforms", r.platforms, "-out", r.out); err != nil {
					return err
				}
				out, err := releaseTool(root, releases.tool, "hashes", "-dist", r.out)
				if err != nil {
					return err
				}
				for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
					f := strings.Fields(line) // version platform h1:… zh:…
					releases.hashes[f[0]+" "+f[1]] = f[2:]
				}
			}
			return nil
		}()
	})
	if releases.err != nil {
		t.Fatalf("building the releases: %v", releases.err)
	}
	return releases.tool, releases.first, releases.next
}

func releaseTool(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// TestMain removes the releases the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if releases.first != "" {
		_ = os.RemoveAll(filepath.Dir(releases.first))
	}
	os.Exit(code)
}

// bkiamAddresses are the provider's addresses on either CLI. The CLI
// configuration is the guide's: the mirror for them, the registries
// for everything else (which the test's configuration does not use, so
// that nothing is downloaded).
const bkiamAddresses = `["registry.terraform.io/bkiam/bkiam", "registry.opentofu.org/bkiam/bkiam"]`

// installConfig is a configuration as a team writes it: the provider by
// its short source address, no dev_overrides, configured through the
// environment.
const installConfig = `terraform {
  required_providers {
    bkiam = {
      source  = "bkiam/bkiam"
      version = ">= ` + firstVersion + `"
    }
  }
}

resource "bkiam_grade_manager" "platform" {
  system  = "bk_cmdb"
  name    = "platform"
  members = ["alice"]

  authorization_scopes = [{
    system  = "bk_cmdb"
    actions = ["view_host"]
    resources = [{
      system    = "bk_cmdb"
      type      = "host"
      instances = [{ id = "*", ancestors = [{ system = "bk_cmdb", type = "biz", id = "2" }] }]
    }]
  }]
  subject_scopes = [{ type = "*", id = "*" }]
}
`

// TestAccReleaseInstall installs the provider as a team on an intranet
// would (docs/guides/intranet-install.md): from an empty directory, with
// a CLI configuration naming only a mirror that cmd/release built from its
// archives, from a filesystem mirror of each layout and from a network
// mirror served over HTTPS with a test CA. It locks the provider for two
// platforms, applies against the sandbox, then publishes the next release
// into the mirror: init keeps the locked version, init -upgrade moves to
// the next, and the state the first wrote is refreshed and planned by it.
func TestAccReleaseInstall(t *testing.T) {
	cli := testutil.CLI(t)
	terraform := testutil.Terraform(t)
	tool, first, next := buildReleases(t)
	// bkiam/bkiam is registry.opentofu.org/bkiam/bkiam to OpenTofu: the
	// mirror serves it under both hostnames, and the lock file names the
	// one the CLI asked for.
	host := "registry.terraform.io"
	if cli.IsTofu() {
		host = "registry.opentofu.org"
	}
	for _, layout := range []Layout{Packed, Unpacked, Network} {
		t.Run(string(layout), func(t *testing.T) {
			t.Parallel()
			mirror := t.TempDir()
			publish := func(dist string) {
				t.Helper()
				if _, err := releaseTool(".", tool, "mirror", "-dist", dist, "-dir", mirror, "-layout", string(layout)); err != nil {
					t.Fatal(err)
				}
			}
			publish(first)

			env := cleanEnv()
			var installation, lockFrom string
			if layout == Network {
				srv := httptest.NewTLSServer(http.FileServer(http.Dir(mirror)))
				t.Cleanup(srv.Close)
				// The CLI trusts the test's CA alone: Go reads SSL_CERT_FILE
				// in place of the system's roots.
				ca := filepath.Join(t.TempDir(), "ca.pem")
				if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
					t.Fatal(err)
				}
				env = append(env, "SSL_CERT_FILE="+ca)
				installation = `network_mirror {
    url     = "` + srv.URL + `/"
    include = ` + bkiamAddresses + `
  }`
				lockFrom = "-net-mirror=" + srv.URL + "/"
			} else {
				installation = `filesystem_mirror {
    path    = "` + filepath.ToSlash(mirror) + `"
    include = ` + bkiamAddresses + `
  }`
				lockFrom = "-fs-mirror=" + mirror
			}
			cliConfig := filepath.Join(t.TempDir(), "cli.tfrc")
			if err := os.WriteFile(cliConfig, []byte("provider_installation {\n  "+installation+"\n  direct { exclude = "+bkiamAddresses+" }\n}\n"), 0o600); err != nil {
				t.Fatal(err)
			}

			sb, agents := startSandbox(t)
			env = append(env, "TF_CLI_CONFIG_FILE="+cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
				"BKIAM_APIGW_URL="+sb.URL, "BKIAM_APP_CODE="+sandboxtest.AppCode, "BKIAM_APP_SECRET="+sandboxtest.AppSecret)
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(installConfig), 0o600); err != nil {
				t.Fatal(err)
			}
			run := func(args ...string) string {
				t.Helper()
				cmd := exec.Command(terraform, append(args, "-no-color")...)
				testutil.EndWithTest(cmd)
				cmd.Dir, cmd.Env = dir, env
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s %s with the %s mirror: %v\n%s", cli, strings.Join(args, " "), layout, err, out)
				}
				return string(out)
			}

			// OpenTofu records the zh: hashes a network mirror's
			// VERSION.json gives; Terraform records only the h1: hashes of
			// what it installed or locked (it takes zh: from a registry's
			// signed SHA256SUMS alone).
			zh := layout == Network && cli.IsTofu()
			run("init")
			wantLock(t, dir, host, firstVersion, zh, HostPlatform())
			run("providers", "lock", lockFrom, "-platform="+HostPlatform(), "-platform="+otherPlatform())
			wantLock(t, dir, host, firstVersion, zh, HostPlatform(), otherPlatform())
			run("apply", "-auto-approve")
			if n := len(sb.GradeManagers()); n != 1 {
				t.Fatalf("apply made %d grade managers, want 1", n)
			}
			if !agents.saw("terraform-provider-bkiam/" + firstVersion) {
				t.Fatalf("the sandbox saw no call from terraform-provider-bkiam/%s (user agents %v): the installed binary is not the release's", firstVersion, agents.list())
			}

			publish(next)
			run("init")
			wantLock(t, dir, host, firstVersion, zh, HostPlatform(), otherPlatform())
			run("init", "-upgrade")
			wantLock(t, dir, host, secondVersion, zh, HostPlatform())
			run("apply", "-refresh-only", "-auto-approve")
			run("plan", "-detailed-exitcode") // exit 2, a change, fails
			if !agents.saw("terraform-provider-bkiam/" + secondVersion) {
				t.Fatalf("the sandbox saw no call from terraform-provider-bkiam/%s after init -upgrade (user agents %v)", secondVersion, agents.list())
			}
		})
	}
}

// cleanEnv is the test's environment without the TF_ variables a developer
// may have set (a plugin cache, a data directory, CLI arguments), which
// would install from elsewhere than the mirror.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") && !strings.HasPrefix(kv, "SSL_CERT_") {
			env = append(env, kv)
		}
	}
	return env
}

// userAgents records the User-Agent of every call to the sandbox: the
// provider's names its version, stamped into the binary at release.
type userAgents struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (u *userAgents) saw(prefix string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for ua := range u.seen {
		if strings.HasPrefix(ua, prefix+" ") || ua == prefix {
			return true
		}
	}
	return false
}

func (u *userAgents) list() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return testutil.Keys(func() map[string]string {
		m := map[string]string{}
		for ua := range u.seen {
			m[ua] = ""
		}
		return m
	}())
}

// startSandbox starts the sandbox behind a handler that records user agents.
func startSandbox(t *testing.T) (*sandboxtest.Sandbox, *userAgents) {
	t.Helper()
	srv, err := sandbox.New()
	if err != nil {
		t.Fatal(err)
	}
	agents := &userAgents{seen: map[string]bool{}}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		agents.mu.Lock()
		agents.seen[r.UserAgent()] = true
		agents.mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return &sandboxtest.Sandbox{URL: hs.URL, Server: srv, HTTP: hs}, agents
}

// wantLock checks .terraform.lock.hcl: the provider under host at version,
// with the h1: hash of the release's zip of each platform, and with zh
// its zh: hash too.
func wantLock(t *testing.T, dir, host, version string, zh bool, platforms ...string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	lock := string(data)
	block := regexp.MustCompile(`(?s)provider "` + regexp.QuoteMeta(host+"/bkiam/bkiam") + `" \{.*?\n\}`).FindString(lock)
	if block == "" {
		t.Fatalf("the lock file has no provider %q/bkiam/bkiam:\n%s", host, lock)
	}
	if !strings.Contains(block, `version     = "`+version+`"`) {
		t.Fatalf("the lock file does not record version %s:\n%s", version, block)
	}
	for _, p := range platforms {
		hashes := releases.hashes[version+" "+p]
		if !zh {
			hashes = hashes[:1]
		}
		for _, h := range hashes {
			if !strings.Contains(block, `"`+h+`"`) {
				t.Fatalf("the lock file lacks %s's hash %s:\n%s", p, h, block)
			}
		}
	}
}
