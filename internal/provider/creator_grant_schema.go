package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func creatorGrantSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Registers a user as the creator of resource instances in one BlueKing IAM system, through " +
			"IAM's `batch_resource_creator_action` API, so that IAM grants the creator the actions the system " +
			"configured for the resource type (its *resource creator actions*).\n\n" +
			"IAM has no creator revoke: destroy revokes, with `batch_path`, each instance's path (its ancestors, " +
			"then the instance) for the actions the grant recorded.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`SYSTEM/TYPE/CREATOR`, the form `terraform import` takes.",
			},
			"system": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ID of the IAM system, e.g. `bk_sops`. Changing it replaces the grant.",
			},
			"type": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "ID of the resource type whose instances the creator created, e.g. `mini_app`. The system " +
					"must have registered creator actions for it. Changing it replaces the grant.",
			},
			"creator": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Username of the creator. IAM ignores creator grants to `admin`, who holds everything. " +
					"Changing it replaces the grant.",
			},
			"instances": schema.MapNestedAttribute{
				Required: true,
				MarkdownDescription: fmt.Sprintf("The created instances, by instance ID: at least one, at most %d. "+
					"Adding an instance grants it; removing one revokes its path; moving one (new ancestors) grants the "+
					"new path, then revokes the old one.", maxPolicyInstances),
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"name": schema.StringAttribute{
							Required: true,
							MarkdownDescription: "Display name of the instance. IAM keeps the name it was first granted with, " +
								"so a change of name alone sends nothing.",
						},
						"ancestors": schema.ListNestedAttribute{
							Optional: true,
							MarkdownDescription: "The instance's ancestors in the system's topology, outermost first, e.g. the " +
								"project a mini app belongs to. IAM looks their names up itself, through the system's callback; " +
								"an ancestor it cannot find fails the grant.",
							NestedObject: schema.NestedAttributeObject{
								Attributes: map[string]schema.Attribute{
									"system": schema.StringAttribute{Required: true, MarkdownDescription: "System of the ancestor."},
									"type":   schema.StringAttribute{Required: true, MarkdownDescription: "Resource type of the ancestor."},
									"id":     schema.StringAttribute{Required: true, MarkdownDescription: "Instance ID of the ancestor."},
								},
							},
						},
					},
				},
			},
			"actions": schema.SetAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "The creator actions to expect, e.g. `[\"mini_app_view\", \"mini_app_edit\"]`. When set, " +
					"exactly these are recorded (and revoked on destroy), and the apply fails if IAM did not grant one of " +
					"them. When unset, every action IAM reports is recorded; IAM's answer also lists the creator's " +
					"unrelated policies in the system, so destroy then skips the recorded actions that turn out not to " +
					"relate to this type. Changing it replaces the grant.",
			},
			"granted_actions": schema.SetAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The actions recorded as granted: revoked from every path on destroy.",
			},
			"policies": schema.MapAttribute{
				Computed:            true,
				ElementType:         types.Int64Type,
				MarkdownDescription: "IAM's policy ID of each granted action (action ID → policy ID); `0` for `admin`.",
			},
			"timeouts": timeoutsAttribute(ctx),
		},
	}
}
