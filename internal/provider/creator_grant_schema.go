package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// creatorGrantModel is bkiam_creator_grant as Terraform sends it.
type creatorGrantModel struct {
	ID             types.String   `tfsdk:"id"`
	System         types.String   `tfsdk:"system"`
	Type           types.String   `tfsdk:"type"`
	Creator        types.String   `tfsdk:"creator"`
	Instances      types.Map      `tfsdk:"instances"`
	Actions        types.Set      `tfsdk:"actions"`
	GrantedActions types.Set      `tfsdk:"granted_actions"`
	Policies       types.Map      `tfsdk:"policies"`
	Timeouts       timeouts.Value `tfsdk:"timeouts"`
}

type creatorInstanceModel struct {
	Name      types.String `tfsdk:"name"`
	Ancestors types.List   `tfsdk:"ancestors"`
}

type ancestorModel struct {
	System types.String `tfsdk:"system"`
	Type   types.String `tfsdk:"type"`
	ID     types.String `tfsdk:"id"`
}

var (
	ancestorAttrTypes        = map[string]attr.Type{"system": types.StringType, "type": types.StringType, "id": types.StringType}
	ancestorType             = types.ObjectType{AttrTypes: ancestorAttrTypes}
	creatorInstanceAttrTypes = map[string]attr.Type{"name": types.StringType, "ancestors": types.ListType{ElemType: ancestorType}}
	creatorInstanceType      = types.ObjectType{AttrTypes: creatorInstanceAttrTypes}
)

func creatorGrantSchema(ctx context.Context) schema.Schema {
	notBlankString := []validator.String{notBlank{}}
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
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
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"system": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "ID of the IAM system, e.g. `bk_sops`. Changing it replaces the grant.",
				Validators:          notBlankString,
				PlanModifiers:       replace,
			},
			"type": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "ID of the resource type whose instances the creator created, e.g. `mini_app`. The system " +
					"must have registered creator actions for it. Changing it replaces the grant.",
				Validators:    notBlankString,
				PlanModifiers: replace,
			},
			"creator": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Username of the creator. IAM ignores creator grants to `admin`, who holds everything. " +
					"Changing it replaces the grant.",
				Validators:    notBlankString,
				PlanModifiers: replace,
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
							Validators: notBlankString,
						},
						"ancestors": schema.ListNestedAttribute{
							Optional: true,
							MarkdownDescription: "The instance's ancestors in the system's topology, outermost first, e.g. the " +
								"project a mini app belongs to. IAM looks their names up itself, through the system's callback; " +
								"an ancestor it cannot find fails the grant.",
							NestedObject: schema.NestedAttributeObject{
								Attributes: map[string]schema.Attribute{
									"system": schema.StringAttribute{Required: true, MarkdownDescription: "System of the ancestor.", Validators: notBlankString},
									"type":   schema.StringAttribute{Required: true, MarkdownDescription: "Resource type of the ancestor.", Validators: notBlankString},
									"id":     schema.StringAttribute{Required: true, MarkdownDescription: "Instance ID of the ancestor.", Validators: notBlankString},
								},
							},
						},
					},
				},
				Validators: []validator.Map{
					mapvalidator.SizeBetween(1, maxPolicyInstances),
					mapvalidator.KeysAre(notBlank{}),
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
				Validators:    []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.ValueStringsAre(notBlank{})},
				PlanModifiers: []planmodifier.Set{setplanmodifier.RequiresReplace()},
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
