package bkiam

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzDebugTree: whatever the debug tree holds, its reader answers rows it found whole or an
// error — never a panic, never a row without its id and holder, never rows of an unknown subject.
func FuzzDebugTree(f *testing.F) {
	for _, file := range []string{"query_debug_user_carol.json", "query_debug_user_alice.json", "query_debug_unknown_user.json",
		"query_debug_carol_expired.json", "auth_debug_carol_path.json"} {
		var body struct {
			Debug json.RawMessage `json:"debug"`
		}
		if err := json.Unmarshal([]byte(realAnswer(f, file)), &body); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(body.Debug))
	}
	f.Add([]byte(`{"sub_debugs":[{"context":{"action":{"ID":"host_edit"},"subject":{"Type":"user","ID":"carol","Attribute":{"Attribute":{"pk":6}}}},` +
		`"sub_debugs":[{"context":{"effectPolicies":[{"PK":1,"SubjectPK":6,"ExpiredAt":1}]},"sub_debugs":[{"context":{"effectPolicies":[{"PK":1,"SubjectPK":6,"ExpiredAt":1}]}}]}]}]}`))
	f.Add([]byte(`{"sub_debugs":[{"context":{"action":{"ID":"biz_view"},"subject":{"Type":"user","ID":"carol","Attribute":{"Attribute":{}}}},"sub_debugs":null}]}`))
	f.Add([]byte(`{"sub_debugs":[null]}`))
	f.Add([]byte(`[]`))
	actions := []string{"host_edit", "biz_view"}
	f.Fuzz(func(t *testing.T, raw []byte) {
		tree, err := readDebugTree(raw, Subject{Type: "user", ID: "carol"}, actions)
		if err != nil {
			return
		}
		if !tree.known && (tree.pk != 0 || len(tree.rows) > 0) {
			t.Fatalf("an unknown subject with key %d and rows %v", tree.pk, tree.rows)
		}
		if tree.known && tree.pk <= 0 {
			t.Fatalf("a known subject with key %d", tree.pk)
		}
		for action, rows := range tree.rows {
			if !slices.Contains(actions, action) || len(rows) == 0 {
				t.Fatalf("rows %v for action %q", rows, action)
			}
			for _, r := range rows {
				if r.ID <= 0 || r.SubjectPK <= 0 {
					t.Fatalf("row %+v of %s", r, action)
				}
			}
		}
	})
}
