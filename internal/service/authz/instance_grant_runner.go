package authz

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/bkiam/terraform-provider-bkiam/internal/applyrun"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/ledger"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
)

// instanceGrantRunner sends planned batch_instance calls one by one and keeps an
// exact record of what the subject holds after each, so that a run that
// stops midway — on an error or because Terraform was cancelled — leaves
// state that says what IAM holds, and the next run completes the rest.
type instanceGrantRunner struct {
	client  conns.InstanceCaller
	system  string
	subject bkiam.Subject
	// held is updated after every call.
	held grantplan.Holdings
	// policies records the IAM policy id of each action, from the answers.
	policies map[string]int64
	// limits batch the grants that restore a recreated policy (lost).
	limits grantplan.Limits
	// lost are the actions whose grant IAM answered with a new policy id:
	// the policy this resource recorded is gone (revoked whole outside
	// Terraform, unseen without drift detection), and with it the instances
	// the resource holds but did not just send. run grants them again.
	// revoked are the actions this run revoked from: a revoke of its own may
	// empty the policy (a combination is revoked whole before it is granted
	// anew), so a new id after it proves nothing.
	lost, revoked map[string]bool
	// shared orders the calls with those of other resources of the
	// command (internal/sharedgrants); nil lets them through.
	shared *sharedgrants.Handle

	// The apply the runner serves (none in the runner's own tests).
	resource InstanceGrant
	data     *conns.Data
	// current and next are the state's and the plan's grant (nil on
	// create and destroy); planned is next, or current on a destroy.
	current, next, planned *GrantView
	private                protocol.PrivateState
}

// run sends calls (applyrun's loop), for the runner's own tests.
func (r *instanceGrantRunner) run(ctx context.Context, calls []grantplan.Call) error {
	return applyrun.RunCalls(ctx, calls, r)
}

// The instance grant's part of applyrun.Run.

func (r *instanceGrantRunner) Claims() (ledger.Claims, bool) {
	if r.next == nil {
		return ledger.Claims{}, false
	}
	return grantClaims(r.next.System, r.next.Subject, grantplan.Held(&r.next.Grant)), true
}

// Taken: an action whose planned paths another resource revoked is
// partial, so that the run grants it again.
func (r *instanceGrantRunner) Taken(action string, paths map[string]bool) {
	if h, ok := r.held[action]; ok && len(paths) > 0 {
		h.Partial = true
		r.held[action] = h
	}
}

func (r *instanceGrantRunner) Load(context.Context, *protocol.Diagnostics) (*InstanceGrantModel, protocol.PrivateState, bool) {
	return nil, nil, false
}

func (r *instanceGrantRunner) want() *grantplan.Grant {
	if r.next == nil {
		return nil
	}
	return &r.next.Grant
}

func (r *instanceGrantRunner) Plan() ([]grantplan.Call, error) {
	return grantplan.Plan(r.held, r.want(), r.limits)
}

func (r *instanceGrantRunner) Gone(ctx context.Context, err error) bool {
	return r.resource.Gone != nil && r.resource.Gone(ctx, err)
}

func (r *instanceGrantRunner) After(_ context.Context, ok bool, _ *protocol.Diagnostics) bool {
	r.data.InvalidateScans(r.planned.System, r.planned.Subject, slices.Concat(slices.Collect(maps.Keys(r.held)), r.planned.Grant.Actions))
	return ok
}

// Handed records as held, in doubt, the planned instances of action that
// other resources' revokes left. A combined grant is left as it is: its
// paths are whole combinations, which no other resource leaves.
func (r *instanceGrantRunner) Handed(action string, paths map[string]bool) {
	g := r.next.Grant
	if len(g.Resources) != 1 || !slices.Contains(g.Actions, action) {
		return
	}
	res := g.Resources[0]
	var instances []grantplan.Instance
	for _, id := range slices.Sorted(maps.Keys(res.Instances)) {
		if paths[sharedgrants.InstancePath(res.System, res.Type, id)] {
			instances = append(instances, grantplan.Instance{ID: id, Name: res.Instances[id]})
		}
	}
	if len(instances) > 0 {
		r.held.ApplyUncertain(grantplan.Call{Operation: grantplan.OperationGrant, Actions: []string{action},
			Resources: []grantplan.CallResource{{System: res.System, Type: res.Type, Instances: instances}}, ExpiresAt: g.ExpiresAt})
	}
}

func (r *instanceGrantRunner) Empty() bool { return len(r.held) == 0 }

// Reclaim: after a success the planned claim is what is held; after a
// failure the claim is what is held.
func (r *instanceGrantRunner) Reclaim(ok bool) (ledger.Claims, bool) {
	if ok {
		return ledger.Claims{}, false
	}
	return grantClaims(r.planned.System, r.planned.Subject, r.held), true
}

