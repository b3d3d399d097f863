package access_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccExpiring_planTimeValidation: bkiam_expiring's mistakes fail the
// plan, naming the attribute and the fix.
func TestAccExpiring_planTimeValidation(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	resource.Test(t, acctest.PlanTimeTest(t, acctest.Transports[acctest.GatewayTransport].Block(sb.URL), acctest.ExpiringValidationCases()))
}

// TestAccExpiringReportsWhatLapses: a site filled through IAM's APIs.
// Group "oncall" has alice until 10 days on, department 2 until 5 days
// on, bob until 40 days on and carol permanently; user dave holds
// view_host until 10 days on, edit_host permanently and delete_host
// until 40 days on. Over 30 days, bkiam_expiring lists department 2
// then alice, and dave's view_host; a check block over them warns in the
// plan, naming who lapses, and passes once the window is shorter than
// the nearest lapse.
func TestAccExpiringReportsWhatLapses(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	ctx := context.Background()
	c := acctest.OutsideClient(t, sb)
	now := time.Now().UTC().Truncate(time.Second)
	days := func(n int) int64 { return now.Add(time.Duration(n) * 24 * time.Hour).Unix() }
	_, group := acctest.OutsideGroup(t, c, "oncall-managers", "oncall")
	for _, add := range []struct {
		members []bkiam.MemberRef
		at      int64
	}{
		{[]bkiam.MemberRef{{Type: "user", ID: "alice"}}, days(10)},
		{[]bkiam.MemberRef{{Type: "department", ID: "2"}}, days(5)},
		{[]bkiam.MemberRef{{Type: "user", ID: "bob"}}, days(40)},
		{[]bkiam.MemberRef{{Type: "user", ID: "carol"}}, bkiam.PermanentExpiry},
	} {
		if err := c.AddMembers(ctx, "bk_cmdb", group, add.members, add.at); err != nil {
			t.Fatal(err)
		}
	}
	for action, at := range map[string]int64{"view_host": days(10), "edit_host": bkiam.PermanentExpiry, "delete_host": days(40)} {
		acctest.ChangeHostsOutside(t, sb, bkiam.OperationGrant, "dave", []string{action}, []string{"1"}, at)
	}

	config := func(within string) string {
		return fmt.Sprintf(`
data "bkiam_expiring" "oncall" {
  system   = "bk_cmdb"
  group_id = "%d"
  within   = %q
}

data "bkiam_expiring" "dave" {
  system  = "bk_cmdb"
  user    = "dave"
  actions = ["view_host", "edit_host", "delete_host"]
  within  = %q
}

check "nothing_lapses" {
  assert {
    condition     = data.bkiam_expiring.oncall.lapsing + data.bkiam_expiring.dave.lapsing == 0
    error_message = "Lapsing within %s: ${join(", ", concat([for m in data.bkiam_expiring.oncall.members : "${m.type} ${m.id} on ${m.expires_at}"], [for g in data.bkiam_expiring.dave.grants : "dave's ${g.action} on ${g.expires_at}"]))}."
  }
}

output "members" {
  value = data.bkiam_expiring.oncall.members
}
`, group, within, within, within)
	}
	rfc := func(at int64) string { return time.Unix(at, 0).UTC().Format(time.RFC3339) }
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), config("30d"))
	out := strings.Join(strings.Fields(w.MustRun("plan")), " ")
	want := fmt.Sprintf("Lapsing within 30d: department 2 on %s, user alice on %s, dave's view_host on %s.", rfc(days(5)), rfc(days(10)), rfc(days(10)))
	if !strings.Contains(out, "Check block assertion failed") || !strings.Contains(out, want) {
		t.Errorf("the plan over 30 days does not warn %q:\n%s", want, out)
	}
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), config("4d"))
	if out := w.MustRun("plan"); strings.Contains(out, "Check block assertion failed") {
		t.Errorf("the plan over 4 days warns, though nothing lapses that soon:\n%s", out)
	}
}
