package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
)

// grantRunner sends planned batch_instance calls one by one and keeps an
// exact record of what the subject holds after each, so that a run that
// stops midway — on an error or because Terraform was cancelled — leaves
// state that says what IAM holds, and the next run completes the rest.
type grantRunner struct {
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
func (r *grantRunner) run(ctx context.Context, calls []grantplan.Call) error {
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

func (r *grantRunner) request(call grantplan.Call) bkiam.BatchInstanceRequest {
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
func (r *grantRunner) record(call grantplan.Call, results []bkiam.PolicyResult) {
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

// runError says which call failed (or where a cancelled run stopped) and
// what is recorded, in words a user can act on.
type runError struct {
	done, total int
	// what describes the failed call: "granting view_host on 200 …".
	what    string
	err     error
	stopped error
	// doubt says the failed grant may have been carried out and is
	// recorded as held.
	doubt bool
	// revokeInDoubt says the failed revoke may have been carried out; its
	// instances are still recorded as held.
	revokeInDoubt bool
}

func (e *runError) Error() string {
	recorded := "Nothing was changed."
	switch {
	case e.done == 1:
		recorded = "The call before it succeeded and is recorded in state."
	case e.done > 1:
		recorded = fmt.Sprintf("The %d calls before it succeeded and are recorded in state.", e.done)
	}
	if e.stopped != nil {
		return fmt.Sprintf("Stopped before call %d of %d (%v). %s Run terraform apply again to finish.",
			e.done+1, e.total, e.stopped, recorded)
	}
	doubt := ""
	switch {
	case e.doubt:
		doubt = " IAM may or may not have carried out this call: state counts it as held, so that a destroy revokes it, and the next apply sends it again."
	case e.revokeInDoubt:
		doubt = " IAM may or may not have carried out this call: state still counts its instances as held, and the next apply revokes them again."
	}
	return fmt.Sprintf("Call %d of %d failed, %s: %v. %s%s Fix the cause and run terraform apply again to finish.",
		e.done+1, e.total, e.what, e.err, recorded, doubt)
}

func (e *runError) Unwrap() error {
	if e.stopped != nil {
		return e.stopped
	}
	return e.err
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

// planAndRun plans calls and runs them, turning a failure of either into
// a diagnostic; it reports whether every call succeeded. Both resources
// apply their changes through it.
func planAndRun[C any](ctx context.Context, plan func() ([]C, error), run func(context.Context, []C) error, diags *diagnostics) bool {
	calls, err := plan()
	if err != nil {
		diags.addError("Cannot plan the IAM calls", err.Error())
		return false
	}
	if err := run(ctx, calls); err != nil {
		summary := "IAM call failed"
		if isStop(err) {
			summary = "Stopped"
		}
		diags.addError(summary, err.Error())
		return false
	}
	return true
}

// isStop reports whether a run ended because Terraform cancelled it.
func isStop(err error) bool {
	var re *runError
	return errors.As(err, &re) && re.stopped != nil
}