func (r *instanceGrantRunner) Record(ok bool, diags *protocol.Diagnostics) (*InstanceGrantModel, protocol.PrivateState) {
	if ok {
		writeHoldings(r.private, nil, diags)
		m := r.next.Model
		m.ID = protocol.Known(grantID(r.next.System, r.next.Subject))
		m.Policies = policiesValue(r.next.Grant.Actions, r.policies)
		return &m, r.private
	}
	// The run stopped midway: record what is held, so that it is not lost.
	// A failed create is tainted by Terraform; the next apply revokes it
	// and grants everything again.
	m := r.resource.partial(r.planned, r.want(), r, r.current == nil, r.private, diags)
	return &m, r.private
}

// The instance grant's part of the loop over calls.

func (r *instanceGrantRunner) Describe(call grantplan.Call) (string, map[string]any) {
	return "sending planned IAM call", map[string]any{
		"operation": string(call.Operation), "actions": call.Actions, "instances": call.InstanceCount(),
	}
}

func (r *instanceGrantRunner) Send(wait, callCtx context.Context, call grantplan.Call) error {
	r.data.Writing(r.system, r.subject, call.Actions)
	results, err := r.sendCall(wait, callCtx, call)
	if err != nil {
		return err
	}
	r.held.Apply(call)
	r.recordPolicies(call, results)
	if call.Operation == grantplan.OperationRevoke {
		if r.revoked == nil {
			r.revoked = map[string]bool{}
		}
		for _, a := range call.Actions {
			r.revoked[a] = true
		}
	}
	return nil
}

func (r *instanceGrantRunner) Failed(call grantplan.Call, err error, unknown bool) applyrun.Failure {
	var iamErr *bkiam.Error
	if r.subject.Type == bkiam.SubjectGroup && call.Operation == grantplan.OperationGrant && errors.As(err, &iamErr) && iamErr.Code == 1902500 {
		// IAM fails a grant to a group it does not know with an
		// unhandled error, 1902500 (HTTP 500), never a clear one.
		err = fmt.Errorf("%w (IAM answers a grant to a user group that does not exist this way: check that group %s still exists)", err, r.subject.ID)
	}
	if unknown {
		r.held.ApplyUncertain(call)
	}
	return applyrun.Failure{What: describeCall(call), Err: err,
		Doubt: unknown && call.Operation == grantplan.OperationGrant, RevokeInDoubt: unknown && call.Operation == grantplan.OperationRevoke}
}

// Again grants anew, whole, the actions whose policy IAM answered with a
// new id (lost).
func (r *instanceGrantRunner) Again(ctx context.Context) ([]grantplan.Call, error) {
	if len(r.lost) == 0 {
		return nil, nil
	}
	var again []grantplan.Call
	for _, a := range slices.Sorted(maps.Keys(r.lost)) {
		h := r.held[a]
		restore, err := grantplan.Plan(grantplan.Holdings{}, &grantplan.Grant{Actions: []string{a}, Resources: h.Resources, ExpiresAt: h.ExpiresAt}, r.limits)
		if err != nil {
			return nil, err
		}
		again = append(again, restore...)
	}
	tflog.Warn(ctx, "IAM answered a grant with a new policy id: the policy was revoked whole outside Terraform; granting the rest again",
		map[string]any{"actions": slices.Sorted(maps.Keys(r.lost))})
	r.lost = nil
	return again, nil
}

// sendCall sends one planned call, in the ledger's order: a grant after
// the revokes in flight on its paths; a revoke of only what no other
// resource of the command keeps, split by action where they differ. The
// ledger's waits take wait, IAM's calls callCtx (see calls.send).
func (r *instanceGrantRunner) sendCall(wait, callCtx context.Context, call grantplan.Call) ([]bkiam.PolicyResult, error) {
	scope := grantScope(r.system, r.subject)
	if call.Operation == grantplan.OperationGrant {
		if err := r.shared.Grant(wait, scope, callPaths(call)); err != nil {
			return nil, err
		}
		return r.client.BatchInstance(callCtx, r.request(call))
	}
	var calls []grantplan.Call
	if len(call.Resources) > 1 {
		// A combination is one group to IAM: each action's is the group
		// the resource holds.
		for _, a := range call.Actions {
			send, done, err := r.shared.Revoke(wait, scope, []string{a}, []string{combinationPath(r.held[a].Resources)})
			defer done()
			if err != nil {
				return nil, err
			}
			if len(send[a]) > 0 {
				sub := call
				sub.Actions = []string{a}
				calls = append(calls, sub)
			}
		}
		if len(calls) == len(call.Actions) {
			calls = []grantplan.Call{call}
		}
	} else {
		paths := callPaths(call)
		send, done, err := r.shared.Revoke(wait, scope, call.Actions, paths)
		defer done()
		if err != nil {
			return nil, err
		}
		calls = splitRevoke(call, send, len(paths))
	}
	var results []bkiam.PolicyResult
	for _, c := range calls {
		res, err := r.client.BatchInstance(callCtx, r.request(c))
		if err != nil {
			return results, err
		}
		results = append(results, res...)
	}
	return results, nil
}

