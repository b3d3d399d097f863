package access_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/renewal"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// stateOutputs are the outputs of the workspace's state file.
func stateOutputs(t *testing.T, w *acctest.CLIWorkspace) map[string]json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(w.Dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Outputs map[string]struct {
			Value json.RawMessage `json:"value"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for name, o := range state.Outputs {
		out[name] = o.Value
	}
	return out
}

// TestAccExpiringReadsTheRenewal: a rolling grant of alice's view_host
// and a bkiam_expiring of it that depends on the grant, so that Terraform
// reads it in the apply, after the grant. Once the renewal window is open,
// `terraform apply` renews the grant, and the data source read in that
// apply reports the new date, with the provider's defaults (detect_drift
// off). It used to report the date before the renewal: the apply's
// re-plan of the grant read alice's policy from the action's policy list
// (the expiry check reads the list where IAM's answer about alice cannot
// tell), the data source answered from that scan, and without detect_drift
// no write of the process invalidated it. Two ways the list is read:
//
//   - alice is a manager of bk_cmdb: IAM answers a manager without
//     reading a policy, so the list says what she holds;
//   - the grant has expired when the window is seen: nothing of alice's
//     is live, and the list says what the renewal revives.
func TestAccExpiringReadsTheRenewal(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	providerDir := testutil.BuildProvider(t)
	for _, tc := range []struct {
		name                   string
		manager                bool
		expiresIn, renewBefore string
		// wait is how long after the recorded expiry the renewing apply runs
		// (negative: before it).
		wait time.Duration
	}{
		{name: "a manager", manager: true, expiresIn: "1h", renewBefore: "59m57s", wait: -time.Hour + 4*time.Second},
		{name: "an expired grant", expiresIn: "20s", renewBefore: "10s", wait: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acctest.Parallel(t)
			var opts []sandbox.Option
			if tc.manager {
				opts = append(opts, sandbox.WithModel(acctest.EditedModel(t, func(m *sandbox.Model) {
					m.SystemManagers = map[string][]string{"bk_cmdb": {"alice"}}
				})))
			}
			sb := sandboxtest.Start(t, opts...)
			w := acctest.NewCLIWorkspace(t, providerDir)
			grant := strings.Replace(acctest.HostGrant{Actions: []string{"view_host"}, Ids: []string{"1", "2"}}.Config(""),
				"\n}\n", fmt.Sprintf("\n  expires_in   = %q\n  renew_before = %q\n}\n", tc.expiresIn, tc.renewBefore), 1)
			w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), grant+`
data "bkiam_expiring" "alice" {
  system     = "bk_cmdb"
  user       = "alice"
  actions    = ["view_host"]
  within     = "2h"
  depends_on = [bkiam_instance_grant.test]
}

output "expires_at" {
  value = bkiam_instance_grant.test.expires_at
}

output "lapses" {
  value = data.bkiam_expiring.alice.grants
}
`)
			w.MustRun("apply", "-auto-approve")
			var recorded string
			if err := json.Unmarshal(stateOutputs(t, w)["expires_at"], &recorded); err != nil {
				t.Fatal(err)
			}
			at, err := time.Parse(time.RFC3339, recorded)
			if err != nil {
				t.Fatal(err)
			}
			every, err := renewal.ParseDuration(tc.expiresIn)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Until(at.Add(tc.wait)))
			out := w.MustRun("apply", "-auto-approve")
			if !strings.Contains(out, "Renewing the grant") {
				t.Fatalf("the apply in the window does not renew the grant:\n%s", out)
			}
			renewed := at.Add(every).UTC().Format(time.RFC3339)
			outputs := stateOutputs(t, w)
			var got string
			if err := json.Unmarshal(outputs["expires_at"], &got); err != nil || got != renewed {
				t.Fatalf("the renewal recorded expires_at %s, want %q", outputs["expires_at"], renewed)
			}
			for _, p := range sb.Policies(sandbox.PolicyFilter{SubjectID: "alice"}).Policies {
				if time.Unix(p.ExpiredAt, 0).UTC().Format(time.RFC3339) != renewed {
					t.Fatalf("IAM holds alice's %s until %d, want %s", p.Action, p.ExpiredAt, renewed)
				}
			}
			var lapses []map[string]string
			if err := json.Unmarshal(outputs["lapses"], &lapses); err != nil {
				t.Fatal(err)
			}
			if want := []map[string]string{{"action": "view_host", "expires_at": renewed}}; fmt.Sprint(lapses) != fmt.Sprint(want) {
				t.Errorf("bkiam_expiring read in the apply that renewed reports %v, want %v", lapses, want)
			}
		})
	}
}
