package provider

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/ledger"
)

// protocolResources are the resources served on terraform-plugin-go
// values (see DESIGN.md, "Why the hot path is below the framework"). A
// line here is all the registration a resource needs: the framework's
// view of it (its schema, for Terraform and tfplugindocs), the server's
// routing of its calls and its value type are all derived from this list.
var protocolResources = []servedResource{
	serve[instanceGrantModel](instanceGrant{}),
	serve[creatorGrantModel](creatorGrant{}),
	serve[groupMembersModel](groupMembers{}),
	serve[groupPermissionModel](newGroupPermission()),
}

// frameworkResources and frameworkDataSources are served by the
// framework itself, for values small enough that its machinery costs
// nothing that matters (DESIGN.md, "Resources and data sources on the
// framework"). They get the provider's *providerData from Configure.
var (
	frameworkResources   = []func() resource.Resource{newGradeManagerResource, newGroupResource}
	frameworkDataSources = []func() datasource.DataSource{newSystemDataSource, newGroupDataSource, newGradeManagerDataSource}
)

// resourceDef is a resource served on protocol values, written against
// its model M: a Go struct of the resource's attributes, which the
// resource's codec (decode, encode) converts to and from tftypes.Value.
// serve adapts it to the protocol; it never sees a protocol message.
type resourceDef[M any] interface {
	// name is the type name after the provider's prefix: "instance_grant".
	name() string
	// schema is the resource's schema, as the framework declares it. Only
	// what the protocol path honours may be used (TestProtocolSchemasUseNothingIgnored).
	schema(ctx context.Context) schema.Schema

	// decode converts a known, non-null value of the schema's type;
	// encode converts back, with typ the schema's object type.
	decode(v tftypes.Value) (M, error)
	encode(typ tftypes.Object, m M) tftypes.Value

	// importState turns an import ID into the state to read, and the
	// private state read receives with it.
	importState(ctx context.Context, id string, diags *diagnostics) (M, privateState)
	// validate checks a configuration, in which any value may be unknown.
	validate(ctx context.Context, config M, diags *diagnostics)
	// plan plans a create (prior nil) or an update; serve answers a
	// destroy and a change that changes nothing itself.
	plan(ctx context.Context, req planRequest[M], diags *diagnostics) planResponse[M]
	// checkModel checks a planned create or update against the model of
	// its system (check_model; model_checks.go). data is nil before the
	// provider is configured.
	checkModel(ctx context.Context, data *providerData, proposed M, diags *diagnostics)
	// apply carries out a create (prior nil), an update or a destroy
	// (planned nil). It returns the new state, nil when the resource is
	// gone, and the private state to keep.
	apply(ctx context.Context, data *providerData, req applyRequest[M], diags *diagnostics) (*M, privateState)
	// refreshes reports whether read can change state with these
	// settings (data is nil when the provider is not configured); when
	// it cannot, a refresh returns the state untouched, never decoded.
	refreshes(data *providerData) bool
	// read refreshes state: it returns the new state (nil when the
	// resource is gone), the private state, and whether either changed.
	read(ctx context.Context, data *providerData, req readRequest[M], diags *diagnostics) (*M, privateState, bool)

	// claims are the IAM paths m grants, for the process's ledger
	// (shared.go): Actions nil when it grants none, or when any part is
	// unknown. label names m in other resources' warnings.
	claims(m M) ledger.Claims
	label(m M) string
	// reassert marks a planned update as granting again, at apply, what
	// another resource of the command revokes: the update must show a
	// change, or Terraform would not apply it.
	reassert(planned M) M
}

type planRequest[M any] struct {
	prior    *M // nil on create
	proposed M
	private  privateState
}

type planResponse[M any] struct {
	planned         M
	requiresReplace []*tftypes.AttributePath
}

type applyRequest[M any] struct {
	prior   *M // nil on create
	planned *M // nil on destroy
	private privateState
	// shared is this apply's place in the process's ledger.
	shared *sharedApply
}

