package provider

import (
	"context"
	"sort"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
)

// desiredGrant converts a model (plan or state) into the planner's terms.
// It fails on unknown values, which only plan-time callers can meet.
func desiredGrant(ctx context.Context, m instanceGrantModel) (grantplan.Grant, diag.Diagnostics) {
	var diags diag.Diagnostics
	var g grantplan.Grant
	if m.Actions.IsUnknown() || m.Resources.IsUnknown() {
		diags.AddError("Unknown grant", "The grant is not known yet.")
		return g, diags
	}
	diags.Append(m.Actions.ElementsAs(ctx, &g.Actions, false)...)
	sort.Strings(g.Actions)

	var entries []resourceEntryModel
	diags.Append(m.Resources.ElementsAs(ctx, &entries, false)...)
	for _, e := range entries {
		r := grantplan.Resource{System: e.System.ValueString(), Type: e.Type.ValueString(), Instances: map[string]string{}}
		if e.Instances.IsUnknown() {
			diags.AddError("Unknown instances", "The instances are not known yet.")
			return g, diags
		}
		diags.Append(e.Instances.ElementsAs(ctx, &r.Instances, false)...)
		g.Resources = append(g.Resources, r)
	}

	var s subjectModel
	if !m.Subject.IsNull() && !m.Subject.IsUnknown() {
		diags.Append(m.Subject.As(ctx, &s, basetypes.ObjectAsOptions{})...)
	}
	g.ExpiresAt = expiresUnix(m.ExpiresAt, s.Type.ValueString(), &diags)
	return g, diags
}

// expiresUnix is the expired_at to send. Unset is sent as IAM's permanent
// value, never omitted: a user policy granted without one expires after a
// year. Group policies never expire, whatever is sent.
func expiresUnix(v timetypes.RFC3339, subjectType string, diags *diag.Diagnostics) int64 {
	if subjectType == subjectGroup || v.IsNull() || v.IsUnknown() {
		return bkiam.PermanentExpiry
	}
	t, d := v.ValueRFC3339Time()
	diags.Append(d...)
	return t.Unix()
}

// setGrant writes a view of what is held into a model: its actions,
// entries and expiry. An expiry equal to next's keeps the configuration's
// spelling, so that it shows no change.
func setGrant(ctx context.Context, m *instanceGrantModel, view grantplan.Grant, next *grantplan.Grant, diags *diag.Diagnostics) {
	actions, d := types.SetValueFrom(ctx, types.StringType, view.Actions)
	diags.Append(d...)
	m.Actions = actions

	entries := make([]attr.Value, 0, len(view.Resources))
	for _, r := range view.Resources {
		instances, d := types.MapValueFrom(ctx, types.StringType, r.Instances)
		diags.Append(d...)
		entry, d := types.ObjectValue(entryAttrTypes, map[string]attr.Value{
			"system": types.StringValue(r.System), "type": types.StringValue(r.Type), "instances": instances,
		})
		diags.Append(d...)
		entries = append(entries, entry)
	}
	list, d := types.ListValue(entryType, entries)
	diags.Append(d...)
	m.Resources = list

	switch {
	case next != nil && view.ExpiresAt == next.ExpiresAt:
		// keep the configured value
	case view.ExpiresAt == bkiam.PermanentExpiry:
		m.ExpiresAt = timetypes.NewRFC3339Null()
	default:
		m.ExpiresAt = timetypes.NewRFC3339TimeValue(time.Unix(view.ExpiresAt, 0).UTC())
	}
}
