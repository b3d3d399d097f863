package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
)

// creatorGrantProtocol serves bkiam_creator_grant's validation, plan,
// apply and read (see protocolServer).
type creatorGrantProtocol struct{ typ tftypes.Object }

func (r creatorGrantProtocol) objectType() tftypes.Object { return r.typ }

// creatorValue is a bkiam_creator_grant value in the planner's terms.
type creatorValue struct {
	attrs   map[string]tftypes.Value
	target  grantplan.CreatorTarget
	creator string
	// instances is nil when any part of it is unknown, or null as in an
	// imported resource.
	instances map[string]grantplan.CreatorInstance
	// actions is the actions attribute, sorted; nil when unset.
	actions  []string
	granted  []string
	policies map[string]int64
}

func decodeCreator(v tftypes.Value) creatorValue {
	c := creatorValue{attrs: attrsOf(v)}
	c.target.System, _ = stringOf(c.attrs["system"])
	c.target.Type, _ = stringOf(c.attrs["type"])
	c.creator, _ = stringOf(c.attrs["creator"])
	c.instances = creatorInstancesOf(c.attrs["instances"])
	if actions, ok := stringsOf(c.attrs["actions"]); ok {
		slices.Sort(actions)
		c.actions = actions
	}
	c.granted, _ = stringsOf(c.attrs["granted_actions"])
	c.policies = int64MapOf(c.attrs["policies"])
	return c
}

// creatorInstancesOf converts a fully known instances attribute.
func creatorInstancesOf(v tftypes.Value) map[string]grantplan.CreatorInstance {
	elems := attrsOf(v)
	if elems == nil {
		return nil
	}
	out := make(map[string]grantplan.CreatorInstance, len(elems))
	for id, e := range elems {
		attrs := attrsOf(e)
		name, ok := stringOf(attrs["name"])
		if !ok || !attrs["ancestors"].IsFullyKnown() {
			return nil
		}
		in := grantplan.CreatorInstance{ID: id, Name: name}
		ancestors, _ := elemsOf(attrs["ancestors"])
		for _, a := range ancestors {
			node := attrsOf(a)
			var n grantplan.Node
			n.System, _ = stringOf(node["system"])
			n.Type, _ = stringOf(node["type"])
			n.ID, _ = stringOf(node["id"])
			in.Ancestors = append(in.Ancestors, n)
		}
		out[id] = in
	}
	return out
}

func (r creatorGrantProtocol) validate(_ context.Context, config tftypes.Value, diags *diagnostics) {
	attrs := attrsOf(config)
	if attrs == nil {
		return
	}
	for _, name := range []string{"system", "type", "creator"} {
		checkNotBlank(root(name), attrs[name], diags)
	}
	if creator, ok := stringOf(attrs["creator"]); ok && strings.EqualFold(creator, "admin") {
		diags.addAttributeWarning(root("creator"), "IAM ignores creator grants to admin",
			"The user admin already holds every permission, so IAM accepts this grant and stores nothing. "+
				"The resource records policy IDs of 0.")
	}
	if instances := attrsOf(attrs["instances"]); instances != nil {
		checkInstanceCount(root("instances"), len(instances), diags)
		for id, in := range instances {
			at := root("instances").WithElementKeyString(id)
			if strings.TrimSpace(id) == "" {
				diags.addAttributeError(root("instances"), "Blank value",
					fmt.Sprintf("The instance IDs (keys) of instances must not be empty or blank, got %q.", id))
			}
			instance := attrsOf(in)
			checkNotBlank(at.WithAttributeName("name"), instance["name"], diags)
			ancestors, _ := elemsOf(instance["ancestors"])
			for i, a := range ancestors {
				node := attrsOf(a)
				for _, name := range []string{"system", "type", "id"} {
					checkNotBlank(at.WithAttributeName("ancestors").WithElementKeyInt(i).WithAttributeName(name), node[name], diags)
				}
			}
		}
	}
	checkActions(root("actions"), attrs["actions"], "Name the creator actions to expect, or omit actions to record every action IAM grants the creator.", diags)
	checkTimeouts(attrs["timeouts"], diags)
}

