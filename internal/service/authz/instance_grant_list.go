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
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// instanceGrantList is the list resource bkiam_instance_grant: the custom
// grants of one action to users, read from IAM's policy list of the
// action page by page (the read detect_drift uses; API gateway only).
// Each result is one user's grant of the action on its resource type,
// with the instances their policy grants by id, named by their ids, and
// its expiry: the state an import by the result's identity reads (with
// detect_drift), so that applying what -generate-config-out writes plans
// nothing in IAM.
//
// Groups are left out, with a warning: a group's custom policy is
// bkiam_group_permission's to adopt (one owner per policy, whatever lists
// a query holds), and IAM's policy list cannot tell a group's custom
// policy from the rows it holds through permission templates, which no
// revoke through the authorization API takes away.
type instanceGrantList struct{ listing.Base }

func NewInstanceGrantListResource() list.ListResource {
	return &instanceGrantList{listing.Base{Name: "instance_grant"}}
}

type instanceGrantListConfig struct {
	System      types.String  `tfsdk:"system"`
	Action      types.String  `tfsdk:"action"`
	SubjectType types.String  `tfsdk:"subject_type"`
	Managed     types.Dynamic `tfsdk:"managed"`
}

func (l *instanceGrantList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The custom grants of one action to users: each user's policy for it, from IAM's policy list " +
			"(API gateway only), one result per user. IAM keeps the instances' ids, not their names: the generated blocks " +
			"name each instance by its id. Import them with `detect_drift = true` in the provider, which reads what each " +
			"user holds. Left out with a warning: **groups** (a group's custom policy is adopted by `bkiam_group_permission`, " +
			"which reads it apart from the rows the group holds through permission templates; IAM's policy list cannot tell " +
			"them apart), a policy over every instance or given by paths or attribute conditions only (a resource never " +
			"grants those; an action related to no resource type is listed with `resources = []`; one related to several, a " +
			"combined resource, is not listed: import it by ID), " +
			"a user holding the action through several policies (a permission template's granted to users by an older IAM, " +
			"which the policy list cannot tell from the user's own grant), and any block the provider would refuse at plan " +
			"(an instance id `*`, which IAM matches literally). 2 × ceil(policies / 500) calls (a first pass counts each " +
			"user's policies), one page held at a time; IAM pages by offset, so a policy granted or revoked while the list " +
			"runs can be missed or listed twice: run the query again on a quiet site.",
		Attributes: map[string]listschema.Attribute{
			"system": listschema.StringAttribute{Required: true, Description: "The system of the action, e.g. `bk_cmdb`.",
				Validators: []validator.String{verify.IAMIDValidator{}}},
			"action": listschema.StringAttribute{Required: true, Description: "The action whose grants to list, e.g. `view_host`.",
				Validators: []validator.String{verify.IAMIDValidator{}}},
			"subject_type": listschema.StringAttribute{Optional: true,
				Description: "`user` (the default result), or `group`, which lists nothing and warns where groups' policies are listed: by `bkiam_group_permission`.",
				Validators:  []validator.String{stringvalidator.OneOf(bkiam.SubjectUser, bkiam.SubjectGroup)}},
			"managed": listing.ManagedAttribute(),
		},
	}
}

