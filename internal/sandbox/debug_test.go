package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// The backend's debug output on the access routes (package doc, "Access checks"): the subject's
// key and the rows the backend's policy query read, which a caller matches against the policy
// list by id.

// debugRow is an element of an innermost effectPolicies.
type debugRow struct {
	PK, SubjectPK, ExpressionPK, ExpiredAt int64
}

// debugPost posts body to an access route with ?debug=1 and query, and returns the answer and
// its tree (nil when the answer has none).
func debugPost(t *testing.T, h http.Handler, path, query, body string) (response, map[string]any) {
	t.Helper()
	r := accessPost(t, h, path+"?debug=1"+query, body, "")
	tree, _ := r.body["debug"].(map[string]any)
	return r, tree
}

// entryList is an entry's sub_debugs.
func entryList(e map[string]any) []map[string]any {
	var out []map[string]any
	subs, _ := e["sub_debugs"].([]any)
	for _, s := range subs {
		out = append(out, s.(map[string]any))
	}
	return out
}

func entryContext(e map[string]any) map[string]any {
	c, _ := e["context"].(map[string]any)
	return c
}

// subjectAttribute is an action entry's context.subject.Attribute.Attribute.
func subjectAttribute(t *testing.T, e map[string]any) map[string]any {
	t.Helper()
	subj, _ := entryContext(e)["subject"].(map[string]any)
	outer, _ := subj["Attribute"].(map[string]any)
	inner, ok := outer["Attribute"].(map[string]any)
	if !ok {
		t.Fatalf("an entry without subject.Attribute.Attribute: %v", e)
	}
	return inner
}

func stepNames(e map[string]any) []string {
	var out []string
	steps, _ := e["steps"].([]any)
	for _, s := range steps {
		out = append(out, s.(map[string]any)["name"].(string))
	}
	return out
}

// effectRows walks e's sub_debugs and collects every effectPolicies element with a SubjectPK: the
// database's rows (the entry above holds the same rows in another form, without one).
func effectRows(t *testing.T, e map[string]any) []debugRow {
	t.Helper()
	var out []debugRow
	for _, sub := range entryList(e) {
		if rows, ok := entryContext(sub)["effectPolicies"].([]any); ok {
			for _, r := range rows {
				m := r.(map[string]any)
				if _, has := m["SubjectPK"]; !has {
					continue
				}
				b, _ := json.Marshal(m)
				var row debugRow
				if err := json.Unmarshal(b, &row); err != nil {
					t.Fatal(err)
				}
				out = append(out, row)
			}
		}
		out = append(out, effectRows(t, sub)...)
	}
	return out
}

func queryBody(typ, id string, actions ...string) string {
	return `{` + subj(typ, id) + `,"actions":` + actionsJSON(actions...) + `,"resources":[]}`
}

// subjectPK is a subject's key as the debug output of a query shows it.
func subjectPK(t *testing.T, h http.Handler, typ, id string) int64 {
	t.Helper()
	_, tree := debugPost(t, h, queryPath, "", queryBody(typ, id, "view_host"))
	entries := entryList(tree)
	if len(entries) != 1 {
		t.Fatalf("%s %s: a debug tree without its action's entry: %v", typ, id, tree)
	}
	pk, ok := subjectAttribute(t, entries[0])["pk"].(float64)
	if !ok {
		t.Fatalf("%s %s: no pk in %v", typ, id, entries[0])
	}
	return int64(pk)
}