func (r creatorGrantProtocol) plan(_ context.Context, in planInput, diags *diagnostics) planOutput {
	if in.proposed.IsNull() {
		return planOutput{planned: in.proposed}
	}
	proposed := attrsOf(in.proposed)
	grantedType, policiesType := r.typ.AttributeTypes["granted_actions"], r.typ.AttributeTypes["policies"]
	if in.prior.IsNull() {
		return planOutput{planned: withAttrs(r.typ, proposed, map[string]tftypes.Value{
			"id": unknownOf(tftypes.String), "granted_actions": unknownOf(grantedType), "policies": unknownOf(policiesType),
		})}
	}
	if in.proposed.Equal(in.prior) {
		return planOutput{planned: in.proposed}
	}
	prior := attrsOf(in.prior)
	var out planOutput
	for _, name := range []string{"system", "type", "creator", "actions"} {
		if !proposed[name].Equal(prior[name]) {
			out.requiresReplace = append(out.requiresReplace, root(name))
		}
	}
	id := prior["id"]
	if id.IsNull() {
		id = unknownOf(tftypes.String)
	}
	changes := map[string]tftypes.Value{"id": id, "granted_actions": unknownOf(grantedType), "policies": unknownOf(policiesType)}
	// With actions set and unchanged, the recorded actions and the policy
	// ids an update keeps are known in advance, unless a run failed midway.
	plan, state := decodeCreator(in.proposed), decodeCreator(in.prior)
	if plan.actions != nil && proposed["actions"].Equal(prior["actions"]) && !prior["policies"].IsNull() &&
		readCreatorHoldings(in.private, state.target, diags) == nil {
		changes["granted_actions"] = proposed["actions"]
		changes["policies"] = plannedPolicies(policiesType, plan.actions, state.policies, func(string) bool { return true })
	}
	out.planned = withAttrs(r.typ, proposed, changes)
	return out
}

func (r creatorGrantProtocol) apply(ctx context.Context, data *providerData, in applyInput, diags *diagnostics) (tftypes.Value, privateState) {
	private := in.private
	var operation string
	var current, next *creatorValue
	switch {
	case in.planned.IsNull():
		operation = "delete"
		state := decodeCreator(in.prior)
		current = &state
	case in.prior.IsNull():
		operation = "create"
		plan := decodeCreator(in.planned)
		next = &plan
	default:
		operation = "update"
		state, plan := decodeCreator(in.prior), decodeCreator(in.planned)
		current, next = &state, &plan
	}
	if next != nil && next.instances == nil {
		diags.addError("Unknown instances at apply", "Terraform asked to apply instances that are not fully known. This is a bug in Terraform or the provider.")
		return in.prior, private
	}
	// The run starts from what state records (the plan's empty record on
	// create) and expects the actions the plan names.
	from := current
	if from == nil {
		from = &creatorValue{attrs: next.attrs, target: next.target, creator: next.creator}
	}
	runner := &creatorRunner{
		client:   data.client,
		target:   from.target,
		creator:  from.creator,
		held:     r.holdings(private, current, diags),
		expected: from.actions,
		granted:  map[string]bool{},
		policies: from.policies,
	}
	if runner.policies == nil {
		runner.policies = map[string]int64{}
	}
	for _, a := range from.granted {
		runner.granted[a] = true
	}
	var want map[string]grantplan.CreatorInstance
	result := from
	if next != nil {
		runner.expected = next.actions
		want = next.instances
		result = next
	}
	if diags.hasError() {
		return in.prior, private
	}
	ctx, cancel := context.WithTimeout(ctx, timeoutsOf(result.attrs["timeouts"], operation))
	defer cancel()

	ok := planAndRun(ctx, func() ([]grantplan.CreatorCall, error) {
		return grantplan.PlanCreator(runner.target, runner.held, want, data.limits())
	}, runner.run, diags)
	data.invalidateScans(runner.target.System, slices.Concat(runner.actions(), result.granted))
	switch {
	case ok && next == nil:
		return tftypes.NewValue(r.typ, nil), nil
	case !ok && current == nil && len(runner.held) == 0:
		return tftypes.NewValue(r.typ, nil), nil // nothing granted: no resource to record
	}
	// On failure Terraform marks a created resource tainted; the next
	// apply revokes what was granted and registers everything again.
	granted := runner.actions()
	changes := map[string]tftypes.Value{
		"id":              stringValue(result.target.System + "/" + result.target.Type + "/" + result.creator),
		"granted_actions": stringSetValue(r.typ.AttributeTypes["granted_actions"], granted),
		"policies":        policiesValue(r.typ.AttributeTypes["policies"], granted, runner.policies),
	}
	if ok {
		writeCreatorHoldings(private, nil, diags)
		return withAttrs(r.typ, result.attrs, changes), private
	}
	view, exact := runner.held.View(runner.target, want)
	changes["instances"] = r.instancesValue(view)
	if exact {
		writeCreatorHoldings(private, nil, diags)
	} else {
		writeCreatorHoldings(private, runner.held, diags)
	}
	return withAttrs(r.typ, result.attrs, changes), private
}

