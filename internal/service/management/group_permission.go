package management

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/ledger"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// GroupPermission is bkiam_group_permission: a user group's custom
// permissions in one system, through the management API. It is a
// bkiam_instance_grant to the group in all but its calls: the same model
// of actions over resources, the same planner and runner (grants before
// revokes, a record after every call), the same ledger of shared grants
// (IAM keeps one policy per system, group and action, whichever API
// granted it), with the calls sent as management grants and revokes and
// a refresh that reads the group's permissions back exactly.
type GroupPermission struct {
	grant authz.InstanceGrant
}

func NewGroupPermission() GroupPermission {
	return GroupPermission{grant: authz.InstanceGrant{
		Via: func(data *conns.Data) conns.InstanceCaller { return managementCaller{client: data.Client} },
		// The management grant has no per-call cap: a call carries up to
		// IAM's per-policy limit.
		Limits: func(*conns.Data) grantplan.Limits {
			return grantplan.Limits{Grant: conns.MaxPolicyInstances, Revoke: conns.MaxPolicyInstances, Policy: conns.MaxPolicyInstances}
		},
	}}
}

func (GroupPermission) Name() string { return "group_permission" }

func (GroupPermission) Schema(context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A user group's custom permissions in one BlueKing IAM system, through IAM's management API " +
			"(API gateway only): a set of actions on resource instances, each instance by its id or by its path under its " +
			"ancestors. It owns exactly what it declares: create grants, a change sends only the difference (grants before " +
			"revokes), destroy revokes, and refresh reads the group's permissions back.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`SYSTEM/GROUP_ID`.",
			},
			"system": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The system of the actions, e.g. `bk_cmdb`. Unless `group_system` says otherwise, the " +
					"calls go through its management API (IAM also checks that the app may manage the group through the system " +
					"that created its grade manager). Changing it replaces the resource.",
			},
			"group_id": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The group's numeric id, e.g. `bkiam_group.dev.id`. Changing it replaces the resource.",
			},
			"group_system": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "The system whose management API the calls go through, when it is not `system`: set it " +
					"to the system that created the group's grade manager when the app is not a client of `system` (a grade " +
					"manager's scope may hold another system's actions where IAM allows its creator to authorize that system). " +
					"IAM lists a group's permissions only by the path's system, so such permissions are not read back: refresh " +
					"trusts state. Without it the calls go through `system`, which IAM allows when the app is a client of both " +
					"`system` and the grade manager's creator. Changing it changes only the route of later calls.",
			},
			"actions": schema.SetAttribute{
				Required:    true,
				ElementType: types.StringType,
				MarkdownDescription: "The actions, e.g. `[\"view_host\", \"edit_host\"]`. They must share one list of resource types: " +
					"IAM's management grant gives every action of a call the same resources. Group permissions never expire.",
			},
			"resources": schema.ListNestedAttribute{
				Required: true,
				MarkdownDescription: "One entry per resource type the actions relate to, in the order the system relates them " +
					"(empty for actions related to no type). A grant must stay inside the group's grade manager's authorization " +
					"scope, or IAM refuses it.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"system": schema.StringAttribute{Required: true, MarkdownDescription: "The resource type's system."},
					"type":   schema.StringAttribute{Required: true, MarkdownDescription: "The resource type, e.g. `host`."},
					"instances": schema.MapAttribute{
						Required:    true,
						ElementType: types.StringType,
						MarkdownDescription: fmt.Sprintf("The instances, keyed by id, each with its display name, e.g. "+
							"`{ \"1\" = \"host1\" }`: at least one, at most %d. A key beginning with `/` is a path in IAM's own "+
							"notation, the instance under its ancestors: `/bk_cmdb,biz,2/bk_cmdb,host,*/` is every host of business 2, "+
							"`/bk_cmdb,biz,2/bk_cmdb,host,5/` host 5 there.", conns.MaxPolicyInstances),
					},
				}},
			},
			"timeouts": protocol.TimeoutsAttribute(),
		},
	}
}

func permissionID(m GroupPermissionModel) protocol.StringValue {
	system, okSystem := m.System.Get()
	group, okGroup := m.GroupID.Get()
	if !okSystem || !okGroup {
		return protocol.Unknown[string]()
	}
	return protocol.Known(system + "/" + group)
}

