package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// What a real IAM answered (testdata/realiam), read by GetPolicy and QuerySubjectRows.

func realAnswer(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "realiam", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGetPolicyRecorded(t *testing.T) {
	hostEdit := `{"content":[{"field":"host.id","op":"in","value":["h6","h7"]},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}],"op":"OR"}`
	for _, tc := range []struct {
		name, file string
		id         int64
		want       Policy
		is         []error // the error's sentinels; none for success
	}{
		{"a row", "policy_get_12.json", 12, Policy{ID: 12, Subject: Subject{Type: "user", ID: "carol"}, SubjectName: "Carol",
			Action: "host_edit", Expression: json.RawMessage(hostEdit), ExpiredAt: 4102444800}, nil},
		{"an expired row", "policy_get_expired.json", 16, Policy{ID: 16, Subject: Subject{Type: "user", ID: "carol"}, SubjectName: "Carol",
			Action: "biz_view", Expression: json.RawMessage(`{"field":"biz.id","op":"eq","value":"5"}`), ExpiredAt: 1795904098}, nil},
		{"an id that does not exist", "policy_get_missing.json", 99, Policy{}, []error{ErrPolicyNotFound, ErrNotFound}},
		{"a system the app is not a client of", "policy_get_other_system.json", 12, Policy{}, []error{ErrForbidden}},
		{"an answer for another id", "policy_get_12.json", 13, Policy{}, []error{ErrUnexpectedResponse}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFakeServer(t, reply(http.StatusOK, realAnswer(t, tc.file)))
			c := mustClient(t, gatewayConfig(fs.URL))
			got, err := c.GetPolicy(context.Background(), "bk_tfdemo", tc.id)
			for _, target := range tc.is {
				if !errors.Is(err, target) {
					t.Errorf("error %v, want it to be %v", err, target)
				}
			}
			if len(tc.is) > 0 {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Expression = compactJSON(t, got.Expression)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("policy\n %+v\nwant\n %+v", got, tc.want)
			}
			if r := fs.requests()[0]; r.Method != http.MethodGet || r.Path != fmt.Sprintf("/api/bk-iam/prod/api/v1/systems/bk_tfdemo/policies/%d", tc.id) {
				t.Errorf("sent %s %s", r.Method, r.Path)
			}
		})
	}
	esb := mustClient(t, esbConfig("http://127.0.0.1:1"))
	if _, err := esb.GetPolicy(context.Background(), "bk_tfdemo", 12); !errors.Is(err, ErrReadNeedsGateway) {
		t.Errorf("through ESB: %v", err)
	}
	gw := mustClient(t, gatewayConfig("http://127.0.0.1:1"))
	if _, err := gw.GetPolicy(context.Background(), "bk_tfdemo", 0); !errors.Is(err, ErrValidation) {
		t.Errorf("id 0: %v", err)
	}
}

func compactJSON(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return b
}