// operation is what an apply carries out, in the words of the timeouts
// attribute: "create", "update" or "delete".
func (r applyRequest[M]) operation() string {
	switch {
	case r.planned == nil:
		return "delete"
	case r.prior == nil:
		return "create"
	}
	return "update"
}

// viewsOf converts an apply's prior and planned models with view: current
// is nil on create, next on destroy.
func viewsOf[M, V any](r applyRequest[M], view func(M) V) (current, next *V) {
	if r.prior != nil {
		v := view(*r.prior)
		current = &v
	}
	if r.planned != nil {
		v := view(*r.planned)
		next = &v
	}
	return current, next
}

type readRequest[M any] struct {
	state   M
	private privateState
}

// servedResource is a resource as the server and the framework see it.
type servedResource interface {
	typeName() string
	objectType() tftypes.Object
	// frameworkResource is the framework's view: the type name and schema.
	frameworkResource() resource.Resource
	validateConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) *tfprotov6.ValidateResourceConfigResponse
	planChange(ctx context.Context, data *providerData, b *book, req *tfprotov6.PlanResourceChangeRequest) *tfprotov6.PlanResourceChangeResponse
	applyChange(ctx context.Context, data *providerData, req *tfprotov6.ApplyResourceChangeRequest) *tfprotov6.ApplyResourceChangeResponse
	readResource(ctx context.Context, data *providerData, req *tfprotov6.ReadResourceRequest) *tfprotov6.ReadResourceResponse
	importResource(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) *tfprotov6.ImportResourceStateResponse
	upgradeState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) *tfprotov6.UpgradeResourceStateResponse
	schemaVersion() int64
	upgradeProblems() []string
}

// served adapts a resourceDef to the protocol: it unmarshals Terraform's
// values with the schema's type, decodes them into the model, and
// encodes the answers.
type served[M any] struct {
	def resourceDef[M]
	typ func() tftypes.Object
	// version is the schema's version, read once: Terraform upgrades every
	// stored state before reading it, so it is asked for every resource.
	version func() int64
}

func serve[M any](def resourceDef[M]) servedResource {
	return served[M]{def: def, typ: sync.OnceValue(func() tftypes.Object {
		ctx := context.Background()
		return def.schema(ctx).Type().TerraformType(ctx).(tftypes.Object) //nolint:forcetypeassert // a schema is always an object
	}), version: sync.OnceValue(func() int64 { return def.schema(context.Background()).Version })}
}

func (s served[M]) typeName() string           { return typeName + "_" + s.def.name() }
func (s served[M]) objectType() tftypes.Object { return s.typ() }

func (s served[M]) validateConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) *tfprotov6.ValidateResourceConfigResponse {
	var diags diagnostics
	if config, ok := s.decode(req.Config, "configuration", &diags); ok && config != nil {
		s.def.validate(ctx, *config, &diags)
	}
	return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: diags}
}

func (s served[M]) planChange(ctx context.Context, data *providerData, b *book, req *tfprotov6.PlanResourceChangeRequest) *tfprotov6.PlanResourceChangeResponse {
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState, PlannedPrivate: req.PriorPrivate}
	var diags diagnostics
	unchanged := sameValue(req.PriorState, req.ProposedNewState)
	if unchanged && b == nil {
		// Nothing changed (refresh changes nothing either), and no ledger
		// to tell: the plan is the state, never decoded.
		return resp
	}
	private := readPrivateState(req.PriorPrivate, &diags)
	priorValue, okPrior := s.unmarshal(req.PriorState, "prior state", &diags)
	proposedValue := priorValue
	okProposed := true
	if !unchanged {
		proposedValue, okProposed = s.unmarshal(req.ProposedNewState, "proposed new state", &diags)
	}
	if !okPrior || !okProposed || diags.hasError() {
		resp.Diagnostics = diags
		return resp
	}
	prior, okPrior := s.decodeValue(priorValue, "prior state", &diags)
	var planned *M
	var out planResponse[M]
	switch {
	case !okPrior:
	case proposedValue.IsNull():
		// A destroy: planned as proposed.
	case unchanged, proposedValue.Equal(priorValue):
		// A change Terraform proposes that changes nothing: planned as
		// proposed.
		planned = prior
	default:
		proposed, okProposed := s.decodeValue(proposedValue, "proposed new state", &diags)
		if okProposed {
			// Only a create or a change is checked against the model: an
			// unchanged resource reads no model.
			s.def.checkModel(ctx, data, *proposed, &diags)
			out = s.def.plan(ctx, planRequest[M]{prior: prior, proposed: *proposed, private: private}, &diags)
			planned = &out.planned
			resp.RequiresReplace = out.requiresReplace
		}
	}
	decided := planned
	if b != nil && !diags.hasError() {
		// Before the provider is configured nothing is refused.
		allowShared := data == nil || data.allowSharedGrants
		planned = s.account(b, prior, planned, len(out.requiresReplace) > 0, allowShared, private, resp, &diags)
	}
	if planned != nil && (planned != prior || decided != planned) {
		resp.PlannedState = s.marshal(planned, &diags)
	}
	resp.Diagnostics = diags
	return resp
}