// holdings returns what the creator holds: from private state after a
// failed run, else from the public state; nothing before a create.
// needsRead reports whether read has anything to do: only detect_drift
// changes a creator grant's state on refresh, so without it the state
// goes back as it came, never decoded.
func (r creatorGrantProtocol) needsRead(data *providerData) bool {
	return data != nil && data.scans != nil
}

// read keeps, with detect_drift, only the paths IAM still holds for the
// creator, so that the plan registers the others again.
func (r creatorGrantProtocol) read(ctx context.Context, data *providerData, state tftypes.Value, private privateState, diags *diagnostics) (tftypes.Value, privateState, bool) {
	if !r.needsRead(data) {
		return state, private, false
	}
	c := decodeCreator(state)
	held := r.holdings(private, &c, diags)
	if diags.hasError() || len(held) == 0 || len(c.granted) == 0 {
		return state, private, false // nothing recorded to check
	}
	now, err := creatorStillHeld(ctx, data.scans, c, held)
	if err != nil {
		diags.addError("Cannot read grants back from IAM",
			fmt.Sprintf("detect_drift could not read what creator %s holds in %s: %v. State is kept as it was; fix the cause, "+
				"or turn detect_drift off.", c.creator, c.target.System, err))
		return state, private, false
	}
	var lost []string
	doubtCleared := false
	for path, h := range held {
		if _, ok := now[path]; !ok {
			lost = append(lost, h.Instance.ID)
		} else if h.Doubt {
			doubtCleared = true
		}
	}
	if len(lost) == 0 && !doubtCleared {
		return state, private, false
	}
	if len(lost) > 0 {
		diags.addWarning("Creator grants revoked outside Terraform",
			fmt.Sprintf("IAM no longer holds the creator actions of %s on %d of the %s/%s instances this resource registered (%s). "+
				"They are removed from state, so the plan registers them again.", c.creator, len(lost), c.target.System,
				c.target.Type, someIDs(lost)))
	}
	if len(now) == 0 {
		return tftypes.NewValue(r.typ, nil), nil, true
	}
	view, exact := now.View(c.target, c.instances)
	private = maps.Clone(private)
	if exact {
		writeCreatorHoldings(private, nil, diags)
	} else {
		writeCreatorHoldings(private, now, diags)
	}
	return withAttrs(r.typ, c.attrs, map[string]tftypes.Value{"instances": r.instancesValue(view)}), private, true
}

func (r creatorGrantProtocol) holdings(private privateState, state *creatorValue, diags *diagnostics) grantplan.CreatorHoldings {
	if state == nil {
		return grantplan.CreatorHoldings{}
	}
	if held := readCreatorHoldings(private, state.target, diags); held != nil {
		return held
	}
	if state.instances == nil {
		return grantplan.CreatorHoldings{} // imported: nothing known
	}
	return grantplan.CreatorHeld(state.target, state.instances)
}

func (r creatorGrantProtocol) instancesValue(instances map[string]grantplan.CreatorInstance) tftypes.Value {
	mapType := r.typ.AttributeTypes["instances"].(tftypes.Map)               //nolint:forcetypeassert // fixed by the schema
	instanceType := mapType.ElementType.(tftypes.Object)                     //nolint:forcetypeassert // fixed by the schema
	ancestorsType := instanceType.AttributeTypes["ancestors"].(tftypes.List) //nolint:forcetypeassert // fixed by the schema
	nodeType := ancestorsType.ElementType.(tftypes.Object)                   //nolint:forcetypeassert // fixed by the schema
	elems := make(map[string]tftypes.Value, len(instances))
	for id, in := range instances {
		ancestors := tftypes.NewValue(ancestorsType, nil)
		if len(in.Ancestors) > 0 {
			nodes := make([]tftypes.Value, len(in.Ancestors))
			for i, a := range in.Ancestors {
				nodes[i] = tftypes.NewValue(nodeType, map[string]tftypes.Value{
					"system": stringValue(a.System), "type": stringValue(a.Type), "id": stringValue(a.ID),
				})
			}
			ancestors = tftypes.NewValue(ancestorsType, nodes)
		}
		elems[id] = tftypes.NewValue(instanceType, map[string]tftypes.Value{"name": stringValue(in.Name), "ancestors": ancestors})
	}
	return tftypes.NewValue(mapType, elems)
}
