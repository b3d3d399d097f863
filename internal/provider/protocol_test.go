package provider

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
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
)

// The protocol tests (instance_grant_protocol_test.go,
// creator_grant_protocol_test.go) call the server's resource methods as
// Terraform does, without the Terraform CLI, against an in-process
// sandbox: fast enough to run without TF_ACC.

// protoEnv is the provider's protocol server, configured against a
// sandbox of its own.
type protoEnv struct {
	server tfprotov6.ProviderServer
	sb     *sandboxtest.Sandbox
	calls  *callCounter
	log    *sentLog
}

// newProtoEnv starts a sandbox and configures a provider for it over the
// API gateway, with settings added to (or replacing) the defaults: no
// retries, so that an injected failure fails the call it hits, and no
// merging window.
func newProtoEnv(t *testing.T, settings map[string]any) *protoEnv {
	t.Helper()
	return newProtoEnvWith(t, settings)
}

// newProtoEnvWith is newProtoEnv with sandbox options (a model of its own).
func newProtoEnvWith(t *testing.T, settings map[string]any, opts ...sandbox.Option) *protoEnv {
	t.Helper()
	sb := sandboxtest.Start(t, opts...)
	log := &sentLog{}
	// The provider reaches the sandbox through a proxy that notes what
	// each authorization call asks for.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/authorization/") {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			log.add(r.URL.Path, body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		sb.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	attrs := map[string]any{
		"apigw_url": proxy.URL, "app_code": sandboxtest.AppCode, "app_secret": sandboxtest.AppSecret,
		"max_retries": 0, "batch_window": "0s",
	}
	maps.Copy(attrs, settings)
	server := protoServer(t)
	resp, err := server.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{Config: providerConfig(t, attrs)})
	if err != nil || hasError(resp.Diagnostics) {
		t.Fatalf("ConfigureProvider: %v %s", err, renderDiags(resp.Diagnostics))
	}
	return &protoEnv{server: server, sb: sb, calls: newCallCounter(sb), log: log}
}