// Each action's entry shows the subject's key and, innermost, every row that counts for it — its
// own and its groups', template rows included — by the ids the policy list shows, each with the key
// of the subject that holds it.
func TestDebugQueryRows(t *testing.T) {
	f := newAccessFixture(t)
	now := f.clock.t.Unix()
	owner := func(name string) (string, string) {
		if id, ok := f.groups[name]; ok {
			return "group", id
		}
		return "user", name
	}
	pks := map[string]int64{}
	for _, name := range []string{"alice", "bob", "carol", "dave", "direct", "dept", "ancestor", "lapsed", "tmpl"} {
		typ, id := owner(name)
		pks[name] = subjectPK(t, f.s, typ, id)
	}
	seen := map[int64]string{}
	for name, pk := range pks {
		if other, dup := seen[pk]; dup || pk <= 0 {
			t.Fatalf("subject keys %v: %s and %s share %d (or it is not positive)", pks, name, other, pk)
		}
		seen[pk] = name
	}
	if again := subjectPK(t, f.s, "user", "alice"); again != pks["alice"] {
		t.Errorf("alice's key changed from %d to %d", pks["alice"], again)
	}

	for _, tc := range []struct {
		name, subject, action string
		owners                []string // the subjects whose rows count
	}{
		{"own row, department's and ancestor department's", "alice", "view_host", []string{"alice", "dept", "ancestor"}},
		{"a group joined directly", "bob", "view_host", []string{"bob", "direct", "ancestor"}},
		{"a group's template row beside the user's own", "dave", "view_host", []string{"dave", "tmpl"}},
		{"not through an expired membership", "dave", "delete_host", nil},
		{"not an expired row", "carol", "edit_host", []string{"dept"}},
		{"a group subject: its own rows", "dept", "view_host", []string{"dept"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			typ, id := owner(tc.subject)
			r, tree := debugPost(t, f.s, queryPath, "", queryBody(typ, id, tc.action))
			entries := entryList(tree)
			if r.status != 200 || r.code() != 0 || len(entries) != 1 {
				t.Fatalf("HTTP %d: %s", r.status, r.raw)
			}
			e := entries[0]
			if got := entryContext(e)["action"].(map[string]any)["ID"]; got != tc.action {
				t.Errorf("the entry's action is %v", got)
			}
			if got := int64(subjectAttribute(t, e)["pk"].(float64)); got != pks[tc.subject] {
				t.Errorf("the subject's key is %d, want %d", got, pks[tc.subject])
			}
			want := map[int64]int64{} // backend id -> holder's key
			for _, row := range listRows(t, f.s, "bk_cmdb", tc.action, "").Data.Results {
				name := row.Subject["id"].(string)
				for n, gid := range f.groups {
					if row.Subject["type"] == "group" && gid == name {
						name = n
					}
				}
				if slices.Contains(tc.owners, name) && row.ExpiredAt > now {
					want[row.ID] = pks[name]
				}
			}
			got := map[int64]int64{}
			for _, row := range effectRows(t, e) {
				got[row.PK] = row.SubjectPK
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("rows (id: holder's key) %v, want %v", got, want)
			}
		})
	}
}

// A subject IAM does not know: no key, and the entry stops once the subject was looked up.
func TestDebugUnknownSubjects(t *testing.T) {
	f := newAccessFixture(t)
	if err := f.s.DeleteGroup("3"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, typ, id string }{
		{"a user never synced", "user", "ghost"},
		{"a group id that does not exist", "group", "999999"},
		{"a group id that is not a number", "group", "abc"},
		{"a deleted group", "group", "3"},
		{"another subject type", "department", "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, tree := debugPost(t, f.s, queryPath, "", queryBody(tc.typ, tc.id, "view_host"))
			entries := entryList(tree)
			if r.code() != 0 || len(entries) != 1 || r.raw == "" || !strings.Contains(r.raw, `"condition":{}`) {
				t.Fatalf("%s", r.raw)
			}
			e := entries[0]
			if attr := subjectAttribute(t, e); len(attr) != 0 {
				t.Errorf("attributes %v, want none", attr)
			}
			want := []string{"Fetch action details", "Validate action remote resource", "Fetch subject details"}
			if got := stepNames(e); !slices.Equal(got, want) || len(entryList(e)) != 0 {
				t.Errorf("steps %v and %d sub entries, want %v and none", got, len(entryList(e)), want)
			}
		})
	}
}

