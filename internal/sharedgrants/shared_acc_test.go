package sharedgrants_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// The shared-grant tests drive the real Terraform CLI over the built
// provider binary, as a user does: a plan and its apply then run in
// separate provider processes, which is what the ledger (shared.go) is
// built around. Each checks what IAM holds after every apply, and that
// the next plan is empty.

// sharedWorkspace is a CLI workspace over a fresh sandbox.
func sharedWorkspace(t *testing.T) (*acctest.CLIWorkspace, *sandboxtest.Sandbox, string) {
	t.Helper()
	acctest.NeedsSandbox(t)
	testutil.Terraform(t)
	sb := sandboxtest.Start(t)
	return acctest.NewCLIWorkspace(t, testutil.BuildProvider(t)), sb, acctest.Transports[acctest.GatewayTransport].Block(sb.URL)
}

// applyAndCheck applies, checks that alice holds want in bk_cmdb and that
// the next plan is empty, and returns the apply's output.
func applyAndCheck(t *testing.T, w *acctest.CLIWorkspace, sb *sandboxtest.Sandbox, system string, want map[string][]string) string {
	t.Helper()
	out := w.MustRun("apply", "-auto-approve")
	if got := sandboxtest.HeldPaths(sb, system, "user", "alice"); !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
		t.Fatalf("after the apply, alice holds\n%s\nwant\n%s\napply output:\n%s", acctest.RenderHeld(got), acctest.RenderHeld(want), out)
	}
	if !w.PlanIsEmpty() {
		t.Fatalf("the plan after the apply is not empty")
	}
	return out
}

// TestAccShared_forEachRename renames the for_each key of a grant, without
// a moved block, again and again: Terraform creates the new instance and
// destroys the old one in the same apply, in parallel, and the subject
// must hold the grant after every one.
func TestAccShared_forEachRename(t *testing.T) {
	acctest.Parallel(t)
	w, sb, provider := sharedWorkspace(t)
	want := map[string][]string{"view_host": sandboxtest.HostPaths("1", "2", "3")}
	for i := range 6 {
		w.Configure(provider, fmt.Sprintf(`
resource "bkiam_instance_grant" "g" {
  for_each = toset(["key%d"])
  system   = "bk_cmdb"
  subject  = { type = "user", id = "alice" }
  actions  = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1", "2" = "host2", "3" = "host3" } }]
}
`, i))
		applyAndCheck(t, w, sb, "bk_cmdb", want)
	}
	w.Configure(provider, "")
	applyAndCheck(t, w, sb, "bk_cmdb", nil)
}

// TestAccShared_overlap: two grants share an instance. By default the
// plan refuses it, naming the paths and the fix, and sends nothing. With
// allow_shared_grants the plan warns; removing either leaves the other's
// instances, whichever is planned first; removing both revokes
// everything.
func TestAccShared_overlap(t *testing.T) {
	acctest.Parallel(t)
	w, sb, provider := sharedWorkspace(t)
	both := acctest.SharedHostGrant("a", "view_host", "", "1", "2") + acctest.SharedHostGrant("b", "view_host", "", "2", "3")
	w.Configure(provider, both)
	out, code := w.Run("apply", "-auto-approve")
	if code == 0 || !acctest.PlanErrorPattern("Error: Grants shared with another resource", "/bk_cmdb,host,2/", "allow_shared_grants = true").MatchString(out) {
		t.Fatalf("two grants sharing host 2 applied without allow_shared_grants (exit %d):\n%s", code, out)
	}
	if got := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice"); len(got) > 0 {
		t.Fatalf("the refused plan granted %s", acctest.RenderHeld(got))
	}
	provider = acctest.AllowShared(provider)
	for _, keep := range []string{"a", "b", "a", "b"} {
		w.Configure(provider, both)
		out := applyAndCheck(t, w, sb, "bk_cmdb", map[string][]string{"view_host": sandboxtest.HostPaths("1", "2", "3")})
		if !strings.Contains(out, "Grants shared with another resource") || !strings.Contains(out, "/bk_cmdb,host,2/") {
			t.Errorf("the plan of two grants sharing host 2 does not say so:\n%s", out)
		}
		// The other resource is named by what it grants: both have the id bk_cmdb/user/alice.
		if !acctest.PlanErrorPattern(`"bk_cmdb/user/alice" granting view_host on bk_cmdb/host 1, 2`).MatchString(out) &&
			!acctest.PlanErrorPattern(`"bk_cmdb/user/alice" granting view_host on bk_cmdb/host 2, 3`).MatchString(out) {
			t.Errorf("the warning does not tell the other resource by what it grants:\n%s", out)
		}
		ids := []string{"1", "2"}
		if keep == "b" {
			ids = []string{"2", "3"}
		}
		w.Configure(provider, acctest.SharedHostGrant(keep, "view_host", "", ids...))
		applyAndCheck(t, w, sb, "bk_cmdb", map[string][]string{"view_host": sandboxtest.HostPaths(ids...)})
	}
	w.Configure(provider, both)
	applyAndCheck(t, w, sb, "bk_cmdb", map[string][]string{"view_host": sandboxtest.HostPaths("1", "2", "3")})
	w.Configure(provider, "")
	applyAndCheck(t, w, sb, "bk_cmdb", nil)
}