func (l *instanceGrantList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	config, c, ok := listing.Begin[instanceGrantListConfig](ctx, &l.Base, req, stream)
	if !ok {
		return
	}
	managed, ok := listing.ReadManaged(ctx, "bkiam_instance_grant", config.Managed, stream)
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
	// A creator grant in state manages its creator's grants of the actions
	// the type's creator configuration names, which only the model tells.
	managed = managed.WithCreatorActions(func(creatorSystem, typ string) []string {
		node := model.CreatorNode(typ)
		if creatorSystem != system || node == nil {
			return nil
		}
		actions := make([]string, 0, len(node.Actions))
		for _, a := range node.Actions {
			actions = append(actions, a.ID)
		}
		return actions
	})
	a := model.Action(action)
	switch {
	case a == nil:
		stream.Results = func(push func(list.ListResult) bool) {
			push(listing.Error("Unknown action", fmt.Sprintf("System %s registers no action %q.%s", system, action,
				verify.Closest(action, verify.ActionIDs(model)))))
		}
		return
	case len(a.RelatedResourceTypes) > 1:
		stream.Results = func(push func(list.ListResult) bool) {
			push(listing.Error("Action not listed", fmt.Sprintf("Action %s of %s relates to %d resource types (a combined resource); "+
				"bkiam_instance_grant lists the grants of an action related to one resource type or to none, so these are not "+
				"listed: import them by ID (every resource type after the actions).", action, system, len(a.RelatedResourceTypes))))
		}
		return
	}
	// rt is the action's resource type; nil for an action related to none,
	// whose grant is the action alone.
	var rt *grantplan.Resource
	if len(a.RelatedResourceTypes) == 1 {
		rt = &grantplan.Resource{System: a.RelatedResourceTypes[0].System, Type: a.RelatedResourceTypes[0].ID}
		if rt.System == "" {
			rt.System = system
		}
	}
	if only == bkiam.SubjectGroup {
		stream.Results = func(push func(list.ListResult) bool) {
			push(listing.Warning("Groups are listed by bkiam_group_permission", groupsOwnedBy(system)))
		}
		return
	}
	stream.Results = func(push func(list.ListResult) bool) {
		push = listing.Limited(req.Limit, managed.Leave(push))
		now := time.Now().Unix()
		// IAM's list is ordered by policy id, not by subject, and a user
		// can hold an action through several rows (a permission template's
		// granted to users by an older IAM, a policy written to the backend
		// beside the SaaS's): a first pass counts each user's rows, so that
		// a user whose import would read more than one row is left out
		// rather than generated from one of them (the import, reading them
		// all, would plan a revoke of the others). Both passes read the
		// list cut at the same time.
		rows := map[bkiam.Subject]int{}
		if !eachRow(ctx, c, system, action, now, push, func(row bkiam.Policy) bool {
			if row.Subject.Type == bkiam.SubjectUser {
				rows[row.Subject]++
			}
			return true
		}) {
			return
		}
		seen := map[bkiam.Subject]bool{}
		eachRow(ctx, c, system, action, now, push, func(row bkiam.Policy) bool {
			if r, ok := l.result(ctx, req, system, action, rt, row, rows[row.Subject], seen); ok {
				return push(r)
			}
			return true
		})
	}
}

// eachRow calls visit with each row of action's policy list that has not
// expired by now, page by page, until visit answers false; false when the
// list failed (the error pushed) or visit stopped it. Groups' grants of an
// RBAC action are in a list of their own, which is not read: groups are
// left out.
func eachRow(ctx context.Context, c *bkiam.Client, system, action string, now int64, push func(list.ListResult) bool,
	visit func(bkiam.Policy) bool) bool {
	for page := 1; ; page++ {
		p, err := c.ListPolicies(ctx, bkiam.PolicyKindABAC, system, action, page, bkiam.ScanPageSize, now)
		if err != nil {
			push(listing.Error("Cannot list the grants", fmt.Sprintf("Listing the grants of %s in %s: %v.", action, system, err)))
			return false
		}
		for _, row := range p.Results {
			// An expiry of 0 or one passed is gone, as an import reads it
			// (IAM's list leaves such rows out itself).
			if row.ExpiredAt > now && !visit(row) {
				return false
			}
		}
		if len(p.Results) == 0 || page*bkiam.ScanPageSize >= p.Count {
			return true
		}
	}
}

// groupsOwnedBy says why a list of grants leaves groups out, and what
// lists them.
func groupsOwnedBy(system string) string {
	return "bkiam_instance_grant lists users' grants. A group's custom policy is adopted by bkiam_group_permission " +
		"(a list \"bkiam_group_permission\" with system = \"" + system + "\" and the group's grade_manager_id or group_id), " +
		"which reads it through the management API apart from the rows the group holds through permission templates. " +
		"IAM's authorization API lists those rows alike, and an import here could claim instances that no revoke of the " +
		"group's policy takes away. A group of a grade manager made in the IAM web UI is adopted by neither: see the " +
		"adoption guide."
}

