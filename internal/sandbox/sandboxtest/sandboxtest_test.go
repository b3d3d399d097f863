package sandboxtest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

func TestStart(t *testing.T) {
	sb := sandboxtest.Start(t)
	body := `{"system":"bk_job","type":"job","creator":"bob","instances":[{"id":"j1","name":"job"}]}`
	req, _ := http.NewRequest(http.MethodPost, sb.URL+"/api/v1/open/authorization/batch_resource_creator_action/", strings.NewReader(body))
	req.Header.Set("X-Bkapi-Authorization", sandboxtest.AuthHeader())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if got := sb.Policies(sandbox.PolicyFilter{SubjectID: "bob"}); len(got.Policies) != 4 {
		t.Fatalf("policies %+v", got)
	}
	if err := sb.SetFaults(sandbox.Faults{RateLimit: &sandbox.RateFault{Count: 1}}); err != nil {
		t.Fatal(err)
	}
	if st := sb.Stats(); st.Total != 1 || st.Requests["batch_resource_creator_action"] != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// HeldPaths merges a subject's rows of an action; a row with an attribute condition holds no paths.
func TestHeldPaths(t *testing.T) {
	sb := sandboxtest.Start(t)
	if err := sb.AddTemplatePolicy("bk_cmdb", sandbox.TemplatePolicy{TemplateID: 7, User: "alice", Action: "view_host",
		Paths: []string{"/bk_cmdb,host,2/"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.AddExpressionPolicy("bk_cmdb", sandbox.ExpressionPolicy{Subject: sandbox.Subject{Type: "user", ID: "alice"},
		Action: "view_host", Expression: []byte(`{"field":"host.os","op":"eq","value":"linux"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.AddExpressionPolicy("bk_cmdb", sandbox.ExpressionPolicy{Subject: sandbox.Subject{Type: "user", ID: "alice"},
		Action: "edit_host", Expression: []byte(`{"field":"host.os","op":"eq","value":"linux"}`)}); err != nil {
		t.Fatal(err)
	}
	got := sandboxtest.HeldPaths(sb, "bk_cmdb", "user", "alice")
	if len(got) != 1 || strings.Join(got["view_host"], ",") != "/bk_cmdb,host,2/" {
		t.Fatalf("held paths %v, want view_host's template path alone", got)
	}
}
