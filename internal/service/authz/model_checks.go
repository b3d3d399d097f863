package authz

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// Plan-time checks against the model a system registered in IAM
// (check_model): what IAM would refuse at apply (1902412, 1902417), found
// while planning, before any call of the apply goes out. Each check skips
// what is unknown. The model is read once per system per provider
// configuration (bkiam.ModelCache).

// checkInstanceGrantModel checks an instance grant's actions and resources
// against its system's model.
func checkInstanceGrantModel(ctx context.Context, data *conns.Data, m InstanceGrantModel, diags *protocol.Diagnostics) {
	model := verify.SystemModel(ctx, data, protocol.Root("system"), m.System, diags)
	if model == nil {
		return
	}
	actions, ok := m.Actions.Get()
	if !ok {
		return
	}
	entries, entriesKnown := m.Resources.Get()
	subject, _ := m.Subject.Get()
	subjectType, _ := subject.Type.Get()
	for _, e := range actions {
		id, ok := e.Get()
		if !ok {
			continue
		}
		at := protocol.Root("actions").WithElementKeyValue(tftypes.NewValue(tftypes.String, id))
		a := model.Action(id)
		if a == nil {
			diags.AddAttributeError(at, "Unknown action",
				fmt.Sprintf("System %s has no action %q in its IAM model; IAM would refuse the grant.%s", model.System, id, verify.Closest(id, verify.ActionIDs(model))))
			continue
		}
		if a.Hidden {
			diags.AddAttributeWarning(at, "Hidden action",
				fmt.Sprintf("Action %q of system %s is hidden in IAM: the IAM web UI does not show it, so grants of it can "+
					"only be seen and changed through the API (and this configuration).", id, model.System))
		}
		if subjectType == bkiam.SubjectGroup && a.RBAC() {
			diags.AddAttributeWarning(at, "Group grant of an RBAC action",
				fmt.Sprintf("Action %q of system %s has auth_type %q: IAM stores a group's grant of it as RBAC relations, "+
					"not as a policy expression, and lists it only in its RBAC policy list (which detect_drift reads).", id, model.System, a.AuthType))
		}
		if entriesKnown {
			checkRelatedTypes(model, *a, entries, diags)
		}
	}
}

// checkRelatedTypes checks that resources give the action's related
// resource types, in order.
func checkRelatedTypes(model *bkiam.SystemModel, a bkiam.ModelAction, entries []protocol.Value[ResourceModel], diags *protocol.Diagnostics) {
	got := make([]*[2]string, len(entries))
	for i, e := range entries {
		entry, _ := e.Get()
		system, okS := entry.System.Get()
		typ, okT := entry.Type.Get()
		if okS && okT {
			got[i] = &[2]string{system, typ}
		}
	}
	for _, p := range verify.RelatedTypeProblems(model, a, got, "resources", "grant it in a resource of its own", "resources of their own") {
		at := protocol.Root("resources")
		if p.Index >= 0 {
			at = at.WithElementKeyInt(p.Index)
		}
		diags.AddAttributeError(at, p.Summary, p.Detail)
	}
}

// checkCreatorGrantModel checks a creator grant's type and actions against
// its system's creator configuration. Without actions, the grant needs the
// model at apply to tell its own actions from the creator's other
// policies in IAM's answer, so a plan that cannot read it is refused.
func checkCreatorGrantModel(ctx context.Context, data *conns.Data, m CreatorGrantModel, diags *protocol.Diagnostics) {
	if m.Actions.IsNull() && data != nil && (!data.CheckModel || data.Models == nil) {
		system, _ := m.System.Get()
		typ, _ := m.Type.Get()
		diags.AddAttributeError(protocol.Root("actions"), "Creator actions needed without the system's model",
			fmt.Sprintf("IAM answers a creator registration with every permission the creator holds in system %s, not only "+
				"the ones it grants, so without actions the provider tells them apart by the creator configuration of type %q "+
				"in the system's model, which it cannot read here (esb_url, or check_model = false). Set actions to the "+
				"creator actions of the type (the bkiam_system data source lists them under creator_actions), or use apigw_url "+
				"with check_model = true.", system, typ))
		return
	}
	model := verify.SystemModel(ctx, data, protocol.Root("system"), m.System, diags)
	if model == nil {
		return
	}
	typ, ok := m.Type.Get()
	if !ok {
		return
	}
	node := model.CreatorNode(typ)
	if node == nil {
		var have []string
		var walk func([]bkiam.CreatorNode)
		walk = func(ns []bkiam.CreatorNode) {
			for _, n := range ns {
				have = append(have, n.ID)
				walk(n.SubResourceTypes)
			}
		}
		walk(model.CreatorConfig)
		detail := "It has none."
		if len(have) > 0 {
			sort.Strings(have)
			detail = "It has one for " + strings.Join(have, ", ") + "."
		}
		diags.AddAttributeError(protocol.Root("type"), "No creator configuration for the type",
			fmt.Sprintf("System %s registered no resource-creator actions for type %q in IAM, so IAM would refuse to "+
				"register a creator of it. %s", model.System, typ, detail))
		return
	}
	checkCreatorAncestors(model, typ, m.Instances, diags)
	config := make([]string, 0, len(node.Actions))
	var unlimited []string
	for _, ca := range node.Actions {
		config = append(config, ca.ID)
		if a := model.Action(ca.ID); a != nil && len(a.RelatedResourceTypes) == 0 {
			unlimited = append(unlimited, ca.ID)
		}
	}
	if len(unlimited) > 0 {
		diags.AddAttributeWarning(protocol.Root("type"), "Unlimited creator actions",
			fmt.Sprintf("The creator configuration of %s in system %s lists %s, which relate(s) to no resource type: IAM "+
				"grants the creator those on every instance, and destroy cannot revoke them.", typ, model.System, strings.Join(unlimited, ", ")))
	}
	actions, ok := m.Actions.Get()
	if !ok {
		return
	}
	for _, e := range actions {
		id, ok := e.Get()
		if !ok || slices.Contains(config, id) {
			continue
		}
		diags.AddAttributeError(protocol.Root("actions").WithElementKeyValue(tftypes.NewValue(tftypes.String, id)), "Action outside the creator configuration",
			fmt.Sprintf("IAM grants the creator of a %s in system %s the actions of its creator configuration, %s, and %q is "+
				"not one of them.%s", typ, model.System, strings.Join(config, ", "), id, verify.Closest(id, config)))
	}
}