// account records a plan in the process's ledger and answers what it
// finds (see shared.go): warnings about shared paths and expiries, the
// paths a destroy must spare, and an update that grants again what
// another resource revokes. It returns the planned model, changed when
// it must grant again.
func (s served[M]) account(b *book, prior, planned *M, replace, allowShared bool, private privateState, resp *tfprotov6.PlanResourceChangeResponse, diags *diagnostics) *M {
	var before, next, after ledger.Claims
	if prior != nil {
		before = s.def.claims(*prior)
	}
	if planned != nil {
		next = s.def.claims(*planned)
	}
	if !replace {
		// A replacement's new object is planned by the next call, with no
		// prior state; this one only destroys.
		after = next
	}
	// A replacement's destroy leaves what its new object keeps.
	kept := keptClaims(before, next)
	revokes := minusClaims(before, next)
	if replace {
		revokes = minusClaims(before, kept)
	}
	// The create half of a replacement that Terraform forces on what this
	// provider planned as an update (-replace, replace_triggered_by): the
	// update's call registered a holder and named it in its planned private
	// state, which Terraform hands to this call. That object is destroyed
	// instead: its holder claims nothing any more, and its destroy, which
	// gets this call's planned private state, leaves what others claim and
	// what the new object keeps.
	var forcedSpare map[string][]string
	var oldID string
	if prior == nil && planned != nil && private.get(privateHolderKey, &oldID, diags) {
		if old, oldBefore, ok := b.existing(oldID); ok {
			oldKept := keptClaims(oldBefore, next)
			old.Changing = true
			forcedSpare = spareOf(b.ledger.Plan(old, ledger.Claims{}, minusClaims(oldBefore, oldKept)).Spare, oldKept)
		}
	}
	if after.Actions == nil && revokes.Actions == nil && oldID == "" {
		return planned
	}
	labelOf := prior
	if planned != nil {
		labelOf = planned
	}
	h, id := b.holder(s.typeName() + " " + s.def.label(*labelOf))
	b.planned(id, before)
	h.Changing = planned != prior || replace
	report := b.ledger.Plan(h, after, revokes)
	if len(report.Overlaps) > 0 && !allowShared {
		// A lasting overlap: both resources stay and grant the path
		// (DESIGN.md, "Shared grants").
		diags.addError("Grants shared with another resource",
			fmt.Sprintf("After this plan, this resource and another of the configuration would both grant the same paths: %s. "+
				"IAM keeps one policy per subject and action, so a revoke by either resource takes a path from both, and on "+
				"the paths of the CLI that do not plan both resources together (-target, -exclude, a taint, -refresh=false) a "+
				"change of one would take away what the other still grants. Let one resource grant each path (move the "+
				"shared instances into one of them), or set allow_shared_grants = true in the provider configuration to allow "+
				"it with those limits.", describeShared(report.Overlaps)))
	} else if len(report.Overlaps) > 0 {
		diags.addWarning("Grants shared with another resource",
			fmt.Sprintf("After this plan, %s; IAM keeps one policy per subject and action, so these paths are granted once for both. "+
				"A revoke by one resource of this configuration leaves what the other still grants, but a resource in another "+
				"state or workspace, a provider alias or an apply with -target cannot see this one: let one resource grant each path.",
				describeShared(report.Overlaps)))
	}
	if len(report.Expiries) > 0 {
		diags.addWarning("One expiry per subject and action",
			fmt.Sprintf("Another resource grants the same subject and action with a different expiry (%s). IAM keeps one "+
				"expiry per subject and action, the later, for every instance of the policy: the earlier one never applies.",
				describeExpiries(report.Expiries)))
	}
	// An update that revokes paths an unchanged resource keeps cannot
	// leave them by itself: the unchanged resource is not in the apply,
	// and the update's plan-time private state does not reach it.
	var unchanged []ledger.Shared
	for _, sh := range report.Spare {
		if !sh.Other.Changing {
			unchanged = append(unchanged, sh)
		}
	}
	update := planned != nil && planned != prior && !replace
	if update && len(unchanged) > 0 {
		if b.refreshed.Load() {
			// A plan walk: plan a replacement, whose destroy carries what to
			// spare. Its new object claims the paths in the next call.
			if paths := s.changedAttributes(prior, planned); len(paths) > 0 {
				resp.RequiresReplace = paths
				replace, update = true, false
				report.Spare = b.ledger.Plan(h, ledger.Claims{}, minusClaims(before, kept)).Spare
				diags.addWarning("Replaced to keep a shared grant",
					fmt.Sprintf("This change revokes paths that another resource still grants and that does not change in this plan (%s). "+
						"Terraform applies only what changes, so an update in place would take them from that resource. The change is "+
						"planned as a replacement instead: the old object's destroy leaves these paths and those the new object keeps, "+
						"and the new object grants its own.", describeShared(unchanged)))
			}
		} else {
			diags.addWarning("Revoke of a shared grant",
				fmt.Sprintf("This update revokes paths that another resource still grants (%s). Within one process the revoke "+
					"leaves them, but a plan's notes do not reach its apply, which runs in another: if this is a plan with "+
					"-refresh=false and the other resource does not change, the apply will take the paths from it. A plan that "+
					"refreshes state plans such an update as a replacement that leaves them: plan with refresh, or with -replace "+
					"on this resource.", describeShared(unchanged)))
		}
	}
	newPrivate := maps.Clone(private)
	if oldID != "" {
		// The old object's holder id is no use to the new object.
		delete(newPrivate, privateHolderKey)
	}
	if len(forcedSpare) > 0 {
		newPrivate.set(privateSpareKey, forcedSpare, diags)
	}
	if planned == nil || replace || len(unchanged) > 0 {
		// What a destroy (also a replacement's, and one -replace makes of
		// this update) leaves: what others claim and what the new object
		// keeps.
		if spare := spareOf(report.Spare, kept); len(spare) > 0 {
			newPrivate.set(privateSpareKey, spare, diags)
		}
	}
	// A resource that changes anyway grants again at apply what another
	// revoked (sharedApply.taken); an unchanged one must plan a change to
	// be applied at all.
	if len(report.Reassert) > 0 && planned == prior && prior != nil {
		re := s.def.reassert(*planned)
		planned = &re
		update = true
		diags.addWarning("Grants again what another resource revokes",
			fmt.Sprintf("Another resource of this configuration revokes paths that this one keeps (%s), and was planned "+
				"first: this resource grants them again in the same apply, after that revoke.", describeShared(report.Reassert)))
	}
	if update {
		// Only a change is applied; its apply finds its holder by this id.
		newPrivate.set(privateHolderKey, id, diags)
	}
	if len(newPrivate) != len(private) || newPrivate[privateHolderKey] != nil || newPrivate[privateSpareKey] != nil {
		resp.PlannedPrivate = newPrivate.bytes(diags)
	}
	return planned
}

