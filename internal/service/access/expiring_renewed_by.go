package access

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// bkiam_expiring's renewed_by: the rolling expiries of the configuration,
// passed in as values. A lapse that one of them renews in its renewal
// window is named with it, and not counted in lapsing.
//
// The values are the rolling resources themselves (a bkiam_instance_grant,
// a bkiam_group_members): Terraform converts each to the entry's object
// type below and drops the attributes the entry does not declare (cty's
// object conversion takes a subset; absent optional attributes are null),
// so `renewed_by = { hosts = bkiam_instance_grant.alice_hosts }` passes
// what a match needs and nothing else. Nothing is kept in the provider
// process between calls: the answer rests on the configuration's values,
// which Terraform gives the data source in every walk (the plan's planned
// values, the apply's final ones, state in a refresh-only plan), whichever
// provider process or alias reads it.

// followsExpiresIn is a bkiam_group_members member's value when it follows
// the rolling expiry (the resource's own constant, which the services do
// not share).
const followsExpiresIn = "expires_in"

var renewedByAttribute = schema.MapNestedAttribute{
	Optional: true,
	MarkdownDescription: "The rolling expiries of this configuration that renew what lapses, by a name of your choosing: " +
		"each a `bkiam_instance_grant` or a `bkiam_group_members` as it is, e.g. `{ hosts = bkiam_instance_grant.alice_hosts }`, " +
		"or a resource's `for_each` map whole (Terraform passes the attributes below and drops the rest). A lapse one of " +
		"them renews carries its name in `renewed_by` and is not counted in `lapsing`: a grant of the user's action with " +
		"`expires_in` and `renew_before`, or a group's member valued `\"expires_in\"` under `renew_before`. Entries for " +
		"other users, actions or groups renew nothing here, so one map can serve every `bkiam_expiring`.",
	NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
		// Optional, though every entry needs it (renewersOf): Terraform 1.5
		// and OpenTofu validate the configuration with the resources'
		// objects unknown, and the framework then finds a required
		// attribute of the entries missing.
		"system": schema.StringAttribute{Optional: true, MarkdownDescription: "The system of the grant's actions, or of the group."},
		"subject": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "A grant's subject.",
			Attributes: map[string]schema.Attribute{
				"type": schema.StringAttribute{Optional: true, MarkdownDescription: "`user` (a group's grants never expire)."},
				"id":   schema.StringAttribute{Optional: true, MarkdownDescription: "The username."},
			},
		},
		"actions":     schema.SetAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "A grant's actions."},
		"group_id":    schema.StringAttribute{Optional: true, MarkdownDescription: "A group's numeric id, for its members."},
		"users":       schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "A group's users: those valued `\"expires_in\"` follow the rolling expiry."},
		"departments": schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "A group's departments: those valued `\"expires_in\"` follow the rolling expiry."},
		"expires_in": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "The rolling expiry's period; without it the entry renews nothing.",
			Validators:          []validator.String{durationValidator{}},
		},
		"renew_before": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "How long before its expiry a plan renews it; without it the entry renews nothing.",
			Validators:          []validator.String{durationValidator{}},
		},
	}},
}

// renewedByModel is one entry of renewed_by.
type renewedByModel struct {
	System      types.String   `tfsdk:"system"`
	Subject     *subjectModel  `tfsdk:"subject"`
	Actions     []types.String `tfsdk:"actions"`
	GroupID     types.String   `tfsdk:"group_id"`
	Users       types.Map      `tfsdk:"users"`
	Departments types.Map      `tfsdk:"departments"`
	ExpiresIn   types.String   `tfsdk:"expires_in"`
	RenewBefore types.String   `tfsdk:"renew_before"`
}

type subjectModel struct {
	Type types.String `tfsdk:"type"`
	ID   types.String `tfsdk:"id"`
}

// renewer is an entry of renewed_by that renews something: a rolling
// expiry with renew_before.
type renewer struct {
	name, system string
	// A grant: its user and actions.
	user    string
	actions map[string]bool
	// A group's members: the group and the followers, by "type/id".
	group     int64
	followers map[string]bool
}

// renewersOf reads renewed_by: the entries that renew, in the order of
// their names. One without expires_in or renew_before renews nothing,
// whatever it is; a rolling one that is neither a grant nor a group's
// members is an error.
func renewersOf(ctx context.Context, v types.Map, diags *diag.Diagnostics) []renewer {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	entries := map[string]renewedByModel{}
	if diags.Append(v.ElementsAs(ctx, &entries, false)...); diags.HasError() {
		return nil
	}
	var out []renewer
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		e := entries[name]
		if e.ExpiresIn.IsNull() || e.RenewBefore.IsNull() {
			continue // never renewed: whatever it is (a fixed expiry, a group permission), it renews nothing
		}
		grant, members := e.Subject != nil || e.Actions != nil, !e.GroupID.IsNull()
		if grant == members || e.System.IsNull() {
			diags.AddAttributeError(path.Root("renewed_by").AtMapKey(name), "Not a rolling grant nor a group's members",
				fmt.Sprintf("renewed_by[%q] must be a bkiam_instance_grant (system, subject and actions) or a bkiam_group_members (system, group_id), "+
					"e.g. renewed_by = { %s = bkiam_instance_grant.%s }.", name, name, name))
			continue
		}
		r := renewer{name: name, system: e.System.ValueString()}
		if grant {
			if e.Subject == nil || e.Subject.Type.ValueString() != bkiam.SubjectUser {
				continue // only a user's grant expires
			}
			r.user, r.actions = e.Subject.ID.ValueString(), map[string]bool{}
			for _, a := range e.Actions {
				r.actions[a.ValueString()] = true
			}
		} else {
			group, err := strconv.ParseInt(e.GroupID.ValueString(), 10, 64)
			if err != nil {
				continue // no group of the data source's
			}
			r.group, r.followers = group, map[string]bool{}
			for kind, m := range map[string]types.Map{"user": e.Users, "department": e.Departments} {
				values := map[string]string{}
				if diags.Append(m.ElementsAs(ctx, &values, false)...); diags.HasError() {
					return nil
				}
				for id, value := range values {
					if value == followsExpiresIn {
						r.followers[kind+"/"+id] = true
					}
				}
			}
		}
		out = append(out, r)
	}
	return out
}

// renewing names the first renewer (by name) that renews a lapse of the
// data source's system: for a grant (kind ""), the user's action id; for a
// member, kind and id in group. "" when none does.
func renewing(renewers []renewer, system, user string, group int64, l lapse) string {
	for _, r := range renewers {
		if r.system != system {
			continue
		}
		if l.kind == "" && r.actions != nil && r.user == user && r.actions[l.id] ||
			l.kind != "" && r.followers != nil && r.group == group && r.followers[l.kind+"/"+l.id] {
			return r.name
		}
	}
	return ""
}