// Which answers carry a tree: ?debug with any value, never a manager's, never without it.
func TestDebugWhen(t *testing.T) {
	f := newAccessFixture(t)
	for _, tc := range []struct {
		name, query, user string
		tree              bool
		msg               string
	}{
		{"?debug=1", "?debug=1", "alice", true, "ok"},
		{"?debug with no value", "?debug", "alice", true, "ok"},
		{"?debug=0 turns it on too", "?debug=0", "alice", true, "ok"},
		{"without ?debug", "", "alice", false, "ok"},
		{"a manager: no tree at all", "?debug=1&force=1", "admin", false, managerMsg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := accessPost(t, f.s, queryPath+tc.query, queryBody("user", tc.user, "view_host"), "")
			_, has := r.body["debug"]
			if r.status != 200 || r.message() != tc.msg || has != tc.tree {
				t.Fatalf("HTTP %d %q, tree %t; want %q, tree %t\n%s", r.status, r.message(), has, tc.msg, tc.tree, r.raw)
			}
		})
	}
}

// ?force bypasses the backend's caches: its database query keeps a row expiring this very second,
// which the caches drop, in the answer as in the tree.
func TestDebugForce(t *testing.T) {
	f := newAccessFixture(t)
	f.clock.t = fixedNow.Add(60 * time.Second) // carol's edit_host on host 5 expires now
	body := queryBody("user", "carol", "edit_host")
	for _, tc := range []struct {
		query     string
		rows      int
		condition string
		cache     bool
	}{
		{"", 1, `{"field":"host.id","op":"eq","value":"2"}`, true},
		{"&force=1", 2, `{"field":"host.id","op":"in","value":["2","5"]}`, false},
	} {
		t.Run("debug=1"+tc.query, func(t *testing.T) {
			r, tree := debugPost(t, f.s, queryPath, tc.query, body)
			e := entryList(tree)[0]
			cond, _ := json.Marshal(r.body["data"].([]any)[0].(map[string]any)["condition"])
			if got := effectRows(t, e); len(got) != tc.rows || string(cond) != tc.condition || entryContext(e)["cacheEnabled"] != tc.cache {
				t.Fatalf("rows %v, condition %s, cacheEnabled %v; want %d rows, %s, %t", got, cond, entryContext(e)["cacheEnabled"],
					tc.rows, tc.condition, tc.cache)
			}
		})
	}
}

