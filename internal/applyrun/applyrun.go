package applyrun

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/ledger"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
)

// The resources that send IAM calls are bkiam_instance_grant,
// bkiam_creator_grant and bkiam_group_members; a bkiam_group_permission
// applies as an instance grant. Run is the skeleton every one of them
// runs: claim, wait, plan, send, hand over, release, record. RunCalls is
// its loop over the planned calls. What differs between the resources, and
// only that, is in their hooks: a Change[M, C] for the skeleton, Calls[C]
// for the loop.

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
	// doubtNote, when set, says instead of doubt and revokeInDoubt what
	// state records of a call that may have been carried out.
	doubtNote string
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
	case e.doubtNote != "":
		doubt = " IAM may or may not have carried out this call: " + e.doubtNote
	case e.doubt:
		doubt = " IAM may or may not have carried out this call: state counts it as held, so that a destroy revokes it, and the next apply sends it again."
	case e.revokeInDoubt:
		doubt = " IAM may or may not have carried out this call: state still counts its instances as held, and the next apply revokes them again."
	}
	// An error that is a sentence already (a management error's fix) keeps its one full stop.
	return fmt.Sprintf("Call %d of %d failed, %s: %s. %s%s Fix the cause and run terraform apply again to finish.",
		e.done+1, e.total, e.what, strings.TrimSuffix(e.err.Error(), "."), recorded, doubt)
}

func (e *runError) Unwrap() error {
	if e.stopped != nil {
		return e.stopped
	}
	return e.err
}

// Calls is a resource's part of the loop over its planned calls of type C.
type Calls[C any] interface {
	// Describe is the debug line of a call: its message and fields (the
	// loop adds "call": "i/n").
	Describe(c C) (msg string, fields map[string]any)
	// Send sends one call and, when it succeeds, records what IAM holds
	// after it. wait is the run's context, cancelled when Terraform stops
	// the run: for the waits on other resources' calls (internal/ledger), which
	// give up on a stop. call is wait without its cancellation, for IAM's
	// calls: the call in flight when Terraform stops the run runs to its
	// end (it is bounded by request_timeout and max_retries), so that its
	// outcome is known. A resource may send everything with call.
	Send(wait, call context.Context, c C) error
	// Failed records a failed call: what IAM may hold after a call whose
	// outcome is unknown (bkiam.OutcomeUnknown of err), and how the error
	// reads.
	Failed(c C, err error, unknown bool) Failure
	// Again returns the calls to send once every planned call succeeded:
	// those that restore what IAM lost under the run (a policy revoked
	// whole outside Terraform); none, mostly.
	Again(ctx context.Context) ([]C, error)
}

// Failure is how a failed call reads in its runError.
type Failure struct {
	What                 string
	Err                  error
	Doubt, RevokeInDoubt bool
	DoubtNote            string
}

// RunCalls sends calls in order and stops at the first failure, and then
// sends what h.Again asks for. It stops before the next call once ctx
// is cancelled (the call in flight runs to its end: Calls.Send).
func RunCalls[C any](ctx context.Context, planned []C, h Calls[C]) error {
	if err := runLoop(ctx, planned, h); err != nil {
		return err
	}
	again, err := h.Again(ctx)
	if err != nil || len(again) == 0 {
		return err
	}
	return runLoop(ctx, again, h)
}

func runLoop[C any](ctx context.Context, planned []C, h Calls[C]) error {
	for i, c := range planned {
		if err := ctx.Err(); err != nil {
			return &runError{done: i, total: len(planned), stopped: err}
		}
		msg, fields := h.Describe(c)
		fields["call"] = fmt.Sprintf("%d/%d", i+1, len(planned))
		tflog.Debug(ctx, msg, fields)
		if err := h.Send(ctx, context.WithoutCancel(ctx), c); err != nil {
			f := h.Failed(c, err, bkiam.OutcomeUnknown(err))
			return &runError{done: i, total: len(planned), what: f.What, err: f.Err,
				doubt: f.Doubt, revokeInDoubt: f.RevokeInDoubt, doubtNote: f.DoubtNote}
		}
	}
	return nil
}

