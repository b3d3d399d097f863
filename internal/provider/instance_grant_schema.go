package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// maxPolicyInstances is IAM's limit of instances per (subject, action,
// resource type) after merging; one resource entry over it can never be
// granted.
const maxPolicyInstances = 10000

const (
	subjectUser  = "user"
	subjectGroup = "group"
)

func instanceGrantSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Grants a subject (a user or a group) a set of actions on resource instances in one " +
			"BlueKing IAM system, through IAM's `batch_instance` API.\n\n" +
			"Create grants every action over every instance; destroy revokes them. A change sends only the " +
			"difference, in the fewest calls the server's limits allow (`grant_batch_size`, `revoke_batch_size`), " +
			"grants before revokes so that access both versions agree on is never interrupted.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`SYSTEM/SUBJECT_TYPE/SUBJECT_ID`, the form `terraform import` takes.",
			},
			"system": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ID of the IAM system the actions belong to, e.g. `bk_cmdb`. Changing it replaces the grant.",
			},
			"subject": schema.SingleNestedAttribute{
				Required: true,
				MarkdownDescription: "Who receives the permissions. Changing it replaces the grant (revoking from the " +
					"old subject, granting to the new one).",
				Attributes: map[string]schema.Attribute{
					"type": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "`user` or `group`.",
					},
					"id": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "The username, or the numeric ID of the group. IAM ignores grants to the user `admin`, who holds everything.",
					},
				},
			},
			"actions": schema.SetAttribute{
				Required:    true,
				ElementType: types.StringType,
				MarkdownDescription: "IDs of the actions to grant, e.g. `[\"view_host\", \"edit_host\"]`. All of them must " +
					"relate to the same resource types, given in `resources`. Adding an action grants it over every " +
					"instance; removing one revokes it from every instance.",
			},
			"resources": schema.ListNestedAttribute{
				Required: true,
				MarkdownDescription: "One entry per resource type the actions relate to, in the order the actions " +
					"declare them: one entry for most actions, several for a *combined resource* (an action on a " +
					"business and a host together), `[]` for actions related to no resource type. Each action is " +
					"granted on the combination of all entries.",
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"system": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "System of the resource type, usually the same as `system`.",
						},
						"type": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "ID of the resource type, e.g. `host`.",
						},
						"instances": schema.MapAttribute{
							Required:    true,
							ElementType: types.StringType,
							MarkdownDescription: fmt.Sprintf("The instances: a map of instance ID to display name, with at least "+
								"one and at most %d entries (IAM's limit per subject, action and type). IAM keeps the name an "+
								"instance was first granted with, so a change of name alone sends nothing. An empty map is "+
								"refused: to IAM an empty instance list means *every* instance.", maxPolicyInstances),
						},
					},
				},
			},
			"expires_at": schema.StringAttribute{
				Optional:   true,
				CustomType: timetypes.RFC3339Type{},
				MarkdownDescription: "When the grant expires, as an RFC 3339 time such as `2027-06-30T00:00:00Z`, in the future " +
					"and no later than `2100-01-01T00:00:00Z`. Unset means permanent: the provider then sends IAM's " +
					"permanent expiry explicitly, as a user grant without one would expire after 365 days. Users only; " +
					"group grants never expire. A later time re-grants everything with it. An earlier one, or a time " +
					"after a permanent grant, revokes and grants again, because IAM only ever raises an expiry: access " +
					"lapses for the moment between the two calls.",
			},
			"policies": schema.MapAttribute{
				Computed:    true,
				ElementType: types.Int64Type,
				MarkdownDescription: "IAM's policy ID of each granted action (action ID → policy ID). IAM keeps one " +
					"policy per subject and action, shared with other grants of the same action; `0` for grants to `admin`.",
			},
			"timeouts": timeoutsAttribute(ctx),
		},
	}
}
