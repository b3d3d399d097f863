package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
)

// instanceGrantRunner sends planned batch_instance calls one by one and keeps an
// exact record of what the subject holds after each, so that a run that
// stops midway — on an error or because Terraform was cancelled — leaves
// state that says what IAM holds, and the next run completes the rest.
type instanceGrantRunner struct {
	client  instanceCaller
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
	// command (shared.go); nil lets them through.
	shared *sharedApply
}

// instanceCaller sends batch_instance calls: the client itself, or the
// provider's Coalescer, which merges the calls of concurrent resources.
type instanceCaller interface {
	BatchInstance(ctx context.Context, req bkiam.BatchInstanceRequest) ([]bkiam.PolicyResult, error)
}

// run sends calls in order and stops at the first failure. The call in
// flight when ctx is cancelled runs to its end — it is bounded by
// request_timeout and max_retries — so that its outcome is known; the run
// then stops before the next call.
func (r *instanceGrantRunner) run(ctx context.Context, calls []grantplan.Call) error {
	if err := r.runCalls(ctx, calls); err != nil {
		return err
	}
	if len(r.lost) == 0 {
		return nil
	}
	var again []grantplan.Call
	for _, a := range slices.Sorted(maps.Keys(r.lost)) {
		h := r.held[a]
		restore, err := grantplan.Plan(grantplan.Holdings{}, &grantplan.Grant{Actions: []string{a}, Resources: h.Resources, ExpiresAt: h.ExpiresAt}, r.limits)
		if err != nil {
			return err
		}
		again = append(again, restore...)
	}
	tflog.Warn(ctx, "IAM answered a grant with a new policy id: the policy was revoked whole outside Terraform; granting the rest again",
		map[string]any{"actions": slices.Sorted(maps.Keys(r.lost))})
	r.lost = nil
	return r.runCalls(ctx, again)
}

// runCalls is run's loop over calls.
func (r *instanceGrantRunner) runCalls(ctx context.Context, calls []grantplan.Call) error {
	for i, call := range calls {
		if err := ctx.Err(); err != nil {
			return &runError{done: i, total: len(calls), stopped: err}
		}
		tflog.Debug(ctx, "sending planned IAM call", map[string]any{
			"call": fmt.Sprintf("%d/%d", i+1, len(calls)), "operation": string(call.Operation),
			"actions": call.Actions, "instances": call.InstanceCount(),
		})
		results, err := r.send(ctx, call)
		if err != nil {
			var iamErr *bkiam.Error
			if r.subject.Type == subjectGroup && call.Operation == grantplan.OperationGrant && errors.As(err, &iamErr) && iamErr.Code == 1902500 {
				// IAM fails a grant to a group it does not know with an
				// unhandled error, 1902500 (HTTP 500), never a clear one.
				err = fmt.Errorf("%w (IAM answers a grant to a user group that does not exist this way: check that group %s still exists)", err, r.subject.ID)
			}
			if bkiam.OutcomeUnknown(err) {
				r.held.ApplyUncertain(call)
			}
			e := &runError{done: i, total: len(calls), what: describeCall(call), err: err}
			if bkiam.OutcomeUnknown(err) {
				e.doubt, e.revokeInDoubt = call.Operation == grantplan.OperationGrant, call.Operation == grantplan.OperationRevoke
			}
			return e
		}
		r.held.Apply(call)
		r.record(call, results)
		if call.Operation == grantplan.OperationRevoke {
			if r.revoked == nil {
				r.revoked = map[string]bool{}
			}
			for _, a := range call.Actions {
				r.revoked[a] = true
			}
		}
	}
	return nil
}

// send sends one planned call, in the ledger's order: a grant after the
// revokes in flight on its paths; a revoke of only what no other
// resource of the command keeps, split by action where they differ.
func (r *instanceGrantRunner) send(ctx context.Context, call grantplan.Call) ([]bkiam.PolicyResult, error) {
	scope := grantScope(r.system, r.subject)
	if call.Operation == grantplan.OperationGrant {
		if err := r.shared.grant(ctx, scope, callPaths(call)); err != nil {
			return nil, err
		}
		return r.client.BatchInstance(context.WithoutCancel(ctx), r.request(call))
	}
	var calls []grantplan.Call
	if len(call.Resources) > 1 {
		// A combination is one group to IAM: each action's is the group
		// the resource holds.
		for _, a := range call.Actions {
			send, done, err := r.shared.revoke(ctx, scope, []string{a}, []string{combinationPath(r.held[a].Resources)})
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
		send, done, err := r.shared.revoke(ctx, scope, call.Actions, paths)
		defer done()
		if err != nil {
			return nil, err
		}
		calls = splitRevoke(call, send, len(paths))
	}
	var results []bkiam.PolicyResult
	for _, c := range calls {
		res, err := r.client.BatchInstance(context.WithoutCancel(ctx), r.request(c))
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
	for _, g := range groupRevokes(call.Actions, send) {
		sub := grantplan.Call{Operation: call.Operation, Actions: g.actions}
		if len(call.Resources) == 1 {
			keep := make(map[string]bool, len(g.paths))
			for _, p := range g.paths {
				keep[p] = true
			}
			res := call.Resources[0]
			var instances []grantplan.Instance
			for _, in := range res.Instances {
				if keep[instancePath(res.System, res.Type, in.ID)] {
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

// record keeps the policy ids of the call's actions. IAM's grant answer
// lists every policy the subject holds in the system, not just these
// (a known server bug), so entries are picked by action id; an action the
// call emptied has no policy any more.
func (r *instanceGrantRunner) record(call grantplan.Call, results []bkiam.PolicyResult) {
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