// ImportState takes SYSTEM/GROUP_ID/ACTION[,ACTION…]: the read that
// follows fills the resources from what IAM lists for those actions.
func (GroupPermission) ImportState(_ context.Context, id string, diags *protocol.Diagnostics) (GroupPermissionModel, protocol.PrivateState) {
	var m GroupPermissionModel
	parts := strings.Split(id, "/")
	if len(parts) != 3 || strings.TrimSpace(parts[0]) == "" || !positiveID(parts[1]) || strings.TrimSpace(parts[2]) == "" {
		diags.AddError("Invalid import ID",
			fmt.Sprintf("Expected SYSTEM/GROUP_ID/ACTION[,ACTION…], e.g. bk_cmdb/42/view_host,edit_host; got %q.", id))
		return m, nil
	}
	actions := strings.Split(parts[2], ",")
	slices.Sort(actions)
	m.System, m.GroupID, m.Actions = protocol.Known(parts[0]), protocol.Known(parts[1]), protocol.KnownStrings(slices.Compact(actions))
	m.ID = permissionID(m)
	return m, nil
}

func (GroupPermission) Validate(_ context.Context, config GroupPermissionModel, diags *protocol.Diagnostics) {
	verify.CheckID(protocol.Root("system"), config.System, diags)
	verify.CheckID(protocol.Root("group_system"), config.GroupSystem, diags)
	if s, ok := config.GroupID.Get(); ok && !positiveID(s) {
		diags.AddAttributeError(protocol.Root("group_id"), "Invalid group id",
			fmt.Sprintf("group_id must be a user group's numeric id, such as bkiam_group.dev.id or \"42\"; got %q.", s))
	}
	verify.CheckActions(protocol.Root("actions"), config.Actions, "Name the actions to grant, or remove the resource.", diags)
	entries, _ := config.Resources.Get()
	for i, e := range entries {
		at := protocol.Root("resources").WithElementKeyInt(i)
		entry, _ := e.Get()
		verify.CheckID(at.WithAttributeName("system"), entry.System, diags)
		verify.CheckID(at.WithAttributeName("type"), entry.Type, diags)
		instancesPath := at.WithAttributeName("instances")
		instances, ok := entry.Instances.Get()
		if !ok {
			continue
		}
		verify.CheckInstanceCount(instancesPath, len(instances), diags)
		plain := map[string]protocol.StringValue{}
		for id, name := range instances {
			if strings.HasPrefix(id, "/") {
				nodes, err := verify.ParsePath(id)
				if err != nil {
					diags.AddAttributeError(instancesPath.WithElementKeyString(id), "Invalid path",
						fmt.Sprintf("The key %q of %s begins with \"/\", so it is a path, but %v. Write a path as IAM does: "+
							"/SYSTEM,TYPE,ID/…/, e.g. /bk_cmdb,biz,2/bk_cmdb,host,*/.", id, protocol.PathString(instancesPath), err))
				} else {
					typ, _ := entry.Type.Get()
					verify.CheckRepeatedNode(instancesPath.WithElementKeyString(id), fmt.Sprintf("The path %q of %s", id, protocol.PathString(instancesPath)),
						nodesAbove(typ, nodes), diags)
				}
			} else {
				plain[id] = name
			}
		}
		verify.CheckNames(instancesPath, instances, diags)
		verify.CheckInstanceIDs(instancesPath, plain, diags)
	}
	protocol.CheckTimeouts(config.Timeouts, diags)
}

// nodesAbove is a path's nodes above its instance, as type and id: all of them when the path ends
// above the resource type typ (a path ending in "*" of typ ends at an instance).
func nodesAbove(typ string, nodes []bkiam.PathNode) [][2]string {
	if n := len(nodes); n > 0 && nodes[n-1].Type == typ {
		nodes = nodes[:n-1]
	}
	out := make([][2]string, len(nodes))
	for i, n := range nodes {
		out[i] = [2]string{n.Type, n.ID}
	}
	return out
}

func (r GroupPermission) CheckModel(ctx context.Context, data *conns.Data, proposed GroupPermissionModel, diags *protocol.Diagnostics) {
	if summary, detail, ok := managementNeedsGateway(data, "bkiam_group_permission"); ok {
		diags.AddError(summary, detail)
		return
	}
	r.grant.CheckModel(ctx, data, proposed.asGrant(), diags)
	checkPlannedScope(data, proposed, diags)
}