// result is the listed grant of one policy row (of rows the subject's),
// or a warning on why it is left out; false for a subject already warned
// about.
func (l *instanceGrantList) result(ctx context.Context, req list.ListRequest, system, action string, rt *grantplan.Resource,
	row bkiam.Policy, rows int, seen map[bkiam.Subject]bool) (list.ListResult, bool) {
	who := subjectName(row.Subject)
	first := !seen[row.Subject]
	seen[row.Subject] = true
	switch {
	case row.Subject.Type != bkiam.SubjectUser && !first:
		return list.ListResult{}, false
	case row.Subject.Type != bkiam.SubjectUser:
		return listing.Warning(fmt.Sprintf("Grant of %s left out: adopted by bkiam_group_permission", who),
			fmt.Sprintf("%s's grant of %s is left out. %s", who, action, groupsOwnedBy(system))), true
	case !first:
		return list.ListResult{}, false
	case rows > 1:
		return listing.Warning(fmt.Sprintf("Grant of %s left out: several policies", who), fmt.Sprintf("%s holds %s through %d "+
			"policies (a permission template's granted to users by an older IAM, or a policy written beside the one the "+
			"authorization API keeps), which IAM's policy list cannot tell apart: an import would read them all, and the "+
			"authorization API's revoke reaches only one. It is left out; check in the IAM web UI which instances are the "+
			"user's own grant before importing it (bkiam_instance_grant's import ID, with detect_drift).", who, action, rows)), true
	}
	expr, err := policyexpr.Parse(row.Expression)
	if err != nil {
		return listing.Warning("Grant left out", fmt.Sprintf("The expression of %s's policy %d for %s cannot be read: %v.", who, row.ID, action, err)), true
	}
	var m InstanceGrantModel
	if rt == nil {
		// An action related to no resource type: the grant is the action
		// itself, which IAM writes as any.
		if _, all := expr.Instances(""); !all {
			return listing.Warning("Grant left out", fmt.Sprintf("%s's policy %d for %s, an action related to no resource type, "+
				"holds it only under conditions, which bkiam_instance_grant never grants.", who, row.ID, action)), true
		}
		m, _ = importedGrantOf(InstanceGrantModel{}, system, row.Subject, grantplan.Holdings{action: {ExpiresAt: row.ExpiredAt}}, nil)
	} else {
		ids, anyInstance := expr.Instances(rt.Type)
		switch {
		case anyInstance:
			return listing.Warning("Grant left out", fmt.Sprintf("%s holds %s on every %s/%s instance, which bkiam_instance_grant never grants.",
				who, action, rt.System, rt.Type)), true
		case len(ids) == 0:
			return listing.Warning("Grant left out", fmt.Sprintf("%s holds %s on no %s/%s instance by id (paths or attribute conditions "+
				"only), which bkiam_instance_grant never grants.", who, action, rt.System, rt.Type)), true
		}
		instances := make(map[string]string, len(ids))
		for _, id := range ids {
			instances[id] = id
		}
		// A user's grant of one action on one resource type: what an import
		// of it reads (importedGrantOf), without copying the instances again.
		resource := grantplan.Resource{System: rt.System, Type: rt.Type, Instances: instances}
		m = grantModel(InstanceGrantModel{}, system, row.Subject,
			grantplan.Grant{Actions: []string{action}, Resources: []grantplan.Resource{resource}, ExpiresAt: row.ExpiredAt})
	}
	if refused, ok := listing.Refused(func() string { return fmt.Sprintf("%s's grant of %s", who, action) }, func(diags *protocol.Diagnostics) {
		InstanceGrant{}.Validate(ctx, m, diags)
		InstanceGrant{}.CheckModel(ctx, l.Data, m, diags)
	}); ok {
		return refused, true
	}
	return listing.ProtocolResult(ctx, req, row.Subject.Type+" "+row.Subject.ID, InstanceGrant{}.IdentityOf(m),
		func(typ tftypes.Object) tftypes.Value { return InstanceGrant{}.Encode(typ, m) }), true
}

var _ list.ListResourceWithConfigure = &instanceGrantList{}
