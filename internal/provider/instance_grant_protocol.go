package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
)

// instanceGrantProtocol serves bkiam_instance_grant's validation, plan,
// apply and read (see protocolServer).
type instanceGrantProtocol struct{ typ tftypes.Object }

func (r instanceGrantProtocol) objectType() tftypes.Object { return r.typ }

// grantValue is a bkiam_instance_grant value in the planner's terms.
type grantValue struct {
	// attrs are the attributes as Terraform sent them.
	attrs   map[string]tftypes.Value
	system  string
	subject bkiam.Subject
	// grant is what the value declares; known is false when any part of it
	// is unknown, or null as in an imported resource.
	grant    grantplan.Grant
	known    bool
	policies map[string]int64
}

func decodeGrant(v tftypes.Value) grantValue {
	g := grantValue{attrs: attrsOf(v)}
	g.system, _ = stringOf(g.attrs["system"])
	subject := attrsOf(g.attrs["subject"])
	g.subject.Type, _ = stringOf(subject["type"])
	g.subject.ID, _ = stringOf(subject["id"])
	g.policies = int64MapOf(g.attrs["policies"])
	g.grant, g.known = grantOf(g.attrs, g.subject.Type)
	return g
}

// grantOf converts the grant's attributes; false when any is unknown.
func grantOf(attrs map[string]tftypes.Value, subjectType string) (grantplan.Grant, bool) {
	var g grantplan.Grant
	actions, ok := stringsOf(attrs["actions"])
	if !ok {
		return g, false
	}
	slices.Sort(actions)
	g.Actions = actions
	entries, ok := elemsOf(attrs["resources"])
	if !ok {
		return g, false
	}
	for _, e := range entries {
		entry := attrsOf(e)
		system, okSystem := stringOf(entry["system"])
		typ, okType := stringOf(entry["type"])
		instances, okInstances := stringMapOf(entry["instances"])
		if !okSystem || !okType || !okInstances {
			return g, false
		}
		g.Resources = append(g.Resources, grantplan.Resource{System: system, Type: typ, Instances: instances})
	}
	g.ExpiresAt, ok = expiresUnix(attrs["expires_at"], subjectType)
	return g, ok
}

// expiresUnix is the expired_at to send. Unset is sent as IAM's permanent
// value, never omitted: a user policy granted without one expires after a
// year. Group policies never expire, whatever is sent.
func expiresUnix(v tftypes.Value, subjectType string) (int64, bool) {
	if subjectType == subjectGroup || (v.IsKnown() && v.IsNull()) {
		return bkiam.PermanentExpiry, true
	}
	s, ok := stringOf(v)
	if !ok {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0, false
	}
	return t.Unix(), true
}

func (r instanceGrantProtocol) validate(_ context.Context, config tftypes.Value, diags *diagnostics) {
	attrs := attrsOf(config)
	if attrs == nil {
		return
	}
	checkNotBlank(root("system"), attrs["system"], diags)

	subject := attrsOf(attrs["subject"])
	subjectType, typeKnown := stringOf(subject["type"])
	if typeKnown && subjectType != subjectUser && subjectType != subjectGroup {
		diags.addAttributeError(root("subject").WithAttributeName("type"), "Unknown subject type",
			fmt.Sprintf(`subject.type value must be one of "user" or "group", got %s.`, strconv.Quote(subjectType)))
		typeKnown = false
	}
	idPath := root("subject").WithAttributeName("id")
	checkNotBlank(idPath, subject["id"], diags)
	if id, ok := stringOf(subject["id"]); ok && typeKnown {
		checkSubject(bkiam.Subject{Type: subjectType, ID: id}, idPath, diags)
	}

	checkActions(root("actions"), attrs["actions"], "Name the actions to grant, or remove the resource.", diags)

	entries, _ := elemsOf(attrs["resources"])
	for i, e := range entries {
		at := root("resources").WithElementKeyInt(i)
		entry := attrsOf(e)
		checkNotBlank(at.WithAttributeName("system"), entry["system"], diags)
		checkNotBlank(at.WithAttributeName("type"), entry["type"], diags)
		instancesPath := at.WithAttributeName("instances")
		instances := attrsOf(entry["instances"])
		if instances == nil {
			continue
		}
		checkInstanceCount(instancesPath, len(instances), diags)
		for id, name := range instances {
			if strings.TrimSpace(id) == "" {
				diags.addAttributeError(instancesPath, "Blank value",
					fmt.Sprintf("The instance IDs (keys) of %s must not be empty or blank, got %q.", pathString(instancesPath), id))
			}
			checkNotBlank(instancesPath.WithElementKeyString(id), name, diags)
		}
	}

	checkExpiresAt(attrs["expires_at"], subjectType, typeKnown, diags)
	checkTimeouts(attrs["timeouts"], diags)
}

