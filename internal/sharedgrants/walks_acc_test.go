package sharedgrants_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// The ledger of shared grants (shared.go, DESIGN.md "Shared grants")
// rests on how a CLI walks a configuration, read from Terraform 1.5.7's
// source. TestAccCLIWalks checks each of those facts through every CLI
// make test runs, from what the provider receives:
//
//  1. Every walk configures the provider before its first resource call,
//     so a ledger lives for one walk.
//  2. A walk that applies never refreshes (no ReadResource), so a
//     process that has refreshed is in a plan walk.
//  3. The apply walk plans a create or an update again, and that re-plan
//     gets the state's private data, never the plan walk's; the apply gets
//     the re-plan's.
//  4. A destroy is not planned again, and its apply gets the plan walk's
//     private data. `destroy` runs three walks: a plan that refreshes,
//     then a destroy plan that does not, then the apply.
//
// Terraform 1.16 also allows deferral (ClientCapabilities.DeferralAllowed)
// in the apply walk's re-plan, where 1.5.7 and OpenTofu do not; the
// provider never defers, whatever the CLI allows.
//
// Terraform 1.16 changed what it sends for 3: it stores the plan's private
// data and sends it back with the apply walk's re-plan, in a new field
// (PlanResourceChange.Request.planned_private, with the client capability
// store_planned_private). terraform-plugin-go v0.31.0, the newest the
// module proxy serves, does not know the field and drops it, so the
// provider sees what it sees from 1.5.7; TestPlannedPrivateNotSurfaced
// fails the day an upgrade of the library hands it over.
//
// To tell one walk's private data from another's, the recorder below adds
// a key of its own to every plan's private data ("walk_probe": the walk's
// number); the provider ignores keys it does not know.

// walkProbeKey is the private-data key the recorder adds.
const walkProbeKey = "walk_probe"

// rpcCall is one call the recorder saw.
type rpcCall struct {
	walk     int    // counts ConfigureProvider calls
	method   string // Configure, Read, Plan, Apply
	action   string // for Plan and Apply: create, update, no-op, delete
	probeIn  int    // the walk_probe of the private data the call received (Plan, Read: prior; Apply: planned); 0 if none
	deferral bool   // Plan: ClientCapabilities.DeferralAllowed
	deferred bool   // Plan: the provider deferred the change
}

// recordingServer records the calls the CLI makes, and probes the plans'
// private data.
type recordingServer struct {
	tfprotov6.ProviderServer
	mu    sync.Mutex
	walk  int
	calls []rpcCall
}

func (r *recordingServer) record(c rpcCall) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.method == "Configure" {
		r.walk++
	}
	c.walk = r.walk
	r.calls = append(r.calls, c)
	return r.walk
}

// take returns the calls recorded since the last take.
func (r *recordingServer) take() []rpcCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := r.calls
	r.calls = nil
	return calls
}

func probeOf(t *testing.T, private []byte) int {
	var doc map[string]json.RawMessage
	if len(private) == 0 || json.Unmarshal(private, &doc) != nil {
		return 0
	}
	// The framework's encoding: each value is the JSON of a JSON document, base64 encoded.
	var inner []byte
	if json.Unmarshal(doc[walkProbeKey], &inner) != nil {
		return 0
	}
	n, err := strconv.Atoi(string(inner))
	if err != nil {
		t.Errorf("walk probe %q", inner)
	}
	return n
}

func changeAction(prior, planned *tfprotov6.DynamicValue) string {
	if prior != nil && planned != nil && bytes.Equal(prior.MsgPack, planned.MsgPack) && len(prior.MsgPack) > 0 {
		return "no-op"
	}
	null := func(v *tfprotov6.DynamicValue) bool {
		if v == nil {
			return true
		}
		val, err := v.Unmarshal(acctest.ObjectTypeOf(acctest.InstanceProto.TypeName()))
		return err == nil && val.IsNull()
	}
	switch {
	case null(prior):
		return "create"
	case null(planned):
		return "delete"
	}
	return "update"
}

type walkRecorder struct {
	*recordingServer
	t *testing.T
}

func (r walkRecorder) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	r.record(rpcCall{method: "Configure"})
	return r.ProviderServer.ConfigureProvider(ctx, req)
}

func (r walkRecorder) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	r.record(rpcCall{method: "Read", probeIn: probeOf(r.t, req.Private)})
	return r.ProviderServer.ReadResource(ctx, req)
}

func (r walkRecorder) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	resp, err := r.ProviderServer.PlanResourceChange(ctx, req)
	if err != nil || resp == nil {
		return resp, err
	}
	c := rpcCall{method: "Plan", action: changeAction(req.PriorState, resp.PlannedState), probeIn: probeOf(r.t, req.PriorPrivate)}
	if caps := req.ClientCapabilities; caps != nil {
		c.deferral = caps.DeferralAllowed
	}
	c.deferred = resp.Deferred != nil
	walk := r.record(c)
	var doc map[string][]byte
	if len(resp.PlannedPrivate) > 0 {
		if err := json.Unmarshal(resp.PlannedPrivate, &doc); err != nil {
			return nil, fmt.Errorf("the planned private data is not the framework's encoding: %w", err)
		}
	}
	if doc == nil {
		doc = map[string][]byte{}
	}
	doc[walkProbeKey] = []byte(strconv.Itoa(walk))
	if resp.PlannedPrivate, err = json.Marshal(doc); err != nil {
		return nil, err
	}
	return resp, nil
}

