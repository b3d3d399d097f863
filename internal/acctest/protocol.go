package acctest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// The protocol tests (instance_grant_protocol_test.go,
// creator_grant_protocol_test.go beside the resources) call the server's resource methods as
// Terraform does, without the Terraform CLI, against an in-process
// sandbox: fast enough to run without TF_ACC.

// ProtoEnv is the provider's protocol server, configured against a
// sandbox of its own.
type ProtoEnv struct {
	Server  tfprotov6.ProviderServer
	Sandbox *sandboxtest.Sandbox
	Calls   *CallCounter
	Log     *SentLog
}

// NewProtoEnv starts a sandbox and configures a provider for it over the
// API gateway, with settings added to (or replacing) the defaults: no
// retries, so that an injected failure fails the call it hits, and no
// merging window.
func NewProtoEnv(t *testing.T, settings map[string]any) *ProtoEnv {
	t.Helper()
	return NewProtoEnvWith(t, settings)
}

// NewProtoEnvWith is newProtoEnv with sandbox options (a model of its own).
func NewProtoEnvWith(t *testing.T, settings map[string]any, opts ...sandbox.Option) *ProtoEnv {
	t.Helper()
	sb := sandboxtest.Start(t, opts...)
	url, log := LoggedURL(t, sb)
	attrs := map[string]any{
		"apigw_url": url, "app_code": sandboxtest.AppCode, "app_secret": sandboxtest.AppSecret,
		"max_retries": 0, "batch_window": "0s",
	}
	maps.Copy(attrs, settings)
	server := ProtoServer(t)
	resp, err := server.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{Config: ProviderConfig(t, attrs)})
	if err != nil || testutil.HasError(resp.Diagnostics) {
		t.Fatalf("ConfigureProvider: %v %s", err, testutil.RenderDiags(resp.Diagnostics))
	}
	return &ProtoEnv{Server: server, Sandbox: sb, Calls: NewCallCounter(sb), Log: log}
}

// NewProcess is another provider process configured as e's was, against
// e's sandbox, with settings added: what a later terraform command runs,
// holding nothing of what e's process read.
func (e *ProtoEnv) NewProcess(t *testing.T, settings map[string]any) tfprotov6.ProviderServer {
	t.Helper()
	attrs := map[string]any{
		"apigw_url": e.Sandbox.URL, "app_code": sandboxtest.AppCode, "app_secret": sandboxtest.AppSecret,
		"max_retries": 0, "batch_window": "0s",
	}
	maps.Copy(attrs, settings)
	server := ProtoServer(t)
	resp, err := server.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{Config: ProviderConfig(t, attrs)})
	if err != nil || testutil.HasError(resp.Diagnostics) {
		t.Fatalf("ConfigureProvider: %v %s", err, testutil.RenderDiags(resp.Diagnostics))
	}
	return server
}

// LoggedURL serves sb behind a proxy that notes in the returned log what
// each authorization call through it asks for: a provider given the URL
// (as apigw_url or esb_url) reaches the sandbox through it. Calls made to
// sb.URL, such as changes outside Terraform, are not noted.
func LoggedURL(t *testing.T, sb *sandboxtest.Sandbox) (string, *SentLog) {
	t.Helper()
	log := &SentLog{}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/authorization/") {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			log.Add(r.URL.Path, body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		sb.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL, log
}

// SentLog is what the provider's authorization calls asked for, one line
// a call: "grant edit_host,view_host: 4,5", "register: job3",
// "revoke mini_app_edit: project1/app1" (instance ids, ancestors first).
type SentLog struct {
	Mu    sync.Mutex
	Lines []string
}

