package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// generationSandbox starts a sandbox on the given gateway generation, its app allowed admin (the
// admin allow-list) and granted grants (gateway resources).
func generationSandbox(t *testing.T, gateway string, admin, grants []string) (*sandboxtest.Sandbox, *Client) {
	t.Helper()
	m := sandbox.DefaultModel()
	m.Gateway = gateway
	m.Apps[0].Admin, m.Apps[0].GatewayGrants = admin, grants
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = sandbox.LoadModel(raw); err != nil {
		t.Fatal(err)
	}
	sb := sandboxtest.Start(t, sandbox.WithModel(m))
	return sb, sandboxClient(t, sb.URL)
}

// userGroupsFixture makes three groups of bk_cmdb's system manager: bob in the first two directly
// (the second for a while), department 2 (alice's) in the third. It returns their ids.
func userGroupsFixture(t *testing.T, c *Client) []int64 {
	t.Helper()
	ctx := context.Background()
	ids, err := c.CreateGroups(ctx, "bk_cmdb", SystemManager, []GroupSpec{{Name: "ga", Description: ""}, {Name: "gb", Description: ""}, {Name: "gc", Description: ""}})
	if err != nil {
		t.Fatal(err)
	}
	for i, add := range []struct {
		member MemberRef
		at     int64
	}{{MemberRef{Type: "user", ID: "bob"}, PermanentExpiry}, {MemberRef{Type: "user", ID: "bob"}, 4000000000}, {MemberRef{Type: "department", ID: "2"}, PermanentExpiry}} {
		if err := c.AddMembers(ctx, "bk_cmdb", ids[i], []MemberRef{add.member}, add.at); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// TestAdminSubjectGroupsSandbox reads a user's direct memberships through the admin API, a page
// at a time, and each refusal names what to ask for: the gateway resource on a gateway that lacks
// it or has not granted it, the admin allow-list entry when IAM refuses.
func TestAdminSubjectGroupsSandbox(t *testing.T) {
	ctx := context.Background()
	sb, c := generationSandbox(t, "2026", []string{AdminSubjectJoinedGroupList}, []string{GatewayAdminSubjectGroups})
	ids := userGroupsFixture(t, c)
	defer func(n int) { adminSubjectGroupsPageSize = n }(adminSubjectGroupsPageSize)
	adminSubjectGroupsPageSize = 1
	got, err := c.AdminSubjectGroups(ctx, "user", "bob")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (AdminSubjectGroup{ids[1], "gb", 4000000000}) || got[1] != (AdminSubjectGroup{ids[0], "ga", PermanentExpiry}) {
		t.Errorf("bob's groups: %+v", got)
	}
	if n := sb.Stats().Requests["admin:subject_groups"]; n != 2 {
		t.Errorf("two groups a page at a time in %d calls, want 2", n)
	}
	if got, err := c.AdminSubjectGroups(ctx, "department", "2"); err != nil || len(got) != 1 || got[0].ID != ids[2] {
		t.Errorf("department 2's groups: %+v, %v", got, err)
	}
	if _, err := c.AdminSubjectGroups(ctx, "user", "ghost"); !errors.Is(err, ErrUnknownSubject) {
		t.Errorf("an unknown user: %v, want ErrUnknownSubject", err)
	}
	if _, err := c.UserGroupList(ctx, "bob", true); !errors.Is(err, ErrRouteRefused) || !strings.Contains(err.Error(), "resource open_user_groups") {
		t.Errorf("users/{id}/groups without the grant: %v", err)
	}

	for _, tc := range []struct {
		name, gateway string
		admin, grants []string
		want          string
	}{
		{"older gateway", "", []string{"*"}, nil, "has no resource admin_list_subject_groups"},
		{"2026 without the grant", "2026", []string{"*"}, nil, "grant app bkiam-sandbox the bk-iam gateway's resource admin_list_subject_groups"},
		{"2026 without the allow-list entry", "2026", nil, []string{"*"}, "add subject_joined_group_list for app bkiam-sandbox to the admin API allow-list"},
	} {
		_, c := generationSandbox(t, tc.gateway, tc.admin, tc.grants)
		_, err := c.AdminSubjectGroups(ctx, "user", "bob")
		var e *Error
		if !errors.Is(err, ErrRouteRefused) || !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrRouteRefused saying %q", tc.name, err, tc.want)
		}
	}
}

// TestUserGroupListSandbox: the backend's users/{id}/groups with inherit lists the groups of the
// user's departments too; without it, the direct ones alone.
func TestUserGroupListSandbox(t *testing.T) {
	ctx := context.Background()
	_, c := generationSandbox(t, "", nil, nil)
	ids := userGroupsFixture(t, c)
	if err := c.AddMembers(ctx, "bk_cmdb", ids[0], []MemberRef{{Type: "user", ID: "alice"}}, PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	all, err := c.UserGroupList(ctx, "alice", true)
	if err != nil || len(all) != 2 || all[0] != (UserGroup{ids[0], "ga"}) || all[1] != (UserGroup{ids[2], "gc"}) {
		t.Errorf("alice's groups: %+v, %v", all, err)
	}
	direct, err := c.UserGroupList(ctx, "alice", false)
	if err != nil || len(direct) != 1 || direct[0].ID != ids[0] {
		t.Errorf("alice's direct groups: %+v, %v", direct, err)
	}
	if _, err := c.UserGroupList(ctx, "ghost", false); !errors.Is(err, ErrUnknownSubject) {
		t.Errorf("an unknown user: %v", err)
	}
}
