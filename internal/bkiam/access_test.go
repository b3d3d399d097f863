package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// accessModel is the default model with 12 actions on hosts in
// bk_cmdb (a check of them all takes two calls) and frank, a manager of
// bk_cmdb.
func accessModel(t *testing.T) *sandbox.Model {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "sandbox", "default_model.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	cmdb := m["systems"].([]any)[0].(map[string]any)
	for i := range 12 {
		cmdb["actions"] = append(cmdb["actions"].([]any), map[string]any{"id": fmt.Sprintf("host_op%02d", i), "related_types": []string{"host"}})
	}
	m["users"] = append(m["users"].([]any), "frank")
	m["system_managers"] = map[string]any{"bk_cmdb": []string{"frank"}}
	b, _ := json.Marshal(m)
	model, err := sandbox.LoadModel(b)
	if err != nil {
		t.Fatal(err)
	}
	return model
}

// TestAuthByActions: a check of 12 actions is sent as two calls (10, 2)
// and answered by action; a manager is allowed as a manager; a user IAM
// does not know is false, which UserGroups tells apart as
// ErrUnknownSubject.
func TestAuthByActions(t *testing.T) {
	sb := sandboxtest.Start(t, sandbox.WithModel(accessModel(t)))
	c := sandboxClient(t, sb.URL)
	ctx := context.Background()
	alice := Subject{Type: "user", ID: "alice"}
	var actions []string
	for i := range 12 {
		actions = append(actions, fmt.Sprintf("host_op%02d", i))
	}
	grantHosts(t, c, alice, "host_op03", "1")
	grantHosts(t, c, alice, "host_op11", "1")
	host1 := []AuthResource{{System: "bk_cmdb", Type: "host", ID: "1"}}

	before := sb.Stats().Requests["policy_auth_by_actions"]
	got, err := c.AuthByActions(ctx, "bk_cmdb", alice, actions, host1)
	if err != nil {
		t.Fatal(err)
	}
	if n := sb.Stats().Requests["policy_auth_by_actions"] - before; n != 2 {
		t.Errorf("a check of 12 actions took %d calls, want 2", n)
	}
	var allowed []string
	for a, ok := range got.Allowed {
		if ok {
			allowed = append(allowed, a)
		}
	}
	slices.Sort(allowed)
	if len(got.Allowed) != 12 || !slices.Equal(allowed, []string{"host_op03", "host_op11"}) || got.AsManager {
		t.Errorf("alice's answer: %+v, want host_op03 and host_op11 of 12 allowed, not as a manager", got)
	}

	frank, err := c.AuthByActions(ctx, "bk_cmdb", Subject{Type: "user", ID: "frank"}, []string{"delete_host"}, host1)
	if err != nil || !frank.Allowed["delete_host"] || !frank.AsManager {
		t.Errorf("frank, a manager of bk_cmdb: %+v, %v; want allowed as a manager", frank, err)
	}

	zed, err := c.AuthByActions(ctx, "bk_cmdb", Subject{Type: "user", ID: "zed"}, []string{"view_host"}, host1)
	if err != nil || zed.Allowed["view_host"] {
		t.Errorf("an unknown user: %+v, %v; want false, no error", zed, err)
	}
	if _, err := c.UserGroups(ctx, "zed"); !errors.Is(err, ErrUnknownSubject) {
		t.Errorf("UserGroups of an unknown user: %v, want ErrUnknownSubject", err)
	}
	if groups, err := c.UserGroups(ctx, "alice"); err != nil || len(groups) != 0 {
		t.Errorf("UserGroups of alice: %v, %v; want none", groups, err)
	}

	// IAM's system error for resources that are not the action's types.
	_, err = c.AuthByActions(ctx, "bk_cmdb", alice, []string{"view_host"}, []AuthResource{{System: "bk_cmdb", Type: "biz", ID: "1"}})
	var e *Error
	if !errors.As(err, &e) || e.Code != 1901500 || !strings.Contains(err.Error(), "give one instance of each related type, in the order of the system's model") {
		t.Errorf("resources of another type: %v, want IAM's 1901500 with the fix", err)
	}
	_, err = c.AuthByActions(ctx, "bk_cmdb", alice, []string{"view_hots"}, host1)
	if !errors.As(err, &e) || e.Code != 1901400 || !strings.Contains(err.Error(), "check the action id against the system's actions") {
		t.Errorf("an unknown action: %v, want IAM's 1901400 with the fix", err)
	}

	// What the caller knows of the instance is sent as its attribute: a
	// grant of every host under biz 1 allows host 7 with its path, and
	// IAM answers false without it.
	if _, err := c.BatchPath(ctx, BatchPathRequest{System: "bk_cmdb", Operate: OperationGrant, ExpiredAt: PermanentExpiry, Subject: alice,
		Actions: []Action{{ID: "edit_host"}}, Resources: []PathResource{{System: "bk_cmdb", Type: "host",
			Paths: [][]PathNode{{{System: "bk_cmdb", Type: "biz", ID: "1", Name: "b1"}, {System: "bk_cmdb", Type: "host", ID: "*", Name: ""}}}}}}); err != nil {
		t.Fatal(err)
	}
	for _, c2 := range []struct {
		attribute map[string]any
		want      bool
	}{{nil, false}, {map[string]any{"_bk_iam_path_": []string{"/biz,1/"}}, true}, {map[string]any{"_bk_iam_path_": []string{"/biz,2/"}}, false}} {
		got, err := c.AuthByActions(ctx, "bk_cmdb", alice, []string{"edit_host"}, []AuthResource{{System: "bk_cmdb", Type: "host", ID: "7", Attribute: c2.attribute}})
		if err != nil || got.Allowed["edit_host"] != c2.want {
			t.Errorf("host 7 with attribute %v: %+v, %v; want %t", c2.attribute, got, err, c2.want)
		}
	}
}

