package access_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccFrozenUser: IAM has frozen alice (the SaaS admin API's freeze, a leaver's
// first step), and its policy routes answer every check and query about her
// 403 1901403. bkiam_access_check answers her access_business on business
// 2, which her policy allows, false, with a warning naming the freeze (the
// answer every system that asks IAM gets); bkiam_user_access lists her
// policies from the actions' lists, with a warning, where before issue 61
// both failed the plan.
func TestAccFrozenUser(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	testutil.SameOnEveryCLI(t, "the values and warnings of a data source's read are the provider's")
	sb, _, _ := jobSite(t)
	if err := sb.Freeze("user", "alice", true); err != nil {
		t.Fatal(err)
	}
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), `
data "bkiam_access_check" "alice" {
  system    = "bk_job"
  subject   = { type = "user", id = "alice" }
  actions   = ["access_business"]
  resources = [{ system = "bk_cmdb", type = "biz", id = "2" }]
}

data "bkiam_user_access" "alice" {
  system  = "bk_job"
  user    = "alice"
  actions = ["access_business", "view_script"]
}

output "frozen" {
  value = {
    allowed  = data.bkiam_access_check.alice.allowed
    policies = { for a, p in data.bkiam_user_access.alice.policies : a => p.expires_at }
  }
}
`)
	// The machine-readable plan: the CLI folds similar warnings in its human output.
	out, code := w.Run("plan", "-json")
	if code != 0 || strings.Count(out, `"summary":"Frozen in IAM"`) != 2 ||
		!strings.Contains(out, "allowed is false for each action") || !strings.Contains(out, "its policies are read from the actions' policy lists") {
		t.Fatalf("the plan exited %d, or does not warn of the freeze for both reads:\n%s", code, out)
	}
	w.MustRun("apply", "-auto-approve")
	var got struct {
		Allowed  map[string]bool   `json:"allowed"`
		Policies map[string]string `json:"policies"`
	}
	if err := json.Unmarshal([]byte(w.MustRun("output", "-json", "frozen")), &got); err != nil {
		t.Fatal(err)
	}
	if a, ok := got.Allowed["access_business"]; !ok || a || got.Policies["access_business"] != "permanent" || got.Policies["view_script"] == "" {
		t.Errorf("a frozen alice: %+v, want access_business denied, and her two policies listed", got)
	}
}
