package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/demo"
	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// messyImports is how many objects the lists of messyQuery adopt: the
// grade manager; its three groups (not the sync group); their members,
// the empty group's included; ops team's view_host, edit_host and
// create_biz and db,cache's delete_host (not its view_host on the literal
// "*"); and the users' grants of alice, bob and carol (not dave's on the
// id "/srv", which the provider refuses, nor the groups').
const messyImports = 1 + 3 + 3 + 4 + 3

// messyQuery lists every kind over the whole messy site: the grade
// managers of bk_cmdb, the groups, members and permissions of the grade
// manager, and the grants of each action users were granted.
func messyQuery(site demo.MessySite) string {
	return listBlock("bkiam_grade_manager", "gm", "system", "bk_cmdb") +
		gradeManagerLists("bk_cmdb", site.GradeManager, "groups", "members", "perms") +
		listBlock("bkiam_instance_grant", "view_host", "system", "bk_cmdb", "action", "view_host") +
		listBlock("bkiam_instance_grant", "delete_host", "system", "bk_cmdb", "action", "delete_host")
}

// TestAccAdoptMessySite: the adoption guide (docs/guides/adopt-a-site.md)
// on a site as untidy as a real one (demo.FillMessySite, through IAM's
// APIs only, and the sandbox's control route for permission-template
// rows): a grade manager with a sync group holding its scope verbatim
// (the literal id "*"), groups whose names hold a space, a comma and
// Chinese, an empty group, members added in several calls with several
// expiries and a department, group permissions merged from two calls,
// given by path, of an action with no resource type and through the
// authorization API, template rows beside custom rows, and users' grants
// made in several calls, one partly revoked, one expiring, one on an id
// the provider refuses ("/srv": it reads a key beginning with "/" as a
// path).
//
// terraform query lists every kind over the whole site and generates the
// blocks: the sync group, the groups' rows of the instance-grant lists
// and the policies on the literal "*" are left out, each with a warning,
// and no block is one the provider refuses at plan. Applying them (a saved plan, then its apply) only
// imports (no call that changes IAM, every row and expiry of IAM the same)
// and plans empty after. Then the grade manager is let go with a removed
// block (destroy = false: the adoption guide's "stop managing, keep
// access"), one terraform destroy destroys the rest in whatever order
// Terraform picks, and IAM is left exactly as it was without what was
// adopted: the
// grade manager, its sync group with its members, policies and template
// row, the model group's template row and dave's grant stay.
//
// Terraform 1.14 and later; on OpenTofu 1.12, Terraform 1.16 lists and
// generates and OpenTofu applies and destroys (queryCLI).
func TestAccAdoptMessySite(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	querier := queryCLI(t)
	start := time.Now()
	sb := sandboxtest.Start(t)
	site := fillMessySite(t, sb)
	server, err := provider.NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	w := acctest.NewAttachedWorkspace(t, server)
	w.Configure(acctest.DriftProvider(sb, ""), "")
	applier := w.Terraform
	w.Terraform = querier
	before := snapshotIAM(sb)
	checkMessyFill(t, before, site)

	// 1. List and generate.
	w.Write("site.tfquery.hcl", messyQuery(site))
	jsonOut := w.MustRun("query", "-json")
	out := w.MustRun("query", "-generate-config-out=generated.tf")
	raw, err := os.ReadFile(filepath.Join(w.Dir, "generated.tf"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	generated := string(raw)
	checkMessyQueryOutput(t, out, jsonOut, site)
	checkMessyGenerated(t, generated, site)
	w.Remove("site.tfquery.hcl")
	if t.Failed() {
		t.Logf("terraform query:\n%s\ngenerated.tf:\n%s", out, generated)
	}

	// 2. Import: nothing but imports, IAM as it was, an empty plan after.
	w.Terraform = applier
	applySavedImportsOnly(t, w, sb, before, messyImports) // down the saved plan's path

	// 3. Let the grade manager go (its destroy would delete its sync group
	// and every group with it, which would hide what each destroy does):
	// the import blocks are removed, as the guide says, and so is the
	// grade manager's block, for a removed block that forgets it.
	blocks := topBlocks(generated)
	gmAddr := ""
	var kept []string
	for _, b := range blocks {
		switch addr := resourceAddr(b); {
		case strings.HasPrefix(b, "import"):
		case strings.HasPrefix(addr, "bkiam_grade_manager."):
			gmAddr = addr
		default:
			kept = append(kept, b)
		}
	}
	if gmAddr == "" {
		t.Fatalf("the generated configuration has no grade manager:\n%s", generated)
	}
	w.Write("generated.tf", strings.Join(kept, "\n\n")+"\n")
	w.Write("keep.tf", fmt.Sprintf("removed {\n  from = %s\n\n  lifecycle {\n    destroy = false\n  }\n}\n", gmAddr))
	writes := iamWrites(sb)
	out = w.MustRun("apply", "-auto-approve")
	if !strings.Contains(out, "0 added, 0 changed, 0 destroyed") {
		t.Errorf("letting the grade manager go did more than forget it:\n%s", out)
	}
	if n := iamWrites(sb) - writes; n != 0 {
		t.Errorf("letting the grade manager go sent %d calls that change IAM", n)
	}
	if now := snapshotIAM(sb); !reflect.DeepEqual(before, now) {
		t.Errorf("letting the grade manager go changed IAM:\n%s", diffSnapshots(before, now))
	}
	if state := w.MustRun("state", "list"); strings.Contains(state, "bkiam_grade_manager.") {
		t.Errorf("the grade manager is still in state:\n%s", state)
	}

	// 4. Destroy what is left of the adopted configuration, as a user
	// would: one terraform destroy. The generated blocks name groups by
	// literal id, so Terraform destroys them in any order; a member's or
	// permission's delete that runs after its group's finds the group gone
	// (TestAccDestroyAfterTheGroup pins that order), and the destroy
	// completes.
	out, code := w.Run("destroy", "-auto-approve")
	if want := fmt.Sprintf("Resources: %d destroyed", messyImports-1); code != 0 || !strings.Contains(out, want) {
		t.Errorf("terraform destroy (exit %d) did not destroy the %d objects adopted:\n%s", code, messyImports-1, out)
	}
	for _, g := range sb.Management().Groups {
		if g.ID == site.Ops || g.ID == site.DB || g.ID == site.Empty {
			t.Errorf("group %d (%s) is still in IAM after its destroy", g.ID, g.Name)
		}
	}
	if state := strings.TrimSpace(w.MustRun("state", "list")); state != "" {
		t.Errorf("the state still holds, after terraform destroy:\n%s", state)
	}
	if after, want := snapshotIAM(sb), withoutAdopted(before, site); !reflect.DeepEqual(want, after) {
		t.Errorf("terraform destroy did not leave IAM as it was without what was adopted:\n%s", diffSnapshots(want, after))
	}
	t.Logf("%s: %s", acctest.CLI, time.Since(start).Round(time.Millisecond))
}

// fillMessySite fills the sandbox with demo.FillMessySite and its
// template rows. A template row the sandbox refuses fails the test and
// the rest goes on without it.
func fillMessySite(t *testing.T, sb *sandboxtest.Sandbox) demo.MessySite {
	t.Helper()
	site, err := demo.FillMessySite(context.Background(), acctest.OutsideClient(t, sb))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range demo.AddMessyTemplateRows(context.Background(), sb.URL, site) {
		t.Errorf("the sandbox refused a permission-template row (goes on without it): %v", err)
	}
	return site
}

// checkMessyFill checks that the site holds the mess the test is about,
// as IAM stores it: the sync group with the grade manager's members and
// the literal "*", expiring members, template rows, dave's "/srv".
func checkMessyFill(t *testing.T, s iamSnapshot, site demo.MessySite) {
	t.Helper()
	var sync *sandbox.GroupView
	for i, g := range s.management.Groups {
		if g.ID == site.SyncGroup {
			sync = &s.management.Groups[i]
		}
	}
	if sync == nil || !sync.Sync || sync.Name != demo.MessySyncGroup || len(sync.Members) != 2 {
		t.Fatalf("the grade manager's sync group is not as IAM makes it: %+v", sync)
	}
	has := func(subjectType, subjectID, action, path string, template bool) bool {
		return slices.ContainsFunc(s.policies.Policies, func(p sandbox.PolicyView) bool {
			return p.Subject == sandbox.Subject{Type: subjectType, ID: subjectID} && p.Action == action &&
				(p.TemplateID != 0) == template && slices.Contains(p.Paths, path)
		})
	}
	for _, want := range []struct {
		subjectType, subjectID, action, path string
		template                             bool
	}{
		{"group", fmt.Sprint(site.SyncGroup), "view_host", "/bk_cmdb,host,*/", false},
		{"group", fmt.Sprint(site.DB), "view_host", "/bk_cmdb,host,*/", false},
		{"group", fmt.Sprint(site.Ops), "view_host", "/bk_cmdb,host,10/", false},
		{"group", fmt.Sprint(site.Ops), "edit_host", "/bk_cmdb,biz,1/bk_cmdb,host,9/", false},
		{"user", "dave", "view_host", "/bk_cmdb,host,/srv/", false},
		{"user", "alice", "view_host", "/bk_cmdb,host,3/", false},
		{"group", fmt.Sprint(site.DB), "delete_host", "/bk_cmdb,host,12/", true},
		{"group", fmt.Sprint(site.SyncGroup), "view_host", "/bk_cmdb,host,13/", true},
		{"group", "1", "view_host", "/bk_cmdb,host,14/", true},
	} {
		if !has(want.subjectType, want.subjectID, want.action, want.path, want.template) {
			t.Errorf("the filled site lacks %s %s's %s on %s (template row: %v)", want.subjectType, want.subjectID, want.action, want.path, want.template)
		}
	}
	if has("user", "alice", "view_host", "/bk_cmdb,host,2/", false) {
		t.Error("alice's host 2 was not revoked")
	}
}

// checkMessyQueryOutput checks what terraform query printed: in JSON
// (query -json, every diagnostic on its own), the results of each list
// and the warnings on what each leaves out; in the text a user reads
// (where Terraform prints only the first of the warnings that share a
// summary, followed by "and N more similar warnings"), that each kind of
// warning shows.
func checkMessyQueryOutput(t *testing.T, text, jsonOut string, site demo.MessySite) {
	t.Helper()
	results, warnings := parseQueryJSON(t, jsonOut)
	id := func(n int64) string { return fmt.Sprint(n) }
	for addr, want := range map[string][]string{
		"list.bkiam_grade_manager.gm":           {id(site.GradeManager)},
		"list.bkiam_group.groups":               {id(site.Ops), id(site.DB), id(site.Empty)},
		"list.bkiam_group_members.members":      {id(site.Ops), id(site.DB), id(site.Empty)},
		"list.bkiam_group_permission.perms":     {id(site.Ops) + " [create_biz]", id(site.Ops) + " [edit_host]", id(site.Ops) + " [view_host]", id(site.DB) + " [delete_host]"},
		"list.bkiam_instance_grant.view_host":   {"user alice", "user bob"},
		"list.bkiam_instance_grant.delete_host": {"user carol"},
	} {
		got := results[addr]
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s listed %q, want %q", addr, got, want)
		}
	}
	has := func(addr string, fragments ...string) bool {
		return slices.ContainsFunc(warnings[addr], func(w string) bool {
			return !slices.ContainsFunc(fragments, func(f string) bool { return !strings.Contains(w, f) })
		})
	}
	gm := id(site.GradeManager)
	for _, addr := range []string{"list.bkiam_group.groups", "list.bkiam_group_members.members", "list.bkiam_group_permission.perms"} {
		if !has(addr, demo.MessySyncGroup, gm) && !has(addr, demo.MessySyncGroup, "grade manager") {
			t.Errorf("%s has no warning naming the sync group %q and its grade manager %s: %q", addr, demo.MessySyncGroup, gm, warnings[addr])
		}
	}
	for _, addr := range []string{"list.bkiam_instance_grant.view_host", "list.bkiam_instance_grant.delete_host"} {
		if !has(addr, "bkiam_group_permission") {
			t.Errorf("%s has no warning leaving the groups' rows to bkiam_group_permission: %q", addr, warnings[addr])
		}
	}
	if !has("list.bkiam_instance_grant.view_host", "dave", "/srv", "An id that begins with /") {
		t.Errorf("no warning says dave's grant on the id \"/srv\" is left out: %q", warnings["list.bkiam_instance_grant.view_host"])
	}
	if !has("list.bkiam_group_permission.perms", id(site.DB), "view_host", "*") && !has("list.bkiam_group_permission.perms", demo.MessyDB, "view_host", "*") {
		t.Errorf("no warning says db,cache's view_host on the literal \"*\" is left out: %q", warnings["list.bkiam_group_permission.perms"])
	}

	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "list.") && strings.HasSuffix(line, "   "+demo.MessySyncGroup) {
			t.Errorf("terraform query listed the sync group: %s", line)
		}
	}
	shown := queryWarnings(text)
	for what, fragments := range map[string][]string{
		"the sync group":                      {demo.MessySyncGroup},
		"the groups' rows of instance grants": {"bkiam_group_permission"},
		"the policies on the literal \"*\"":   {"*", "view_host"},
		"dave's grant on \"/srv\"":            {"/srv", "An id that begins with /"},
	} {
		if !slices.ContainsFunc(shown, func(w string) bool {
			return !slices.ContainsFunc(fragments, func(f string) bool { return !strings.Contains(w, f) })
		}) {
			t.Errorf("terraform query shows no warning on %s (with %q): %q", what, fragments, shown)
		}
	}
}

