package authz

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/listing"
	"github.com/bkiam/terraform-provider-bkiam/internal/policyexpr"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// instanceGrantList is the list resource bkiam_instance_grant: the custom
// grants of one action, every subject's, read from IAM's policy list of
// the action page by page (the read detect_drift uses; API gateway only).
// Each result is one subject's grant of the action on its resource type,
// with the instances its policy grants by id, named by their ids, and its
// expiry: the state an import by the result's identity reads (with
// detect_drift), so that applying what -generate-config-out writes plans
// nothing in IAM.
type instanceGrantList struct{ listing.Base }

func NewInstanceGrantListResource() list.ListResource {
	return &instanceGrantList{listing.Base{Name: "instance_grant"}}
}

type instanceGrantListConfig struct {
	System      types.String `tfsdk:"system"`
	Action      types.String `tfsdk:"action"`
	SubjectType types.String `tfsdk:"subject_type"`
}

func (l *instanceGrantList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The custom grants of one action: each subject's (user or group) policy for it, from IAM's " +
			"policy list (API gateway only), one result per subject. IAM keeps the instances' ids, not their names: the " +
			"generated blocks name each instance by its id. Import them with `detect_drift = true` in the provider, which " +
			"reads what each subject holds. Left out with a warning: a policy over every instance (a resource never grants " +
			"that) and an action related to no resource type or to several (a combined resource cannot be imported). " +
			"ceil(policies / 500) calls, one page held at a time.",
		Attributes: map[string]listschema.Attribute{
			"system": listschema.StringAttribute{Required: true, Description: "The system of the action, e.g. `bk_cmdb`.",
				Validators: []validator.String{verify.IAMIDValidator{}}},
			"action": listschema.StringAttribute{Required: true, Description: "The action whose grants to list, e.g. `view_host`.",
				Validators: []validator.String{verify.IAMIDValidator{}}},
			"subject_type": listschema.StringAttribute{Optional: true,
				Description: "Only grants to `user`s or only to `group`s (filtered by the provider: IAM's list has no such filter).",
				Validators:  []validator.String{stringvalidator.OneOf(subjectUser, SubjectGroup)}},
		},
	}
}

func (l *instanceGrantList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	config, c, ok := listing.Begin[instanceGrantListConfig](ctx, &l.Base, req, stream)
	if !ok {
		return
	}
	system, action, only := config.System.ValueString(), config.Action.ValueString(), config.SubjectType.ValueString()
	model, err := l.Data.Models.Get(ctx, system)
	if err != nil {
		stream.Results = func(push func(list.ListResult) bool) {
			push(listing.Error("Cannot read the model of system "+system,
				fmt.Sprintf("Listing the grants of %s needs the resource type it relates to, from the model of %s: %v.", action, system, err)))
		}
		return
	}
	a := model.Action(action)
	switch {
	case a == nil:
		stream.Results = func(push func(list.ListResult) bool) {
			push(listing.Error("Unknown action", fmt.Sprintf("System %s registers no action %q.%s", system, action,
				verify.Closest(action, verify.ActionIDs(model)))))
		}
		return
	case len(a.RelatedResourceTypes) != 1:
		stream.Results = func(push func(list.ListResult) bool) {
			push(listing.Error("Action not listed", fmt.Sprintf("Action %s of %s relates to %d resource types; bkiam_instance_grant "+
				"imports the grants of an action related to exactly one, so these are not listed.", action, system, len(a.RelatedResourceTypes))))
		}
		return
	}
	rt := grantplan.Resource{System: a.RelatedResourceTypes[0].System, Type: a.RelatedResourceTypes[0].ID}
	if rt.System == "" {
		rt.System = system
	}
	kinds := []bkiam.PolicyKind{bkiam.PolicyKindABAC}
	if a.RBAC() && only != subjectUser {
		kinds = append(kinds, bkiam.PolicyKindRBAC) // a group's grants of such an action are RBAC relations
	}
	stream.Results = func(push func(list.ListResult) bool) {
		push = listing.Limited(req.Limit, push)
		seen := map[bkiam.Subject]bool{}
		now := time.Now().Unix()
		for _, kind := range kinds {
			for page := 1; ; page++ {
				p, err := c.ListPolicies(ctx, kind, system, action, page, bkiam.ScanPageSize, now)
				if err != nil {
					push(listing.Error("Cannot list the grants", fmt.Sprintf("Listing the grants of %s in %s: %v.", action, system, err)))
					return
				}
				for _, row := range p.Results {
					if (only != "" && row.Subject.Type != only) || (row.ExpiredAt != 0 && row.ExpiredAt <= now) {
						continue
					}
					if !push(l.result(ctx, req, system, action, rt, row, seen)) {
						return
					}
				}
				if len(p.Results) == 0 || page*bkiam.ScanPageSize >= p.Count {
					break
				}
			}
		}
	}
}

// result is the listed grant of one policy row, or a warning on why it
// is left out.
func (l *instanceGrantList) result(ctx context.Context, req list.ListRequest, system, action string, rt grantplan.Resource,
	row bkiam.Policy, seen map[bkiam.Subject]bool) list.ListResult {
	who := subjectName(row.Subject)
	if seen[row.Subject] {
		// A second row of the subject (a permission template's, or a
		// group's RBAC relations): its first result stands, and the import
		// reads every row.
		return listing.Warning("Grant listed once", fmt.Sprintf("%s holds %s through several policies; it is listed once, with the "+
			"instances of the first. Its import reads them all: review the plan for instances the generated block leaves out.", who, action))
	}
	seen[row.Subject] = true
	expr, err := policyexpr.Parse(row.Expression)
	if err != nil {
		return listing.Warning("Grant left out", fmt.Sprintf("The expression of %s's policy %d for %s cannot be read: %v.", who, row.ID, action, err))
	}
	ids, anyInstance := expr.Instances(rt.Type)
	switch {
	case anyInstance:
		return listing.Warning("Grant left out", fmt.Sprintf("%s holds %s on every %s/%s instance, which bkiam_instance_grant never grants.",
			who, action, rt.System, rt.Type))
	case len(ids) == 0:
		return listing.Warning("Grant left out", fmt.Sprintf("%s holds %s on no %s/%s instance by id (paths only), which an import cannot read.",
			who, action, rt.System, rt.Type))
	}
	instances := make(map[string]string, len(ids))
	for _, id := range ids {
		instances[id] = id
	}
	resource := grantplan.Resource{System: rt.System, Type: rt.Type, Instances: instances}
	held := grantplan.Holdings{action: {ExpiresAt: row.ExpiredAt, Resources: []grantplan.Resource{resource}}}
	m, _ := importedGrant(InstanceGrantModel{}, system, row.Subject, held, grantplan.Resource{System: rt.System, Type: rt.Type})
	return listing.ProtocolResult(ctx, req, row.Subject.Type+" "+row.Subject.ID, InstanceGrant{}.IdentityOf(m),
		func(typ tftypes.Object) tftypes.Value { return InstanceGrant{}.Encode(typ, m) })
}

var _ list.ListResourceWithConfigure = &instanceGrantList{}
