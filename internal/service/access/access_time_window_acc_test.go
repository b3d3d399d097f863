package access_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccAccessCheckTimeWindow: rows with a daily time window, as IAM's web
// UI grants them, which IAM evaluates with its clock. alice may delete
// host 1 within an hour twelve hours from now (Asia/Shanghai), bob host 2
// all day. IAM denies alice now and its query leaves her row out of its
// answer; the check reads the rows IAM's query read and warns, for alice's
// host 1 alone, that a window allows it, naming the window. bob is allowed
// within his; alice's host 2 is a plain denial, with no word of a window.
func TestAccAccessCheckTimeWindow(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.SameOnEveryCLI(t, "the values and warnings of a data source's read are the provider's")
	sb := sandboxtest.Start(t)
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	later := (time.Now().In(shanghai).Hour() + 12) % 24
	window := func(host string, from, to int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"op":"AND","content":[{"field":"host.id","op":"eq","value":%q},`+
			`{"field":"_bk_iam_env_.tz","op":"eq","value":"Asia/Shanghai"},{"field":"_bk_iam_env_.hms","op":"gte","value":%d},`+
			`{"field":"_bk_iam_env_.hms","op":"lte","value":%d}]}`, host, from, to))
	}
	for user, row := range map[string]json.RawMessage{
		"alice": window("1", later*10000, later*10000+5959),
		"bob":   window("2", 0, 235959),
	} {
		if _, err := sb.AddExpressionPolicy("bk_cmdb", sandbox.ExpressionPolicy{Subject: sandbox.Subject{Type: "user", ID: user},
			Action: "delete_host", Expression: row}); err != nil {
			t.Fatal(err)
		}
	}
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), `
locals {
  checks = {
    alice_1 = { user = "alice", host = "1" }
    alice_2 = { user = "alice", host = "2" }
    bob_2   = { user = "bob", host = "2" }
  }
}

data "bkiam_access_check" "c" {
  for_each  = local.checks
  system    = "bk_cmdb"
  subject   = { type = "user", id = each.value.user }
  actions   = ["delete_host"]
  resources = [{ system = "bk_cmdb", type = "host", id = each.value.host }]
}

output "answers" {
  value = { for k, c in data.bkiam_access_check.c : k => c.allowed["delete_host"] }
}
`)
	out := strings.Join(strings.Fields(w.MustRun("apply", "-auto-approve")), " ")
	var answers map[string]bool
	if err := json.Unmarshal([]byte(w.MustRun("output", "-json", "answers")), &answers); err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"alice_1": false, "alice_2": false, "bob_2": true}; !reflect.DeepEqual(answers, want) {
		t.Errorf("the answers: %v, want %v", answers, want)
	}
	want := fmt.Sprintf("allows it within a time window (tz eq Asia/Shanghai; hms gte %d; hms lte %d), which IAM evaluates with its own clock",
		later*10000, later*10000+5959)
	if n := strings.Count(out, "Allowed only within a time window"); n != 1 || !strings.Contains(out, want) ||
		!strings.Contains(out, `with data.bkiam_access_check.c["alice_1"]`) {
		t.Errorf("the apply warns of a window %d times (want once, for alice_1, saying %q):\n%s", n, want, out)
	}
}