// creatorConfigActions are the actions of type's creator configuration in
// system's model: what IAM grants the creator of one of its instances.
// nil when the model is not read (check_model off); an error when it
// cannot be read or has no configuration for the type.
func creatorConfigActions(ctx context.Context, data *conns.Data, system protocol.StringValue, typ string, diags *protocol.Diagnostics) []string {
	model := verify.SystemModel(ctx, data, protocol.Root("system"), system, diags)
	if model == nil {
		return nil
	}
	node := model.CreatorNode(typ)
	if node == nil {
		diags.AddAttributeError(protocol.Root("type"), "No creator configuration for the type",
			fmt.Sprintf("System %s registered no resource-creator actions for type %q in IAM.", model.System, typ))
		return nil
	}
	actions := make([]string, 0, len(node.Actions))
	for _, a := range node.Actions {
		actions = append(actions, a.ID)
	}
	return actions
}

// checkCreatorAncestors refuses an ancestor that names a resource type the grant's system does
// not have under that system: IAM's SaaS asks each node's system for the node's name (bk-iam-saas
// saas/backend/trans/open.py, fill_instance_name; biz/resource.py, fetch_resource_name) and
// refuses the grant when it cannot (the sandbox answers 1902416). A type of another system is
// written under that system (/bk_cmdb,biz,2/bk_job,script,s1/: bk_job's script under bk_cmdb's
// business); when the type's parents name one of that id, the error says which. Other systems'
// types are not checked: their models are not read.
func checkCreatorAncestors(model *bkiam.SystemModel, typ string, instances protocol.StringMapValue, diags *protocol.Diagnostics) {
	names, ok := instances.Get()
	if !ok {
		return
	}
	t := grantplan.CreatorTarget{System: model.System, Type: typ}
	parents := parentChain(model, typ)
	for _, key := range slices.Sorted(maps.Keys(names)) {
		in, err := parseCreatorKey(t, key)
		if err != nil {
			continue // Validate has refused it
		}
		for _, a := range in.Ancestors {
			if a.System != model.System || model.ResourceType(a.Type) != nil {
				continue
			}
			detail := fmt.Sprintf("The path %q names an ancestor %s,%s,%s, but system %s registers no resource type %q, so IAM would "+
				"refuse the creator grant.", key, a.System, a.Type, a.ID, model.System, a.Type)
			if i := slices.IndexFunc(parents, func(p bkiam.TypeRef) bool { return p.ID == a.Type }); i >= 0 {
				detail += fmt.Sprintf(" %s's ancestor %s is %s's: write the node under the system of its type, %s,%s,%s.",
					typ, a.Type, parents[i].System, parents[i].System, a.Type, a.ID)
			} else if len(parents) > 0 {
				var have []string
				for _, p := range parents {
					have = append(have, p.System+"/"+p.ID)
				}
				detail += fmt.Sprintf(" The types system %s registers above %s are %s.", model.System, typ, strings.Join(have, ", "))
			}
			diags.AddAttributeError(protocol.Root("instances").WithElementKeyString(key), "Unknown ancestor type", detail)
		}
	}
}

// parentChain is every resource type above typ in model: its parents, theirs, and so on, each
// once; a parent of another system ends its branch (that system's model is not read).
func parentChain(model *bkiam.SystemModel, typ string) []bkiam.TypeRef {
	var out []bkiam.TypeRef
	queue := []string{typ}
	for len(queue) > 0 {
		rt := model.ResourceType(queue[0])
		queue = queue[1:]
		if rt == nil {
			continue
		}
		for _, p := range rt.Parents {
			system := p.System
			if system == "" {
				system = model.System
			}
			ref := bkiam.TypeRef{System: system, ID: p.ID}
			if slices.Contains(out, ref) {
				continue
			}
			out = append(out, ref)
			if system == model.System {
				queue = append(queue, p.ID)
			}
		}
	}
	return out
}