// The tree's forms: auth's is the action's entry itself, the batch routes' a root with one entry
// per action; an action related to no type; RBAC rows, which the backend reads apart; and a system
// error, which with a tree answers HTTP 200.
func TestDebugShapes(t *testing.T) {
	f := newAccessFixture(t)
	g := f.groups
	if r := send(t, f.s, gw, "batch_instance", `{"system":"bk_cmdb","operate":"grant","subject":{"type":"user","id":"alice"},`+
		`"actions":[{"id":"create_biz"}],"resources":[]}`); r.code() != 0 {
		t.Fatal(r.raw)
	}
	if r := send(t, f.s, gw, "batch_instance", instBody("grant", "group", g["direct"], []string{"manage_host"}, "host", []string{"1"}, "")); r.code() != 0 {
		t.Fatal(r.raw)
	}
	directPK := subjectPK(t, f.s, "group", g["direct"])

	t.Run("auth: the action's entry", func(t *testing.T) {
		r, tree := debugPost(t, f.s, authPath, "", authBody("bob", "view_host", res("host", "1")))
		if r.body["data"].(map[string]any)["allowed"] != true || entryContext(tree)["action"].(map[string]any)["ID"] != "view_host" {
			t.Fatalf("%s", r.raw)
		}
		rows := effectRows(t, tree)
		evals, _ := tree["evals"].(map[string]any)
		passed := 0
		for _, row := range rows {
			if evals[fmt.Sprint(row.PK)] == "pass" {
				passed++
				if row.SubjectPK != directPK {
					t.Errorf("row %d passed, held by %d; want the group direct's (%d)", row.PK, row.SubjectPK, directPK)
				}
			}
		}
		if passed != 1 || !slices.Contains(stepNames(tree), "Eval") {
			t.Errorf("evals %v, steps %v: want one pass", evals, stepNames(tree))
		}
	})
	t.Run("auth_by_actions: one entry per action, in order", func(t *testing.T) {
		body := `{` + subj("user", "alice") + `,"actions":` + actionsJSON("edit_host", "view_host") + `,"resources":[` + res("host", "2") + `]}`
		_, tree := debugPost(t, f.s, byActions, "", body)
		var ids []string
		for _, e := range entryList(tree) {
			ids = append(ids, entryContext(e)["action"].(map[string]any)["ID"].(string))
		}
		if !slices.Equal(ids, []string{"edit_host", "view_host"}) {
			t.Errorf("entries for %v", ids)
		}
	})
	t.Run("an action related to no type", func(t *testing.T) {
		_, tree := debugPost(t, f.s, queryPath, "", queryBody("user", "alice", "create_biz"))
		rows := effectRows(t, entryList(tree)[0])
		if len(rows) != 1 || rows[0].ExpressionPK != -1 || !strings.Contains(fmt.Sprint(tree), "without_resource_types:true") {
			t.Errorf("rows %v in %v", rows, tree)
		}
	})
	t.Run("RBAC rows count, and are read apart", func(t *testing.T) {
		r, tree := debugPost(t, f.s, queryPath, "", queryBody("user", "bob", "manage_host"))
		e := entryList(tree)[0]
		rbac, _ := entryContext(e)["rbacGroupPks"].([]any)
		if !strings.Contains(r.raw, `"condition":{"field":"host.id","op":"eq","value":"1"}`) || len(effectRows(t, e)) != 0 ||
			len(rbac) != 1 || rbac[0] != float64(directPK) {
			t.Errorf("bob's manage_host: %s", r.raw)
		}
	})
	for _, tc := range []struct {
		name, path, body string
		entries          int    // the root's entries; -1 when the tree is an action's entry
		failed           string // that entry's action
	}{
		{"query: an unknown action", queryPath, queryBody("user", "alice", "view_host", "fly"), -1, "fly"},
		{"query: resources of another type", queryPath, `{` + subj("user", "alice") + `,"actions":` + actionsJSON("view_host") +
			`,"resources":[` + res("biz", "1") + `]}`, -1, "view_host"},
		{"auth: resources of another type", authPath, authBody("alice", "view_host", res("biz", "1")), -1, "view_host"},
		{"auth_by_actions: the root without the failing action", byActions, `{` + subj("user", "alice") + `,"actions":` +
			actionsJSON("view_host", "view_biz") + `,"resources":[` + res("host", "2") + `]}`, 1, ""},
	} {
		t.Run("system error, "+tc.name, func(t *testing.T) {
			r, tree := debugPost(t, f.s, tc.path, "", tc.body)
			if r.status != 200 || r.code() != 1901500 || tree == nil {
				t.Fatalf("want HTTP 200, 1901500 and a tree: HTTP %d %s", r.status, r.raw)
			}
			if tc.entries >= 0 {
				if n := len(entryList(tree)); n != tc.entries {
					t.Errorf("%d entries, want %d", n, tc.entries)
				}
				return
			}
			if entryContext(tree)["action"].(map[string]any)["ID"] != tc.failed || tree["error"] == "" {
				t.Errorf("want the entry of %s with its error: %v", tc.failed, tree)
			}
			if plain := accessPost(t, f.s, tc.path, tc.body, ""); plain.status != 500 {
				t.Errorf("without ?debug: HTTP %d, want 500", plain.status)
			}
		})
	}
}