func TestQuerySubjectRowsRecorded(t *testing.T) {
	const forever = 4102444800
	for _, tc := range []struct {
		name, file string
		subject    Subject
		actions    []string
		want       SubjectRows // Conditions: only which actions have one
	}{
		{"a user's own rows, one of them without a resource type", "query_debug_user_alice.json", Subject{"user", "alice"},
			[]string{"host_view", "biz_create", "host_edit"},
			SubjectRows{Known: true, PK: 1, Rows: map[string][]DebugRow{
				"host_view":  {{ID: 15, SubjectPK: 1, ExpiredAt: 1796076474}, {ID: 1, SubjectPK: 1, ExpiredAt: forever}},
				"biz_create": {{ID: 3, SubjectPK: 1, ExpiredAt: forever}},
				"host_edit":  {{ID: 2, SubjectPK: 1, ExpiredAt: forever}},
			}}},
		{"a user with a row and an action without", "query_debug_user_carol.json", Subject{"user", "carol"}, []string{"host_edit", "biz_view"},
			SubjectRows{Known: true, PK: 6, Rows: map[string][]DebugRow{"host_edit": {{ID: 12, SubjectPK: 6, ExpiredAt: forever}}}}},
		{"an expired row is not read", "query_debug_carol_expired.json", Subject{"user", "carol"}, []string{"biz_view"},
			SubjectRows{Known: true, PK: 6, Rows: map[string][]DebugRow{}}},
		{"a group", "query_debug_group_1.json", Subject{"group", "1"}, []string{"host_view", "biz_create"},
			SubjectRows{Known: true, PK: 3, Rows: map[string][]DebugRow{
				"host_view": {{ID: 4, SubjectPK: 3, ExpiredAt: forever}, {ID: 5, SubjectPK: 3, ExpiredAt: forever}}}}},
		{"a user IAM does not know", "query_debug_unknown_user.json", Subject{"user", "ghost"}, []string{"host_edit"},
			SubjectRows{Rows: map[string][]DebugRow{}}},
		{"a group that does not exist", "query_debug_unknown_group.json", Subject{"group", "999999"}, []string{"host_edit"},
			SubjectRows{Rows: map[string][]DebugRow{}}},
		{"a manager", "query_debug_admin.json", Subject{"user", "admin"}, []string{"host_edit"},
			SubjectRows{AsManager: true, Rows: map[string][]DebugRow{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFakeServer(t, reply(http.StatusOK, realAnswer(t, tc.file)))
			c := mustClient(t, gatewayConfig(fs.URL))
			got, err := c.QuerySubjectRows(context.Background(), "bk_tfdemo", tc.subject, tc.actions, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Conditions) != len(tc.actions) {
				t.Errorf("conditions for %d actions, want %d: %v", len(got.Conditions), len(tc.actions), got.Conditions)
			}
			got.Conditions = nil
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("rows\n %+v\nwant\n %+v", *got, tc.want)
			}
			r := fs.requests()[0]
			var sent []string
			for _, a := range r.Body["actions"].([]any) {
				sent = append(sent, a.(map[string]any)["id"].(string))
			}
			if r.Path != "/api/bk-iam/prod/api/v2/policy/systems/bk_tfdemo/query_by_actions/" || !reflect.DeepEqual(sent, tc.actions) {
				t.Errorf("sent %s with actions %v", r.Path, sent)
			}
		})
	}
}

// The debug tree of auth_by_actions has the same entries, read the same way.
func TestReadDebugTreeOfAuth(t *testing.T) {
	for _, file := range []string{"auth_debug_carol_path.json", "auth_debug_carol_nopath.json"} {
		var body struct {
			Debug json.RawMessage `json:"debug"`
		}
		if err := json.Unmarshal([]byte(realAnswer(t, file)), &body); err != nil {
			t.Fatal(err)
		}
		tree, err := readDebugTree(body.Debug, Subject{"user", "carol"}, []string{"host_edit"})
		want := map[string][]DebugRow{"host_edit": {{ID: 12, SubjectPK: 6, ExpiredAt: 4102444800}}}
		if err != nil || !tree.known || tree.pk != 6 || !reflect.DeepEqual(tree.rows, want) {
			t.Errorf("%s: %+v, %v", file, tree, err)
		}
	}
}