func (l *SentLog) Add(path string, body []byte) {
	var req struct {
		Operate string `json:"operate"`
		Actions []struct {
			ID string `json:"id"`
		} `json:"actions"`
		Resources []struct {
			Instances []struct {
				ID string `json:"id"`
			} `json:"instances"`
			Paths [][]struct {
				ID string `json:"id"`
			} `json:"paths"`
		} `json:"resources"`
		Instances []struct {
			ID        string `json:"id"`
			Ancestors []struct {
				ID string `json:"id"`
			} `json:"ancestors"`
		} `json:"instances"`
	}
	line := "unreadable call to " + path
	if err := json.Unmarshal(body, &req); err == nil {
		var what []string
		if strings.Contains(path, "batch_resource_creator_action") {
			for _, in := range req.Instances {
				var nodes []string
				for _, a := range in.Ancestors {
					nodes = append(nodes, a.ID)
				}
				what = append(what, strings.Join(append(nodes, in.ID), "/"))
			}
			line = "register: " + strings.Join(what, ",")
		} else {
			var actions []string
			for _, a := range req.Actions {
				actions = append(actions, a.ID)
			}
			for _, r := range req.Resources {
				var ids []string
				for _, in := range r.Instances {
					ids = append(ids, in.ID)
				}
				for _, p := range r.Paths {
					var nodes []string
					for _, n := range p {
						nodes = append(nodes, n.ID)
					}
					ids = append(ids, strings.Join(nodes, "/"))
				}
				what = append(what, strings.Join(ids, ","))
			}
			line = req.Operate + " " + strings.Join(actions, ",") + ": " + strings.Join(what, " x ")
		}
	}
	l.Mu.Lock()
	defer l.Mu.Unlock()
	l.Lines = append(l.Lines, line)
}

// Take returns the calls noted since the last Take, and forgets them.
func (l *SentLog) Take() []string {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	lines := l.Lines
	l.Lines = nil
	return lines
}

// ForgetSent forgets the calls sent so far.
func (e *ProtoEnv) ForgetSent() {
	e.Log.Mu.Lock()
	defer e.Log.Mu.Unlock()
	e.Log.Lines = nil
}

