package provider

import (
	"context"
	"fmt"
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
	for i, call := range calls {
		if err := ctx.Err(); err != nil {
			return &runError{done: i, total: len(calls), stopped: err}
		}
		tflog.Debug(ctx, "sending planned IAM call", map[string]any{
			"call": fmt.Sprintf("%d/%d", i+1, len(calls)), "operation": string(call.Operation),
			"actions": call.Actions, "instances": call.InstanceCount(),
		})
		results, err := r.client.BatchInstance(context.WithoutCancel(ctx), r.request(call))
		if err != nil {
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
	}
	return nil
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
		if _, ours := r.held[res.Action.ID]; ours && slices.Contains(call.Actions, res.Action.ID) {
			r.policies[res.Action.ID] = res.PolicyID
		}
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