// A tree that lacks what it should hold is refused, naming what is missing.
func TestQuerySubjectRowsMalformed(t *testing.T) {
	carol := Subject{"user", "carol"}
	both := []string{"host_edit", "biz_view"}
	// edit changes the recorded answer of carol's query (query_debug_user_carol.json).
	edit := func(f func(body map[string]any)) string {
		var body map[string]any
		if err := json.Unmarshal([]byte(realAnswer(t, "query_debug_user_carol.json")), &body); err != nil {
			t.Fatal(err)
		}
		f(body)
		b, _ := json.Marshal(body)
		return string(b)
	}
	entry := func(body map[string]any, i int) map[string]any {
		return body["debug"].(map[string]any)["sub_debugs"].([]any)[i].(map[string]any)
	}
	ctx := func(e map[string]any) map[string]any { return e["context"].(map[string]any) }
	sub := func(e map[string]any, i int) map[string]any { return e["sub_debugs"].([]any)[i].(map[string]any) }
	innermostRow := func(body map[string]any) map[string]any {
		return ctx(sub(sub(entry(body, 0), 0), 0))["effectPolicies"].([]any)[0].(map[string]any)
	}
	for _, tc := range []struct {
		name, body string
		actions    []string
		is         error
		says       string
	}{
		{"no debug tree", edit(func(b map[string]any) { delete(b, "debug") }), both, ErrNoDebug, "debug"},
		{"a null debug tree", edit(func(b map[string]any) { b["debug"] = nil }), both, ErrNoDebug, "debug"},
		{"a debug tree that is a list", edit(func(b map[string]any) { b["debug"] = []any{} }), both, ErrUnexpectedResponse, "not a debug entry"},
		{"an entry without its action", edit(func(b map[string]any) { delete(ctx(entry(b, 0)), "action") }), both, ErrUnexpectedResponse, "context.action"},
		{"an action's ID missing", edit(func(b map[string]any) { ctx(entry(b, 0))["action"] = map[string]any{} }), both, ErrUnexpectedResponse, "context.action has no ID"},
		{"an action not in the tree", realAnswer(t, "query_debug_user_carol.json"), []string{"host_edit", "biz_view", "host_view"},
			ErrUnexpectedResponse, "host_view"},
		{"an entry for an action not asked for", realAnswer(t, "query_debug_user_carol.json"), []string{"host_edit"}, ErrUnexpectedResponse, "biz_view"},
		{"another subject's tree", realAnswer(t, "query_debug_user_alice.json"), []string{"host_view", "biz_create", "host_edit"},
			ErrUnexpectedResponse, "not the user carol"},
		{"a subject without its Attribute", edit(func(b map[string]any) { ctx(entry(b, 0))["subject"].(map[string]any)["Attribute"] = map[string]any{} }),
			both, ErrUnexpectedResponse, "Attribute.Attribute"},
		{"a pk that is not an integer", edit(func(b map[string]any) {
			ctx(entry(b, 0))["subject"].(map[string]any)["Attribute"].(map[string]any)["Attribute"].(map[string]any)["pk"] = 6.5
		}), both, ErrUnexpectedResponse, "pk"},
		{"entries disagreeing on the subject's key", edit(func(b map[string]any) {
			ctx(entry(b, 1))["subject"].(map[string]any)["Attribute"].(map[string]any)["Attribute"].(map[string]any)["pk"] = 7
		}), both, ErrUnexpectedResponse, "the entry before says 6"},
		{"a known subject without the database's rows", edit(func(b map[string]any) {
			delete(ctx(sub(sub(entry(b, 0), 0), 0)), "effectPolicies")
		}), both, ErrUnexpectedResponse, "no effectPolicies"},
		{"a row without its PK", edit(func(b map[string]any) { delete(innermostRow(b), "PK") }), both, ErrUnexpectedResponse, "no PK"},
		{"a row whose PK is a string", edit(func(b map[string]any) { innermostRow(b)["PK"] = "12" }), both, ErrUnexpectedResponse, "PK: not a number"},
		{"a row without its expiry", edit(func(b map[string]any) { delete(innermostRow(b), "ExpiredAt") }), both, ErrUnexpectedResponse, "no ExpiredAt"},
		{"rows with and without SubjectPK", edit(func(b map[string]any) {
			rows := ctx(sub(sub(entry(b, 0), 0), 0))["effectPolicies"].([]any)
			ctx(sub(sub(entry(b, 0), 0), 0))["effectPolicies"] = append(rows, map[string]any{"PK": 13})
		}), both, ErrUnexpectedResponse, "some rows"},
		{"an entry that is not an object", edit(func(b map[string]any) { b["debug"].(map[string]any)["sub_debugs"] = []any{"x", 1} }), both,
			ErrUnexpectedResponse, "not a debug entry"},
		{"no condition for an action", edit(func(b map[string]any) { b["data"] = b["data"].([]any)[:1] }), both, ErrUnexpectedResponse, "biz_view"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFakeServer(t, reply(http.StatusOK, tc.body))
			c := mustClient(t, gatewayConfig(fs.URL))
			got, err := c.QuerySubjectRows(context.Background(), "bk_tfdemo", carol, tc.actions, nil)
			if !errors.Is(err, tc.is) || !strings.Contains(fmt.Sprint(err), tc.says) {
				t.Fatalf("%+v, %v; want an error that is %v and says %q", got, err, tc.is, tc.says)
			}
		})
	}
}