func (r GroupPermission) Plan(ctx context.Context, req protocol.PlanRequest[GroupPermissionModel], diags *protocol.Diagnostics) protocol.PlanResponse[GroupPermissionModel] {
	greq := protocol.PlanRequest[authz.InstanceGrantModel]{Proposed: req.Proposed.asGrant(), Private: req.Private}
	if req.Prior != nil {
		prior := req.Prior.asGrant()
		greq.Prior = &prior
	}
	out := r.grant.Plan(ctx, greq, diags)
	planned := req.Proposed.fromGrant(out.Planned)
	planned.ID = permissionID(planned)
	var replace []*tftypes.AttributePath
	for _, p := range out.RequiresReplace {
		if p.Equal(protocol.Root("subject")) {
			p = protocol.Root("group_id")
		}
		replace = append(replace, p)
	}
	return protocol.PlanResponse[GroupPermissionModel]{Planned: planned, RequiresReplace: replace}
}

func (r GroupPermission) Apply(ctx context.Context, data *conns.Data, req protocol.ApplyRequest[GroupPermissionModel], diags *protocol.Diagnostics) (*GroupPermissionModel, protocol.PrivateState) {
	greq := protocol.ApplyRequest[authz.InstanceGrantModel]{Private: req.Private}
	base := req.Planned
	if req.Prior != nil {
		prior := req.Prior.asGrant()
		greq.Prior = &prior
	}
	if req.Planned != nil {
		planned := req.Planned.asGrant()
		greq.Planned = &planned
	} else {
		base = req.Prior
	}
	// The calls go through the management API of the system that manages
	// the group (the planned one: a new group_system reroutes at once).
	route := base
	if req.Planned != nil {
		route = req.Planned
	}
	pathSystem, _ := route.managedBy()
	grant := r.grant
	grant.Via = func(data *conns.Data) conns.InstanceCaller {
		return managementCaller{client: data.Client, system: pathSystem}
	}
	// A destroy that IAM answers with the ownership 403 is done when the
	// group is gone, with its permissions.
	grant.Gone = func(ctx context.Context, err error) bool {
		owned := errors.Is(err, bkiam.ErrNotOwned)
		return (owned || goneMayExplain(ctx, err)) && r.groupGoneOnDestroy(ctx, data, *base, pathSystem, owned, diags)
	}
	result, private := grant.Apply(ctx, data, greq, diags)
	if base != nil {
		group, _ := base.GroupID.Get()
		data.GroupPolicies.Invalidate(pathSystem, group)
	}
	if result == nil {
		return nil, private
	}
	m := base.fromGrant(*result)
	m.ID = permissionID(m)
	return &m, private
}

// groupGoneOnDestroy reports whether the group of a destroy that IAM
// refused is gone, with its permissions: IAM's lists must confirm it
// (management.go), and diags say which it was. owned: IAM answered the
// ownership 403, which it also answers for a gone group; only then does
// an unconfirmed check warn.
func (r GroupPermission) groupGoneOnDestroy(ctx context.Context, data *conns.Data, state GroupPermissionModel, pathSystem string, owned bool, diags *protocol.Diagnostics) bool {
	groupID, _ := state.GroupID.Get()
	group, _ := strconv.ParseInt(groupID, 10, 64)
	label := "bkiam_group_permission " + r.Label(state)
	object := fmt.Sprintf("group %d in %s", group, pathSystem)
	fields := map[string]any{"system": pathSystem, "group": group}
	gone, checkErr := goneCheck{client: data.Client, system: pathSystem}.groupGone(ctx, group)
	if checkErr != nil || !gone {
		if !owned {
			return false // IAM's error stands: the group is there, or cannot be told gone
		}
		fields["check_error"] = fmt.Sprint(checkErr)
		tflog.Warn(ctx, "the group answers the ownership 403, but IAM's lists do not confirm it gone: the destroy fails", fields)
		diags.AddWarning(unconfirmedOnDestroy(label, object, checkErr))
		return false
	}
	tflog.Warn(ctx, "the group is gone, confirmed by IAM's lists: its permissions went with it", fields)
	diags.AddWarning(goneOnDestroy(label, object, "its permissions", owned))
	return true
}