// TestAccShared_move moves instances from one grant to another in one
// apply, back and forth: the subject holds every instance throughout.
func TestAccShared_move(t *testing.T) {
	acctest.Parallel(t)
	w, sb, provider := sharedWorkspace(t)
	all := map[string][]string{"view_host": sandboxtest.HostPaths("1", "2", "3", "4")}
	for _, split := range [][2][]string{
		{{"1", "2"}, {"3", "4"}},
		{{"1"}, {"2", "3", "4"}},
		{{"1", "2", "3"}, {"4"}},
		{{"4"}, {"1", "2", "3"}},
	} {
		w.Configure(provider, acctest.SharedHostGrant("a", "view_host", "", split[0]...)+acctest.SharedHostGrant("b", "view_host", "", split[1]...))
		applyAndCheck(t, w, sb, "bk_cmdb", all)
	}
	w.Configure(provider, "")
	applyAndCheck(t, w, sb, "bk_cmdb", nil)
}

// TestAccShared_creatorAndInstance: a creator instance with no ancestors
// is the same IAM path as an instance grant of it; destroying the creator
// grant leaves the instance grant's action, and destroying everything
// revokes everything.
func TestAccShared_creatorAndInstance(t *testing.T) {
	acctest.Parallel(t)
	w, sb, provider := sharedWorkspace(t)
	provider = acctest.AllowShared(provider)
	instance := `
resource "bkiam_instance_grant" "view" {
  system  = "bk_job"
  subject = { type = "user", id = "alice" }
  actions = ["view"]
  resources = [{ system = "bk_job", type = "job", instances = { "job1" = "job1" } }]
}
`
	creator := `
resource "bkiam_creator_grant" "jobs" {
  system    = "bk_job"
  type      = "job"
  creator   = "alice"
  instances = { "job1" = "job1", "job2" = "job2" }
  actions   = ["delete", "edit", "list", "view"]
}
`
	job := func(ids ...string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = "/bk_job,job," + id + "/"
		}
		return out
	}
	// The creator grant registers every creator action on both jobs.
	registered := map[string][]string{"delete": job("job1", "job2"), "edit": job("job1", "job2"), "list": job("job1", "job2"), "view": job("job1", "job2")}
	for range 2 {
		w.Configure(provider, instance+creator)
		applyAndCheck(t, w, sb, "bk_job", registered)
		w.Configure(provider, instance)
		applyAndCheck(t, w, sb, "bk_job", map[string][]string{"view": job("job1")})
	}
	w.Configure(provider, instance+creator)
	applyAndCheck(t, w, sb, "bk_job", registered)
	w.Configure(provider, creator)
	applyAndCheck(t, w, sb, "bk_job", registered)
	w.Configure(provider, "")
	applyAndCheck(t, w, sb, "bk_job", nil)
}

// TestAccShared_expiry: two grants of one subject and action with
// different expiries plan with a warning that IAM keeps the later.
func TestAccShared_expiry(t *testing.T) {
	acctest.Parallel(t)
	w, sb, provider := sharedWorkspace(t)
	w.Configure(provider, acctest.SharedHostGrant("a", "view_host", `  expires_at = "2027-06-30T00:00:00Z"`+"\n", "1")+acctest.SharedHostGrant("b", "view_host", "", "2"))
	out := w.MustRun("plan")
	if !strings.Contains(out, "One expiry per subject and action") || !strings.Contains(out, "2027-06-30T00:00:00Z") {
		t.Errorf("the plan does not warn that IAM keeps one expiry:\n%s", out)
	}
	applyAndCheck(t, w, sb, "bk_cmdb", map[string][]string{"view_host": sandboxtest.HostPaths("1", "2")})
	w.Configure(provider, "")
	applyAndCheck(t, w, sb, "bk_cmdb", nil)
}

