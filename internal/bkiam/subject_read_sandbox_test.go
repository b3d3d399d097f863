package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestQuerySubjectRowsSandbox: the rows the backend reads for alice — her own, her department's
// group's custom and template rows, a row with an attribute condition — are the rows the policy
// list shows, by id; each reads back by GetPolicy as the subject whose key holds it.
func TestQuerySubjectRowsSandbox(t *testing.T) {
	sb := sandboxtest.Start(t, sandbox.WithModel(accessModel(t)))
	c := sandboxClient(t, sb.URL)
	ctx := context.Background()
	alice := Subject{Type: "user", ID: "alice"}
	grantHosts(t, c, alice, "view_host", "1")
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", GradeManagerSpec{Name: "ops", Members: []string{"alice"},
		AuthorizationScopes: []AuthorizationScope{{System: "bk_cmdb", Actions: []Action{{ID: "view_host"}},
			Resources: []PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]PathNode{{{System: "bk_cmdb", Type: "host", ID: "*"}}}}}}},
		SubjectScopes: []SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(gm), []GroupSpec{{Name: "dev"}})
	if err != nil {
		t.Fatal(err)
	}
	group := Subject{Type: "group", ID: fmt.Sprint(ids[0])}
	if err := c.AddMembers(ctx, "bk_cmdb", ids[0], []MemberRef{{Type: "department", ID: "2"}}, PermanentExpiry); err != nil {
		t.Fatal(err) // alice is in department 2
	}
	grantHosts(t, c, group, "view_host", "2")
	if err := sb.AddTemplatePolicy("bk_cmdb", sandbox.TemplatePolicy{TemplateID: 7, Group: group.ID, Action: "view_host",
		Paths: []string{"/bk_cmdb,host,3/"}}); err != nil {
		t.Fatal(err)
	}
	cond := `{"field":"host.os","op":"eq","value":"linux"}`
	exprID, err := sb.AddExpressionPolicy("bk_cmdb", sandbox.ExpressionPolicy{Subject: sandbox.Subject{Type: "user", ID: "alice"},
		Action: "delete_host", Expression: json.RawMessage(cond)})
	if err != nil {
		t.Fatal(err)
	}

	rows, err := c.QuerySubjectRows(ctx, "bk_cmdb", alice, []string{"view_host", "delete_host", "edit_host"}, nil)
	if err != nil || !rows.Known || rows.PK <= 0 || rows.AsManager {
		t.Fatalf("alice: %+v, %v", rows, err)
	}
	groupRows, err := c.QuerySubjectRows(ctx, "bk_cmdb", group, []string{"view_host"}, nil)
	if err != nil || !groupRows.Known || groupRows.PK == rows.PK {
		t.Fatalf("the group: %+v, %v; want known, its key not alice's (%d)", groupRows, err, rows.PK)
	}
	listed, err := c.ScanPolicies(ctx, PolicyKindABAC, "bk_cmdb", "view_host")
	if err != nil {
		t.Fatal(err)
	}
	var want, got []int64
	for _, p := range listed {
		want = append(want, p.ID)
	}
	for _, r := range rows.Rows["view_host"] {
		got = append(got, r.ID)
		p, err := c.GetPolicy(ctx, "bk_cmdb", r.ID)
		holder := map[int64]Subject{rows.PK: alice, groupRows.PK: group}[r.SubjectPK]
		if err != nil || p.Subject != holder || p.Action != "view_host" || p.ExpiredAt != r.ExpiredAt {
			t.Errorf("row %d (held by key %d): %+v, %v; want %v's", r.ID, r.SubjectPK, p, err, holder)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(got) != 3 || !slices.Equal(got, want) {
		t.Errorf("view_host rows %v, the list's %v; want the same three", got, want)
	}
	if d := rows.Rows["delete_host"]; len(d) != 1 || d[0].ID != exprID || d[0].SubjectPK != rows.PK {
		t.Errorf("delete_host rows %v, want the attribute-condition row %d", d, exprID)
	}
	if p, err := c.GetPolicy(ctx, "bk_cmdb", exprID); err != nil || string(p.Expression) != cond {
		t.Errorf("the attribute-condition row: %+v, %v", p, err)
	}
	if len(rows.Rows["edit_host"]) != 0 || string(rows.Conditions["edit_host"]) != "{}" ||
		!strings.Contains(string(rows.Conditions["view_host"]), `"in"`) {
		t.Errorf("conditions %s", rows.Conditions)
	}
	if _, err := c.GetPolicy(ctx, "bk_cmdb", 999999); !errors.Is(err, ErrPolicyNotFound) {
		t.Errorf("an id that does not exist: %v", err)
	}

	for _, s := range []Subject{{"user", "ghost"}, {"group", "999999"}, {"group", "abc"}} {
		got, err := c.QuerySubjectRows(ctx, "bk_cmdb", s, []string{"view_host"}, nil)
		if err != nil || got.Known || got.PK != 0 || len(got.Rows) != 0 || string(got.Conditions["view_host"]) != "{}" {
			t.Errorf("%v: %+v, %v; want unknown, holding nothing", s, got, err)
		}
	}
	frank, err := c.QuerySubjectRows(ctx, "bk_cmdb", Subject{"user", "frank"}, []string{"view_host"}, nil)
	if err != nil || !frank.AsManager || frank.Known {
		t.Errorf("frank, a manager: %+v, %v", frank, err)
	}
}
