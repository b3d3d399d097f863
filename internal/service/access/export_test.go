package access

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The tests beside the data sources (package access_test) reach these
// through the names below; the provider itself needs none of them.

// Permission is what bkiam_effective_permissions shows of one action.
type Permission struct {
	Expression             string
	Any, None, Conditional bool
	Instances, Paths       map[string][]string
}

// ReadPermission reads one action's expression as the data source does,
// every type's system being system.
func ReadPermission(raw, system string) (Permission, error) {
	p, err := readPermission([]byte(raw), func(string) string { return system })
	return Permission{Expression: p.expression, Any: p.any, None: p.none, Conditional: p.conditional, Instances: p.instances, Paths: p.paths}, err
}

// RenewedByEntryType is the object type of one renewed_by entry.
var RenewedByEntryType = renewedByAttribute.NestedObject.Type()

// RenewedByName is the name of the renewed_by entry that renews a lapse
// (kind "" and an action, or a member's type and id) for bkiam_expiring
// of system and user or group, "" when none does, as its read decides.
func RenewedByName(ctx context.Context, entries types.Map, system, user string, group int64, kind, id string) (string, diag.Diagnostics) {
	var diags diag.Diagnostics
	renewers := renewersOf(ctx, entries, &diags)
	return renewing(renewers, system, user, group, lapse{kind: kind, id: id}), diags
}
