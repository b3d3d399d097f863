package bkiam

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestMemberGroupDetailsSandbox reads a user's memberships in the app's groups: only the groups
// the user is in, with each expiry, in ceil(groups/100) calls; a group that is not the app's (here
// one deleted) refuses the whole batch with 403.
func TestMemberGroupDetailsSandbox(t *testing.T) {
	sb := sandboxtest.Start(t)
	c := sandboxClient(t, sb.URL)
	ctx := context.Background()
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", GradeManagerSpec{Name: "people", Members: []string{"alice"},
		AuthorizationScopes: []AuthorizationScope{{System: "bk_cmdb", Actions: []Action{{ID: "create_biz"}}, Resources: []PathResource{}}},
		SubjectScopes:       []SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for n := 0; n < 150; n += 10 {
		specs := make([]GroupSpec, 10)
		for i := range specs {
			specs[i] = GroupSpec{Name: fmt.Sprintf("g%03d", n+i), Description: "d"}
		}
		made, err := c.CreateGroups(ctx, "bk_cmdb", idString(gm), specs)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, made...)
	}
	const later = 4102444800
	for i, at := range map[int]int64{0: later, 120: 2000000000} {
		if err := c.AddMembers(ctx, "bk_cmdb", ids[i], []MemberRef{{Type: "user", ID: "bob"}}, at); err != nil {
			t.Fatal(err)
		}
	}
	before := sb.Stats().Requests["member_groups:details"]
	got, err := c.MemberGroupDetails(ctx, "bk_cmdb", "user", "bob", ids)
	if err != nil {
		t.Fatal(err)
	}
	if calls := sb.Stats().Requests["member_groups:details"] - before; calls != 2 {
		t.Errorf("150 groups read in %d calls, want 2", calls)
	}
	if len(got) != 2 || got[0].ID != ids[0] || got[0].ExpiredAt != later || got[1].ID != ids[120] || got[1].ExpiredAt != 2000000000 || got[1].Name != "g120" {
		t.Fatalf("bob's memberships: %+v", got)
	}
	if err := c.DeleteGroup(ctx, "bk_cmdb", ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.MemberGroupDetails(ctx, "bk_cmdb", "user", "bob", ids[:2]); !errors.Is(err, ErrForbidden) {
		t.Fatalf("a deleted group in the batch: %v", err)
	}
}
