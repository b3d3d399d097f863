package acctest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// CLIWorkspace drives the real Terraform CLI over the built provider
// binary, outside terraform-plugin-testing, for the tests that need what
// it cannot do: read the state a failed apply leaves (including the
// provider's private record of what is held), interrupt a running apply
// as Ctrl-C does, and run long sequences of applies.
type CLIWorkspace struct {
	t         *testing.T
	Terraform string
	Dir       string
	env       []string
}

// Indexes into transports.
const (
	GatewayTransport = 0
	ESBTransport     = 1
)

// NewCLIWorkspace makes an empty working directory whose Terraform uses
// the provider built into providerDir (testutil.BuildProvider).
func NewCLIWorkspace(t *testing.T, providerDir string) *CLIWorkspace {
	t.Helper()
	dir := t.TempDir()
	rc := filepath.Join(dir, "terraform.tfrc")
	if err := os.WriteFile(rc, fmt.Appendf(nil, "provider_installation {\n  dev_overrides {\n    \"bkiam/bkiam\" = %q\n  }\n  direct {}\n}\n", providerDir), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &CLIWorkspace{t: t, Terraform: testutil.Terraform(t), Dir: dir}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "BKIAM_") || strings.HasPrefix(name, "BK_") || strings.HasPrefix(name, "BKPAAS_") || strings.HasPrefix(name, "TF_") {
			continue // the test's configuration says everything
		}
		w.env = append(w.env, kv)
	}
	w.env = append(w.env, "TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	return w
}

// Configure writes main.tf: the provider block and the resources.
func (w *CLIWorkspace) Configure(provider, resources string) {
	w.t.Helper()
	config := "terraform {\n  required_providers {\n    bkiam = { source = \"bkiam/bkiam\" }\n  }\n}\n" + provider + resources
	w.Write("main.tf", config)
}

// Write writes a file of the working directory (a query file, an import
// block beside main.tf).
func (w *CLIWorkspace) Write(name, text string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.Dir, name), []byte(text), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// Remove removes a file of the working directory.
func (w *CLIWorkspace) Remove(name string) {
	w.t.Helper()
	if err := os.Remove(filepath.Join(w.Dir, name)); err != nil {
		w.t.Fatal(err)
	}
}