// Refreshes: a group's permissions are exactly readable.
func (GroupPermission) Refreshes(data *conns.Data) bool { return data != nil && data.Client != nil }

// Read keeps of the record only what IAM still holds for the group, by
// meaning (action, type, path), and completes an import. Without the
// list's allow-list entry it warns once and trusts state.
func (r GroupPermission) Read(ctx context.Context, data *conns.Data, req protocol.ReadRequest[GroupPermissionModel], diags *protocol.Diagnostics) (*GroupPermissionModel, protocol.PrivateState, bool) {
	state, private := req.State, req.Private
	system, _ := state.System.Get()
	pathSystem, _ := state.managedBy()
	groupID, _ := state.GroupID.Get()
	group, _ := strconv.ParseInt(groupID, 10, 64)
	if system == "" || group == 0 || pathSystem != system {
		// IAM lists a group's permissions only in the system that manages
		// it: another system's cannot be read back.
		return &state, private, false
	}
	policies, err := data.GroupPolicies.Get(ctx, system, group)
	switch {
	case errors.Is(err, bkiam.ErrNotOwned):
		// The group is gone, with its permissions, if IAM's lists confirm
		// it (management.go).
		gone, checkErr := goneCheck{client: data.Client, system: system}.groupGone(ctx, group)
		summary, detail, ok := goneOrUnconfirmed("bkiam_group_permission "+r.Label(state),
			fmt.Sprintf("group %d in %s", group, system), gone, checkErr)
		if !ok {
			diags.AddError(summary, detail)
			return &state, private, false
		}
		diags.AddWarning(summary, detail)
		return nil, nil, true
	case errors.Is(err, bkiam.ErrForbidden):
		if data.GroupPolicies.Warned.CompareAndSwap(false, true) {
			diags.AddWarning("Group permissions are not read back",
				fmt.Sprintf("IAM refused the list of a group's permissions in %s (%v). Its management allow-list must give the "+
					"system group_policy_list, which in practice only \"*\" does. Until then a refresh trusts state: a permission "+
					"revoked outside Terraform goes unnoticed.", system, err))
		}
		return &state, private, false
	case err != nil:
		diags.AddError("Cannot read the group's permissions",
			managementError(fmt.Sprintf("Reading the permissions of group %d in %s", group, system), err))
		return &state, private, false
	}
	if state.Resources.IsNull() {
		return r.readImport(state, policies, private, diags)
	}
	g := authz.ViewGrant(state.asGrant())
	if !g.Known {
		return &state, private, false
	}
	held := r.grant.Holdings(private, g, diags)
	if diags.HasError() {
		return &state, private, false
	}
	now := heldByList(held, policies)
	if now.Equal(held) {
		return &state, private, false
	}
	if loss := authz.DescribeLoss(held, now); loss != "" {
		diags.AddWarning("Permissions revoked outside Terraform",
			fmt.Sprintf("IAM no longer holds what this resource granted group %d in %s: %s. It is removed from state, so the "+
				"plan grants it again.", group, system, loss))
	}
	if len(now) == 0 {
		return nil, nil, true
	}
	view := now.View(&g.Grant, g.Grant.Resources)
	private = maps.Clone(private)
	authz.RecordHoldings(private, now, view, diags)
	m := state
	m.Actions = protocol.KnownStrings(view.Actions)
	m.Resources = authz.ResourcesValue(view.Resources)
	return &m, private, true
}

