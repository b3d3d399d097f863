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
			for _, l := range lapses {
				if l["renewed_by"] == "" {
					delete(l, "renewed_by") // null: nothing in the configuration renews it
				}
			}
			if want := []map[string]string{{"action": "view_host", "expires_at": renewed}}; fmt.Sprint(lapses) != fmt.Sprint(want) {
				t.Errorf("bkiam_expiring read in the apply that renewed reports %v, want %v", lapses, want)
			}
		})
	}
}

// expiringRow is a row of bkiam_expiring's members or grants, as an
// output shows it.
type expiringRow struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	Action    string  `json:"action"`
	ExpiresAt string  `json:"expires_at"`
	RenewedBy *string `json:"renewed_by"`
}

func (r expiringRow) String() string {
	by := "nothing"
	if r.RenewedBy != nil {
		by = *r.RenewedBy
	}
	what := r.Type + " " + r.ID
	if r.Action != "" {
		what = r.Action
	}
	return fmt.Sprintf("%s on %s renewed by %s", what, r.ExpiresAt, by)
}

// TestAccExpiringRenewedBy: the configuration's rolling expiries, passed
// in renewed_by as the resources they are (one map for every data source:
// a for_each of grants merged with a group's members), name the lapses
// they renew, and lapsing counts only the others, so that a check block
// warns of those alone. Group "oncall" has alice following a rolling
// expiry of 1h renewed 59m57s before, and bob until 10 days on; alice
// holds view_host on a rolling expiry alike ("hosts") and edit_host until
// 10 days on ("edit", without expires_in: it renews nothing). Over 30
// days:
//
//   - after the create, a plan's check warns of bob and edit_host alone,
//     and the rows of alice and view_host name "oncall" and "hosts";
//   - inside the renewal window, the apply that renews reads the data
//     sources at plan (IAM still holds the old dates: renewed by the plan
//     that renews them), and those that depend on the resources in the
//     apply, after the renewal: the new dates, still named, bob and
//     edit_host still lapsing.
//
// Terraform passes the resources' objects through renewed_by's entries
// (attributes dropped, absent ones null) on every CLI; the members are
// read from IAM afresh in the apply, as the grants are.
func TestAccExpiringRenewedBy(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	c := acctest.OutsideClient(t, sb)
	_, group := acctest.OutsideGroup(t, c, "oncall-managers", "oncall")
	tenDays := time.Now().Add(10 * 24 * time.Hour).UTC().Truncate(time.Second).Format(time.RFC3339)
	expiring := func(name, who, depends string) string {
		return fmt.Sprintf(`
data "bkiam_expiring" "%[1]s" {
  system     = "bk_cmdb"
  %[2]s
  within     = "30d"
  renewed_by = local.rolling
  depends_on = [%[3]s]
}

output "%[1]s" {
  value = data.bkiam_expiring.%[1]s
}
`, name, who, depends)
	}
	group0 := fmt.Sprintf("group_id = %q", fmt.Sprint(group))
	alice := `user = "alice"
  actions = ["view_host", "edit_host"]`
	after := "bkiam_instance_grant.alice, bkiam_group_members.oncall"
	config := fmt.Sprintf(`
resource "bkiam_group_members" "oncall" {
  system       = "bk_cmdb"
  group_id     = %q
  users        = { alice = "expires_in", bob = %q }
  expires_in   = "1h"
  renew_before = "59m57s"
}

resource "bkiam_instance_grant" "alice" {
  for_each = {
    hosts = { action = "view_host", expires_at = null, expires_in = "1h", renew_before = "59m57s" }
    edit  = { action = "edit_host", expires_at = %q, expires_in = null, renew_before = null }
  }
  system       = "bk_cmdb"
  subject      = { type = "user", id = "alice" }
  actions      = [each.value.action]
  resources    = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
  expires_at   = each.value.expires_at
  expires_in   = each.value.expires_in
  renew_before = each.value.renew_before
}

locals {
  rolling = merge(bkiam_instance_grant.alice, {
    oncall = bkiam_group_members.oncall
  })
}

check "nothing_lapses_unrenewed" {
  assert {
    condition     = data.bkiam_expiring.oncall.lapsing + data.bkiam_expiring.alice.lapsing == 0
    error_message = "Lapsing, not renewed: ${join(", ", concat([for m in data.bkiam_expiring.oncall.members : "${m.type} ${m.id} on ${m.expires_at}" if m.renewed_by == null], [for g in data.bkiam_expiring.alice.grants : "alice's ${g.action} on ${g.expires_at}" if g.renewed_by == null]))}."
  }
}
`, fmt.Sprint(group), tenDays, tenDays) +
		expiring("oncall", group0, "") + expiring("alice", alice, "") +
		expiring("oncall_after", group0, after) + expiring("alice_after", alice, after)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), config)
	w.MustRun("apply", "-auto-approve")

	type answer struct {
		Members []expiringRow `json:"members"`
		Grants  []expiringRow `json:"grants"`
		Lapsing int           `json:"lapsing"`
	}
	answers := func() map[string]answer {
		t.Helper()
		out := map[string]answer{}
		for name, raw := range stateOutputs(t, w) {
			var a answer
			if err := json.Unmarshal(raw, &a); err != nil {
				t.Fatalf("output %s: %v", name, err)
			}
			out[name] = a
		}
		return out
	}
	// The dates the create recorded, read in its apply.
	dates := func(rows []expiringRow) (recorded, renewed string, at time.Time) {
		t.Helper()
		if len(rows) != 2 {
			t.Fatalf("after the create bkiam_expiring lists %v, want two rows", rows)
		}
		at, err := time.Parse(time.RFC3339, rows[0].ExpiresAt)
		if err != nil {
			t.Fatal(err)
		}
		return rows[0].ExpiresAt, at.Add(time.Hour).UTC().Format(time.RFC3339), at
	}
	created := answers()
	grantAt, grantRenewed, grantTime := dates(created["alice_after"].Grants)
	memberAt, memberRenewed, memberTime := dates(created["oncall_after"].Members)
	name := func(s string) *string { return &s }
	expect := func(what string, got answer, members, grants []expiringRow) {
		t.Helper()
		switch {
		case members != nil && fmt.Sprint(got.Members) != fmt.Sprint(members):
			t.Errorf("%s: members %v, want %v", what, got.Members, members)
		case grants != nil && fmt.Sprint(got.Grants) != fmt.Sprint(grants):
			t.Errorf("%s: grants %v, want %v", what, got.Grants, grants)
		case got.Lapsing != 1:
			t.Errorf("%s: lapsing %d, want 1 (what nothing renews)", what, got.Lapsing)
		}
	}
	bob := expiringRow{Type: "user", ID: "bob", ExpiresAt: tenDays}
	edit := expiringRow{Action: "edit_host", ExpiresAt: tenDays}
	expect("after the create, alice_after", created["alice_after"], nil,
		[]expiringRow{{Action: "view_host", ExpiresAt: grantAt, RenewedBy: name("hosts")}, edit})
	expect("after the create, oncall_after", created["oncall_after"],
		[]expiringRow{{Type: "user", ID: "alice", ExpiresAt: memberAt, RenewedBy: name("oncall")}, bob}, nil)

	// A plan after the create: the check warns of bob and edit_host alone.
	out := strings.Join(strings.Fields(w.MustRun("plan")), " ")
	if want := fmt.Sprintf("Lapsing, not renewed: user bob on %s, alice's edit_host on %s.", tenDays, tenDays); !strings.Contains(out, want) {
		t.Errorf("the plan after the create does not warn %q:\n%s", want, out)
	}

	// Inside the renewal window.
	time.Sleep(time.Until(later(grantTime, memberTime).Add(-time.Hour + 4*time.Second)))
	out = strings.Join(strings.Fields(w.MustRun("apply", "-auto-approve")), " ")
	for _, want := range []string{"Renewing the grant", "Renewing members",
		fmt.Sprintf("Lapsing, not renewed: user bob on %s, alice's edit_host on %s.", tenDays, tenDays)} {
		if !strings.Contains(out, want) {
			t.Errorf("the apply in the window does not say %q:\n%s", want, out)
		}
	}
	got := answers()
	expect("read at the renewal's plan, oncall", got["oncall"],
		[]expiringRow{{Type: "user", ID: "alice", ExpiresAt: memberAt, RenewedBy: name("oncall")}, bob}, nil)
	expect("read at the renewal's plan, alice", got["alice"], nil,
		[]expiringRow{{Action: "view_host", ExpiresAt: grantAt, RenewedBy: name("hosts")}, edit})
	expect("read in the apply that renewed, oncall_after", got["oncall_after"],
		[]expiringRow{{Type: "user", ID: "alice", ExpiresAt: memberRenewed, RenewedBy: name("oncall")}, bob}, nil)
	expect("read in the apply that renewed, alice_after", got["alice_after"], nil,
		[]expiringRow{{Action: "view_host", ExpiresAt: grantRenewed, RenewedBy: name("hosts")}, edit})
}

// later is the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