// changedAttributes returns the attributes whose known values differ
// between prior and planned: those a replacement shows as forcing it.
func (s served[M]) changedAttributes(prior, planned *M) []*tftypes.AttributePath {
	var was, will map[string]tftypes.Value
	if s.def.encode(s.typ(), *prior).As(&was) != nil || s.def.encode(s.typ(), *planned).As(&will) != nil {
		return nil
	}
	var out []*tftypes.AttributePath
	for _, name := range slices.Sorted(maps.Keys(s.typ().AttributeTypes)) {
		if will[name].IsFullyKnown() && !will[name].Equal(was[name]) {
			out = append(out, tftypes.NewAttributePath().WithAttributeName(name))
		}
	}
	return out
}

func (s served[M]) applyChange(ctx context.Context, data *providerData, req *tfprotov6.ApplyResourceChangeRequest) *tfprotov6.ApplyResourceChangeResponse {
	var diags diagnostics
	// Until the change is carried out, the resource stays as it was.
	resp := &tfprotov6.ApplyResourceChangeResponse{NewState: req.PriorState, Private: req.PlannedPrivate}
	private := readPrivateState(req.PlannedPrivate, &diags)
	prior, okPrior := s.decode(req.PriorState, "prior state", &diags)
	planned, okPlanned := s.decode(req.PlannedState, "planned state", &diags)
	if data == nil {
		diags.addError("Provider not configured",
			"The bkiam provider was not configured before this resource was applied. This is a bug in the provider or in Terraform.")
	}
	if okPrior && okPlanned && !diags.hasError() {
		shared := s.sharedApply(data, prior, planned, private, &diags)
		newState, newPrivate := s.def.apply(ctx, data, applyRequest[M]{prior: prior, planned: planned, private: private, shared: shared}, &diags)
		resp.NewState = s.marshal(newState, &diags)
		resp.Private = newPrivate.bytes(&diags)
	}
	resp.Diagnostics = diags
	return resp
}