// heldByList is what of held the group's listed policies still hold:
// an instance whose path a policy of the action lists (or any instance
// of its type); a combination that one resource group holds whole.
func heldByList(held grantplan.Holdings, policies []bkiam.GroupPolicy) grantplan.Holdings {
	byAction := map[string]bkiam.GroupPolicy{}
	for _, p := range policies {
		byAction[p.Action] = p
	}
	now := grantplan.Holdings{}
	for action, h := range held {
		p, ok := byAction[action]
		if !ok {
			continue
		}
		if len(h.Resources) == 0 {
			now[action] = grantplan.Holding{ExpiresAt: h.ExpiresAt}
			continue
		}
		holds := func(rg []bkiam.TypedPaths, r grantplan.Resource, id string) bool {
			for _, tp := range rg {
				if tp.System != r.System || tp.Type != r.Type {
					continue
				}
				if tp.Any {
					return true
				}
				for _, path := range tp.Paths {
					if sharedgrants.PathClaim(path) == sharedgrants.InstancePath(r.System, r.Type, id) {
						return true
					}
				}
			}
			return false
		}
		if len(h.Resources) == 1 {
			r := h.Resources[0]
			kept := map[string]string{}
			for id, name := range r.Instances {
				for _, rg := range p.ResourceGroups {
					if holds(rg, r, id) {
						kept[id] = name
						break
					}
				}
			}
			if len(kept) > 0 {
				now[action] = grantplan.Holding{ExpiresAt: h.ExpiresAt, Resources: []grantplan.Resource{{System: r.System, Type: r.Type, Instances: kept}}}
			}
			continue
		}
		for _, rg := range p.ResourceGroups {
			whole := true
			for _, r := range h.Resources {
				for id := range r.Instances {
					whole = whole && holds(rg, r, id)
				}
			}
			if whole {
				now[action] = h
				break
			}
		}
	}
	return now
}

// pathKeyOf renders nodes as IAM writes a path: /system,type,id/…/.
func pathKeyOf(nodes []bkiam.PathNode) (string, error) {
	var b strings.Builder
	b.WriteByte('/')
	for _, n := range nodes {
		if strings.ContainsAny(n.ID, ",/") {
			return "", fmt.Errorf("IAM holds the instance id %q of %s/%s in a path, which this resource's notation "+
				"(/SYSTEM,TYPE,ID/…/) cannot write: an id with \",\" or \"/\" can be granted only by itself, as a plain key", n.ID, n.System, n.Type)
		}
		b.WriteString(n.System + "," + n.Type + "," + n.ID + "/")
	}
	return b.String(), nil
}

// readImport fills an imported resource from what IAM lists for its
// actions, which must hold the same instances (one resource holds its
// actions over one set of resources), with the instances' names.
func (GroupPermission) readImport(state GroupPermissionModel, policies []bkiam.GroupPolicy, private protocol.PrivateState, diags *protocol.Diagnostics) (*GroupPermissionModel, protocol.PrivateState, bool) {
	actions, _ := protocol.StringsOf(state.Actions)
	system, _ := state.System.Get()
	var first []grantplan.Resource
	for i, action := range actions {
		var p *bkiam.GroupPolicy
		for j := range policies {
			if policies[j].Action == action {
				p = &policies[j]
			}
		}
		if p == nil {
			diags.AddError("Cannot import the permissions",
				fmt.Sprintf("The group holds no permission of action %q in %s: import only the actions it holds.", action, system))
			return &state, private, false
		}
		resources, err := listedResources(*p)
		if err != nil {
			diags.AddError("Cannot import the permissions", fmt.Sprintf("Action %q: %v.", action, err))
			return &state, private, false
		}
		if i == 0 {
			first = resources
			continue
		}
		if !grantplan.Held(&grantplan.Grant{Actions: []string{"x"}, Resources: first}).Equal(grantplan.Held(&grantplan.Grant{Actions: []string{"x"}, Resources: resources})) {
			diags.AddError("Cannot import the permissions",
				fmt.Sprintf("Actions %q and %q hold different instances, and one bkiam_group_permission holds its actions over "+
					"one set of instances: import them as separate resources.", actions[0], action))
			return &state, private, false
		}
	}
	m := state
	m.Resources = authz.ResourcesValue(first)
	return &m, private, true
}

// listedResources is a listed policy as the resources of a grant: a
// single-node path is an instance id, a longer one its path; names are
// IAM's, or the id where IAM has none.
func listedResources(p bkiam.GroupPolicy) ([]grantplan.Resource, error) {
	if len(p.ResourceGroups) == 0 {
		return nil, nil
	}
	if len(p.ResourceGroups[0]) > 1 && len(p.ResourceGroups) > 1 {
		return nil, errors.New("IAM holds several combinations of its resource types, which one resource cannot describe")
	}
	byType := map[string]*grantplan.Resource{}
	var order []string
	for _, rg := range p.ResourceGroups {
		for _, tp := range rg {
			if tp.Any {
				return nil, fmt.Errorf("IAM holds every instance of %s/%s, which a resource never grants", tp.System, tp.Type)
			}
			if tp.Attributes {
				return nil, fmt.Errorf("IAM holds instances of %s/%s by a condition on their attributes (made in the IAM web UI), "+
					"which a resource never grants: it grants instances by id or path only", tp.System, tp.Type)
			}
			k := tp.System + "/" + tp.Type
			if byType[k] == nil {
				byType[k] = &grantplan.Resource{System: tp.System, Type: tp.Type, Instances: map[string]string{}}
				order = append(order, k)
			}
			for _, path := range tp.Paths {
				leaf := path[len(path)-1]
				id, name := leaf.ID, leaf.Name
				if len(path) > 1 || strings.HasPrefix(id, "/") {
					var err error
					if id, err = pathKeyOf(path); err != nil {
						return nil, err
					}
				}
				if name == "" {
					name = leaf.ID
				}
				byType[k].Instances[id] = name
			}
		}
	}
	out := make([]grantplan.Resource, 0, len(order))
	for _, k := range order {
		out = append(out, *byType[k])
	}
	return out, nil
}