// checkSubject reports a non-numeric group id and warns about admin.
func checkSubject(s bkiam.Subject, at *tftypes.AttributePath, diags *diagnostics) {
	switch {
	case s.Type == subjectGroup:
		if _, err := strconv.ParseUint(s.ID, 10, 63); err != nil {
			diags.addAttributeError(at, "Group IDs are numeric",
				fmt.Sprintf("subject.id must be the numeric ID of an IAM user group when subject.type is \"group\", got %q.", s.ID))
		}
	case strings.EqualFold(s.ID, "admin"):
		diags.addAttributeWarning(at, "IAM ignores grants to admin",
			"The user admin already holds every permission, so IAM accepts this grant and stores nothing. "+
				"The resource records policy IDs of 0.")
	}
}

// checkExpiresAt enforces IAM's rules for expired_at that hold whatever
// the time: the expiry in the past is checked when a plan would send it
// (checkExpiryAhead), so that an expired grant can still be refreshed and
// destroyed.
func checkExpiresAt(v tftypes.Value, subjectType string, subjectKnown bool, diags *diagnostics) {
	s, ok := stringOf(v)
	if !ok {
		return
	}
	at := root("expires_at")
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		diags.addAttributeError(at, "Invalid RFC 3339 time",
			fmt.Sprintf("expires_at must be an RFC 3339 time such as \"2027-06-30T00:00:00Z\", got %q.", s))
		return
	}
	if subjectKnown && subjectType == subjectGroup {
		diags.addAttributeError(at, "Group grants do not expire",
			"IAM keeps group policies forever and ignores an expiry. Remove expires_at, or grant to users instead.")
		return
	}
	if t.Unix() > bkiam.PermanentExpiry {
		diags.addAttributeError(at, "Expiry too late",
			fmt.Sprintf("expires_at must be no later than 2100-01-01T00:00:00Z, IAM's \"permanent\", got %s. Remove it for a permanent grant.", s))
	}
}

