package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// What the resources' runners share: a run of planned IAM calls, sent
// one by one, and how its failure reads.

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