func (r GroupPermission) Claims(m GroupPermissionModel) ledger.Claims {
	return r.grant.Claims(m.asGrant())
}

func (GroupPermission) Label(m GroupPermissionModel) string {
	system, _ := m.System.Get()
	group, _ := m.GroupID.Get()
	return fmt.Sprintf("%q", system+"/group/"+group) + authz.GrantContent(authz.ViewGrant(m.asGrant()))
}

func (r GroupPermission) Reassert(planned GroupPermissionModel) GroupPermissionModel {
	return planned.fromGrant(r.grant.Reassert(planned.asGrant()))
}

// managementCaller sends a bkiam_instance_grant's planned calls as
// management grants and revokes of the group's permissions.
type managementCaller struct {
	client *bkiam.Client
	// system is the path's: the system that manages the group. The body
	// names the actions' system.
	system string
}

func (m managementCaller) BatchInstance(ctx context.Context, req bkiam.BatchInstanceRequest) ([]bkiam.PolicyResult, error) {
	group, err := strconv.ParseInt(req.Subject.ID, 10, 64)
	if err != nil || req.Subject.Type != bkiam.SubjectGroup {
		return nil, fmt.Errorf("a group permission's call for %s %s, not a group", req.Subject.Type, req.Subject.ID)
	}
	body := bkiam.GroupPolicyRequest{System: req.System, Actions: req.Actions}
	for _, r := range req.Resources {
		pr := bkiam.PathResource{System: r.System, Type: r.Type}
		for _, in := range r.Instances {
			nodes := []bkiam.PathNode{{System: r.System, Type: r.Type, ID: in.ID, Name: in.Name}}
			if strings.HasPrefix(in.ID, "/") {
				if nodes, err = verify.ParsePath(in.ID); err != nil {
					return nil, fmt.Errorf("instance %q: %w", in.ID, err)
				}
				nodes[len(nodes)-1].Name = in.Name
			}
			pr.Paths = append(pr.Paths, nodes)
		}
		body.Resources = append(body.Resources, pr)
	}
	pathSystem := m.system
	if pathSystem == "" {
		pathSystem = req.System
	}
	if req.Operate == bkiam.OperationGrant {
		err = m.client.GrantGroupPolicies(ctx, pathSystem, group, body)
	} else {
		err = m.client.RevokeGroupPolicies(ctx, pathSystem, group, body)
	}
	switch {
	case isScopeRefusal(err):
		err = fmt.Errorf("%w (outside the authorization scope of the group's grade manager: widen its authorization_scopes, or grant less)", err)
	case errors.Is(err, bkiam.ErrNotOwned):
		err = fmt.Errorf("%w (the group is gone, or its grade manager was made in the IAM web UI: IAM's management API "+
			"manages only the groups of grade managers a system created through it)", err)
	case errors.Is(err, bkiam.ErrForbidden):
		err = fmt.Errorf("%w (the call goes through the management API of %s; IAM also checks the system that created the "+
			"group's grade manager: the app must be a client of both, each with the management allow-list for the call. "+
			"If the app is not a client of system, set group_system to the system that created the grade manager)", err, pathSystem)
	}
	return nil, err
}

// PendingScope: as bkiam_instance_grant's (sharedgrants.Unknowable).
func (r GroupPermission) PendingScope(m GroupPermissionModel) (bool, ledger.Scope, []string, bool) {
	return r.grant.PendingScope(m.asGrant())
}
