package heldpolicy_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/heldpolicy"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// reads counts the sandbox's policy reads since the last call.
func reads(sb *sandboxtest.Sandbox, last map[string]int) map[string]int {
	out := map[string]int{}
	for _, k := range []string{"policy_query_by_actions", "policy_get", "policy_list"} {
		n := sb.Stats().Requests[k]
		out[k] = n - last[k]
		last[k] = n
	}
	return out
}

// TestClientSourceReadsOneSubject: against the sandbox, which answers as the real backend does, a
// user's policy is read by IAM's query (one call for its actions) and each of its own rows by id,
// whatever else the action's list holds; a row of an attribute condition, as the web UI grants, is
// the user's too; a manager, whom the query answers without reading a policy, and an action the
// user holds nothing of, are read from the list, which shows what expired within the last day.
func TestClientSourceReadsOneSubject(t *testing.T) {
	ctx := context.Background()
	sb := sandboxtest.Start(t)
	client, err := bkiam.New(bkiam.Config{APIGatewayURL: sb.URL, AppCode: sandboxtest.AppCode, AppSecret: sandboxtest.AppSecret})
	if err != nil {
		t.Fatal(err)
	}
	grant := func(user, action string, hosts []string, expiresAt int64) {
		t.Helper()
		req := bkiam.BatchInstanceRequest{System: "bk_cmdb", Operate: bkiam.OperationGrant, Subject: bkiam.Subject{Type: "user", ID: user},
			Actions: []bkiam.Action{{ID: action}}, ExpiredAt: expiresAt}
		var instances []bkiam.Instance
		for _, h := range hosts {
			instances = append(instances, bkiam.Instance{ID: h, Name: "host" + h})
		}
		req.Resources = []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host", Instances: instances}}
		if _, err := client.BatchInstance(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	grant("alice", "view_host", []string{"1", "2"}, bkiam.PermanentExpiry)
	grant("bob", "view_host", []string{"3"}, bkiam.PermanentExpiry)
	if _, err := sb.AddExpressionPolicy("bk_cmdb", sandbox.ExpressionPolicy{
		Subject: sandbox.Subject{Type: "user", ID: "alice"}, Action: "delete_host",
		Expression: json.RawMessage(`{"field":"host.os","op":"eq","value":"linux"}`),
	}); err != nil {
		t.Fatal(err)
	}
	expiring := time.Now().Add(2 * time.Second)
	grant("alice", "edit_host", []string{"7"}, expiring.Unix())
	time.Sleep(time.Until(expiring) + time.Second)

	src := heldpolicy.NewClientSource(client, bkiam.NewScanCache(client, time.Now), nil)
	last := map[string]int{}
	reads(sb, last)
	alice := bkiam.Subject{Type: "user", ID: "alice"}
	held, _, err := heldpolicy.NewReader(src).Read(ctx, "bk_cmdb", alice, []string{"view_host", "delete_host"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := held["view_host"].Live; p == nil || !p.Expr.HoldsInstance("host", "2") || p.Expr.HoldsInstance("host", "3") {
		t.Errorf("view_host: %+v, want hosts 1 and 2 and not bob's 3", p)
	}
	if alts, _ := held["delete_host"].Live.Expr.Alternatives(); len(alts) != 1 || alts[0].String() != "host.os eq linux" {
		t.Errorf("delete_host: %v, want the attribute condition", alts)
	}
	if got := reads(sb, last); got["policy_query_by_actions"] != 1 || got["policy_get"] != 2 || got["policy_list"] != 0 {
		t.Errorf("reads %v, want one query, two rows by id, no list", got)
	}

	held, _, err = heldpolicy.NewReader(src).Read(ctx, "bk_cmdb", alice, []string{"edit_host"}, nil)
	if h := held["edit_host"]; err != nil || h.Live != nil || h.Expired == nil || !h.Expired.Expr.HoldsInstance("host", "7") {
		t.Errorf("edit_host, expired: %+v, %v; want the expired row from the list", h, err)
	}
	if got := reads(sb, last); got["policy_query_by_actions"] != 1 || got["policy_list"] != 1 {
		t.Errorf("reads %v, want one query and one page of the list", got)
	}

	// A user IAM does not know holds nothing, and costs no list.
	held, _, err = heldpolicy.NewReader(src).Read(ctx, "bk_cmdb", bkiam.Subject{Type: "user", ID: "ghost"}, []string{"view_host"}, nil)
	if err != nil || held["view_host"].Live != nil || held["view_host"].Expired != nil {
		t.Errorf("ghost: %+v, %v", held, err)
	}
	if got := reads(sb, last); got["policy_query_by_actions"] != 1 || got["policy_list"] != 0 {
		t.Errorf("an unknown user: reads %v, want the query alone", got)
	}
	// admin is answered as a manager: the list says what it holds.
	if _, _, err := heldpolicy.NewReader(src).Read(ctx, "bk_cmdb", bkiam.Subject{Type: "user", ID: "admin"}, []string{"view_host"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := reads(sb, last); got["policy_query_by_actions"] != 1 || got["policy_list"] == 0 {
		t.Errorf("a manager: reads %v, want the query, then the list", got)
	}
	// The list read is kept: another subject's read of the action takes it.
	if _, _, err := heldpolicy.NewReader(src).Read(ctx, "bk_cmdb", bkiam.Subject{Type: "user", ID: "bob"}, []string{"view_host"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := reads(sb, last); got["policy_query_by_actions"]+got["policy_get"]+got["policy_list"] != 0 {
		t.Errorf("bob, after the list was read: reads %v, want none", got)
	}
}