func (s served[M]) readResource(ctx context.Context, data *providerData, req *tfprotov6.ReadResourceRequest) *tfprotov6.ReadResourceResponse {
	// Unchanged state goes back as Terraform sent it, not re-encoded.
	resp := &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private}
	if !s.def.refreshes(data) {
		return resp
	}
	var diags diagnostics
	if state, ok := s.decode(req.CurrentState, "state", &diags); ok && state != nil {
		private := readPrivateState(req.Private, &diags)
		newState, newPrivate, changed := s.def.read(ctx, data, readRequest[M]{state: *state, private: private}, &diags)
		if changed && !diags.hasError() {
			resp.NewState = s.marshal(newState, &diags)
			resp.Private = newPrivate.bytes(&diags)
			if newState == nil {
				resp.Private = nil
			}
		}
	}
	resp.Diagnostics = diags
	return resp
}

func (s served[M]) importResource(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) *tfprotov6.ImportResourceStateResponse {
	var diags diagnostics
	resp := &tfprotov6.ImportResourceStateResponse{}
	state, private := s.def.importState(ctx, req.ID, &diags)
	if !diags.hasError() {
		imported := &tfprotov6.ImportedResource{TypeName: s.typeName(), State: s.marshal(&state, &diags), Private: private.bytes(&diags)}
		if !diags.hasError() {
			resp.ImportedResources = []*tfprotov6.ImportedResource{imported}
		}
	}
	resp.Diagnostics = diags
	return resp
}

// sharedApply finds the apply's holder in the process's ledger: the one
// its apply-time plan registered, or a new one for a destroy. It takes
// the ledger's keys out of private state, which keeps them only from
// plan to apply.
func (s served[M]) sharedApply(data *providerData, prior, planned *M, private privateState, diags *diagnostics) *sharedApply {
	var id string
	private.get(privateHolderKey, &id, diags)
	spare := readSpare(private, diags)
	delete(private, privateHolderKey)
	delete(private, privateSpareKey)
	if data == nil || data.book == nil {
		return nil
	}
	m := planned
	if m == nil {
		m = prior
	}
	label := s.typeName()
	if m != nil {
		label += " " + s.def.label(*m)
	}
	return &sharedApply{book: data.book, holder: data.book.lookup(id, label), spare: spare}
}