// TestAccShared_updateBesideUnchanged: an update drops a path that
// another grant, unchanged, still grants. Terraform applies only what
// changes, so an in-place update would revoke the path from under the
// unchanged grant. Planned after it, the update becomes a replacement
// whose destroy leaves the path; planned before it, the unchanged grant
// plans to grant the path again. Either way alice keeps host 2. A plan
// without refresh cannot tell itself from an apply and only warns.
func TestAccShared_updateBesideUnchanged(t *testing.T) {
	acctest.Parallel(t)
	for _, tc := range []struct {
		name, first, second string
		// wantWarning is what the plan says; noRefresh what it says
		// without refresh.
		wantWarning, noRefresh string
	}{
		{"unchanged planned first", "a", "b", "Replaced to keep a shared grant", "Revoke of a shared grant"},
		{"unchanged planned second", "b", "a", "Grants again what another resource revokes", "Grants again what another resource revokes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acctest.Parallel(t)
			w, sb, provider := sharedWorkspace(t)
			provider = acctest.AllowShared(provider)
			// a keeps hosts 1 and 2; b drops host 2. depends_on orders the plans.
			grants := func(bIDs ...string) string {
				extra := map[string]string{tc.second: "  depends_on = [bkiam_instance_grant." + tc.first + "]\n"}
				return acctest.SharedHostGrant("a", "view_host", extra["a"], "1", "2") + acctest.SharedHostGrant("b", "view_host", extra["b"], bIDs...)
			}
			for range 2 {
				w.Configure(provider, grants("2", "3"))
				applyAndCheck(t, w, sb, "bk_cmdb", map[string][]string{"view_host": sandboxtest.HostPaths("1", "2", "3")})
				w.Configure(provider, grants("3"))
				if out := w.MustRun("plan", "-refresh=false"); !strings.Contains(out, tc.noRefresh) {
					t.Errorf("a plan without refresh does not say %q:\n%s", tc.noRefresh, out)
				}
				out := applyAndCheck(t, w, sb, "bk_cmdb", map[string][]string{"view_host": sandboxtest.HostPaths("1", "2", "3")})
				if !strings.Contains(out, tc.wantWarning) {
					t.Errorf("the apply does not say %q:\n%s", tc.wantWarning, out)
				}
			}
			w.Configure(provider, "")
			applyAndCheck(t, w, sb, "bk_cmdb", nil)
		})
	}
}

// TestAccShared_creatorUpdateBesideInstance: a creator grant drops an
// instance that an unchanged instance grant, planned first, also grants:
// the update becomes a replacement, and alice keeps view on that instance.
func TestAccShared_creatorUpdateBesideInstance(t *testing.T) {
	acctest.Parallel(t)
	w, sb, provider := sharedWorkspace(t)
	provider = acctest.AllowShared(provider)
	instance := `
resource "bkiam_instance_grant" "view" {
  system  = "bk_job"
  subject = { type = "user", id = "alice" }
  actions = ["view"]
  resources = [{ system = "bk_job", type = "job", instances = { "job1" = "job1" } }]
}
`
	creator := func(ids ...string) string {
		instances := make([]string, len(ids))
		for i, id := range ids {
			instances[i] = fmt.Sprintf("%q = %q", id, id)
		}
		return fmt.Sprintf(`
resource "bkiam_creator_grant" "jobs" {
  system     = "bk_job"
  type       = "job"
  creator    = "alice"
  instances  = { %s }
  actions    = ["delete", "edit", "list", "view"]
  depends_on = [bkiam_instance_grant.view]
}
`, strings.Join(instances, ", "))
	}
	w.Configure(provider, instance+creator("job1", "job2"))
	both := []string{"/bk_job,job,job1/", "/bk_job,job,job2/"}
	applyAndCheck(t, w, sb, "bk_job", map[string][]string{"delete": both, "edit": both, "list": both, "view": both})
	w.Configure(provider, instance+creator("job2"))
	job2 := []string{"/bk_job,job,job2/"}
	out := applyAndCheck(t, w, sb, "bk_job", map[string][]string{"delete": job2, "edit": job2, "list": job2, "view": both})
	if !strings.Contains(out, "Replaced to keep a shared grant") {
		t.Errorf("the apply does not say why the creator grant is replaced:\n%s", out)
	}
	w.Configure(provider, "")
	applyAndCheck(t, w, sb, "bk_job", nil)
}