// Keys are stable across a restart from the state file, groups of the management API included.
func TestDebugKeysPersist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := newServer(t, sandbox.WithStateFile(path))
	mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/", scopedGM, 200, 0)
	r := mustMgmt(t, s, "POST", "bk_cmdb/grade_managers/1/groups/", `{"groups":[{"name":"dev","description":""}]}`, 200, 0)
	group := fmt.Sprint(r.body["data"].([]any)[0])
	before := []int64{subjectPK(t, s, "user", "bob"), subjectPK(t, s, "group", group), subjectPK(t, s, "group", "1")}
	s2 := newServer(t, sandbox.WithStateFile(path))
	after := []int64{subjectPK(t, s2, "user", "bob"), subjectPK(t, s2, "group", group), subjectPK(t, s2, "group", "1")}
	sorted := slices.Clone(after)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	if !slices.Equal(before, after) || len(slices.Compact(sorted)) != 3 {
		t.Errorf("keys of bob, group %s and group 1: %v, after a restart %v; want them equal and distinct", group, before, after)
	}
}

// recordedTree reads a debug tree a real IAM answered (internal/bkiam/testdata/realiam).
func recordedTree(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "bkiam", "testdata", "realiam", name))
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	tree, _ := body["debug"].(map[string]any)
	return tree
}

// shape renders an entry and its sub entries as their context keys and step names, one line per
// entry, indented by depth: what a reader of the tree finds where. "env" (the evaluation's time
// environment) is left out: the sandbox evaluates no time conditions.
func shape(e map[string]any, depth int) string {
	var keys []string
	for k := range entryContext(e) {
		if k != "env" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := strings.Repeat("  ", depth) + strings.Join(keys, ",") + " / " + strings.Join(stepNames(e), ",") + "\n"
	for _, sub := range entryList(e) {
		out += shape(sub, depth+1)
	}
	return out
}

// The sandbox's entries have the keys and steps of the real backend's in the same situations.
func TestDebugShapeAsRecorded(t *testing.T) {
	f := newAccessFixture(t)
	if r := send(t, f.s, gw, "batch_instance", `{"system":"bk_cmdb","operate":"grant","subject":{"type":"user","id":"alice"},`+
		`"actions":[{"id":"create_biz"}],"resources":[]}`); r.code() != 0 {
		t.Fatal(r.raw)
	}
	for _, tc := range []struct {
		name, recorded string
		entry          int    // the recorded root's entry
		path, body     string // the sandbox's call in the same situation
	}{
		{"a user's rows", "query_debug_user_carol.json", 0, queryPath, queryBody("user", "alice", "view_host")},
		{"a user without rows", "query_debug_user_carol.json", 1, queryPath, queryBody("user", "alice", "view_biz")},
		{"an action related to no type", "query_debug_user_alice.json", 1, queryPath, queryBody("user", "alice", "create_biz")},
		{"a group's rows", "query_debug_group_1.json", 0, queryPath, queryBody("group", f.groups["dept"], "view_host")},
		{"a user IAM does not know", "query_debug_unknown_user.json", 0, queryPath, queryBody("user", "ghost", "view_host")},
		{"a group that does not exist", "query_debug_unknown_group.json", 0, queryPath, queryBody("group", "999999", "view_host")},
		{"auth_by_actions, a row that allows", "auth_debug_carol_path.json", 0, byActions,
			`{` + subj("user", "alice") + `,"actions":` + actionsJSON("view_host") + `,"resources":[` + res("host", "10") + `]}`},
		{"auth_by_actions, a row that does not", "auth_debug_carol_nopath.json", 0, byActions,
			`{` + subj("user", "alice") + `,"actions":` + actionsJSON("view_host") + `,"resources":[` + res("host", "11") + `]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := shape(entryList(recordedTree(t, tc.recorded))[tc.entry], 0)
			_, tree := debugPost(t, f.s, tc.path, "", tc.body)
			if got := shape(entryList(tree)[0], 0); got != want {
				t.Errorf("entry:\n%s\nthe real backend's:\n%s", got, want)
			}
		})
	}
}
