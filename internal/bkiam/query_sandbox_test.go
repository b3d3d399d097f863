package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// crossSystemModel is the default model with two actions of bk_job scoped to bk_cmdb's types, as
// the real bk_job registers them: access_business on bk_cmdb's biz, run_on_host on a job and a
// bk_cmdb host (a combined resource of two systems); and twelve more actions of bk_job's own.
func crossSystemModel(t *testing.T) *sandbox.Model {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "sandbox", "default_model.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, s := range m["systems"].([]any) {
		sys := s.(map[string]any)
		if sys["id"] != "bk_job" {
			continue
		}
		actions := append(sys["actions"].([]any),
			map[string]any{"id": "access_business", "related_types": []string{"bk_cmdb:biz"}},
			map[string]any{"id": "run_on_host", "related_types": []string{"job", "bk_cmdb:host"}})
		for i := range 12 {
			actions = append(actions, map[string]any{"id": fmt.Sprintf("job_op%02d", i), "related_types": []string{"job"}})
		}
		sys["actions"] = actions
	}
	b, _ := json.Marshal(m)
	model, err := sandbox.LoadModel(b)
	if err != nil {
		t.Fatal(err)
	}
	return model
}

// TestQueryCrossSystemActions: the batch query refuses an action related to another system's
// type when no resources are given (1901500), and every action of the call with it. The client
// asks such an action alone through the single-action query: told by the model (AloneIn), it
// never sends the batch that would fail; without the model it sends it, and asks the refused
// batch's actions again one by one. Either way every action is answered, and the debug rows of
// the action asked alone are read from the single query's tree.
func TestQueryCrossSystemActions(t *testing.T) {
	ctx := context.Background()
	alice := Subject{Type: "user", ID: "alice"}
	for _, tc := range []struct {
		name      string
		withModel bool
		// the calls of one QueryByActions of view, access_business and run_on_host: batches,
		// of which refused, and single queries
		batches, refused, alone int
	}{
		{"the model names the actions to ask alone", true, 1, 0, 2},
		{"without the model a refused batch is asked again action by action", false, 1, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.Start(t, sandbox.WithModel(crossSystemModel(t)))
			c := sandboxClient(t, sb.URL)
			if _, err := c.BatchInstance(ctx, BatchInstanceRequest{System: "bk_job", Operate: OperationGrant, ExpiredAt: PermanentExpiry,
				Subject: alice, Actions: []Action{{ID: "access_business"}},
				Resources: []InstanceResource{{System: "bk_cmdb", Type: "biz", Instances: []Instance{{ID: "1", Name: "biz1"}}}}}); err != nil {
				t.Fatalf("grant access_business on bk_cmdb's biz 1: %v", err)
			}
			var alone AskAlone
			if tc.withModel {
				m, err := c.SystemModel(ctx, "bk_job")
				if err != nil {
					t.Fatal(err)
				}
				alone = AloneIn(m)
			}
			before, errorsBefore := sandboxStats(t, sb.URL), sb.Stats().Errors
			actions := []string{"view", "access_business", "run_on_host"}
			got, asManager, err := c.QueryByActions(ctx, "bk_job", alice, actions, alone)
			if err != nil || asManager {
				t.Fatalf("QueryByActions: %v (as manager %t)", err, asManager)
			}
			want := []string{`{}`, `{"field":"biz.id","op":"eq","value":"1"}`, `{}`}
			for i, a := range actions {
				if got[i].Action != a || string(compactJSON(t, got[i].Condition)) != want[i] {
					t.Errorf("condition %d: %s %s, want %s %s", i, got[i].Action, got[i].Condition, a, want[i])
				}
			}
			after := sandboxStats(t, sb.URL)
			calls := func(route string) int { return after[route] - before[route] }
			if b, a := calls("policy_query_by_actions"), calls("policy_query"); b != tc.batches || a != tc.alone {
				t.Errorf("sent %d batch queries and %d single ones, want %d and %d", b, a, tc.batches, tc.alone)
			}
			if f := sb.Stats().Errors - errorsBefore; f != tc.refused {
				t.Errorf("%d queries refused, want %d", f, tc.refused)
			}

			rows, err := c.QuerySubjectRows(ctx, "bk_job", alice, actions, alone)
			if err != nil || !rows.Known {
				t.Fatalf("QuerySubjectRows: %+v, %v", rows, err)
			}
			if len(rows.Rows["access_business"]) != 1 || rows.Rows["access_business"][0].SubjectPK != rows.PK || len(rows.Rows) != 1 {
				t.Errorf("rows %+v, want alice's one row of access_business", rows.Rows)
			}
			p, err := c.GetPolicy(ctx, "bk_job", rows.Rows["access_business"][0].ID)
			if err != nil || p.Action != "access_business" || p.Subject != alice {
				t.Errorf("the row by id: %+v, %v", p, err)
			}
		})
	}
}

// TestQueryBatchesOfTen: the batch query asks at most MaxQueryActions actions a call, which keeps
// its debug output small; the answers come back in the order asked.
func TestQueryBatchesOfTen(t *testing.T) {
	sb := sandboxtest.Start(t, sandbox.WithModel(crossSystemModel(t)))
	c := sandboxClient(t, sb.URL)
	ctx := context.Background()
	var actions []string
	for i := range 12 {
		actions = append(actions, fmt.Sprintf("job_op%02d", i))
	}
	before := sandboxStats(t, sb.URL)
	rows, err := c.QuerySubjectRows(ctx, "bk_job", Subject{Type: "user", ID: "bob"}, actions, nil)
	if err != nil || !rows.Known || len(rows.Conditions) != 12 {
		t.Fatalf("QuerySubjectRows: %+v, %v", rows, err)
	}
	if n := sandboxStats(t, sb.URL)["policy_query_by_actions"] - before["policy_query_by_actions"]; n != 2 {
		t.Errorf("12 actions in %d calls, want 2 (10 + 2)", n)
	}
	got, _, err := c.QueryByActions(ctx, "bk_job", Subject{Type: "user", ID: "bob"}, actions, nil)
	var order []string
	for _, g := range got {
		order = append(order, g.Action)
	}
	if err != nil || !reflect.DeepEqual(order, actions) {
		t.Errorf("answered %v, %v; want the actions in order", order, err)
	}
}

// TestQueryUnreadableDebugTree: a tree whose keys a later backend renamed is ErrDebugUnreadable
// (callers fall back to the policy lists), never an answer guessed from it.
func TestQueryUnreadableDebugTree(t *testing.T) {
	renamed := strings.ReplaceAll(realAnswer(t, "query_debug_user_carol.json"), `"effectPolicies"`, `"effect_policies"`)
	fs := newFakeServer(t, reply(200, renamed))
	c := mustClient(t, gatewayConfig(fs.URL))
	_, err := c.QuerySubjectRows(context.Background(), "bk_tfdemo", Subject{"user", "carol"}, []string{"host_edit", "biz_view"}, nil)
	if !errors.Is(err, ErrDebugUnreadable) || !errors.Is(err, ErrUnexpectedResponse) {
		t.Errorf("a renamed key: %v, want ErrDebugUnreadable", err)
	}
}
