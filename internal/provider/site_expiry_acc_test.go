package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccSite_Expiry: the one expiry IAM keeps per user and action, told
// at plan and renewed as code, on whatever IAM the tests point at (the
// real one with make testacc-site). The profile's expiry user holds,
// granted outside Terraform, the first action on the third instance until
// two days on, and the second action on it permanently. Without
// detect_drift, a plan granting the first action on the first instance
// (permanent) says the third instance becomes permanent, and one granting
// the second action on the second instance until two days on says that
// expiry cannot take effect; with expiry_conflicts = "error" the plan
// fails on both. Then a grant with expires_in = "1h" and renew_before =
// "59m40s" (the window opens twenty seconds on, a plan renews from ten)
// gets a second instance through a plan saved eleven seconds on and
// applied after the window opened: the apply renews, IAM's policy list
// shows the later expiry, and the plan after is empty. Before it, a later
// expires_at of a grant of two instances (sent as one grant of one of
// them) makes IAM keep both until the new date. What the user held of the actions before (a
// plain list of instances) is taken away for the test and given back with
// its expiry at the end.
func TestAccSite_Expiry(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	x := setExpiryUserAside(t, e)
	user, grantOutside, rows := x.user, x.grantOutside, x.rows
	expiry := func(action string) (int64, bool) {
		t.Helper()
		var at int64
		rs := rows(action)
		for _, r := range rs {
			at = max(at, r.ExpiredAt)
		}
		return at, len(rs) > 0
	}
	soon := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	grantOutside(bkiam.OperationGrant, p.Actions[0], p.Instances[2], soon.Unix())
	grantOutside(bkiam.OperationGrant, p.Actions[1], p.Instances[2], bkiam.PermanentExpiry)
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.SiteSecret()
	t.Cleanup(func() {
		// Whatever happened: destroy, then take back what was granted
		// outside, so that the user holds nothing of the actions again.
		w.Run("destroy", "-auto-approve")
		for _, a := range p.Actions[:2] {
			for _, id := range p.Instances {
				grantOutside(bkiam.OperationRevoke, a, id, 0)
			}
		}
		x.giveBack()
	})
	grant := func(name, action, id, extra string) string {
		return fmt.Sprintf(`
resource "bkiam_instance_grant" %q {
  system    = %q
  subject   = { type = "user", id = %q }
  actions   = [%q]
  resources = [{ system = %q, type = %q, instances = { %q = %q } }]
%s}
`, name, p.System, user, action, p.System, p.Type, id, id, extra)
	}
	provider := func(extra string) string {
		return strings.Replace(e.Provider, "provider \"bkiam\" {\n", "provider \"bkiam\" {\n"+extra, 1)
	}
	conflicts := grant("raises", p.Actions[0], p.Instances[0], "") +
		grant("capped", p.Actions[1], p.Instances[1], fmt.Sprintf("  expires_at = %q\n", soon.Format(time.RFC3339)))

	w.Configure(provider("  expiry_conflicts = \"error\"\n"), conflicts)
	out, code := w.Run("plan")
	out = strings.Join(strings.Fields(out), " ")
	if code == 0 || !strings.Contains(out, "Error: Expiry raised beyond this grant") || !strings.Contains(out, "Error: Expiry cannot take effect") {
		t.Errorf("with expiry_conflicts = \"error\" the plan did not fail on both conflicts (exit %d):\n%s", code, out)
	}
	w.Configure(provider(""), conflicts)
	out = strings.Join(strings.Fields(w.MustRun("plan")), " ")
	for _, want := range []string{
		fmt.Sprintf("user %s's %s on 1 %s/%s instances this resource does not manage (%s), expiring %s, becomes permanent.",
			user, p.Actions[0], p.System, p.Type, p.Instances[2], soon.Format(time.RFC3339)),
		fmt.Sprintf("user %s already holds %s permanent in IAM", user, p.Actions[1]),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	w.MustRun("apply", "-auto-approve")
	if at, _ := expiry(p.Actions[0]); at != bkiam.PermanentExpiry {
		t.Errorf("after the apply IAM keeps %s's %s until %d, want permanent, as the plan said", user, p.Actions[0], at)
	}
	w.MustRun("destroy", "-auto-approve")
	for _, a := range p.Actions[:2] {
		grantOutside(bkiam.OperationRevoke, a, p.Instances[2], 0)
	}

	// A later expires_at of a grant that holds every instance already is
	// one grant of one of them: IAM raises the whole policy's expiry.
	twoDays, threeDays := soon, soon.Add(24*time.Hour)
	raised := func(at time.Time) string {
		return strings.Replace(grant("raised", p.Actions[1], p.Instances[0], fmt.Sprintf("  expires_at = %q\n", at.Format(time.RFC3339))),
			fmt.Sprintf("instances = { %q = %q }", p.Instances[0], p.Instances[0]),
			fmt.Sprintf("instances = { %q = %q, %q = %q }", p.Instances[0], p.Instances[0], p.Instances[1], p.Instances[1]), 1)
	}
	w.Configure(provider(""), raised(twoDays))
	w.MustRun("apply", "-auto-approve")
	w.Configure(provider(""), raised(threeDays))
	w.MustRun("apply", "-auto-approve")
	if at, _ := expiry(p.Actions[1]); at != threeDays.Unix() {
		t.Errorf("after a later expires_at IAM keeps %s's %s until %d, want %d", user, p.Actions[1], at, threeDays.Unix())
	}
	if rs := rows(p.Actions[1]); len(rs) != 1 || !strings.Contains(string(rs[0].Expression), p.Instances[0]) ||
		!strings.Contains(string(rs[0].Expression), p.Instances[1]) {
		t.Errorf("after a later expires_at IAM holds %s's %s as %+v, want one policy of both instances", user, p.Actions[1], rs)
	}
	if !w.PlanIsEmpty() {
		t.Error("the plan after a later expires_at is not empty")
	}
	w.MustRun("destroy", "-auto-approve")

	// Renewal: a plan saved for review just before the window opens,
	// which adds an instance, applied after it opened, renews the grant
	// in that apply.
	rolling := "  expires_in   = \"1h\"\n  renew_before = \"59m40s\"\n"
	w.Configure(provider(""), grant("rolling", p.Actions[1], p.Instances[0], rolling))
	w.MustRun("apply", "-auto-approve")
	created, held := expiry(p.Actions[1])
	if !held || created > time.Now().Add(time.Hour).Unix() || created < time.Now().Add(time.Hour-time.Minute).Unix() {
		t.Fatalf("after the create IAM keeps %s's %s until %d (held %t), want about an hour on", user, p.Actions[1], created, held)
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan before the renewal window is not empty")
	}
	two := strings.Replace(grant("rolling", p.Actions[1], p.Instances[0], rolling),
		fmt.Sprintf("instances = { %q = %q }", p.Instances[0], p.Instances[0]),
		fmt.Sprintf("instances = { %q = %q, %q = %q }", p.Instances[0], p.Instances[0], p.Instances[1], p.Instances[1]), 1)
	w.Configure(provider(""), two)
	time.Sleep(time.Until(time.Unix(created, 0).Add(-time.Hour + 11*time.Second))) // the margin, before the window
	if out := w.MustRun("plan", "-out=review.tfplan"); !strings.Contains(out, "Renewing the grant") {
		t.Errorf("the plan saved before the window does not renew:\n%s", out)
	}
	time.Sleep(time.Until(time.Unix(created, 0).Add(-time.Hour + 22*time.Second))) // the window is open
	w.MustRun("apply", "review.tfplan")
	if at, _ := expiry(p.Actions[1]); at != created+3600 {
		t.Errorf("after the saved plan's apply IAM keeps %s's %s until %d, want %d", user, p.Actions[1], at, created+3600)
	}
	if !w.PlanIsEmpty() {
		t.Error("the plan after the renewal is not empty")
	}
}

// expiryUser is the profile's expiry user, set aside for a test that
// changes the one expiry IAM keeps per user and action: what it held of
// the first two actions before the test (a real site's user may hold
// some: the one built here grants carol two hosts), a plain list of
// instances of the type, taken away for the test and given back, with its
// expiry, by giveBack; anything else, and the test cannot leave IAM as it
// found it, so it does not run.
type expiryUser struct {
	t      *testing.T
	e      *acctest.SiteEnv
	user   string
	before map[string]expiryHolding
}

type expiryHolding struct {
	ids []string
	at  int64
}

func setExpiryUserAside(t *testing.T, e *acctest.SiteEnv) *expiryUser {
	t.Helper()
	p := e.P
	x := &expiryUser{t: t, e: e, user: p.ExpiryUser, before: map[string]expiryHolding{}}
	if x.user == "" {
		t.Skip("the site profile names no expiry_user: a user of the test's own, whose expiries it may change")
	}
	for _, a := range p.Actions[:2] {
		rs := x.rows(a)
		if len(rs) == 0 {
			continue
		}
		var atom struct {
			Field string          `json:"field"`
			Op    string          `json:"op"`
			Value json.RawMessage `json:"value"`
		}
		var ids []string
		if len(rs) > 1 || json.Unmarshal(rs[0].Expression, &atom) != nil || atom.Field != p.Type+".id" ||
			(atom.Op == "in" && json.Unmarshal(atom.Value, &ids) != nil) || (atom.Op == "eq" && json.Unmarshal(atom.Value, new(string)) != nil) ||
			(atom.Op != "in" && atom.Op != "eq") {
			t.Skipf("%s holds %s as %s: not a list of %s ids the test could give back", x.user, a, rs[0].Expression, p.Type)
		}
		if atom.Op == "eq" {
			var id string
			_ = json.Unmarshal(atom.Value, &id)
			ids = []string{id}
		}
		x.before[a] = expiryHolding{ids: ids, at: rs[0].ExpiredAt}
	}
	for a, h := range x.before {
		x.grantOutside(bkiam.OperationRevoke, a, h.ids[0], 0, h.ids[1:]...)
	}
	return x
}

// rows are the user's rows of action in IAM's policy list.
func (x *expiryUser) rows(action string) []bkiam.Policy {
	x.t.Helper()
	all, err := x.e.Client.ScanPolicies(context.Background(), bkiam.PolicyKindABAC, x.e.P.System, action)
	if err != nil {
		x.t.Fatal(err)
	}
	var out []bkiam.Policy
	for _, r := range all {
		if r.Subject.Type == "user" && r.Subject.ID == x.user {
			out = append(out, r)
		}
	}
	return out
}

// grantOutside grants or revokes the user's action on instances of the
// profile's type, outside Terraform.
func (x *expiryUser) grantOutside(op bkiam.Operation, action, id string, at int64, more ...string) {
	x.t.Helper()
	p := x.e.P
	var instances []bkiam.Instance
	for _, i := range append([]string{id}, more...) {
		instances = append(instances, bkiam.Instance{ID: i, Name: i})
	}
	_, err := x.e.Client.BatchInstance(context.Background(), bkiam.BatchInstanceRequest{System: p.System, Operate: op, ExpiredAt: at,
		Subject: bkiam.Subject{Type: "user", ID: x.user}, Actions: []bkiam.Action{{ID: action}},
		Resources: []bkiam.InstanceResource{{System: p.System, Type: p.Type, Instances: instances}}})
	if err != nil {
		x.t.Fatalf("%s outside Terraform: %v", op, err)
	}
}

// giveBack grants the user again what it held before the test, with its
// expiry.
func (x *expiryUser) giveBack() {
	for a, h := range x.before {
		x.grantOutside(bkiam.OperationGrant, a, h.ids[0], h.at, h.ids[1:]...)
	}
}

// TestAccSite_MemberRenewal: bkiam_group_members with a rolling expiry
// on whatever IAM the tests point at. A grade manager and a group are
// created; the profile's first user follows expires_in = "1h" with
// renew_before = "59m40s" (the window opens twenty seconds on, a plan
// renews from ten). The group's member list in IAM shows it until the
// recorded expires_at; a plan saved eleven seconds on, which adds the
// second user, is applied after the window opened: the list then shows
// both until the recorded date plus an hour, and the plan after is
// empty; the destroy removes all of it.
func TestAccSite_MemberRenewal(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	ctx := context.Background()
	config := func(users ...string) string {
		var m []string
		for _, u := range users {
			m = append(m, fmt.Sprintf("%q = \"expires_in\"", u))
		}
		return e.Provider + e.GroupBase("renew", p.Actions[0], p.Instances[0]) + fmt.Sprintf(`
resource "bkiam_group_members" "site" {
  system       = %[1]q
  group_id     = bkiam_group.site.id
  users        = { %[2]s }
  expires_in   = "1h"
  renew_before = "59m40s"
}
`, p.System, strings.Join(m, ", "))
	}
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.SiteSecret()
	w.Configure("", config(p.Users[0]))
	t.Cleanup(func() { w.Run("destroy", "-auto-approve") })
	w.MustRun("apply", "-auto-approve")
	group := stateAttr(t, w, "bkiam_group_members.site", "group_id")
	recorded, err := time.Parse(time.RFC3339, stateAttr(t, w, "bkiam_group_members.site", "expires_at"))
	if err != nil {
		t.Fatal(err)
	}
	members := func() map[string]int64 {
		t.Helper()
		id, _ := strconv.ParseInt(group, 10, 64)
		ms, err := e.Client.GroupMembers(ctx, p.System, id)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, m := range ms {
			out[m.Type+" "+m.ID] = m.ExpiredAt
		}
		return out
	}
	if got, want := members(), map[string]int64{"user " + p.Users[0]: recorded.Unix()}; !maps.Equal(got, want) {
		t.Fatalf("after the create IAM lists the members %v, want %v", got, want)
	}
	if !w.PlanIsEmpty() {
		t.Fatal("the plan before the renewal window is not empty")
	}
	w.Configure("", config(p.Users[0], p.Users[1]))
	time.Sleep(time.Until(recorded.Add(-time.Hour + 11*time.Second))) // the margin, before the window
	if out := w.MustRun("plan", "-out=review.tfplan"); !strings.Contains(out, "Renewing members") {
		t.Errorf("the plan saved before the window does not renew:\n%s", out)
	}
	time.Sleep(time.Until(recorded.Add(-time.Hour + 22*time.Second))) // the window is open
	w.MustRun("apply", "review.tfplan")
	renewed := recorded.Unix() + 3600
	if got, want := members(), map[string]int64{"user " + p.Users[0]: renewed, "user " + p.Users[1]: renewed}; !maps.Equal(got, want) {
		t.Errorf("after the saved plan's apply IAM lists the members %v, want %v", got, want)
	}
	if !w.PlanIsEmpty() {
		t.Error("the plan after the renewal is not empty")
	}
}

// stateAttr is a top-level string attribute of a resource in the
// workspace's state.
func stateAttr(t *testing.T, w *acctest.CLIWorkspace, addr, name string) string {
	t.Helper()
	out := w.MustRun("state", "show", "-no-color", addr)
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && strings.TrimSpace(k) == name {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	t.Fatalf("%s has no %s in state:\n%s", addr, name, out)
	return ""
}

// TestAccSite_ExpiryTopology: the plan-time expiry check reads a policy by
// topology, the web UI's usual grant, on whatever IAM the tests point at.
// The profile's expiry user is granted, outside Terraform with batch_path,
// the first action on every instance of the type under a parent made up
// for the run, until two days on. A permanent grant of the first instance
// then makes all of those permanent: the plan says so, naming the path,
// and with expiry_conflicts = "error" it fails. Nothing is applied; the
// path grant is revoked at the end.
func TestAccSite_ExpiryTopology(t *testing.T) {
	acctest.Parallel(t)
	e := acctest.NewSiteEnv(t)
	p := e.P
	ctx := context.Background()
	parent := e.ParentType(t)
	x := setExpiryUserAside(t, e)
	user := x.user
	id := "tfacc-x" + e.Suffix
	pathGrant := func(op bkiam.Operation, at int64) error {
		_, err := e.Client.BatchPath(ctx, bkiam.BatchPathRequest{System: p.System, Operate: op, ExpiredAt: at,
			Subject: bkiam.Subject{Type: "user", ID: user}, Actions: []bkiam.Action{{ID: p.Actions[0]}},
			Resources: []bkiam.PathResource{{System: p.System, Type: p.Type, Paths: [][]bkiam.PathNode{{
				{System: parent.System, Type: parent.ID, ID: id, Name: id}, {System: p.System, Type: p.Type, ID: "*"}}}}}})
		return err
	}
	soon := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	if err := pathGrant(bkiam.OperationGrant, soon.Unix()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := pathGrant(bkiam.OperationRevoke, 0); err != nil {
			t.Errorf("revoking the test's path grant: %v", err)
		}
		x.giveBack()
	})
	config := fmt.Sprintf(`
resource "bkiam_instance_grant" "host" {
  system    = %q
  subject   = { type = "user", id = %q }
  actions   = [%q]
  resources = [{ system = %q, type = %q, instances = { %q = %q } }]
}
`, p.System, user, p.Actions[0], p.System, p.Type, p.Instances[0], p.Instances[0])
	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	w.SiteSecret()
	w.Configure(e.Provider, config)
	diags, code := w.Diagnostics("plan")
	if code != 0 {
		t.Fatalf("the plan exited %d: %v", code, diags)
	}
	want := fmt.Sprintf("user %s's %s on %s under /%s,%s/, expiring %s, becomes permanent.", user, p.Actions[0], p.Type, parent.ID, id,
		soon.Format(time.RFC3339))
	if got := acctest.DiagnosticsAbout(diags, "Expiry raised beyond this grant", "bkiam_instance_grant.host"); !strings.Contains(got, want) {
		t.Errorf("the plan does not say %q; it says %q (all: %v)", want, got, diags)
	}
	w.Configure(strings.Replace(e.Provider, "provider \"bkiam\" {\n", "provider \"bkiam\" {\n  expiry_conflicts = \"error\"\n", 1), config)
	if out, code := w.Run("plan"); code == 0 || !strings.Contains(out, "Error: Expiry raised beyond this grant") {
		t.Errorf("with expiry_conflicts = \"error\" the plan did not fail (exit %d):\n%s", code, out)
	}
}
