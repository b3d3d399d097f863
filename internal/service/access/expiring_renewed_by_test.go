package access_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/service/access"
)

// entry is a renewed_by entry with the given attributes, the others null,
// as Terraform converts a resource's object to it.
func entry(t *testing.T, attrs map[string]attr.Value) attr.Value {
	t.Helper()
	typ, ok := access.RenewedByEntryType.(basetypes.ObjectType)
	if !ok {
		t.Fatalf("renewed_by's entry is a %T", access.RenewedByEntryType)
	}
	all := map[string]attr.Value{}
	for name, at := range typ.AttrTypes {
		if v, ok := attrs[name]; ok {
			all[name] = v
			continue
		}
		switch at := at.(type) {
		case basetypes.ObjectType:
			all[name] = types.ObjectNull(at.AttrTypes)
		case basetypes.SetType:
			all[name] = types.SetNull(at.ElemType)
		case basetypes.MapType:
			all[name] = types.MapNull(at.ElemType)
		default:
			all[name] = types.StringNull()
		}
	}
	v, diags := types.ObjectValue(typ.AttrTypes, all)
	if diags.HasError() {
		t.Fatal(diags)
	}
	return v
}

func str(s string) attr.Value { return types.StringValue(s) }

func stringsOf(t *testing.T, set bool, values ...string) attr.Value {
	t.Helper()
	var elems []attr.Value
	for _, v := range values {
		elems = append(elems, types.StringValue(v))
	}
	if set {
		return types.SetValueMust(types.StringType, elems)
	}
	m := map[string]attr.Value{}
	for i := 0; i+1 < len(values); i += 2 {
		m[values[i]] = types.StringValue(values[i+1])
	}
	return types.MapValueMust(types.StringType, m)
}

// TestRenewedBy: which entry of renewed_by renews a lapse. A rolling grant
// (expires_in and renew_before) renews its user's actions in its system;
// a group's members entry renews the members valued "expires_in" of its
// group; an entry without both durations (a fixed expiry, a group
// permission, a rolling expiry never renewed) renews nothing and is no
// error, whatever it is; of several, the first by name.
func TestRenewedBy(t *testing.T) {
	ctx := context.Background()
	alice := func() attr.Value {
		return types.ObjectValueMust(map[string]attr.Type{"type": types.StringType, "id": types.StringType},
			map[string]attr.Value{"type": str("user"), "id": str("alice")})
	}
	rolling := map[string]attr.Value{"expires_in": str("90d"), "renew_before": str("7d")}
	with := func(base map[string]attr.Value, more map[string]attr.Value) map[string]attr.Value {
		out := map[string]attr.Value{}
		for _, m := range []map[string]attr.Value{base, more} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	entries := map[string]attr.Value{
		"z_hosts": entry(t, with(rolling, map[string]attr.Value{"system": str("bk_cmdb"), "subject": alice(), "actions": stringsOf(t, true, "view_host", "edit_host")})),
		"a_hosts": entry(t, with(rolling, map[string]attr.Value{"system": str("bk_cmdb"), "subject": alice(), "actions": stringsOf(t, true, "edit_host")})),
		"sops":    entry(t, with(rolling, map[string]attr.Value{"system": str("bk_sops"), "subject": alice(), "actions": stringsOf(t, true, "delete_host")})),
		"fixed":   entry(t, map[string]attr.Value{"system": str("bk_cmdb"), "subject": alice(), "actions": stringsOf(t, true, "delete_host")}),
		"no_renew": entry(t, map[string]attr.Value{"system": str("bk_cmdb"), "subject": alice(), "actions": stringsOf(t, true, "create_host"),
			"expires_in": str("90d")}),
		"group_permission": entry(t, map[string]attr.Value{"system": str("bk_cmdb"), "group_id": str("7"), "actions": stringsOf(t, true, "view_host")}),
		"oncall": entry(t, with(rolling, map[string]attr.Value{"system": str("bk_cmdb"), "group_id": str("7"),
			"users": stringsOf(t, false, "alice", "expires_in", "bob", "2030-01-01T00:00:00Z"), "departments": stringsOf(t, false, "2", "expires_in")})),
	}
	m := types.MapValueMust(access.RenewedByEntryType, entries)
	for _, tc := range []struct {
		system, user string
		group        int64
		kind, id     string
		want         string
	}{
		{"bk_cmdb", "alice", 0, "", "view_host", "z_hosts"},
		{"bk_cmdb", "alice", 0, "", "edit_host", "a_hosts"}, // the first by name
		{"bk_cmdb", "bob", 0, "", "view_host", ""},          // another user
		{"bk_sops", "alice", 0, "", "view_host", ""},        // another system
		{"bk_cmdb", "alice", 0, "", "delete_host", ""},      // a fixed expiry; the rolling one is of bk_sops
		{"bk_sops", "alice", 0, "", "delete_host", "sops"},
		{"bk_cmdb", "alice", 0, "", "create_host", ""}, // expires_in without renew_before
		{"bk_cmdb", "", 7, "user", "alice", "oncall"},
		{"bk_cmdb", "", 7, "department", "2", "oncall"},
		{"bk_cmdb", "", 7, "user", "bob", ""},   // a fixed date
		{"bk_cmdb", "", 8, "user", "alice", ""}, // another group
		{"bk_cmdb", "", 7, "", "view_host", ""}, // a grant is not a member
	} {
		got, diags := access.RenewedByName(ctx, m, tc.system, tc.user, tc.group, tc.kind, tc.id)
		if diags.HasError() || got != tc.want {
			t.Errorf("%s %s %d %s %s: renewed by %q (%v), want %q", tc.system, tc.user, tc.group, tc.kind, tc.id, got, diags, tc.want)
		}
	}

	// A rolling entry that is neither kind fails the read.
	odd := types.MapValueMust(access.RenewedByEntryType, map[string]attr.Value{
		"odd": entry(t, with(rolling, map[string]attr.Value{"system": str("bk_cmdb")})),
	})
	if _, diags := access.RenewedByName(ctx, odd, "bk_cmdb", "alice", 0, "", "view_host"); !diags.HasError() ||
		!strings.Contains(diags.Errors()[0].Detail(), `renewed_by["odd"] must be a bkiam_instance_grant`) {
		t.Errorf("an entry that is neither a grant nor members: %v", diags)
	}
}