// TestAccShared_overlapUnknownAtPlan: a grant whose instance comes from
// another resource is not known at plan, so the plan cannot compare it
// with the other grants of the subject. Beside an unchanged grant of the
// same action, which the apply would not plan again, the plan fails,
// sending nothing (before, the apply passed and every later plan failed
// with "Grants shared with another resource"); applying the source first
// (-target) lets the plan compare them. Beside a grant that changes too,
// the plan warns, and the apply, where both are planned again, refuses
// the one it plans later before its calls: IAM then holds what state
// records, no path is recorded twice, and the next plan names the overlap.
func TestAccShared_overlapUnknownAtPlan(t *testing.T) {
	acctest.Parallel(t)
	w, sb, provider := sharedWorkspace(t)
	a := func(ids ...string) string { return acctest.SharedHostGrant("a", "view_host", "", ids...) }
	b := func(host string) string {
		return fmt.Sprintf(`
resource "terraform_data" "host" {
  input = %q
}

resource "bkiam_instance_grant" "b" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { (terraform_data.host.output) = "host" } }]
}
`, host)
	}
	w.Configure(provider, a("1", "2"))
	applyAndCheck(t, w, sb, "bk_cmdb", map[string][]string{"view_host": sandboxtest.HostPaths("1", "2")})

	for _, c := range []struct{ host, path string }{{"2", "apply"}, {"2", "plan -refresh=false"}, {"3", "apply"}} {
		host := c.host
		w.Configure(provider, a("1", "2")+b(host))
		writes := acctest.IAMWrites(sb)
		out, code := w.Run(strings.Fields(map[string]string{"apply": "apply -auto-approve", "plan -refresh=false": "plan -refresh=false"}[c.path])...)
		if code == 0 || !acctest.PlanErrorPattern("Error: Grants not comparable until apply", "does not change in this plan",
			"terraform apply -target=<its address>").MatchString(out) {
			t.Fatalf("host %s, %s: a grant unknown at plan beside an unchanged grant of the action was not refused at plan (exit %d):\n%s", host, c.path, code, out)
		}
		if n := acctest.IAMWrites(sb) - writes; n != 0 {
			t.Fatalf("host %s: the refused plan sent %d calls that change IAM", host, n)
		}
		if got := w.MustRun("state", "list"); strings.Contains(got, "bkiam_instance_grant.b") {
			t.Fatalf("host %s: the refused grant is in state:\n%s", host, got)
		}
	}
	w.MustRun("apply", "-auto-approve", "-target=terraform_data.host")
	applyAndCheck(t, w, sb, "bk_cmdb", map[string][]string{"view_host": sandboxtest.HostPaths("1", "2", "3")})

	// Both change, and share host 5, which b's plan cannot know: a saved
	// plan, applied by another process.
	w.Configure(provider, a("1", "2", "5")+b("5"))
	planOut := w.MustRun("plan", "-out=both.tfplan")
	out, code := w.Run("apply", "both.tfplan")
	out = planOut + out
	if code == 0 || !acctest.PlanErrorPattern("Error: Grants shared with another resource", "/bk_cmdb,host,5/").MatchString(out) {
		t.Fatalf("the apply of two grants sharing host 5, unknown at plan, refused neither (exit %d):\n%s", code, out)
	}
	if !strings.Contains(out, "Shared grants checked at apply") {
		t.Errorf("the plan did not warn that the apply checks the grant it cannot know:\n%s", out)
	}
	if recorded := hostRecords(t, w, "/bk_cmdb,host,5/"); recorded != 1 {
		t.Fatalf("host 5 is recorded by %d grants in state, want 1", recorded)
	}
	if err := acctest.CheckStateMatchesStore(w, sb, false, "user/alice"); err != nil {
		t.Fatal(err)
	}
	if out, code := w.Run("plan"); code == 0 || !acctest.PlanErrorPattern("Error: Grants shared with another resource", "/bk_cmdb,host,5/").MatchString(out) {
		t.Fatalf("the plan after did not name the overlap (exit %d):\n%s", code, out)
	}
	w.Configure(provider, a("1", "2", "5")+b("6"))
	w.MustRun("apply", "-auto-approve", "-target=terraform_data.host")
	applyAndCheck(t, w, sb, "bk_cmdb", map[string][]string{"view_host": sandboxtest.HostPaths("1", "2", "5", "6")})
}