// callPaths are the paths a call names: one per instance of a single
// type, the combination of several, "/" for none.
func callPaths(call grantplan.Call) []string {
	resources := make([]grantplan.Resource, len(call.Resources))
	for i, res := range call.Resources {
		instances := make(map[string]string, len(res.Instances))
		for _, in := range res.Instances {
			instances[in.ID] = in.Name
		}
		resources[i] = grantplan.Resource{System: res.System, Type: res.Type, Instances: instances}
	}
	return grantPaths(resources)
}

// splitRevoke returns the calls that revoke, of a single-type or typeless
// revoke, only the paths send keeps, grouping the actions that keep the
// same ones: the call itself when every one of its all paths is kept.
func splitRevoke(call grantplan.Call, send map[string][]string, all int) []grantplan.Call {
	whole := true
	for _, a := range call.Actions {
		if len(send[a]) != all {
			whole = false
		}
	}
	if whole {
		return []grantplan.Call{call}
	}
	var calls []grantplan.Call
	for _, g := range sharedgrants.GroupRevokes(call.Actions, send) {
		sub := grantplan.Call{Operation: call.Operation, Actions: g.Actions}
		if len(call.Resources) == 1 {
			keep := make(map[string]bool, len(g.Paths))
			for _, p := range g.Paths {
				keep[p] = true
			}
			res := call.Resources[0]
			var instances []grantplan.Instance
			for _, in := range res.Instances {
				if keep[sharedgrants.InstancePath(res.System, res.Type, in.ID)] {
					instances = append(instances, in)
				}
			}
			sub.Resources = []grantplan.CallResource{{System: res.System, Type: res.Type, Instances: instances}}
		}
		calls = append(calls, sub)
	}
	return calls
}

func (r *instanceGrantRunner) request(call grantplan.Call) bkiam.BatchInstanceRequest {
	req := bkiam.BatchInstanceRequest{
		System:    r.system,
		Operate:   bkiam.OperationRevoke,
		Subject:   r.subject,
		Actions:   make([]bkiam.Action, len(call.Actions)),
		Resources: make([]bkiam.InstanceResource, len(call.Resources)),
	}
	if call.Operation == grantplan.OperationGrant {
		req.Operate = bkiam.OperationGrant
		req.ExpiredAt = call.ExpiresAt
	}
	for i, a := range call.Actions {
		req.Actions[i] = bkiam.Action{ID: a}
	}
	for i, res := range call.Resources {
		instances := make([]bkiam.Instance, len(res.Instances))
		for j, in := range res.Instances {
			instances[j] = bkiam.Instance{ID: in.ID, Name: in.Name}
		}
		req.Resources[i] = bkiam.InstanceResource{System: res.System, Type: res.Type, Instances: instances}
	}
	return req
}

// recordPolicies keeps the policy ids of the call's actions. IAM's grant answer
// lists every policy the subject holds in the system, not just these
// (a known server bug), so entries are picked by action id; an action the
// call emptied has no policy any more.
func (r *instanceGrantRunner) recordPolicies(call grantplan.Call, results []bkiam.PolicyResult) {
	for _, res := range results {
		a := res.Action.ID
		if _, ours := r.held[a]; !ours || !slices.Contains(call.Actions, a) {
			continue
		}
		if old, ok := r.policies[a]; ok && old > 0 && res.PolicyID > 0 && res.PolicyID != old && call.Operation == grantplan.OperationGrant && !r.revoked[a] {
			if r.lost == nil {
				r.lost = map[string]bool{}
			}
			r.lost[a] = true
		}
		r.policies[a] = res.PolicyID
	}
	for _, a := range call.Actions {
		if _, held := r.held[a]; !held {
			delete(r.policies, a)
		}
	}
}

// describeCall renders "granting edit_host, view_host on 200 bk_cmdb/host instances".
func describeCall(c grantplan.Call) string {
	verb := "revoking"
	if c.Operation == grantplan.OperationGrant {
		verb = "granting"
	}
	var on []string
	for _, r := range c.Resources {
		on = append(on, fmt.Sprintf("%d %s/%s", len(r.Instances), r.System, r.Type))
	}
	target := "no resource type"
	if len(on) > 0 {
		target = strings.Join(on, " × ") + " instances"
	}
	return fmt.Sprintf("%s %s on %s", verb, strings.Join(c.Actions, ", "), target)
}
