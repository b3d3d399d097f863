package sandbox_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// freeze posts to the control route that freezes (or thaws) a user.
func freeze(t *testing.T, s http.Handler, id string, frozen bool) {
	t.Helper()
	body := `{"type":"user","id":"` + id + `","frozen":` + map[bool]string{true: "true", false: "false"}[frozen] + `}`
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/_sandbox/frozen_subjects", strings.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("freeze %s: %d %s", id, rec.Code, rec.Body)
	}
}

// A frozen user (IAM's subject blacklist, the web UI's freeze): every access check and policy
// query about them answers 403 1901403, matched without regard to case, after the system check;
// the policies stay, the list still shows them, and a thaw answers as before.
func TestFrozenSubject(t *testing.T) {
	s := crossAccessFixture(t)
	biz1 := jobRes("bk_cmdb", "biz", "1")
	frozen := func(name, path, body string) accessCase {
		return accessCase{name: name, path: path, body: body, status: 403, code: 1901403, msg: "no permission:subject(type=user,id=alice) has been frozen"}
	}
	query := `{` + subj("user", "alice") + `,"action":{"id":"access_business"},"resources":[]}`
	byActions := `{` + subj("user", "alice") + `,"actions":` + actionsJSON("view") + `,"resources":[]}`
	freeze(t, s, "ALICE", true)
	runAccessCases(t, s, []accessCase{
		frozen("auth", jobAuth, authBody("alice", "access_business", biz1)),
		frozen("auth_by_actions", jobByActions, `{`+subj("user", "alice")+`,"actions":`+actionsJSON("access_business")+`,"resources":[`+biz1+`]}`),
		frozen("query", jobQuery, query),
		frozen("query_by_actions", jobQueryBy, byActions),
		{name: "another system first: the system check comes before the blacklist", path: "/api/v2/policy/systems/bk_nosuch/query/", body: query,
			status: 404, code: 1901404, msg: "…"},
		{name: "bob is not frozen", path: jobQueryBy, body: `{` + subj("user", "bob") + `,"actions":` + actionsJSON("view") + `,"resources":[]}`,
			status: 200, msg: "ok", data: `[{"action":{"id":"view"},"condition":{"field":"job.id","op":"eq","value":"j1"}}]`},
	})
	if got := policies(t, s, sandbox.PolicyFilter{System: "bk_job", SubjectID: "alice"}); !strings.Contains(got, "access_business") {
		t.Errorf("a freeze keeps the policies; alice's:\n%s", got)
	}
	freeze(t, s, "alice", false)
	runAccessCases(t, s, []accessCase{{name: "thawed", path: jobQuery, body: query, status: 200, msg: "ok",
		data: `{"field":"biz.id","op":"eq","value":"1"}`}})
}
