package applyrun

import (
	"errors"
	"testing"
)

// TestRunErrorReads: a failed call's message reads as sentences, whether
// IAM's error ends in a full stop (a management error's fix) or not.
func TestRunErrorReads(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New("IAM rejected the grant (HTTP 400)"),
			"Call 2 of 3 failed, granting view_host on 1 bk_cmdb/host instances: IAM rejected the grant (HTTP 400). " +
				"The call before it succeeded and is recorded in state. Fix the cause and run terraform apply again to finish."},
		{errors.New("group 4: IAM rejected the member add (HTTP 403)\n\nWiden the subject_scopes, or remove the member."),
			"Call 2 of 3 failed, granting view_host on 1 bk_cmdb/host instances: group 4: IAM rejected the member add (HTTP 403)\n\n" +
				"Widen the subject_scopes, or remove the member. The call before it succeeded and is recorded in state. " +
				"Fix the cause and run terraform apply again to finish."},
	} {
		e := &runError{done: 1, total: 3, what: "granting view_host on 1 bk_cmdb/host instances", err: c.err}
		if got := e.Error(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