// ExpectSent fails unless the calls since the last check asked for
// exactly want, in order.
func (e *ProtoEnv) ExpectSent(t *testing.T, want ...string) {
	t.Helper()
	if got := e.Log.Take(); !slices.Equal(got, want) {
		t.Errorf("calls sent:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// FailCall makes the n-th write from now fail with IAM's 1902500 (HTTP
// 500). The policy reads (the plan's expiry check) are spared and not
// counted.
func (e *ProtoEnv) FailCall(t *testing.T, n int) {
	t.Helper()
	if err := e.Sandbox.SetFaults(sandbox.Faults{SpareReads: true, Fail: &sandbox.FailFault{After: n - 1, Count: 1, Status: 500, Code: 1902500}}); err != nil {
		t.Fatal(err)
	}
}

func (e *ProtoEnv) ClearFaults(t *testing.T) {
	t.Helper()
	if err := e.Sandbox.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
}

// ExpectCalls fails unless exactly want were sent since the last check.
func (e *ProtoEnv) ExpectCalls(t *testing.T, want map[string]int) {
	t.Helper()
	got := e.Calls.SinceLast()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("calls sent: %v, want %v", got, want)
	}
}

// ExpectHeld fails unless the sandbox holds exactly want for the subject.
func (e *ProtoEnv) ExpectHeld(t *testing.T, system, subjectType, subjectID string, want map[string][]string) {
	t.Helper()
	got := sandboxtest.HeldPaths(e.Sandbox, system, subjectType, subjectID)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the sandbox holds\n%swant\n%s", RenderHeld(got), RenderHeld(want))
	}
}

// PolicyIDs is the sandbox's policy id of each action the subject holds.
func (e *ProtoEnv) PolicyIDs(system, subjectType, subjectID string) map[string]int64 {
	out := map[string]int64{}
	for _, p := range e.Sandbox.Policies(sandbox.PolicyFilter{System: system, SubjectType: subjectType, SubjectID: subjectID}).Policies {
		out[p.Action] = p.PolicyID
	}
	return out
}

// ProtoResource is a protocol-level resource as the tests drive it: its
// values built and read through its own codec.
type ProtoResource[M any] struct {
	Def protocol.Def[M, *conns.Data]
	// Proposed is the new state Terraform proposes for config: its
	// computed attributes unknown on create (prior nil), else the prior's.
	Proposed func(config M, prior *M) M
}

// TypeName is the resource's full type name.
func (r ProtoResource[M]) TypeName() string { return "bkiam_" + r.Def.Name() }

// Value encodes m, or null when m is nil, as Terraform sends it.
func (r ProtoResource[M]) Value(t *testing.T, m *M) *tfprotov6.DynamicValue {
	t.Helper()
	typ := ObjectTypeOf(r.TypeName())
	v := tftypes.NewValue(typ, nil)
	if m != nil {
		v = r.Def.Encode(typ, *m)
	}
	dv, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// Model decodes a value the provider answered: nil when it is null.
func (r ProtoResource[M]) Model(t *testing.T, dv *tfprotov6.DynamicValue) *M {
	t.Helper()
	if dv == nil {
		t.Fatal("no value")
	}
	v, err := dv.Unmarshal(ObjectTypeOf(r.TypeName()))
	if err != nil {
		t.Fatal(err)
	}
	if v.IsNull() {
		return nil
	}
	m, err := r.Def.Decode(v)
	if err != nil {
		t.Fatal(err)
	}
	return &m
}

func (r ProtoResource[M]) Validate(t *testing.T, server tfprotov6.ProviderServer, config M) []*tfprotov6.Diagnostic {
	t.Helper()
	resp, err := server.ValidateResourceConfig(context.Background(), &tfprotov6.ValidateResourceConfigRequest{
		TypeName: r.TypeName(), Config: r.Value(t, &config),
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Diagnostics
}

// NewCommand gives server a fresh ledger of shared grants, as the
// provider process of a new Terraform command has, keeping its
// configuration: the helpers below each stand for one command of one
// resource. A server without a ledger (the framework's alone, in the
// benchmarks) is left as it is.
func NewCommand(server tfprotov6.ProviderServer) {
	if s, ok := server.(interface{ StartCommand() }); ok {
		s.StartCommand()
	}
}

// Plan plans config (nil: a destroy) from prior, with the new state
// Terraform would propose, in a command of its own (newCommand).
func (r ProtoResource[M]) Plan(t *testing.T, server tfprotov6.ProviderServer, prior *tfprotov6.DynamicValue, priorPrivate []byte, config *M) *tfprotov6.PlanResourceChangeResponse {
	t.Helper()
	NewCommand(server)
	return r.PlanInCommand(t, server, prior, priorPrivate, config)
}

// PlanInCommand is plan in the command under way: its ledger holds what
// the command's earlier plans registered.
func (r ProtoResource[M]) PlanInCommand(t *testing.T, server tfprotov6.ProviderServer, prior *tfprotov6.DynamicValue, priorPrivate []byte, config *M) *tfprotov6.PlanResourceChangeResponse {
	t.Helper()
	if prior == nil {
		prior = r.Value(t, nil)
	}
	var proposed *M
	if config != nil {
		p := r.Proposed(*config, r.Model(t, prior))
		proposed = &p
	}
	resp, err := server.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: r.TypeName(), PriorState: prior, ProposedNewState: r.Value(t, proposed), Config: r.Value(t, config), PriorPrivate: priorPrivate,
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// Apply applies a plan from prior.
func (r ProtoResource[M]) Apply(t *testing.T, server tfprotov6.ProviderServer, prior *tfprotov6.DynamicValue, plan *tfprotov6.PlanResourceChangeResponse, config *M) *tfprotov6.ApplyResourceChangeResponse {
	t.Helper()
	if prior == nil {
		prior = r.Value(t, nil)
	}
	resp, err := server.ApplyResourceChange(context.Background(), &tfprotov6.ApplyResourceChangeRequest{
		TypeName: r.TypeName(), PriorState: prior, PlannedState: plan.PlannedState, Config: r.Value(t, config), PlannedPrivate: plan.PlannedPrivate,
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// Change plans and applies config (nil: a destroy) from prior, as
// terraform apply does; the plan must succeed.
func (r ProtoResource[M]) Change(t *testing.T, server tfprotov6.ProviderServer, prior *tfprotov6.DynamicValue, priorPrivate []byte, config *M) *tfprotov6.ApplyResourceChangeResponse {
	t.Helper()
	plan := r.Plan(t, server, prior, priorPrivate, config)
	if diags := WithoutNotices(plan.Diagnostics); len(diags) > 0 {
		t.Fatalf("PlanResourceChange: %s", testutil.RenderDiags(diags))
	}
	return r.Apply(t, server, prior, plan, config)
}

// GroupScopeWarning is the warning of every plan that grants a group
// through the authorization API: IAM widens the group's grade manager's
// authorization scope (authz/group_scope.go).
var GroupScopeWarning = ProtoWarning("Group grant widens its grade manager's scope", protocol.Root("subject"))

// RevivalNotice is the warning of every plan that grants a user an action
// it holds nothing live of, which IAM does not let the provider tell from
// one whose policy expired over a day ago (authz/expiry.go, mayRevive).
var RevivalNotice = ProtoWarning("An expired policy may come back", protocol.Root("expires_at"))

// WithoutNotices leaves GroupScopeWarning and RevivalNotice, the notices a
// plan gives whatever it grants, out of diags, for the tests that look for
// other diagnostics.
func WithoutNotices(diags []*tfprotov6.Diagnostic) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		if d.Severity == GroupScopeWarning.Severity && (d.Summary == GroupScopeWarning.Text || d.Summary == RevivalNotice.Text) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// MustChange is change that must succeed without diagnostics.
func (r ProtoResource[M]) MustChange(t *testing.T, server tfprotov6.ProviderServer, prior *tfprotov6.DynamicValue, priorPrivate []byte, config *M) *tfprotov6.ApplyResourceChangeResponse {
	t.Helper()
	resp := r.Change(t, server, prior, priorPrivate, config)
	if len(resp.Diagnostics) > 0 {
		t.Fatalf("ApplyResourceChange: %s", testutil.RenderDiags(resp.Diagnostics))
	}
	return resp
}

func (r ProtoResource[M]) Read(t *testing.T, server tfprotov6.ProviderServer, state *tfprotov6.DynamicValue, private []byte) *tfprotov6.ReadResourceResponse {
	t.Helper()
	resp, err := server.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{
		TypeName: r.TypeName(), CurrentState: state, Private: private,
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (r ProtoResource[M]) ImportState(t *testing.T, server tfprotov6.ProviderServer, id string) *tfprotov6.ImportResourceStateResponse {
	t.Helper()
	resp, err := server.ImportResourceState(context.Background(), &tfprotov6.ImportResourceStateRequest{TypeName: r.TypeName(), ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// PrivateKeys are the keys of a private state, sorted; it must be readable.
func PrivateKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	var diags protocol.Diagnostics
	p := protocol.ReadPrivateState(raw, &diags)
	if len(diags) > 0 {
		t.Fatalf("private state %q: %s", raw, testutil.RenderDiags(diags))
	}
	// The seam's mark on an import, which the read that follows removes
	// (protocol.PrivateImportedKey), is not the resource's.
	delete(p, protocol.PrivateImportedKey)
	return slices.Sorted(maps.Keys(p))
}

func PrivateOf(t *testing.T, raw []byte) protocol.PrivateState {
	t.Helper()
	var diags protocol.Diagnostics
	p := protocol.ReadPrivateState(raw, &diags)
	if len(diags) > 0 {
		t.Fatalf("private state %q: %s", raw, testutil.RenderDiags(diags))
	}
	return p
}

// PathsEqual reports whether got lists exactly want, in any order.
func PathsEqual(got, want []*tftypes.AttributePath) bool {
	if len(got) != len(want) {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, w.Equal) {
			return false
		}
	}
	return true
}

func RenderPaths(paths []*tftypes.AttributePath) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p.String()
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// ExpectDiags fails unless diags are exactly want: severity, summary
// and attribute path (nil: none). RevivalNotice, which every first grant
// of an action to a user gives, is left out of diags unless want holds it.
func ExpectDiags(t *testing.T, diags []*tfprotov6.Diagnostic, want ...ProtoDiag) {
	t.Helper()
	if !slices.ContainsFunc(want, func(w ProtoDiag) bool { return strings.HasPrefix(w.Text, RevivalNotice.Text) }) {
		diags = slices.DeleteFunc(slices.Clone(diags), func(d *tfprotov6.Diagnostic) bool {
			return d.Severity == RevivalNotice.Severity && d.Summary == RevivalNotice.Text
		})
	}
	if len(diags) != len(want) {
		t.Fatalf("got %d diagnostics, want %d:\n%s", len(diags), len(want), testutil.RenderDiags(diags))
	}
	for i, w := range want {
		d := diags[i]
		if d.Severity != w.Severity || !strings.Contains(d.Summary+": "+d.Detail, w.Text) {
			t.Errorf("diagnostic %d is\n%swant %v containing %q", i, testutil.RenderDiags(diags[i:i+1]), w.Severity, w.Text)
		}
		if (w.At == nil) != (d.Attribute == nil) || (w.At != nil && !w.At.Equal(d.Attribute)) {
			t.Errorf("diagnostic %d is on %v, want %v", i, d.Attribute, w.At)
		}
	}
}

type ProtoDiag struct {
	Severity tfprotov6.DiagnosticSeverity
	Text     string
	At       *tftypes.AttributePath
}

func ProtoError(text string, at *tftypes.AttributePath) ProtoDiag {
	return ProtoDiag{tfprotov6.DiagnosticSeverityError, text, at}
}

func ProtoWarning(text string, at *tftypes.AttributePath) ProtoDiag {
	return ProtoDiag{tfprotov6.DiagnosticSeverityWarning, text, at}
}
