package listing

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestAddressType(t *testing.T) {
	for address, want := range map[string]string{
		"bkiam_group.dev":                                 "bkiam_group",
		`bkiam_group_members.all["a.b"]`:                  "bkiam_group_members",
		`module.team["x.y"].bkiam_instance_grant.g[0]`:    "bkiam_instance_grant",
		`module.a.module.b.bkiam_group_permission.p["]"]`: "bkiam_group_permission",
		"nonsense": "",
	} {
		if got := addressType(address); got != want {
			t.Errorf("addressType(%q) = %q, want %q", address, got, want)
		}
	}
}

// TestCovers: what a managed identity leaves out of a list. A grant and a
// group permission of the same subject cover each other's results whose
// actions they hold; anything else covers only its own type's equal
// identity.
func TestCovers(t *testing.T) {
	grant := func(subjectType, subjectID string, actions ...any) map[string]any {
		return map[string]any{"system": "bk_cmdb", "subject_type": subjectType, "subject_id": subjectID, "actions": actions,
			"resource_types": []any{"bk_cmdb/host"}}
	}
	permission := func(group string, actions ...any) map[string]any {
		return map[string]any{"system": "bk_cmdb", "group_id": group, "actions": actions}
	}
	group := func(id string) map[string]any {
		return map[string]any{"system": "bk_cmdb", "grade_manager_id": "1", "id": id}
	}
	cases := []struct {
		name                string
		listed, managedType string
		result, managed     map[string]any
		want                bool
	}{
		{"same grant", "bkiam_instance_grant", "bkiam_instance_grant", grant("user", "alice", "view_host"), grant("user", "alice", "view_host"), true},
		{"a grant of more actions", "bkiam_instance_grant", "bkiam_instance_grant", grant("user", "alice", "view_host"), grant("user", "alice", "edit_host", "view_host"), true},
		{"another action", "bkiam_instance_grant", "bkiam_instance_grant", grant("user", "alice", "view_host"), grant("user", "alice", "edit_host"), false},
		{"another user", "bkiam_instance_grant", "bkiam_instance_grant", grant("user", "alice", "view_host"), grant("user", "bob", "view_host"), false},
		{"a group's grant covers its permission", "bkiam_group_permission", "bkiam_instance_grant", permission("4", "view_host"), grant("group", "4", "view_host"), true},
		{"a permission covers the group's grant", "bkiam_instance_grant", "bkiam_group_permission", grant("group", "4", "view_host"), permission("4", "edit_host", "view_host"), true},
		{"another group", "bkiam_group_permission", "bkiam_instance_grant", permission("4", "view_host"), grant("group", "5", "view_host"), false},
		{"a user is no group", "bkiam_group_permission", "bkiam_instance_grant", permission("4", "view_host"), grant("user", "4", "view_host"), false},
		{"same group", "bkiam_group", "bkiam_group", group("4"), group("4"), true},
		{"another group id", "bkiam_group", "bkiam_group", group("4"), group("5"), false},
		{"same identity, another type", "bkiam_group", "other_group", group("4"), group("4"), false},
		{"members are not the group", "bkiam_group_members", "bkiam_group", map[string]any{"system": "bk_cmdb", "group_id": "4"}, group("4"), false},
	}
	for _, c := range cases {
		if got := covers(c.listed, c.result, c.managedType, c.managed); got != c.want {
			t.Errorf("%s: covers = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestReadManaged: managed takes the object terraform state identities
// -json prints; anything else fails the list, saying what it takes.
func TestReadManaged(t *testing.T) {
	ctx := context.Background()
	identity := types.ObjectValueMust(map[string]attr.Type{"system": types.StringType, "id": types.StringType},
		map[string]attr.Value{"system": types.StringValue("bk_cmdb"), "id": types.StringValue("4")})
	state := types.ObjectValueMust(map[string]attr.Type{"bkiam_group.dev": identity.Type(ctx), `module.m["x"].bkiam_grade_manager.gm`: identity.Type(ctx)},
		map[string]attr.Value{"bkiam_group.dev": identity, `module.m["x"].bkiam_grade_manager.gm`: identity})
	var stream list.ListResultsStream
	m, ok := ReadManaged(ctx, "bkiam_group", types.DynamicValue(state), &stream)
	id := map[string]any{"system": "bk_cmdb", "id": "4"}
	if !ok || len(m.exact) != 2 || m.managedBy(id) != "bkiam_group.dev" {
		t.Fatalf("ReadManaged = %+v, %v: want both resources, bkiam_group.dev managing group 4", m, ok)
	}
	if gm := (&Managed{typeName: "bkiam_grade_manager", exact: m.exact}); gm.managedBy(id) != `module.m["x"].bkiam_grade_manager.gm` {
		t.Fatalf("the grade manager in a module is not read by its type: %+v", m.exact)
	}
	if m, ok := ReadManaged(ctx, "bkiam_group", types.DynamicNull(), &stream); !ok || m != nil {
		t.Fatalf("a null managed: %+v, %v", m, ok)
	}
	if _, ok := ReadManaged(ctx, "bkiam_group", types.DynamicValue(types.StringValue("managed.json")), &stream); ok {
		t.Fatal("a string was taken as managed")
	}
	for r := range stream.Results {
		if !r.Diagnostics.HasError() || !strings.Contains(r.Diagnostics[0].Detail(), "terraform state identities -json") {
			t.Errorf("the error does not say what managed takes: %v", r.Diagnostics)
		}
	}
}

// TestCreatorGrantCovers: a bkiam_creator_grant of biz for alice manages
// her grants of biz's creator actions (view_biz, edit_biz: one policy per
// subject and action), once the model resolves them; not another action,
// user or system, and nothing before they are resolved.
func TestCreatorGrantCovers(t *testing.T) {
	creator := map[string]any{"system": "bk_cmdb", "type": "biz", "creator": "alice"}
	grant := func(system, user, action string) map[string]any {
		return map[string]any{"system": system, "subject_type": "user", "subject_id": user, "actions": []any{action},
			"resource_types": []any{system + "/biz"}}
	}
	actionsOf := func(system, typ string) []string {
		if system == "bk_cmdb" && typ == "biz" {
			return []string{"view_biz", "edit_biz"}
		}
		return nil
	}
	for _, c := range []struct {
		name     string
		result   map[string]any
		resolved bool
		want     bool
	}{
		{"a creator action", grant("bk_cmdb", "alice", "view_biz"), true, true},
		{"the other creator action", grant("bk_cmdb", "alice", "edit_biz"), true, true},
		{"not a creator action", grant("bk_cmdb", "alice", "view_host"), true, false},
		{"another user", grant("bk_cmdb", "bob", "view_biz"), true, false},
		{"another system", grant("bk_job", "alice", "view_biz"), true, false},
		{"not resolved", grant("bk_cmdb", "alice", "view_biz"), false, false},
	} {
		m := newManaged("bkiam_instance_grant")
		m.add("bkiam_creator_grant.alice", "bkiam_creator_grant", creator)
		if c.resolved {
			m = m.WithCreatorActions(actionsOf)
		}
		if got := m.managedBy(c.result) != ""; got != c.want {
			t.Errorf("%s: managed = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMembershipOwners: a group's members owned whole, and a person's
// membership in a group, as the two membership lists look them up.
func TestMembershipOwners(t *testing.T) {
	m := newManaged("bkiam_user_groups")
	m.add("bkiam_group_members.dev", "bkiam_group_members", map[string]any{"system": "bk_cmdb", "group_id": "4"})
	m.add("bkiam_user_groups.bob", "bkiam_user_groups", map[string]any{"system": "bk_cmdb", "member_type": "user", "member_id": "bob",
		"groups": []any{"5", "6"}})
	for _, c := range []struct {
		got, want string
	}{
		{m.GroupOwner("bk_cmdb", "4"), "bkiam_group_members.dev"},
		{m.GroupOwner("bk_cmdb", "5"), ""},
		{m.GroupOwner("bk_job", "4"), ""},
		{m.MembershipOwner("bk_cmdb", "6", "user", "bob"), "bkiam_user_groups.bob"},
		{m.MembershipOwner("bk_cmdb", "6", "user", "alice"), ""},
		{m.MembershipOwner("bk_cmdb", "6", "department", "bob"), ""},
		{m.MembershipOwner("bk_cmdb", "5", "", ""), "bkiam_user_groups.bob"},
		{m.MembershipOwner("bk_cmdb", "4", "", ""), ""},
		{(*Managed)(nil).GroupOwner("bk_cmdb", "4"), ""},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
