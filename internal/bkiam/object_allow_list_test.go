package bkiam

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestObjectAllowEntryOf: an ownership 403 names the row of the 2026 object allow-list that lets
// the app past it (the app and object its message names, the API of the call); the sandbox
// playing that release takes such a row. The default model's groups are 1 to 3: the groups made
// here are 4, which the app has a row for, and 5.
func TestObjectAllowEntryOf(t *testing.T) {
	m := sandbox.DefaultModel()
	m.SaaS = "2026"
	m.Apps[0].ManagementObjects = []sandbox.ManagementObject{{ObjectType: "group", ObjectID: 4, API: "v2_group_member_add"}}
	sb := sandboxtest.Start(t, sandbox.WithModel(m))
	c := sandboxClient(t, sb.URL)
	ctx := context.Background()
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", GradeManagerSpec{Name: "team", Members: []string{},
		AuthorizationScopes: []AuthorizationScope{{System: "bk_cmdb", Actions: []Action{{ID: "create_biz"}}, Resources: []PathResource{}}},
		SubjectScopes:       []SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := c.CreateGroups(ctx, "bk_cmdb", fmt.Sprint(gm), []GroupSpec{{Name: "dev"}, {Name: "qa"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.ForgetCreator(gm); err != nil { // as made in the web UI
		t.Fatal(err)
	}
	members := []MemberRef{{Type: "user", ID: "bob"}}
	err = c.AddMembers(ctx, "bk_cmdb", ids[1], members, PermanentExpiry)
	entry, ok := ObjectAllowEntryOf(err)
	want := ObjectAllowEntry{AppCode: sandboxtest.AppCode, ObjectType: "group", ObjectID: ids[1], API: "v2_group_member_add"}
	if !ok || entry != want {
		t.Fatalf("ObjectAllowEntryOf(%v) = %+v, %v; want %+v", err, entry, ok, want)
	}
	if _, err := c.GradeManager(ctx, "bk_cmdb", gm); err == nil {
		t.Fatal("a web-UI grade manager answered")
	} else if entry, ok := ObjectAllowEntryOf(err); !ok || entry.ObjectType != "role" || entry.ObjectID != gm || entry.API != "v2_grade_manager_detail" {
		t.Errorf("the grade manager's refusal: %+v %v (%v)", entry, ok, err)
	}
	if _, ok := ObjectAllowEntryOf(errors.New("bkiam: forbidden")); ok {
		t.Error("an error that is no ownership 403 named an entry")
	}
	// Such a row lets the call through.
	if ids[0] != 4 {
		t.Fatalf("the groups made are %v, not 4 and 5", ids)
	}
	if err := c.AddMembers(ctx, "bk_cmdb", ids[0], members, PermanentExpiry); err != nil {
		t.Errorf("with the row: %v", err)
	}
}