// TestQueryByActions: the effective expression of each action, and a
// manager's "any".
func TestQueryByActions(t *testing.T) {
	sb := sandboxtest.Start(t, sandbox.WithModel(accessModel(t)))
	c := sandboxClient(t, sb.URL)
	ctx := context.Background()
	alice := Subject{Type: "user", ID: "alice"}
	grantHosts(t, c, alice, "view_host", "1", "2")
	got, asManager, err := c.QueryByActions(ctx, "bk_cmdb", alice, []string{"view_host", "edit_host"}, nil)
	if err != nil || asManager || len(got) != 2 {
		t.Fatalf("alice's query: %+v, %t, %v", got, asManager, err)
	}
	for _, ac := range got {
		want := map[string]string{"view_host": `"value":["1","2"]`, "edit_host": `{}`}[ac.Action]
		if !strings.Contains(string(ac.Condition), want) {
			t.Errorf("%s: condition %s, want it to hold %s", ac.Action, ac.Condition, want)
		}
	}
	got, asManager, err = c.QueryByActions(ctx, "bk_cmdb", Subject{Type: "user", ID: "frank"}, []string{"view_host"}, nil)
	if err != nil || !asManager || len(got) != 1 || !strings.Contains(string(got[0].Condition), `"op":"any"`) {
		t.Errorf("frank's query: %+v, %t, %v; want any, as a manager", got, asManager, err)
	}
}

// TestResourceMismatchAdvice: IAM's 1901500 "request resources not match action" asks for
// resources only where the caller gave them (the access checks); on the policy queries, which the
// provider sends without resources, it says the read was refused and that the configuration has
// nothing to give, naming the route the provider falls back to.
func TestResourceMismatchAdvice(t *testing.T) {
	const refusal = "system error[request_id=1]: [Handler:X] systemID=`bk_job` => [PDP:Y] ValidateActionResource systemID=`bk_job`, " +
		"actionID=`access_business` fail, request resources not match action => validateActionResource fail"
	c := mustClient(t, gatewayConfig("http://127.0.0.1:1"))
	for _, tc := range []struct {
		path      string
		want, not string
	}{
		{"/api/v2/policy/systems/bk_job/auth_by_actions/", "give one instance of each related type", "the provider sent no resources"},
		{"/api/v2/policy/systems/bk_job/query_by_actions/?debug=1&force=1", "which the provider asks alone through the single-action query",
			"give one instance"},
		{"/api/v2/policy/systems/bk_job/query/", "the configuration has nothing to give", "give one instance"},
	} {
		e := &Error{kind: kindCode, Code: 1901500, Message: refusal}
		c.explainAccessError(e, tc.path)
		if !strings.Contains(e.Message, tc.want) || strings.Contains(e.Message, tc.not) || !strings.HasPrefix(e.Message, refusal) {
			t.Errorf("%s: %q, want IAM's message with %q and without %q", tc.path, e.Message, tc.want, tc.not)
		}
	}

	// A backend that refuses the single-action query too: the error is the query's, with its advice.
	fs := newFakeServer(t, reply(500, `{"code":1901500,"message":"`+refusal+`","data":{}}`))
	_, _, err := mustClient(t, gatewayConfig(fs.URL)).QueryByActions(context.Background(), "bk_job", Subject{Type: "user", ID: "alice"},
		[]string{"access_business"}, func(string) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "/query/") || !strings.Contains(err.Error(), "the configuration has nothing to give") {
		t.Errorf("a refused single-action query: %v, want its route and that the configuration has nothing to give", err)
	}
}