// hostRecords counts the grants in state that record path.
func hostRecords(t *testing.T, w *acctest.CLIWorkspace, path string) int {
	t.Helper()
	var show struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Type   string `json:"type"`
					Values struct {
						Resources []struct {
							System    string            `json:"system"`
							Type      string            `json:"type"`
							Instances map[string]string `json:"instances"`
						} `json:"resources"`
					} `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(w.MustRun("show", "-json")), &show); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range show.Values.RootModule.Resources {
		if r.Type != "bkiam_instance_grant" {
			continue
		}
		for _, res := range r.Values.Resources {
			for id := range res.Instances {
				if sharedgrants.InstancePath(res.System, res.Type, id) == path {
					n++
				}
			}
		}
	}
	return n
}

// TestAccShared_replaceUnchanged: -replace and taint of a grant whose
// configuration did not change. Terraform plans such a replacement in two
// calls, the unchanged object's and then the new object's with no prior
// state; the ledger took the second for another resource granting the
// same paths as the first, and refused every -replace of an unchanged
// grant ("Grants shared with another resource", naming the grant itself).
// Now the new object takes the old one's claims over: the apply replaces
// it, alice and her group hold what they held, and the next plan is
// empty. The same for a creator grant and a group's permission.
func TestAccShared_replaceUnchanged(t *testing.T) {
	acctest.Parallel(t)
	w, sb, provider := sharedWorkspace(t)
	config := acctest.SharedHostGrant("a", "view_host", "", "1", "2") + `
resource "bkiam_creator_grant" "jobs" {
  system    = "bk_job"
  type      = "job"
  creator   = "alice"
  instances = { "job1" = "job1" }
  actions   = ["view"]
}

resource "bkiam_grade_manager" "platform" {
  system  = "bk_cmdb"
  name    = "platform"
  members = ["alice"]
  authorization_scopes = [
    { system = "bk_job", actions = ["view"], resources = [{ system = "bk_job", type = "job", all_instances = true }] },
  ]
  subject_scopes = [{ type = "*", id = "*" }]
}

resource "bkiam_group" "dev" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = "dev"
}

resource "bkiam_group_permission" "jobs" {
  system    = "bk_job"
  group_id  = bkiam_group.dev.id
  actions   = ["view"]
  resources = [{ system = "bk_job", type = "job", instances = { "job2" = "job 2" } }]
}
`
	w.Configure(provider, config)
	w.MustRun("apply", "-auto-approve")
	held := func() string {
		var group []string
		for _, p := range sb.Policies(sandbox.PolicyFilter{SubjectType: "group", System: "bk_job"}).Policies {
			group = append(group, p.Action+" "+strings.Join(p.Paths, " "))
		}
		return fmt.Sprint(sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice"), sandboxtest.HeldPaths(sb, "bk_job", "user", "alice"), group)
	}
	want := held()
	for _, addr := range []string{"bkiam_instance_grant.a", "bkiam_creator_grant.jobs", "bkiam_group_permission.jobs"} {
		for _, how := range [][]string{{"apply", "-auto-approve", "-replace=" + addr}, {"taint", addr}} {
			out, code := w.Run(how...)
			if how[0] == "taint" && code == 0 {
				out, code = w.Run("apply", "-auto-approve")
			}
			if code != 0 || !strings.Contains(out, "1 added, 0 changed, 1 destroyed") {
				t.Fatalf("%s of the unchanged %s (exit %d):\n%s", how[0], addr, code, out)
			}
			if got := held(); got != want {
				t.Fatalf("after %s of %s alice holds %s, want %s", how[0], addr, got, want)
			}
			if !w.PlanIsEmpty() {
				t.Fatalf("the plan after %s of %s is not empty", how[0], addr)
			}
		}
	}
}