// checkExpiryAhead refuses to plan sending an expiry that has passed: IAM
// would refuse it.
func checkExpiryAhead(v tftypes.Value, now time.Time, diags *diagnostics) {
	s, ok := stringOf(v)
	if !ok {
		return
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil && !t.After(now) {
		diags.addAttributeError(root("expires_at"), "Expiry in the past",
			fmt.Sprintf("expires_at is %s, which has passed; IAM refuses expiries that are not in the future. Set a later time or remove it for a permanent grant.", s))
	}
}

func (r instanceGrantProtocol) plan(_ context.Context, in planInput, diags *diagnostics) planOutput {
	if in.proposed.IsNull() {
		return planOutput{planned: in.proposed} // destroy: nothing to check, whatever the expiry
	}
	proposed := attrsOf(in.proposed)
	policiesType := r.typ.AttributeTypes["policies"]
	if in.prior.IsNull() {
		checkExpiryAhead(proposed["expires_at"], time.Now(), diags)
		return planOutput{planned: withAttrs(r.typ, proposed, map[string]tftypes.Value{
			"id": unknownOf(tftypes.String), "policies": unknownOf(policiesType),
		})}
	}
	if in.proposed.Equal(in.prior) {
		return planOutput{planned: in.proposed}
	}
	prior := attrsOf(in.prior)
	var out planOutput
	for _, name := range []string{"system", "subject"} {
		if !proposed[name].Equal(prior[name]) {
			out.requiresReplace = append(out.requiresReplace, root(name))
		}
	}
	if !proposed["expires_at"].Equal(prior["expires_at"]) {
		checkExpiryAhead(proposed["expires_at"], time.Now(), diags)
	}
	id := prior["id"]
	if id.IsNull() {
		id = unknownOf(tftypes.String)
	}
	out.planned = withAttrs(r.typ, proposed, map[string]tftypes.Value{
		"id":       id,
		"policies": r.plannedPolicies(decodeGrant(in.proposed), decodeGrant(in.prior), in.private, diags),
	})
	return out
}

// plannedPolicies shows the policy ids that an update keeps, instead of
// "known after apply" for all of them.
func (r instanceGrantProtocol) plannedPolicies(plan, state grantValue, private privateState, diags *diagnostics) tftypes.Value {
	typ := r.typ.AttributeTypes["policies"]
	if readHoldings(private, diags) != nil || !plan.known || !state.known || state.attrs["policies"].IsNull() {
		return unknownOf(typ) // after a run that failed midway, any policy may be granted anew
	}
	next, old := plan.grant, state.grant
	// Policy ids survive every change but those that revoke an action
	// whole before granting it again.
	if next.ExpiresAt < old.ExpiresAt || (len(next.Resources) > 1 && !sameGrantInstances(old, next)) {
		return unknownOf(typ)
	}
	return plannedPolicies(typ, next.Actions, state.policies, func(a string) bool { return slices.Contains(old.Actions, a) })
}

func sameGrantInstances(a, b grantplan.Grant) bool {
	return grantplan.Held(&grantplan.Grant{Actions: []string{"x"}, Resources: a.Resources}).
		Equal(grantplan.Held(&grantplan.Grant{Actions: []string{"x"}, Resources: b.Resources}))
}

func (r instanceGrantProtocol) apply(ctx context.Context, data *providerData, in applyInput, diags *diagnostics) (tftypes.Value, privateState) {
	private := in.private
	var operation string
	var current, next *grantValue
	switch {
	case in.planned.IsNull():
		operation = "delete"
		state := decodeGrant(in.prior)
		current = &state
	case in.prior.IsNull():
		operation = "create"
		plan := decodeGrant(in.planned)
		next = &plan
	default:
		operation = "update"
		state, plan := decodeGrant(in.prior), decodeGrant(in.planned)
		current, next = &state, &plan
	}
	if next != nil && !next.known {
		diags.addError("Unknown grant at apply", "Terraform asked to apply a grant that is not fully known. This is a bug in Terraform or the provider.")
		return in.prior, private
	}
	held := grantplan.Holdings{}
	if current != nil {
		held = r.holdings(private, *current, diags)
	}
	if diags.hasError() {
		return in.prior, private
	}
	planned := next
	if planned == nil {
		planned = current
	}
	ctx, cancel := context.WithTimeout(ctx, timeoutsOf(planned.attrs["timeouts"], operation))
	defer cancel()

	runner := &grantRunner{client: data.instances, system: planned.system, subject: planned.subject, held: held, policies: map[string]int64{}}
	if current != nil {
		runner.policies = current.policies
	}
	var want *grantplan.Grant
	if next != nil {
		want = &next.grant
	}
	ok := planAndRun(ctx, func() ([]grantplan.Call, error) { return grantplan.Plan(runner.held, want, data.limits()) }, runner.run, diags)
	data.invalidateScans(planned.system, slices.Concat(slices.Collect(maps.Keys(held)), planned.grant.Actions))
	switch {
	case ok && next == nil:
		return tftypes.NewValue(r.typ, nil), nil // revoked: the resource is gone
	case ok:
		writeHoldings(private, nil, diags)
		return withAttrs(r.typ, next.attrs, map[string]tftypes.Value{
			"id":       stringValue(grantID(next.system, next.subject)),
			"policies": policiesValue(r.typ.AttributeTypes["policies"], next.grant.Actions, runner.policies),
		}), private
	case current == nil && len(runner.held) == 0:
		return tftypes.NewValue(r.typ, nil), nil // nothing granted: no resource to record
	}
	// The run stopped midway: record what is held, so that it is not lost.
	// A failed create is tainted by Terraform; the next apply revokes it
	// and grants everything again.
	return r.partial(planned, want, runner, private, diags), private
}

// holdings returns what the resource holds: from private state after a
// failed run, else from its public state.
func (r instanceGrantProtocol) holdings(private privateState, state grantValue, diags *diagnostics) grantplan.Holdings {
	if held := readHoldings(private, diags); held != nil {
		return held
	}
	if !state.known {
		return grantplan.Holdings{} // imported: nothing known
	}
	return grantplan.Held(&state.grant)
}

// partial records a run that stopped midway: state shows the view of what
// is held, and private state keeps the exact holdings when the view
// cannot.
func (r instanceGrantProtocol) partial(m *grantValue, next *grantplan.Grant, runner *grantRunner, private privateState, diags *diagnostics) tftypes.Value {
	shape := m.grant.Resources
	if next != nil {
		shape = next.Resources
	}
	view := runner.held.View(next, shape)
	recordHoldings(private, runner.held, view, diags)
	return withAttrs(r.typ, m.attrs, map[string]tftypes.Value{
		"id":         stringValue(grantID(m.system, m.subject)),
		"actions":    stringSetValue(r.typ.AttributeTypes["actions"], view.Actions),
		"resources":  r.resourcesValue(view.Resources),
		"expires_at": r.expiresValue(view.ExpiresAt, next, m.attrs["expires_at"]),
		"policies":   policiesValue(r.typ.AttributeTypes["policies"], view.Actions, runner.policies),
	})
}

func (r instanceGrantProtocol) resourcesValue(resources []grantplan.Resource) tftypes.Value {
	listType := r.typ.AttributeTypes["resources"].(tftypes.List) //nolint:forcetypeassert // fixed by the schema
	entryType := listType.ElementType.(tftypes.Object)           //nolint:forcetypeassert // fixed by the schema
	entries := make([]tftypes.Value, len(resources))
	for i, res := range resources {
		entries[i] = tftypes.NewValue(entryType, map[string]tftypes.Value{
			"system":    stringValue(res.System),
			"type":      stringValue(res.Type),
			"instances": stringMapValue(entryType.AttributeTypes["instances"], res.Instances),
		})
	}
	return tftypes.NewValue(listType, entries)
}

// expiresValue is the expires_at of a view: an expiry equal to next's
// keeps the configuration's spelling, so that it shows no change.
func (r instanceGrantProtocol) expiresValue(expiresAt int64, next *grantplan.Grant, configured tftypes.Value) tftypes.Value {
	switch {
	case next != nil && expiresAt == next.ExpiresAt, expiresAt == 0:
		// 0: no action is shown held, so there is no expiry to show.
		return configured
	case expiresAt == bkiam.PermanentExpiry:
		return tftypes.NewValue(tftypes.String, nil)
	default:
		return stringValue(time.Unix(expiresAt, 0).UTC().Format(time.RFC3339))
	}
}

// read trusts state, as IAM has no API that reads a grant back by the
// ids a grant returns, except to notice that a user grant expired.
// read removes a user grant that has expired, since IAM no longer holds
// it; with detect_drift, it also keeps of the record only what IAM still
// holds, and completes an import.
func (r instanceGrantProtocol) read(ctx context.Context, data *providerData, state tftypes.Value, private privateState, diags *diagnostics) (tftypes.Value, privateState, bool) {
	if v, expired := r.readExpiry(state, private, diags); expired || diags.hasError() {
		return v, nil, expired
	}
	g := decodeGrant(state)
	actions, resource, importing := pendingImport(g)
	switch {
	case importing && (data == nil || data.scans == nil):
		// Without detect_drift, import adopts the subject's grants and
		// holds nothing known, as it always has.
		diags.addWarning("Import without detect_drift",
			"The import ID names actions and a resource type, but only detect_drift can read what the subject holds of them. "+
				"The resource is adopted holding nothing known: the next apply grants what the configuration declares.")
		return withAttrs(r.typ, g.attrs, map[string]tftypes.Value{
			"actions":   tftypes.NewValue(r.typ.AttributeTypes["actions"], nil),
			"resources": tftypes.NewValue(r.typ.AttributeTypes["resources"], nil),
		}), private, true
	case data == nil || data.scans == nil:
		return state, private, false
	case importing:
		return r.readImport(ctx, data.scans, g, actions, resource, private, diags)
	case !g.known:
		return state, private, false // adopted by an import without detect_drift: nothing recorded
	}
	held := r.holdings(private, g, diags)
	if diags.hasError() {
		return state, private, false
	}
	now, err := stillHeld(ctx, data.scans, g.system, g.subject, held)
	if err != nil {
		diags.addError("Cannot read grants back from IAM",
			fmt.Sprintf("detect_drift could not read what %s holds in %s: %v. State is kept as it was; fix the cause, or turn "+
				"detect_drift off.", subjectName(g.subject), g.system, err))
		return state, private, false
	}
	if now.Equal(held) {
		return state, private, false
	}
	if loss := describeLoss(held, now); loss != "" {
		diags.addWarning("Grants revoked outside Terraform",
			fmt.Sprintf("IAM no longer holds what this resource granted %s in %s: %s. It is removed from state, so the plan "+
				"grants it again.", subjectName(g.subject), g.system, loss))
	}
	if len(now) == 0 {
		return tftypes.NewValue(r.typ, nil), nil, true
	}
	view := now.View(&g.grant, g.grant.Resources)
	private = maps.Clone(private)
	recordHoldings(private, now, view, diags)
	return withAttrs(r.typ, g.attrs, map[string]tftypes.Value{
		"actions":    stringSetValue(r.typ.AttributeTypes["actions"], view.Actions),
		"resources":  r.resourcesValue(view.Resources),
		"expires_at": r.expiresValue(view.ExpiresAt, &g.grant, g.attrs["expires_at"]),
		"policies":   policiesValue(r.typ.AttributeTypes["policies"], view.Actions, g.policies),
	}), private, true
}

// pendingImport recognises the state an import by
// SYSTEM/SUBJECT_TYPE/SUBJECT_ID/ACTIONS/RESOURCE_SYSTEM/TYPE leaves: the
// actions and the resource type, with no instances yet.
func pendingImport(g grantValue) ([]string, grantplan.Resource, bool) {
	actions, ok := stringsOf(g.attrs["actions"])
	entries, _ := elemsOf(g.attrs["resources"])
	if !ok || len(entries) != 1 || !attrsOf(entries[0])["instances"].IsNull() {
		return nil, grantplan.Resource{}, false
	}
	entry := attrsOf(entries[0])
	var res grantplan.Resource
	res.System, _ = stringOf(entry["system"])
	res.Type, _ = stringOf(entry["type"])
	slices.Sort(actions)
	return actions, res, true
}

// readImport completes an import: what the subject holds of the actions,
// read from IAM, with ids as names.
func (r instanceGrantProtocol) readImport(ctx context.Context, scans *bkiam.ScanCache, g grantValue, actions []string, resource grantplan.Resource, private privateState, diags *diagnostics) (tftypes.Value, privateState, bool) {
	held, err := importedHoldings(ctx, scans, g.system, g.subject, actions, resource)
	if err != nil {
		diags.addError("Cannot import the grant", err.Error()+".")
		return tftypes.Value{}, private, false
	}
	if g.subject.Type == subjectGroup {
		for action, h := range held {
			h.ExpiresAt = bkiam.PermanentExpiry // group policies never expire
			held[action] = h
		}
	}
	view := held.View(nil, []grantplan.Resource{resource})
	private = maps.Clone(private)
	recordHoldings(private, held, view, diags)
	return withAttrs(r.typ, g.attrs, map[string]tftypes.Value{
		"id":         stringValue(grantID(g.system, g.subject)),
		"actions":    stringSetValue(r.typ.AttributeTypes["actions"], view.Actions),
		"resources":  r.resourcesValue(view.Resources),
		"expires_at": r.expiresValue(view.ExpiresAt, nil, tftypes.NewValue(tftypes.String, nil)),
		"policies":   policiesValue(r.typ.AttributeTypes["policies"], nil, nil),
	}), private, true
}

func (r instanceGrantProtocol) readExpiry(state tftypes.Value, private privateState, diags *diagnostics) (tftypes.Value, bool) {
	attrs := attrsOf(state)
	expires, ok := stringOf(attrs["expires_at"])
	subjectType, _ := stringOf(attrsOf(attrs["subject"])["type"])
	if !ok || subjectType != subjectUser {
		return state, false
	}
	t, err := time.Parse(time.RFC3339, expires)
	if err != nil || t.After(time.Now()) {
		return state, false
	}
	// The public expiry is the earliest of the actions'; after a run that
	// failed midway, the exact record may hold actions that expire later,
	// or that the public state leaves out. Forgetting those would lose
	// track of grants IAM still holds.
	if held := readHoldings(private, diags); held != nil {
		for _, h := range held {
			if h.ExpiresAt == bkiam.PermanentExpiry || time.Unix(h.ExpiresAt, 0).After(time.Now()) {
				return state, false
			}
		}
	}
	if diags.hasError() {
		return state, false
	}
	g := decodeGrant(state)
	diags.addWarning("Grant expired",
		fmt.Sprintf("The grant of %s to %s %s in %s expired at %s, so IAM no longer holds it. It is removed from state: "+
			"set a later expires_at (or remove it) and apply to grant it again.",
			strings.Join(g.grant.Actions, ", "), g.subject.Type, g.subject.ID, g.system, expires))
	return tftypes.NewValue(r.typ, nil), true
}

func grantID(system string, subject bkiam.Subject) string {
	return system + "/" + subject.Type + "/" + subject.ID
}