// sentLog is what the provider's authorization calls asked for, one line
// a call: "grant edit_host,view_host: 4,5", "register: job3",
// "revoke mini_app_edit: project1/app1" (instance ids, ancestors first).
type sentLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *sentLog) add(path string, body []byte) {
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
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

// forgetSent forgets the calls sent so far.
func (e *protoEnv) forgetSent() {
	e.log.mu.Lock()
	defer e.log.mu.Unlock()
	e.log.lines = nil
}

// expectSent fails unless the calls since the last check asked for
// exactly want, in order.
func (e *protoEnv) expectSent(t *testing.T, want ...string) {
	t.Helper()
	e.log.mu.Lock()
	got := e.log.lines
	e.log.lines = nil
	e.log.mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("calls sent:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// failCall makes the n-th authorization request from now fail with
// IAM's 1902500 (HTTP 500).
func (e *protoEnv) failCall(t *testing.T, n int) {
	t.Helper()
	if err := e.sb.SetFaults(sandbox.Faults{Fail: &sandbox.FailFault{After: n - 1, Count: 1, Status: 500, Code: 1902500}}); err != nil {
		t.Fatal(err)
	}
}

func (e *protoEnv) clearFaults(t *testing.T) {
	t.Helper()
	if err := e.sb.SetFaults(sandbox.Faults{}); err != nil {
		t.Fatal(err)
	}
}

// expectCalls fails unless exactly want were sent since the last check.
func (e *protoEnv) expectCalls(t *testing.T, want map[string]int) {
	t.Helper()
	got := e.calls.sinceLast()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("calls sent: %v, want %v", got, want)
	}
}

// expectHeld fails unless the sandbox holds exactly want for the subject.
func (e *protoEnv) expectHeld(t *testing.T, system, subjectType, subjectID string, want map[string][]string) {
	t.Helper()
	got := sandboxtest.HeldPaths(e.sb, system, subjectType, subjectID)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the sandbox holds\n%swant\n%s", renderHeld(got), renderHeld(want))
	}
}

// policyIDs is the sandbox's policy id of each action the subject holds.
func (e *protoEnv) policyIDs(system, subjectType, subjectID string) map[string]int64 {
	out := map[string]int64{}
	for _, p := range e.sb.Policies(sandbox.PolicyFilter{System: system, SubjectType: subjectType, SubjectID: subjectID}).Policies {
		out[p.Action] = p.PolicyID
	}
	return out
}

// protoResource is a protocol-level resource as the tests drive it: its
// values built and read through its own codec.
type protoResource[M any] struct {
	def protocol.Def[M, *conns.Data]
	// proposed is the new state Terraform proposes for config: its
	// computed attributes unknown on create (prior nil), else the prior's.
	proposed func(config M, prior *M) M
}

func (r protoResource[M]) typeName() string { return typeName + "_" + r.def.Name() }

// value encodes m, or null when m is nil, as Terraform sends it.
func (r protoResource[M]) value(t *testing.T, m *M) *tfprotov6.DynamicValue {
	t.Helper()
	typ := objectTypeOf(r.typeName())
	v := tftypes.NewValue(typ, nil)
	if m != nil {
		v = r.def.Encode(typ, *m)
	}
	dv, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// model decodes a value the provider answered: nil when it is null.
func (r protoResource[M]) model(t *testing.T, dv *tfprotov6.DynamicValue) *M {
	t.Helper()
	if dv == nil {
		t.Fatal("no value")
	}
	v, err := dv.Unmarshal(objectTypeOf(r.typeName()))
	if err != nil {
		t.Fatal(err)
	}
	if v.IsNull() {
		return nil
	}
	m, err := r.def.Decode(v)
	if err != nil {
		t.Fatal(err)
	}
	return &m
}

func (r protoResource[M]) validate(t *testing.T, server tfprotov6.ProviderServer, config M) []*tfprotov6.Diagnostic {
	t.Helper()
	resp, err := server.ValidateResourceConfig(context.Background(), &tfprotov6.ValidateResourceConfigRequest{
		TypeName: r.typeName(), Config: r.value(t, &config),
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Diagnostics
}

// newCommand gives server a fresh ledger, as the provider process of a
// new Terraform command has: the helpers below each stand for one
// command of one resource. A server without a ledger (the framework's
// alone, in the benchmarks) is left as it is.
func newCommand(server tfprotov6.ProviderServer) {
	s, ok := server.(*bkiamServer)
	if !ok {
		return
	}
	s.provider.book.Store(sharedgrants.NewBook())
	if data := s.provider.data.Load(); data != nil {
		data.Book = s.provider.book.Load()
	}
}

// plan plans config (nil: a destroy) from prior, with the new state
// Terraform would propose, in a command of its own (newCommand).
func (r protoResource[M]) plan(t *testing.T, server tfprotov6.ProviderServer, prior *tfprotov6.DynamicValue, priorPrivate []byte, config *M) *tfprotov6.PlanResourceChangeResponse {
	t.Helper()
	newCommand(server)
	return r.planInCommand(t, server, prior, priorPrivate, config)
}

// planInCommand is plan in the command under way: its ledger holds what
// the command's earlier plans registered.
func (r protoResource[M]) planInCommand(t *testing.T, server tfprotov6.ProviderServer, prior *tfprotov6.DynamicValue, priorPrivate []byte, config *M) *tfprotov6.PlanResourceChangeResponse {
	t.Helper()
	if prior == nil {
		prior = r.value(t, nil)
	}
	var proposed *M
	if config != nil {
		p := r.proposed(*config, r.model(t, prior))
		proposed = &p
	}
	resp, err := server.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
		TypeName: r.typeName(), PriorState: prior, ProposedNewState: r.value(t, proposed), Config: r.value(t, config), PriorPrivate: priorPrivate,
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// apply applies a plan from prior.
func (r protoResource[M]) apply(t *testing.T, server tfprotov6.ProviderServer, prior *tfprotov6.DynamicValue, plan *tfprotov6.PlanResourceChangeResponse, config *M) *tfprotov6.ApplyResourceChangeResponse {
	t.Helper()
	if prior == nil {
		prior = r.value(t, nil)
	}
	resp, err := server.ApplyResourceChange(context.Background(), &tfprotov6.ApplyResourceChangeRequest{
		TypeName: r.typeName(), PriorState: prior, PlannedState: plan.PlannedState, Config: r.value(t, config), PlannedPrivate: plan.PlannedPrivate,
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// change plans and applies config (nil: a destroy) from prior, as
// terraform apply does; the plan must succeed.
func (r protoResource[M]) change(t *testing.T, server tfprotov6.ProviderServer, prior *tfprotov6.DynamicValue, priorPrivate []byte, config *M) *tfprotov6.ApplyResourceChangeResponse {
	t.Helper()
	plan := r.plan(t, server, prior, priorPrivate, config)
	if len(plan.Diagnostics) > 0 {
		t.Fatalf("PlanResourceChange: %s", renderDiags(plan.Diagnostics))
	}
	return r.apply(t, server, prior, plan, config)
}

// mustChange is change that must succeed without diagnostics.
func (r protoResource[M]) mustChange(t *testing.T, server tfprotov6.ProviderServer, prior *tfprotov6.DynamicValue, priorPrivate []byte, config *M) *tfprotov6.ApplyResourceChangeResponse {
	t.Helper()
	resp := r.change(t, server, prior, priorPrivate, config)
	if len(resp.Diagnostics) > 0 {
		t.Fatalf("ApplyResourceChange: %s", renderDiags(resp.Diagnostics))
	}
	return resp
}

func (r protoResource[M]) read(t *testing.T, server tfprotov6.ProviderServer, state *tfprotov6.DynamicValue, private []byte) *tfprotov6.ReadResourceResponse {
	t.Helper()
	resp, err := server.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{
		TypeName: r.typeName(), CurrentState: state, Private: private,
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (r protoResource[M]) importState(t *testing.T, server tfprotov6.ProviderServer, id string) *tfprotov6.ImportResourceStateResponse {
	t.Helper()
	resp, err := server.ImportResourceState(context.Background(), &tfprotov6.ImportResourceStateRequest{TypeName: r.typeName(), ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// privateKeys are the keys of a private state, sorted; it must be readable.
func privateKeys(t *testing.T, raw []byte) []string {
	t.Helper()
	var diags protocol.Diagnostics
	p := protocol.ReadPrivateState(raw, &diags)
	if len(diags) > 0 {
		t.Fatalf("private state %q: %s", raw, renderDiags(diags))
	}
	// The seam's mark on an import, which the read that follows removes
	// (protocol.PrivateImportedKey), is not the resource's.
	delete(p, protocol.PrivateImportedKey)
	return slices.Sorted(maps.Keys(p))
}

func privateOf(t *testing.T, raw []byte) protocol.PrivateState {
	t.Helper()
	var diags protocol.Diagnostics
	p := protocol.ReadPrivateState(raw, &diags)
	if len(diags) > 0 {
		t.Fatalf("private state %q: %s", raw, renderDiags(diags))
	}
	return p
}

// pathsEqual reports whether got lists exactly want, in any order.
func pathsEqual(got, want []*tftypes.AttributePath) bool {
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

func renderPaths(paths []*tftypes.AttributePath) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = p.String()
	}
	return "[" + strings.Join(out, ", ") + "]"
}

// expectDiags fails unless diags are exactly want: severity, summary
// and attribute path (nil: none).
func expectDiags(t *testing.T, diags []*tfprotov6.Diagnostic, want ...protoDiag) {
	t.Helper()
	if len(diags) != len(want) {
		t.Fatalf("got %d diagnostics, want %d:\n%s", len(diags), len(want), renderDiags(diags))
	}
	for i, w := range want {
		d := diags[i]
		if d.Severity != w.severity || !strings.Contains(d.Summary+": "+d.Detail, w.text) {
			t.Errorf("diagnostic %d is\n%swant %v containing %q", i, renderDiags(diags[i:i+1]), w.severity, w.text)
		}
		if (w.at == nil) != (d.Attribute == nil) || (w.at != nil && !w.at.Equal(d.Attribute)) {
			t.Errorf("diagnostic %d is on %v, want %v", i, d.Attribute, w.at)
		}
	}
}

type protoDiag struct {
	severity tfprotov6.DiagnosticSeverity
	text     string
	at       *tftypes.AttributePath
}

func protoError(text string, at *tftypes.AttributePath) protoDiag {
	return protoDiag{tfprotov6.DiagnosticSeverityError, text, at}
}

func protoWarning(text string, at *tftypes.AttributePath) protoDiag {
	return protoDiag{tfprotov6.DiagnosticSeverityWarning, text, at}
}
