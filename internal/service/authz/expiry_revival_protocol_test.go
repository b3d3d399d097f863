package authz_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// aliceRow is alice's one row of view_host, by its backend id, as IAM's policy query names it.
func aliceRow(t *testing.T, sb *sandboxtest.Sandbox) int64 {
	t.Helper()
	rows, err := acctest.OutsideClient(t, sb).QuerySubjectRows(context.Background(), "bk_cmdb", bkiam.Subject{Type: "user", ID: "alice"},
		[]string{"view_host"}, nil)
	if err != nil || len(rows.Rows["view_host"]) != 1 {
		t.Fatalf("alice's rows: %+v, %v", rows, err)
	}
	return rows.Rows["view_host"][0].ID
}

// hostRange is the ids from, …, to.
func hostRange(from, to int) []string { return sandboxtest.IDRange(from, to+1) }

// TestProtocolRevivalOlderThanADay: alice held view_host on 200 hosts,
// granted outside Terraform, and a resource granted her one more with the
// same expiry; the policy then expired three days ago. IAM keeps it (a
// year) and merges the next grant into it, but its policy list shows an
// expired policy for one day only. The resource kept the row's backend
// id (its plan read it), so the plan of its renewal, in a later process,
// reads the row by id and fails (expiry_conflicts = "error") naming the
// 200 hosts it would bring back. Before issue 61 it planned without a
// word, and IAM then held 201 hosts until the new expiry.
func TestProtocolRevivalOlderThanADay(t *testing.T) {
	env := acctest.NewProtoEnv(t, map[string]any{"expiry_conflicts": "error"})
	expiry := time.Now().Add(time.Hour).Truncate(time.Second)
	acctest.ChangeHostsOutside(t, env.Sandbox, bkiam.OperationGrant, "alice", []string{"view_host"}, hostRange(1, 200), expiry.Unix())
	config := acctest.HostsOf([]string{"view_host"}, "201")
	config.ExpiresAt = protocol.Known(expiry.UTC().Format(time.RFC3339))
	applied := acctest.InstanceProto.MustChange(t, env.Server, nil, nil, config)
	if !strings.Contains(string(applied.Private), `"seen_rows"`) {
		t.Fatalf("the apply kept no rows in private state: %s", applied.Private)
	}
	row := aliceRow(t, env.Sandbox)
	if err := env.Sandbox.ExpirePolicy("bk_cmdb", row, time.Now().Add(-72*time.Hour).Unix()); err != nil {
		t.Fatal(err)
	}

	renewed := *config
	renewed.ExpiresAt = protocol.Known(time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339))
	later := env.NewProcess(t, map[string]any{"expiry_conflicts": "error"})
	plan := acctest.InstanceProto.Plan(t, later, applied.NewState, applied.Private, &renewed)
	acctest.ExpectDiags(t, plan.Diagnostics, acctest.ProtoDiag{Severity: tfprotov6.DiagnosticSeverityError,
		Text: "Grant revives an expired policy", At: protocol.Root("expires_at")})
	if d := plan.Diagnostics[0].Detail; !strings.Contains(d, "200 bk_cmdb/host instances this resource does not manage") {
		t.Errorf("the error does not name the 200 hosts it brings back: %s", d)
	}
}

// TestProtocolRevivalNotSeen: bob held view_host on 200 hosts, which
// expired three days ago; no resource ever saw his policy. IAM's list no
// longer shows it and nothing else an app can read does, so a first grant
// to bob cannot know what it brings back: the plan says so plainly, in one
// warning for the grant (even with expiry_conflicts = "error", since it is
// what IAM does not let the provider know, not a conflict it found), once
// per process however many resources grant bob the action.
func TestProtocolRevivalNotSeen(t *testing.T) {
	env := acctest.NewProtoEnv(t, map[string]any{"expiry_conflicts": "error"})
	acctest.ChangeHostsOutside(t, env.Sandbox, bkiam.OperationGrant, "bob", []string{"view_host", "edit_host"}, hostRange(1, 200),
		time.Now().Add(time.Hour).Unix())
	for _, rows := range []string{"view_host", "edit_host"} {
		got, err := acctest.OutsideClient(t, env.Sandbox).QuerySubjectRows(context.Background(), "bk_cmdb",
			bkiam.Subject{Type: "user", ID: "bob"}, []string{rows}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Sandbox.ExpirePolicy("bk_cmdb", got.Rows[rows][0].ID, time.Now().Add(-72*time.Hour).Unix()); err != nil {
			t.Fatal(err)
		}
	}
	config := acctest.HostsOf([]string{"view_host", "edit_host"}, "201")
	config.Subject = protocol.Known(authz.SubjectModel{Type: protocol.Known("user"), ID: protocol.Known("Bob")}) // IAM compares ids without case
	plan := acctest.InstanceProto.Plan(t, env.Server, nil, nil, config)
	acctest.ExpectDiags(t, plan.Diagnostics, acctest.RevivalNotice)
	want := "user Bob holds no live policy of edit_host, view_host in bk_cmdb, and IAM lists no expired policy of them"
	if d := plan.Diagnostics[0].Detail; !strings.Contains(d, want) {
		t.Errorf("the warning is\n%s\nwant it to say %q", d, want)
	}
	again := acctest.InstanceProto.Plan(t, env.Server, nil, nil, config)
	acctest.ExpectDiags(t, again.Diagnostics) // told once per process
	if strings.Contains(testutil.RenderDiags(again.Diagnostics), "may come back") {
		t.Error("the notice is repeated in the same process")
	}
}