func (r walkRecorder) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	r.record(rpcCall{method: "Apply", action: changeAction(req.PriorState, req.PlannedState), probeIn: probeOf(r.t, req.PlannedPrivate)})
	return r.ProviderServer.ApplyResourceChange(ctx, req)
}

// TestAccCLIWalks checks the facts at the top of this file through the CLI
// under test, for a create, an update (a saved plan applied by a second
// command) and a destroy.
func TestAccCLIWalks(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	sb := sandboxtest.Start(t)
	inner, err := provider.NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingServer{ProviderServer: inner}
	w := acctest.NewAttachedWorkspace(t, walkRecorder{recordingServer: rec, t: t})
	provider := acctest.Transports[acctest.GatewayTransport].Block(sb.URL)

	// walks groups the calls of one command by walk, in order.
	walks := func(calls []rpcCall) [][]rpcCall {
		var out [][]rpcCall
		for _, c := range calls {
			if c.method == "Configure" || len(out) == 0 {
				out = append(out, nil)
			}
			out[len(out)-1] = append(out[len(out)-1], c)
		}
		return out
	}
	render := func(calls []rpcCall) string {
		var b strings.Builder
		for _, c := range calls {
			fmt.Fprintf(&b, "  walk %d: %s %s probe=%d deferral=%v\n", c.walk, c.method, c.action, c.probeIn, c.deferral)
		}
		return b.String()
	}
	methods := func(walk []rpcCall) []string {
		var m []string
		for _, c := range walk {
			m = append(m, strings.TrimSpace(c.method+" "+c.action))
		}
		return m
	}
	// check runs a command and checks the calls of each of its walks, then
	// what checkWalks says of them.
	check := func(what string, want [][]string, checkWalks func(ws [][]rpcCall) error, args ...string) [][]rpcCall {
		t.Helper()
		rec.take()
		w.MustRun(args...)
		calls := rec.take()
		t.Logf("%s (%s):\n%s", what, strings.Join(args, " "), render(calls))
		ws := walks(calls)
		var got [][]string
		for _, walk := range ws {
			got = append(got, methods(walk))
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("%s: the walks made %v, want %v", what, got, want)
		}
		for _, c := range calls {
			if c.deferred {
				t.Fatalf("%s: the provider deferred a change (the CLI allowed it: %v); it must never defer", what, c.deferral)
			}
		}
		if err := checkWalks(ws); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, render(calls))
		}
		return ws
	}
	// applyWalkOwnPrivate is facts 2 and 3 for the last walk, an apply walk
	// of a create or an update: its re-plan gets none of the plan walk's
	// private data, and its apply gets the re-plan's.
	applyWalkOwnPrivate := func(planWalk int) func(ws [][]rpcCall) error {
		return func(ws [][]rpcCall) error {
			apply := ws[len(ws)-1]
			replan, applied := apply[1], apply[2]
			if replan.probeIn == planWalk {
				return fmt.Errorf("the apply walk's re-plan received the plan walk's private data")
			}
			if applied.probeIn != replan.walk {
				return fmt.Errorf("the apply received the private data of walk %d, not its re-plan's (%d)", applied.probeIn, replan.walk)
			}
			return nil
		}
	}

	grant := func(ids ...string) string { return acctest.SharedHostGrant("g", "view_host", "", ids...) }

	// A create by `apply`: a plan walk and an apply walk in one command.
	w.Configure(provider, grant("1", "2"))
	check("create", [][]string{{"Configure", "Plan create"}, {"Configure", "Plan create", "Apply create"}},
		func(ws [][]rpcCall) error { return applyWalkOwnPrivate(ws[0][1].walk)(ws) }, "apply", "-auto-approve")

	// An update planned into a file by one command and applied by another.
	w.Configure(provider, grant("1"))
	plan := check("update plan", [][]string{{"Configure", "Read", "Plan update"}}, func([][]rpcCall) error { return nil },
		"plan", "-out=update.tfplan")
	check("update from a saved plan", [][]string{{"Configure", "Plan update", "Apply update"}},
		applyWalkOwnPrivate(plan[0][0].walk), "apply", "update.tfplan")

	// A destroy: a walk that refreshes and plans as usual, a destroy plan
	// walk that does not refresh, and the apply walk, where the destroy is
	// not planned again and its apply gets the destroy plan's private data.
	check("destroy", [][]string{{"Configure", "Read", "Plan no-op"}, {"Configure", "Plan delete"}, {"Configure", "Apply delete"}},
		func(ws [][]rpcCall) error {
			if got, want := ws[2][1].probeIn, ws[1][1].walk; got != want {
				return fmt.Errorf("the destroy's apply received the private data of walk %d, not its plan's (%d)", got, want)
			}
			return nil
		}, "destroy", "-auto-approve")
	if held := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice"); len(held) != 0 {
		t.Fatalf("after the destroy alice holds %v", held)
	}
}