// Command prepares a Terraform command with -no-color, and -input=false
// where the command takes it (not query, output or show); state subcommands, taint and
// untaint as they are.
func (w *CLIWorkspace) Command(ctx context.Context, args ...string) (*exec.Cmd, *bytes.Buffer) {
	full := []string{args[0]}
	switch args[0] {
	case "state", "taint", "untaint":
	case "query", "output", "show":
		full = append(full, "-no-color")
	default:
		full = append(full, "-no-color", "-input=false")
	}
	full = append(full, args[1:]...)
	cmd := exec.CommandContext(ctx, w.Terraform, full...)
	cmd.Dir, cmd.Env = w.Dir, w.env
	testutil.EndWithTest(cmd)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// SiteSecret passes a real site's app secret to the workspace's commands
// in the environment, as Site.Provider leaves it out of the provider
// block; nothing against the sandbox.
func (w *CLIWorkspace) SiteSecret() {
	if Site != nil {
		w.env = append(w.env, "BKIAM_APP_SECRET="+Site.Client.AppSecret)
	}
}

// Run runs a command to its end and returns its output and exit code.
func (w *CLIWorkspace) Run(args ...string) (string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd, out := w.Command(ctx, args...)
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		w.t.Fatalf("terraform %s: %v", args[0], err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// MustRun runs a command that has to succeed.
func (w *CLIWorkspace) MustRun(args ...string) string {
	w.t.Helper()
	out, code := w.Run(args...)
	if code != 0 {
		w.t.Fatalf("terraform %s exited %d:\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// PlanIsEmpty runs terraform plan -detailed-exitcode.
func (w *CLIWorkspace) PlanIsEmpty() bool {
	w.t.Helper()
	out, code := w.Run("plan", "-detailed-exitcode")
	switch code {
	case 0:
		return true
	case 2:
		return false
	}
	w.t.Fatalf("terraform plan exited %d:\n%s", code, out)
	return false
}

// Recorded is what the state file says the bkiam_instance_grant resources
// hold: for each, its private record of holdings when it has one, else its
// actions over its instances. It is keyed by subject ("user/alice"), then
// action, with paths rendered like heldPaths; partial lists the subject's
// actions recorded as an upper bound only: a call whose outcome is
// unknown, or a tainted object. A create that stopped midway shows the
// upper bound of what it may have granted, and Terraform taints it and
// keeps that view, without the private record, until a destroy of it
// succeeds: a destroy that IAM refused definitively leaves it as it was,
// still an upper bound.
type Recorded struct {
	Held    map[string]map[string][]string
	Partial map[string]map[string]bool
}

func (w *CLIWorkspace) Recorded() Recorded {
	w.t.Helper()
	rec := Recorded{Held: map[string]map[string][]string{}, Partial: map[string]map[string]bool{}}
	paths := map[string]map[string]map[string]bool{}
	for _, in := range w.stateInstances("bkiam_instance_grant") {
		subject := in.Attributes.Subject.Type + "/" + in.Attributes.Subject.ID
		if paths[subject] == nil {
			paths[subject], rec.Partial[subject] = map[string]map[string]bool{}, map[string]bool{}
		}
		for action, h := range in.holdings(w.t) {
			if paths[subject][action] == nil {
				paths[subject][action] = map[string]bool{}
			}
			for _, r := range h.Resources {
				for id := range r.Instances {
					paths[subject][action][fmt.Sprintf("/%s,%s,%s/", r.System, r.Type, id)] = true
				}
			}
			rec.Partial[subject][action] = rec.Partial[subject][action] || h.Partial
		}
	}
	for subject, actions := range paths {
		rec.Held[subject] = map[string][]string{}
		for action, set := range actions {
			rec.Held[subject][action] = slices.Sorted(maps.Keys(set))
		}
	}
	return rec
}

// stateInstance is a resource instance of the state file, as far as the
// harness reads what a grant holds from it.
type stateInstance struct {
	Attributes struct {
		Subject struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		} `json:"subject"`
		Actions   []string `json:"actions"`
		Resources []struct {
			System    string            `json:"system"`
			Type      string            `json:"type"`
			Instances map[string]string `json:"instances"`
		} `json:"resources"`
	} `json:"attributes"`
	Private []byte `json:"private"` // base64 in the file
	Status  string `json:"status"`  // "tainted", or empty
}

// stateInstances are the instances of the state's resources of typeName:
// none before the first apply.
func (w *CLIWorkspace) stateInstances(typeName string) []stateInstance {
	w.t.Helper()
	raw, err := os.ReadFile(filepath.Join(w.Dir, "terraform.tfstate"))
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		w.t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Type      string          `json:"type"`
			Instances []stateInstance `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		w.t.Fatalf("the state file does not parse: %v", err)
	}
	var out []stateInstance
	for _, r := range state.Resources {
		if r.Type == typeName {
			out = append(out, r.Instances...)
		}
	}
	return out
}

// holdings is what the instance records as held: its private record of
// holdings when it has one, else its actions over its resources. Every
// action of a tainted object is partial (Recorded says why).
func (in stateInstance) holdings(t *testing.T) grantplan.Holdings {
	t.Helper()
	var diags protocol.Diagnostics
	held := authz.ReadHoldings(protocol.ReadPrivateState(in.Private, &diags), &diags)
	if diags.HasError() {
		t.Fatalf("the private state does not parse: %v", diags)
	}
	if held == nil {
		g := grantplan.Grant{Actions: in.Attributes.Actions}
		for _, res := range in.Attributes.Resources {
			g.Resources = append(g.Resources, grantplan.Resource{System: res.System, Type: res.Type, Instances: res.Instances})
		}
		held = grantplan.Held(&g)
	}
	if in.Status == "tainted" {
		for action, h := range held {
			h.Partial = true
			held[action] = h
		}
	}
	return held
}

// CheckStateMatchesStore compares what the state records for each of the
// subjects with what the sandbox holds for them in bk_cmdb: exactly,
// except for actions recorded as an upper bound (or all of them, with
// upperBound, after a call whose outcome is unknown), where the sandbox
// may hold less but never more. More would be a grant Terraform has lost
// track of. It first lets the calls Terraform gave up on land (a slow
// fault's, or any call slower than request_timeout on a loaded machine):
// IAM carries them out all the same.
func CheckStateMatchesStore(w *CLIWorkspace, sb *sandboxtest.Sandbox, upperBound bool, subjects ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := sb.WaitIdle(ctx); err != nil {
		return err
	}
	rec := w.Recorded()
	for _, subject := range subjects {
		typ, id, _ := strings.Cut(subject, "/")
		store, state := sandboxtest.HeldPaths(sb, "bk_cmdb", typ, id), rec.Held[subject]
		for _, action := range slices.Sorted(maps.Keys(store)) {
			if _, ok := state[action]; !ok {
				return fmt.Errorf("the sandbox holds %s %s that the state does not record:\n%s", subject, action,
					RenderHeld(map[string][]string{action: store[action]}))
			}
		}
		for _, action := range slices.Sorted(maps.Keys(state)) {
			want, got := state[action], store[action]
			if rec.Partial[subject][action] || upperBound {
				for _, p := range got {
					if !slices.Contains(want, p) {
						return fmt.Errorf("the sandbox holds %s %s on %s, beyond what the state records as possibly held", subject, action, p)
					}
				}
				continue
			}
			if !EqualStrings(want, got) {
				return fmt.Errorf("state and sandbox differ on %s %s:\nstate:\n%s\nsandbox:\n%s", subject, action,
					RenderHeld(map[string][]string{action: want}), RenderHeld(map[string][]string{action: got}))
			}
		}
	}
	return nil
}

// NewAttachedWorkspace is a CLI workspace whose CLI attaches to server,
// served in this process as `terraform-provider-bkiam -debug` serves the
// provider (TF_REATTACH_PROVIDERS, under the CLI's registry host): every
// command and walk talks to the same server, which a test can wrap to see
// what the CLI sends.
func NewAttachedWorkspace(t *testing.T, server tfprotov6.ProviderServer) *CLIWorkspace {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	configCh, closeCh := make(chan *plugin.ReattachConfig, 1), make(chan struct{})
	errCh := make(chan error, 1)
	go func() {
		errCh <- tf6server.Serve("registry.terraform.io/bkiam/bkiam", func() tfprotov6.ProviderServer { return server },
			tf6server.WithDebug(ctx, configCh, closeCh), tf6server.WithLoggingSink(t))
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-closeCh:
		case <-time.After(10 * time.Second):
			t.Error("the provider server did not stop")
		}
	})
	var config *plugin.ReattachConfig
	select {
	case config = <-configCh:
	case err := <-errCh:
		t.Fatalf("serving the provider: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the provider server did not start")
	}
	// Under both CLIs' registry hosts, so that either CLI can attach in
	// the same directory (TestAccQuery generates with Terraform and
	// applies with OpenTofu).
	type addr struct{ Network, String string }
	attach := map[string]any{
		"Protocol": string(config.Protocol), "ProtocolVersion": config.ProtocolVersion, "Pid": config.Pid, "Test": true,
		"Addr": addr{config.Addr.Network(), config.Addr.String()},
	}
	raw, err := json.Marshal(map[string]any{"registry.terraform.io/bkiam/bkiam": attach, "registry.opentofu.org/bkiam/bkiam": attach})
	if err != nil {
		t.Fatal(err)
	}
	w := NewCLIWorkspace(t, t.TempDir()) // attached, not installed: the dev_overrides directory is empty
	w.env = append(w.env, "TF_REATTACH_PROVIDERS="+string(raw))
	return w
}

// StateInstances is the set of instance paths the state's resources of
// typeName record, from their private record of holdings when they have
// one, else their public resources.
func (w *CLIWorkspace) StateInstances(t *testing.T, typeName string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, in := range w.stateInstances(typeName) {
		for _, h := range in.holdings(t) {
			for _, res := range h.Resources {
				for id := range res.Instances {
					out[sharedgrants.InstancePath(res.System, res.Type, id)] = true
				}
			}
		}
	}
	return out
}

// Diagnostic is one diagnostic a command printed with -json: its
// severity ("warning", "error"), summary and detail with white space
// folded, and the address of the resource it is about ("" when none).
type Diagnostic struct {
	Severity, Summary, Detail, Address string
}

func (d Diagnostic) String() string {
	return d.Severity + ": " + d.Summary + " (" + d.Address + "): " + d.Detail
}

// Diagnostics runs a command with -json (plan, apply) and returns every
// diagnostic it printed, one by one: the human-readable output folds
// warnings of one summary into "and N more similar warnings", which
// hides which resources they are about.
func (w *CLIWorkspace) Diagnostics(args ...string) ([]Diagnostic, int) {
	w.t.Helper()
	out, code := w.Run(append(args, "-json")...)
	var diags []Diagnostic
	for _, line := range strings.Split(out, "\n") {
		var msg struct {
			Type       string `json:"type"`
			Diagnostic struct {
				Severity, Summary, Detail, Address string
			} `json:"diagnostic"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil || msg.Type != "diagnostic" {
			continue
		}
		d := msg.Diagnostic
		diags = append(diags, Diagnostic{Severity: d.Severity, Summary: d.Summary, Detail: strings.Join(strings.Fields(d.Detail), " "), Address: d.Address})
	}
	if len(diags) == 0 && code != 0 {
		w.t.Fatalf("terraform %s -json exited %d without a diagnostic:\n%s", strings.Join(args, " "), code, out)
	}
	return diags, code
}

// DiagnosticsAbout returns the diagnostics of diags with summary about the
// resource at address, joined, for a test to look for what one says.
func DiagnosticsAbout(diags []Diagnostic, summary, address string) string {
	var parts []string
	for _, d := range diags {
		if d.Summary == summary && d.Address == address {
			parts = append(parts, d.Severity+": "+d.Detail)
		}
	}
	return strings.Join(parts, "\n")
}