// parseQueryJSON reads the output of terraform query -json: each list's
// results (a grade manager's or group's id; a permission's group and
// actions; a grant's subject) and warnings (summary and detail), by list
// address.
func parseQueryJSON(t *testing.T, out string) (results, warnings map[string][]string) {
	t.Helper()
	results, warnings = map[string][]string{}, map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		var msg struct {
			Diagnostic *struct {
				Severity, Summary, Detail, Address string
			} `json:"diagnostic"`
			Found *struct {
				Address  string         `json:"address"`
				Identity map[string]any `json:"identity"`
			} `json:"list_resource_found"`
		}
		if !strings.HasPrefix(line, "{") {
			continue
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("terraform query -json wrote %q: %v", line, err)
		}
		switch {
		case msg.Diagnostic != nil && msg.Diagnostic.Severity == "warning":
			d := msg.Diagnostic
			warnings[d.Address] = append(warnings[d.Address], strings.Join(strings.Fields(d.Summary+" "+d.Detail), " "))
		case msg.Found != nil:
			id := msg.Found.Identity
			var key string
			switch {
			case id["subject_type"] != nil:
				key = fmt.Sprint(id["subject_type"], " ", id["subject_id"])
			case id["actions"] != nil:
				key = fmt.Sprint(id["group_id"], " ", id["actions"])
			case id["group_id"] != nil:
				key = fmt.Sprint(id["group_id"])
			default:
				key = fmt.Sprint(id["id"])
			}
			results[msg.Found.Address] = append(results[msg.Found.Address], key)
		}
	}
	return results, warnings
}

