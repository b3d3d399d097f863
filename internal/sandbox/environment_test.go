package sandbox_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// window is a row of delete_host on host id within hms from..to of Asia/Shanghai, as IAM's web UI
// writes a daily time window.
func window(id string, from, to int) string {
	return fmt.Sprintf(`{"op":"AND","content":[{"field":"host.id","op":"eq","value":%q},`+
		`{"field":"_bk_iam_env_.tz","op":"eq","value":"Asia/Shanghai"},`+
		`{"field":"_bk_iam_env_.hms","op":"gte","value":%d},{"field":"_bk_iam_env_.hms","op":"lte","value":%d}]}`, id, from, to)
}

// A time window is the backend's to evaluate with its clock: the checks allow within it only, the
// queries answer a row within it without the window and leave one outside it out, the list keeps
// the row as written; moving the clock moves the answers.
func TestTimeWindow(t *testing.T) {
	clock := &testClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} // 08:00 in Asia/Shanghai
	s := newServer(t, sandbox.WithNow(clock.now))
	addExpr(t, s, `{"system":"bk_cmdb","subject":{"type":"user","id":"alice"},"action":"delete_host","expression":`+window("1", 70000, 90000)+`}`)
	addExpr(t, s, `{"system":"bk_cmdb","subject":{"type":"user","id":"bob"},"action":"delete_host","expression":`+window("2", 90000, 180000)+`}`)

	auth := func(user, id string) bool {
		t.Helper()
		r := accessPost(t, s, authPath, authBody(user, "delete_host", res("host", id)), "")
		if r.status != 200 || r.code() != 0 {
			t.Fatalf("auth: HTTP %d %s", r.status, r.raw)
		}
		return r.body["data"].(map[string]any)["allowed"] == true
	}
	query := func(user string) string {
		t.Helper()
		r := accessPost(t, s, queryPath, queryBody("user", user, "delete_host"), "")
		if r.status != 200 || r.code() != 0 {
			t.Fatalf("query_by_actions: HTTP %d %s", r.status, r.raw)
		}
		c, _ := json.Marshal(r.body["data"].([]any)[0].(map[string]any)["condition"])
		return string(c)
	}
	check := func(at string, aliceIn bool) {
		t.Helper()
		in, out := "alice", "bob"
		inID, outID := "1", "2"
		if !aliceIn {
			in, out, inID, outID = out, in, outID, inID
		}
		if !auth(in, inID) || auth(out, outID) {
			t.Errorf("%s: auth allows %s %t (within its window) and %s %t (outside)", at, in, auth(in, inID), out, auth(out, outID))
		}
		if got, want := query(in), `{"field":"host.id","op":"eq","value":"`+inID+`"}`; got != want {
			t.Errorf("%s: the query answers %s %s, want %s (the window decided, left out)", at, in, got, want)
		}
		if got := query(out); got != "{}" {
			t.Errorf("%s: the query answers %s %s outside its window, want {}", at, out, got)
		}
	}
	check("08:00 in Asia/Shanghai", true)
	clock.t = clock.t.Add(2 * time.Hour)
	check("10:00 in Asia/Shanghai", false)

	// The list and the read by id keep the window as written, whatever the clock.
	rows := listRows(t, s, "bk_cmdb", "delete_host", "").Data.Results
	if len(rows) != 2 {
		t.Fatalf("the list: %d rows, want 2", len(rows))
	}
	for _, row := range rows {
		got, _ := json.Marshal(row.Expr)
		if !json.Valid(got) || !containsField(row.Expr, "_bk_iam_env_.hms") {
			t.Errorf("the list's row of %v lost its window: %s", row.Subject["id"], got)
		}
	}
}

// containsField reports whether an expression has a leaf on field.
func containsField(e any, field string) bool {
	m, _ := e.(map[string]any)
	if m["field"] == field {
		return true
	}
	c, _ := m["content"].([]any)
	for _, sub := range c {
		if containsField(sub, field) {
			return true
		}
	}
	return false
}

// What the backend cannot evaluate is refused when the row is added, naming the field.
func TestTimeWindowRefused(t *testing.T) {
	s := newServer(t)
	host := `{"field":"host.id","op":"eq","value":"1"},`
	for _, tc := range []struct{ name, cond, err string }{
		{"a weekday", `{"op":"AND","content":[` + host + `{"field":"_bk_iam_env_.tz","op":"eq","value":"Asia/Shanghai"},{"field":"_bk_iam_env_.weekday","op":"eq","value":1}]}`,
			"expression policy: expression.content[2].field: the backend builds _bk_iam_env_.tz and _bk_iam_env_.hms only"},
		{"a time of day without its zone", `{"op":"AND","content":[` + host + `{"field":"_bk_iam_env_.hms","op":"gte","value":1}]}`,
			"expression policy: expression: a time of day (_bk_iam_env_.hms) needs its time zone"},
		{"two zones", `{"op":"AND","content":[` + host + `{"field":"_bk_iam_env_.tz","op":"eq","value":"Asia/Shanghai"},{"field":"_bk_iam_env_.tz","op":"eq","value":"UTC"}]}`,
			"expression policy: expression: a row's environment has one time zone"},
		{"an unknown zone", `{"op":"AND","content":[` + host + `{"field":"_bk_iam_env_.tz","op":"eq","value":"Mars/Olympus"}]}`,
			"expression policy: expression.content[1].value: \"Mars/Olympus\" is not a time zone"},
		{"a time of day as a string", `{"op":"AND","content":[` + host + `{"field":"_bk_iam_env_.tz","op":"eq","value":"UTC"},{"field":"_bk_iam_env_.hms","op":"gte","value":"09:00"}]}`,
			"expression policy: expression.content[2].value: _bk_iam_env_.hms compares numbers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := control(t, s, "POST", "/_sandbox/expression_policies", exprPolicy(tc.cond))
			if msg, _ := r.body["error"].(string); r.status != 400 || len(msg) < len(tc.err) || msg[:len(tc.err)] != tc.err {
				t.Fatalf("HTTP %d %s, want 400 starting %q", r.status, r.raw, tc.err)
			}
		})
	}
}
