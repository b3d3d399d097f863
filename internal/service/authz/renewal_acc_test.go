package authz_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccRenewalIsOneCallPerActionGroup (issue 52): a later expires_at of
// a user's grant of two actions on 1 000 hosts is one batch_instance
// grant, of one host for both actions, where it used to grant all 1 000
// again in 5 calls: IAM raises the expiry of everything a policy holds on
// any grant into it, so the sandbox then holds every host at the new
// expiry, and the next plan is empty. What the renewal does of hosts
// revoked outside Terraform (detect_drift on):
//   - after a refresh, which reads their loss, the plan shows them added
//     and the apply grants exactly them with the new expiry, the other
//     action riding along that one call;
//   - with -refresh=false, state still counts them: the renewal grants
//     only the host it names and they stay revoked, until a refreshing
//     plan grants exactly them;
//   - a policy revoked whole answers the renewal's grant with a new policy
//     id, and the apply grants the rest of it again.
func TestAccRenewalIsOneCallPerActionGroup(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	url, sent := acctest.LoggedURL(t, sb)
	provider := strings.Replace(acctest.DriftProvider(sb, ""), sb.URL, url, 1)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	both := []string{"edit_host", "view_host"}
	ids := sandboxtest.IDRange(0, 1000)
	without := func(gone ...string) []string {
		return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return slices.Contains(gone, id) })
	}
	step := 0
	// renew applies expires_at = date with args, and checks the calls it
	// sent, what IAM holds (view_host without gone) and that every policy
	// of alice's expires at date.
	renew := func(date string, args []string, want []string, gone ...string) {
		t.Helper()
		step++
		w.Configure(provider, acctest.HostGrant{Actions: both, Ids: ids, ExpiresAt: date}.Config(""))
		w.MustRun(append([]string{"apply", "-auto-approve"}, args...)...)
		if got := sent.Take(); !slices.Equal(got, want) {
			t.Fatalf("step %d (expires_at %s, %v) sent:\n  %s\nwant:\n  %s", step, date, args, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
		held := map[string][]string{"edit_host": sandboxtest.HostPaths(ids...), "view_host": sandboxtest.HostPaths(without(gone...)...)}
		if err := acctest.CheckHeld(sb, "bk_cmdb", "user", "alice", held)(nil); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		at, err := time.Parse(time.RFC3339, date)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkExpiry(sb, at.Unix())(nil); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}

	w.Configure(provider, acctest.HostGrant{Actions: both, Ids: ids, ExpiresAt: "2098-01-01T00:00:00Z"}.Config(""))
	w.MustRun("apply", "-auto-approve")
	if got := sent.Take(); len(got) != 5 {
		t.Fatalf("the create sent %d calls, want 5 of 200 hosts:\n  %s", len(got), strings.Join(got, "\n  "))
	}

	// The renewal: one call, one host, both actions.
	renew("2098-06-01T00:00:00Z", nil, []string{"grant edit_host,view_host: 0"})
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the renewal is not empty")
	}

	// Hosts revoked outside, read back by the refresh: granted again with
	// the new expiry, in the renewal's one call.
	acctest.ChangeHostsOutside(t, sb, bkiam.OperationRevoke, "alice", []string{"view_host"}, []string{"5", "7"}, 0)
	renew("2099-01-01T00:00:00Z", nil, []string{"grant edit_host,view_host: 5,7"})
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the renewal that granted the revoked hosts again is not empty")
	}

	// With -refresh=false the renewal restores nothing it does not name;
	// the next refreshing plan grants exactly what is missing.
	acctest.ChangeHostsOutside(t, sb, bkiam.OperationRevoke, "alice", []string{"view_host"}, []string{"5", "7"}, 0)
	renew("2099-06-01T00:00:00Z", []string{"-refresh=false"}, []string{"grant edit_host,view_host: 0"}, "5", "7")
	if w.PlanIsEmpty() {
		t.Fatal("a refreshing plan after the -refresh=false renewal does not grant the hosts revoked outside again")
	}
	renew("2099-06-01T00:00:00Z", nil, []string{"grant view_host: 5,7"})
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the hosts were granted again is not empty")
	}

	// A policy revoked whole: the renewal's grant creates a new one, whose
	// id tells the apply to grant the rest again (1 000 hosts, 5 calls).
	acctest.ChangeHostsOutside(t, sb, bkiam.OperationRevoke, "alice", []string{"view_host"}, ids, 0)
	want := []string{"grant edit_host,view_host: 0"}
	for chunk := range slices.Chunk(slices.Sorted(slices.Values(ids)), 200) {
		want = append(want, "grant view_host: "+strings.Join(chunk, ","))
	}
	renew("2099-09-01T00:00:00Z", []string{"-refresh=false"}, want)
	policies, _ := stateValues(t, w, acctest.GrantAddr)["policies"].(map[string]any)
	for _, p := range sb.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies {
		if got := fmt.Sprint(policies[p.Action]); got != strconv.FormatInt(p.PolicyID, 10) {
			t.Errorf("state records policy %s for %s, IAM's is %d", got, p.Action, p.PolicyID)
		}
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan after the renewal of a policy revoked whole is not empty")
	}
}