// checkMessyGenerated checks the blocks terraform query wrote: what each
// holds, and that nothing left out is there.
func checkMessyGenerated(t *testing.T, generated string, site demo.MessySite) {
	t.Helper()
	blocks := topBlocks(generated)
	count := map[string]int{}
	var resources []string
	for _, b := range blocks {
		if addr := resourceAddr(b); addr != "" {
			count[strings.Split(addr, ".")[0]]++
			flat := strings.Join(strings.Fields(b), " ")
			resources = append(resources, strings.NewReplacer("[ ]", "[]", "{ }", "{}").Replace(flat))
		}
	}
	for typ, n := range map[string]int{"bkiam_grade_manager": 1, "bkiam_group": 3, "bkiam_group_members": 3, "bkiam_group_permission": 4,
		"bkiam_instance_grant": 3} {
		if count[typ] != n {
			t.Errorf("the generated configuration has %d %s blocks, want %d", count[typ], typ, n)
		}
	}
	if n := strings.Count(generated, "\nimport {") + map[bool]int{true: 1}[strings.HasPrefix(generated, "import {")]; n != messyImports {
		t.Errorf("the generated configuration has %d import blocks, want %d", n, messyImports)
	}
	rfc := func(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }
	group := func(id int64) string { return fmt.Sprintf(`group_id = "%d"`, id) }
	// Each wanted block: fragments it holds, and fragments it must not.
	for _, want := range []struct {
		has, lacks []string
	}{
		{[]string{`resource "bkiam_grade_manager"`, `name = "site ops"`, `sync_perm = true`, `members = ["alice", "bob"]`,
			`authorization_scopes = null`, `subject_scopes = null`}, nil},
		{[]string{`resource "bkiam_group"`, `name = "ops team"`, `description = "on call, 24/7"`, fmt.Sprintf(`grade_manager_id = "%d"`, site.GradeManager)}, nil},
		{[]string{`resource "bkiam_group"`, `name = "db,cache"`}, nil},
		{[]string{`resource "bkiam_group"`, `name = "运维值班组"`, `description = "值班"`}, nil},
		{[]string{`resource "bkiam_group_members"`, group(site.Ops), `alice = "permanent"`, `bob = "` + rfc(site.Later) + `"`,
			`carol = "` + rfc(site.Soon) + `"`, `"2" = "permanent"`}, nil},
		{[]string{`resource "bkiam_group_members"`, group(site.DB), `bob = "permanent"`, `"3" = "` + rfc(site.Soon) + `"`}, []string{"alice"}},
		{[]string{`resource "bkiam_group_members"`, group(site.Empty)}, []string{"alice", "bob", `= "permanent"`}},
		{[]string{`resource "bkiam_group_permission"`, group(site.Ops), `actions = ["view_host"]`, `"7" =`, `"8" =`, `"10" =`}, nil},
		{[]string{`resource "bkiam_group_permission"`, group(site.Ops), `actions = ["edit_host"]`, `"/bk_cmdb,biz,1/bk_cmdb,host,9/" =`}, nil},
		{[]string{`resource "bkiam_group_permission"`, group(site.Ops), `actions = ["create_biz"]`, `resources = []`}, nil},
		{[]string{`resource "bkiam_group_permission"`, group(site.DB), `actions = ["delete_host"]`, `"11" =`}, []string{`"12"`}},
		{[]string{`resource "bkiam_instance_grant"`, `id = "alice" type = "user"`, `actions = ["view_host"]`, `"1" =`, `"3" =`},
			[]string{`"2" =`, `expires_at = "`}},
		{[]string{`resource "bkiam_instance_grant"`, `id = "bob" type = "user"`, `"4" =`, `expires_at = "` + rfc(site.Soon) + `"`}, nil},
		{[]string{`resource "bkiam_instance_grant"`, `id = "carol" type = "user"`, `actions = ["delete_host"]`, `"5" =`, `"6" =`}, nil},
	} {
		i := slices.IndexFunc(resources, func(b string) bool {
			return !slices.ContainsFunc(want.has, func(s string) bool { return !strings.Contains(b, s) })
		})
		switch {
		case i < 0:
			t.Errorf("the generated configuration has no block with %q", want.has)
		case slices.ContainsFunc(want.lacks, func(s string) bool { return strings.Contains(resources[i], s) }):
			t.Errorf("the generated block with %q holds one of %q:\n%s", want.has, want.lacks, resources[i])
		}
	}
	// Nothing left out is there: the sync group, the literal "*", a group
	// subject of an instance grant, dave.
	for _, absent := range []string{demo.MessySyncGroup, group(site.SyncGroup), `"*" =`, `,*/" =`, `type = "group"`, `"dave"`} {
		if strings.Contains(strings.Join(resources, "\n"), absent) {
			t.Errorf("the generated configuration holds %s, which should be left out", absent)
		}
	}
}