// decode unmarshals and decodes a value Terraform sent: nil when it is
// null or absent; false when it cannot be read.
func (s served[M]) decode(v *tfprotov6.DynamicValue, what string, diags *diagnostics) (*M, bool) {
	value, ok := s.unmarshal(v, what, diags)
	if !ok {
		return nil, false
	}
	return s.decodeValue(value, what, diags)
}

func (s served[M]) decodeValue(v tftypes.Value, what string, diags *diagnostics) (*M, bool) {
	if v.IsNull() {
		return nil, true
	}
	m, err := s.def.decode(v)
	if err != nil {
		diags.addError("Cannot decode the "+what, fmt.Sprintf("The %s does not fit the resource's model: %v. This is a bug in the provider.", what, err))
		return nil, false
	}
	return &m, true
}

// unmarshal reads a value Terraform sent; an absent value is null.
func (s served[M]) unmarshal(v *tfprotov6.DynamicValue, what string, diags *diagnostics) (tftypes.Value, bool) {
	if v == nil {
		return tftypes.NewValue(s.typ(), nil), true
	}
	value, err := v.Unmarshal(s.typ())
	if err != nil {
		diags.addError("Cannot decode the "+what, "Terraform sent a value that does not fit the resource's schema: "+err.Error()+
			". This is a bug in the provider or in Terraform.")
		return tftypes.Value{}, false
	}
	return value, true
}

// marshal encodes m, or null when m is nil, for Terraform.
func (s served[M]) marshal(m *M, diags *diagnostics) *tfprotov6.DynamicValue {
	v := tftypes.NewValue(s.typ(), nil)
	if m != nil {
		v = s.def.encode(s.typ(), *m)
	}
	dv, err := tfprotov6.NewDynamicValue(s.typ(), v)
	if err != nil {
		diags.addError("Cannot encode the resource's state", err.Error()+". This is a bug in the provider.")
		return nil
	}
	return &dv
}

// frameworkResource is the resource as the framework declares it: its
// type name and schema, which the framework serves to Terraform (and
// tfplugindocs). Every other call of
// the resource is answered by the server before the framework sees it.
func (s served[M]) frameworkResource() resource.Resource {
	return frameworkShim{name: s.def.name(), schema: s.def.schema}
}

type frameworkShim struct {
	name   string
	schema func(context.Context) schema.Schema
}

func (f frameworkShim) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + f.name
}

func (f frameworkShim) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = f.schema(ctx)
}

// The framework's CRUD is never reached when the provider is served by
// NewServer; serving the framework provider alone is a mistake these
// methods report.

func notServed() (string, string) {
	return "Resource served by the wrong server",
		"This resource is served at the protocol level by the provider's NewServer; the framework server alone cannot apply it. This is a bug in the provider."
}

func (frameworkShim) Create(_ context.Context, _ resource.CreateRequest, resp *resource.CreateResponse) {
	resp.Diagnostics.AddError(notServed())
}

func (frameworkShim) Read(_ context.Context, _ resource.ReadRequest, resp *resource.ReadResponse) {
	resp.Diagnostics.AddError(notServed())
}

func (frameworkShim) Update(_ context.Context, _ resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddError(notServed())
}

func (frameworkShim) Delete(_ context.Context, _ resource.DeleteRequest, resp *resource.DeleteResponse) {
	resp.Diagnostics.AddError(notServed())
}

// modelType and roundTrip let the tests hold each codec against its
// schema (codec_test.go) through protocolResources, so that a new
// resource is covered without a test naming it.
func (s served[M]) modelType() reflect.Type { return reflect.TypeFor[M]() }

func (s served[M]) roundTrip(v tftypes.Value) (tftypes.Value, error) {
	m, err := s.def.decode(v)
	if err != nil {
		return tftypes.Value{}, err
	}
	return s.def.encode(s.typ(), m), nil
}
