package provider

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// Plan-time checks against the model a system registered in IAM
// (check_model): what IAM would refuse at apply (1902412, 1902417), found
// while planning, before any call of the apply goes out. Each check skips
// what is unknown. The model is read once per system per provider
// configuration (bkiam.ModelCache).

// systemModel returns the model of the system at, or nil after reporting
// why it cannot be had. It is nil without a report when the checks are
// off or the system is unknown.
func systemModel(ctx context.Context, data *conns.Data, at *tftypes.AttributePath, system protocol.StringValue, diags *protocol.Diagnostics) *bkiam.SystemModel {
	id, ok := system.Get()
	if data == nil || !data.CheckModel || data.Models == nil || !ok {
		return nil
	}
	m, err := data.Models.Get(ctx, id)
	if err != nil {
		diags.AddAttributeError(at, "Cannot read the model of system "+id,
			fmt.Sprintf("The plan checks each grant against the model its system registered in IAM, and reading the model "+
				"of %s failed: %s. Fix the cause, or set check_model = false in the provider configuration to plan without "+
				"the checks (IAM then refuses what the model does not allow at apply).", id, err))
		return nil
	}
	return m
}

// closest names up to three ids of have nearest to id (edit distance at
// most a third of the longer id, and at least 2), for "did you mean".
func closest(id string, have []string) string {
	type cand struct {
		id string
		d  int
	}
	var cs []cand
	for _, h := range have {
		if d := editDistance(id, h); d <= max(2, max(len(id), len(h))/3) {
			cs = append(cs, cand{h, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d || cs[i].d == cs[j].d && cs[i].id < cs[j].id })
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, fmt.Sprintf("%q", cs[i].id))
	}
	if len(out) == 0 {
		return ""
	}
	return " Did you mean " + strings.Join(out, ", ") + "?"
}

// editDistance is the Levenshtein distance of a and b, in bytes (ids are
// ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func actionIDs(m *bkiam.SystemModel) []string {
	ids := make([]string, 0, len(m.Actions))
	for _, a := range m.Actions {
		ids = append(ids, a.ID)
	}
	return ids
}

// typeList renders related resource types as "bk_cmdb/biz, bk_cmdb/host".
func typeList(rts []bkiam.RelatedResourceType) string {
	parts := make([]string, len(rts))
	for i, rt := range rts {
		parts[i] = rt.System + "/" + rt.ID
	}
	return strings.Join(parts, ", ")
}

// checkInstanceGrantModel checks an instance grant's actions and resources
// against its system's model.
func checkInstanceGrantModel(ctx context.Context, data *conns.Data, m instanceGrantModel, diags *protocol.Diagnostics) {
	model := systemModel(ctx, data, protocol.Root("system"), m.System, diags)
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
				fmt.Sprintf("System %s has no action %q in its IAM model; IAM would refuse the grant.%s", model.System, id, closest(id, actionIDs(model))))
			continue
		}
		if a.Hidden {
			diags.AddAttributeWarning(at, "Hidden action",
				fmt.Sprintf("Action %q of system %s is hidden in IAM: the IAM web UI does not show it, so grants of it can "+
					"only be seen and changed through the API (and this configuration).", id, model.System))
		}
		if subjectType == subjectGroup && a.RBAC() {
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
func checkRelatedTypes(model *bkiam.SystemModel, a bkiam.ModelAction, entries []protocol.Value[resourceModel], diags *protocol.Diagnostics) {
	got := make([]*[2]string, len(entries))
	for i, e := range entries {
		entry, _ := e.Get()
		system, okS := entry.System.Get()
		typ, okT := entry.Type.Get()
		if okS && okT {
			got[i] = &[2]string{system, typ}
		}
	}
	for _, p := range relatedTypeProblems(model, a, got, "resources", "grant it in a resource of its own", "resources of their own") {
		at := protocol.Root("resources")
		if p.index >= 0 {
			at = at.WithElementKeyInt(p.index)
		}
		diags.AddAttributeError(at, p.summary, p.detail)
	}
}

// relatedTypeProblem is a way resources fail an action's related resource
// types; index is the entry at fault, -1 for the whole list.
type relatedTypeProblem struct {
	index           int
	summary, detail string
}

// relatedTypeProblems checks that the resource types got (system and type;
// nil where unknown) are the action's related resource types, in order, as
// IAM checks a grant (1902417). where names the list in the messages;
// alone and elsewhere say where an action of other types goes.
func relatedTypeProblems(model *bkiam.SystemModel, a bkiam.ModelAction, got []*[2]string, where, alone, elsewhere string) []relatedTypeProblem {
	want := a.RelatedResourceTypes
	if len(want) == 0 {
		if len(got) > 0 {
			return []relatedTypeProblem{{-1, "Resources for an action without resource types",
				fmt.Sprintf("Action %q of system %s relates to no resource type: IAM grants it on everything and refuses "+
					"resources with it. Set %s = [] and %s.", a.ID, model.System, where, alone)}}
		}
		return nil
	}
	if len(got) != len(want) {
		return []relatedTypeProblem{{-1, "Resources do not match the action",
			fmt.Sprintf("Action %q of system %s relates to %d resource type(s), %s in this order, and %s has %d "+
				"entries: give one entry per type, in that order. Actions with other resource types go in %s.",
				a.ID, model.System, len(want), typeList(want), where, len(got), elsewhere)}}
	}
	var out []relatedTypeProblem
	for i, g := range got {
		if g == nil || g[0] == want[i].System && g[1] == want[i].ID {
			continue
		}
		msg := fmt.Sprintf("Action %q of system %s relates to %s in this order, so %s[%d] must be %s/%s, got %s/%s.",
			a.ID, model.System, typeList(want), where, i, want[i].System, want[i].ID, g[0], g[1])
		if j := slices.IndexFunc(want, func(rt bkiam.RelatedResourceType) bool { return rt.System == g[0] && rt.ID == g[1] }); j >= 0 {
			msg += " Reorder the entries to follow the action's resource types."
		}
		out = append(out, relatedTypeProblem{i, "Resource type does not match the action", msg})
	}
	return out
}

// checkCreatorGrantModel checks a creator grant's type and actions against
// its system's creator configuration. Without actions, the grant needs the
// model at apply to tell its own actions from the creator's other
// policies in IAM's answer, so a plan that cannot read it is refused.
func checkCreatorGrantModel(ctx context.Context, data *conns.Data, m creatorGrantModel, diags *protocol.Diagnostics) {
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
	model := systemModel(ctx, data, protocol.Root("system"), m.System, diags)
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
				"not one of them.%s", typ, model.System, strings.Join(config, ", "), id, closest(id, config)))
	}
}

// creatorConfigActions are the actions of type's creator configuration in
// system's model: what IAM grants the creator of one of its instances.
// nil when the model is not read (check_model off); an error when it
// cannot be read or has no configuration for the type.
func creatorConfigActions(ctx context.Context, data *conns.Data, system protocol.StringValue, typ string, diags *protocol.Diagnostics) []string {
	model := systemModel(ctx, data, protocol.Root("system"), system, diags)
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