// withoutAdopted is IAM as before, less what the messy site's lists
// adopted (but the grade manager, let go): the three groups with their
// members and every row they hold, and alice's, bob's and carol's grants.
func withoutAdopted(before iamSnapshot, site demo.MessySite) iamSnapshot {
	gone := map[string]bool{fmt.Sprint(site.Ops): true, fmt.Sprint(site.DB): true, fmt.Sprint(site.Empty): true}
	adopted := map[sandbox.Subject]string{{Type: "user", ID: "alice"}: "view_host", {Type: "user", ID: "bob"}: "view_host",
		{Type: "user", ID: "carol"}: "delete_host"}
	want := iamSnapshot{management: sandbox.ManagementView{GradeManagers: before.management.GradeManagers, Groups: []sandbox.GroupView{}},
		policies: sandbox.PolicyList{Policies: []sandbox.PolicyView{}}}
	for _, g := range before.management.Groups {
		if !gone[fmt.Sprint(g.ID)] {
			want.management.Groups = append(want.management.Groups, g)
		}
	}
	for _, p := range before.policies.Policies {
		if (p.Subject.Type == "group" && gone[p.Subject.ID]) || (p.TemplateID == 0 && adopted[p.Subject] == p.Action) {
			continue
		}
		want.policies.Policies = append(want.policies.Policies, p)
	}
	return want
}