// Change is a resource's part of Run: one apply of one resource,
// made by the resource's apply from the request once it has checked the
// planned value and read what the resource holds. M is the resource's
// model, C its planned call.
type Change[M, C any] interface {
	Calls[C]
	// Claims are the planned paths, claimed before the first call so that
	// other resources' revokes leave them (internal/sharedgrants); false: claim
	// nothing (a destroy, or a resource outside the ledger).
	Claims() (ledger.Claims, bool)
	// Taken hears, by action, the planned paths another resource revoked
	// before the claim: the resource records them as not held, so that
	// the run grants them again.
	Taken(action string, paths map[string]bool)
	// Load reads, under the apply's timeout, what the run starts from when
	// the state does not say it (a group_members create reads IAM).
	// done ends the apply with the result it returns.
	Load(ctx context.Context, diags *protocol.Diagnostics) (state *M, private protocol.PrivateState, done bool)
	// Plan returns the calls that make IAM hold the planned value.
	Plan() ([]C, error)
	// Gone reports whether a failed run found that the object the
	// resource lives in is gone, which ends a destroy as done.
	Gone(ctx context.Context, err error) bool
	// After runs once the run ended, ok or not: what the run invalidates,
	// warns of or reads back. It returns ok, or false when what it found
	// makes the apply fail.
	After(ctx context.Context, ok bool, diags *protocol.Diagnostics) bool
	// Handed hears, by action, after a failed run, the planned paths that
	// other resources' revokes left in IAM because this one claims them:
	// IAM holds them whether or not this resource's grants went out, so
	// the resource records them as held, in doubt.
	Handed(action string, paths map[string]bool)
	// Empty reports whether the resource holds nothing.
	Empty() bool
	// Reclaim returns what the resource claims once the run ended, after
	// a success or not (false: the planned claim stands).
	Reclaim(ok bool) (ledger.Claims, bool)
	// Record returns the state that says what IAM holds: the planned value
	// after a success, what is held after a failure.
	Record(ok bool, diags *protocol.Diagnostics) (*M, protocol.PrivateState)
}

// Run runs one resource's apply: the claim, the calls within the
// apply's timeout, and the state after them. creating and destroying are
// the operation's; shared is the apply's place in the ledger (nil: none).
func Run[M, C any](ctx context.Context, shared *sharedgrants.Handle, h Change[M, C], timeout time.Duration, creating, destroying bool, diags *protocol.Diagnostics) (*M, protocol.PrivateState) {
	if claims, ok := h.Claims(); ok {
		shared.Claim(claims)
		for action, paths := range shared.Taken() {
			h.Taken(action, paths)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if state, private, done := h.Load(ctx, diags); done {
		return state, private
	}

	ok := false
	if planned, err := h.Plan(); err != nil {
		diags.AddError("Cannot plan the IAM calls", err.Error())
	} else if err := RunCalls(ctx, planned, h); err != nil {
		if destroying && h.Gone(ctx, err) {
			shared.Release()
			return nil, nil // the object it lived in took it with it
		}
		summary := "IAM call failed"
		if IsStop(err) {
			summary = "Stopped"
		}
		diags.AddError(summary, err.Error())
	} else {
		ok = true
	}
	ok = h.After(ctx, ok, diags)
	if !ok && !destroying {
		for action, paths := range shared.Handed() {
			h.Handed(action, paths)
		}
	}
	switch {
	case ok && destroying:
		shared.Release()
		return nil, nil // the resource is gone
	case !ok && creating && h.Empty():
		shared.Release()
		return nil, nil // nothing granted: no resource to record
	}
	if claims, ok := h.Reclaim(ok); ok {
		shared.Claim(claims)
	}
	return h.Record(ok, diags)
}

// NoLedger is the part of a change that a resource outside the ledger
// (it claims no paths) embeds.
type NoLedger struct{}

func (NoLedger) Claims() (ledger.Claims, bool)      { return ledger.Claims{}, false }
func (NoLedger) Taken(string, map[string]bool)      {}
func (NoLedger) Handed(string, map[string]bool)     {}
func (NoLedger) Reclaim(bool) (ledger.Claims, bool) { return ledger.Claims{}, false }

// IsStop reports whether a run ended because Terraform cancelled it.
func IsStop(err error) bool {
	var re *runError
	return errors.As(err, &re) && re.stopped != nil
}