// diffSnapshots renders the grade managers, groups and policies that
// differ between two snapshots of IAM, one JSON line each.
func diffSnapshots(want, got iamSnapshot) string {
	lines := func(s iamSnapshot) []string {
		var out []string
		add := func(kind string, v any) {
			raw, _ := json.Marshal(v)
			out = append(out, kind+" "+string(raw))
		}
		for _, gm := range s.management.GradeManagers {
			add("grade manager", gm)
		}
		for _, g := range s.management.Groups {
			add("group", g)
		}
		for _, p := range s.policies.Policies {
			add("policy", p)
		}
		return out
	}
	w, g := lines(want), lines(got)
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "(the same rows, in another order)"
	}
	return b.String()
}

// topBlocks splits an HCL file as Terraform writes it into its top-level
// blocks, each from its first line to its closing brace at column 0.
func topBlocks(hcl string) []string {
	var blocks []string
	var cur []string
	for _, line := range strings.Split(hcl, "\n") {
		if len(cur) == 0 && (strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		cur = append(cur, line)
		if line == "}" {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	return blocks
}

var resourceHeader = regexp.MustCompile(`^resource "([^"]+)" "([^"]+)"`)

// resourceAddr is the address of a resource block, or "".
func resourceAddr(block string) string {
	if m := resourceHeader.FindStringSubmatch(block); m != nil {
		return m[1] + "." + m[2]
	}
	return ""
}

// queryWarnings are the warnings in a terraform query's output (-no-color),
// each its summary and detail flattened to single spaces.
func queryWarnings(out string) []string {
	var warnings []string
	var cur []string
	flush := func() {
		if cur != nil {
			warnings = append(warnings, strings.Join(strings.Fields(strings.Join(cur, " ")), " "))
		}
		cur = nil
	}
	for _, line := range strings.Split(out, "\n") {
		l := strings.TrimSpace(strings.TrimLeft(line, "│╷╵ "))
		switch {
		case strings.HasPrefix(l, "Warning: "):
			flush()
			cur = []string{l}
		case strings.HasPrefix(l, "Error: "), strings.HasPrefix(l, "list."):
			flush()
		case cur != nil:
			cur = append(cur, l)
		}
	}
	flush()
	return warnings
}
