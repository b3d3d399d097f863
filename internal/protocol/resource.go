package protocol

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Def is a resource served on protocol values, written against
// its model M: a Go struct of the resource's attributes, which the
// resource's codec (decode, encode) converts to and from tftypes.Value.
// serve adapts it to the protocol; it never sees a protocol message.
type Def[M any, D comparable] interface {
	// Name is the type name after the provider's prefix: "instance_grant".
	Name() string
	// Schema is the resource's schema, as the framework declares it. Only
	// what the protocol path honours may be used (TestProtocolSchemasUseNothingIgnored).
	Schema(ctx context.Context) schema.Schema

	// Decode converts a known, non-null value of the schema's type;
	// encode converts back, with typ the schema's object type.
	Decode(v tftypes.Value) (M, error)
	Encode(typ tftypes.Object, m M) tftypes.Value

	// ImportState turns an import ID into the state to read, and the
	// private state read receives with it.
	ImportState(ctx context.Context, id string, diags *Diagnostics) (M, PrivateState)
	// Validate checks a configuration, in which any value may be unknown.
	Validate(ctx context.Context, config M, diags *Diagnostics)
	// Plan plans a create (prior nil) or an update; serve answers a
	// destroy and a change that changes nothing itself.
	Plan(ctx context.Context, req PlanRequest[M], diags *Diagnostics) PlanResponse[M]
	// CheckModel checks a planned create or update against the model of
	// its system (check_model; model_checks.go). data is nil before the
	// provider is configured.
	CheckModel(ctx context.Context, data D, proposed M, diags *Diagnostics)
	// Apply carries out a create (prior nil), an update or a destroy
	// (planned nil). It returns the new state, nil when the resource is
	// gone, and the private state to keep.
	Apply(ctx context.Context, data D, req ApplyRequest[M], diags *Diagnostics) (*M, PrivateState)
	// Refreshes reports whether read can change state with these
	// settings (data is nil when the provider is not configured); when
	// it cannot, a refresh returns the state untouched, never decoded.
	Refreshes(data D) bool
	// Read refreshes state: it returns the new state (nil when the
	// resource is gone), the private state, and whether either changed.
	Read(ctx context.Context, data D, req ReadRequest[M], diags *Diagnostics) (*M, PrivateState, bool)

	// The resource's identity (identity.go).
	IdentityDef[M]
}

// Observer hears of every plan of a resource, destroys and changes that
// change nothing too (which Def.Plan never sees), and precedes
// every apply: what spans the resources of one Terraform command (the
// provider's shared grants, shared_account.go) without the seam knowing
// what it is.
type Observer[M any, D comparable] interface {
	// Observing reports whether the plan in ctx is heard: when not, a
	// plan that changes nothing goes back undecoded.
	Observing(ctx context.Context) bool
	// Plan hears a plan once the resource decided it, and returns the
	// planned model, which it may change; it may set the response's
	// RequiresReplace and PlannedPrivate.
	Plan(ctx context.Context, data D, n *PlanNote[M], diags *Diagnostics) *M
	// Apply precedes an apply, and returns the context the apply runs in.
	// n.private is the planned private state, which it may take keys from.
	Apply(ctx context.Context, data D, n ApplyNote[M], diags *Diagnostics) context.Context
}

// PlanNote is a plan as an observer hears it.
type PlanNote[M any] struct {
	TypeName string
	// Prior is nil on create; planned is nil on destroy, and prior itself
	// (the same pointer) when the plan changes nothing.
	Prior, Planned *M
	// Replace says the resource's plan requires a replacement.
	Replace bool
	Private PrivateState
	Resp    *tfprotov6.PlanResourceChangeResponse
	// Changed returns the attributes whose known values differ between
	// prior and planned (served.changedAttributes).
	Changed func(prior, planned *M) []*tftypes.AttributePath
}

// ApplyNote is an apply as an observer hears it.
type ApplyNote[M any] struct {
	TypeName       string
	Prior, Planned *M
	Private        PrivateState
}

// PlanChecker is what a resource may add to its Def: a check of a planned
// create or change (never a no-op, a destroy or a refresh) that can read
// IAM through data, after Plan has decided the planned state
// (req.Proposed). Its diagnostics go with the plan.
type PlanChecker[M any, D comparable] interface {
	CheckPlan(ctx context.Context, data D, req PlanRequest[M], diags *Diagnostics)
}

// Renewer is what a resource may add to its Def when its plan can change
// with time alone, as a rolling expiry does once its renewal window
// opens: the seam then plans it, though neither the configuration nor
// the state changed, whenever RenewDue says so. RenewDue reads only the
// private state (the resource keeps there when it is due,
// WithRenewAfter), so that an unchanged resource that is not due is
// still never decoded.
//
// The time a Renewer's plan goes by (asOf, PlanRequest.AsOf) is not the
// clock's: it is when its state was last read from IAM or written by an
// apply, which the seam records in private state. Terraform plans a
// changed resource again at apply, from the same prior state (a saved
// plan keeps it), and requires both plans to agree: by the clock, a plan
// saved before a renewal window opens and applied after it would not.
type Renewer interface {
	RenewDue(private PrivateState, asOf time.Time) bool
}

// NullPlanner is what a resource may add to its Def when an attribute
// both optional and computed means something of its own when the
// configuration leaves it out: Terraform then proposes the recorded value,
// so the proposal looks unchanged though the configuration changed
// (bkiam_instance_grant's expires_at, recorded for a rolling expiry,
// means permanent when removed). The seam plans such a resource whenever
// PlansNull says the prior state is not what the configuration's nulls
// mean; configNull decodes the configuration on first use.
type NullPlanner[M any] interface {
	PlansNull(prior M, configNull func(attribute string) bool) bool
}

type PlanRequest[M any] struct {
	Prior    *M // nil on create
	Proposed M
	Private  PrivateState
	// AsOf is the time the plan goes by: for a Renewer, when the prior
	// state was last read or written (see Renewer); else the clock's.
	AsOf time.Time
	// ConfigNull reports whether the configuration leaves a top-level
	// attribute null, which Proposed cannot tell for one both optional and
	// computed: Terraform proposes the prior value for it. It decodes the
	// configuration on first use; nil where there is none (CheckPlan).
	ConfigNull func(attribute string) bool
}

// Time is the time the plan goes by: AsOf, or the clock's where the
// request was built without it.
func (r PlanRequest[M]) Time() time.Time {
	if r.AsOf.IsZero() {
		return time.Now()
	}
	return r.AsOf
}

type PlanResponse[M any] struct {
	Planned         M
	RequiresReplace []*tftypes.AttributePath
}

type ApplyRequest[M any] struct {
	Prior   *M // nil on create
	Planned *M // nil on destroy
	Private PrivateState
}

// Operation is what an apply carries out, in the words of the timeouts
// attribute: "create", "update" or "delete".
func (r ApplyRequest[M]) Operation() string {
	switch {
	case r.Planned == nil:
		return "delete"
	case r.Prior == nil:
		return "create"
	}
	return "update"
}

// ViewsOf converts an apply's prior and planned models with view: current
// is nil on create, next on destroy.
func ViewsOf[M, V any](r ApplyRequest[M], view func(M) V) (current, next *V) {
	if r.Prior != nil {
		v := view(*r.Prior)
		current = &v
	}
	if r.Planned != nil {
		v := view(*r.Planned)
		next = &v
	}
	return current, next
}

type ReadRequest[M any] struct {
	State   M
	Private PrivateState
}

// Resource is a resource as the server and the framework see it.
// D is the provider's data, handed to every call; its zero value means
// the provider is not configured.
type Resource[D comparable] interface {
	TypeName() string
	ObjectType() tftypes.Object
	// FrameworkResource is the framework's view: the type name and schema.
	FrameworkResource() resource.Resource
	validateConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) *tfprotov6.ValidateResourceConfigResponse
	planChange(ctx context.Context, data D, req *tfprotov6.PlanResourceChangeRequest) *tfprotov6.PlanResourceChangeResponse
	applyChange(ctx context.Context, data D, req *tfprotov6.ApplyResourceChangeRequest) *tfprotov6.ApplyResourceChangeResponse
	readResource(ctx context.Context, data D, req *tfprotov6.ReadResourceRequest) *tfprotov6.ReadResourceResponse
	importResource(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) *tfprotov6.ImportResourceStateResponse
	upgradeState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) *tfprotov6.UpgradeResourceStateResponse
	upgradeIdentity(ctx context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) *tfprotov6.UpgradeResourceIdentityResponse
	movedIn(v tftypes.Value, diags *Diagnostics) (*tfprotov6.DynamicValue, *tfprotov6.ResourceIdentityData)
	SchemaVersion() int64
	UpgradeProblems() []string
}

// served adapts a Def to the protocol: it unmarshals Terraform's
// values with the schema's type, decodes them into the model, and
// encodes the answers.
type served[M any, D comparable] struct {
	def Def[M, D]
	// obs, unless nil, hears every plan and precedes every apply.
	obs Observer[M, D]
	// provider is the provider's type name, the prefix of the resource's.
	provider string
	typ      func() tftypes.Object
	// version is the schema's version, read once: Terraform upgrades every
	// stored state before reading it, so it is asked for every resource.
	version func() int64
	// identityType is the identity schema's type, built once.
	identityType func() tftypes.Object
}

// Serve adapts def to the protocol, as a resource of the provider named
// provider; obs may be nil.
func Serve[M any, D comparable](provider string, def Def[M, D], obs Observer[M, D]) Resource[D] {
	return served[M, D]{def: def, obs: obs, provider: provider, typ: sync.OnceValue(func() tftypes.Object {
		ctx := context.Background()
		return def.Schema(ctx).Type().TerraformType(ctx).(tftypes.Object) //nolint:forcetypeassert // a schema is always an object
	}), version: sync.OnceValue(func() int64 { return def.Schema(context.Background()).Version }),
		identityType: sync.OnceValue(func() tftypes.Object {
			ctx := context.Background()
			return def.IdentitySchema(ctx).Type().TerraformType(ctx).(tftypes.Object) //nolint:forcetypeassert // an identity schema is always an object
		})}
}

func (s served[M, D]) TypeName() string           { return s.provider + "_" + s.def.Name() }
func (s served[M, D]) ObjectType() tftypes.Object { return s.typ() }

func (s served[M, D]) validateConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) *tfprotov6.ValidateResourceConfigResponse {
	var diags Diagnostics
	if config, ok := s.decode(req.Config, "configuration", &diags); ok && config != nil {
		s.def.Validate(ctx, *config, &diags)
	}
	return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: diags}
}

func (s served[M, D]) planChange(ctx context.Context, data D, req *tfprotov6.PlanResourceChangeRequest) *tfprotov6.PlanResourceChangeResponse {
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState, PlannedPrivate: req.PriorPrivate,
		PlannedIdentity: req.PriorIdentity}
	var diags Diagnostics
	unchanged := sameValue(req.PriorState, req.ProposedNewState)
	observing := s.obs != nil && s.obs.Observing(ctx)
	// due: the resource is planned though Terraform proposes no change:
	// it changes with time alone, and now is the time (Renewer), or the
	// configuration leaves out what the record holds (NullPlanner).
	due := false
	now := time.Now()
	renewer, isRenewer := s.def.(Renewer)
	if isRenewer && req.PriorState != nil {
		prior := ReadPrivateState(req.PriorPrivate, &Diagnostics{})
		due = renewer.RenewDue(prior, asOf(prior, now))
	}
	_, nullPlanner := s.def.(NullPlanner[M])
	if unchanged && !observing && !due && !nullPlanner && held(req.PriorIdentity) {
		// Nothing changed (refresh changes nothing either), no observer
		// to tell, and the identity is held: the plan is the state, never
		// decoded.
		return resp
	}
	private := ReadPrivateState(req.PriorPrivate, &diags)
	priorValue, okPrior := s.unmarshal(req.PriorState, "prior state", &diags)
	proposedValue := priorValue
	okProposed := true
	if !unchanged {
		proposedValue, okProposed = s.unmarshal(req.ProposedNewState, "proposed new state", &diags)
	}
	if !okPrior || !okProposed || diags.HasError() {
		resp.Diagnostics = diags
		return resp
	}
	prior, okPrior := s.decodeValue(priorValue, "prior state", &diags)
	configNull := s.configNull(req.Config)
	planTime := now
	if isRenewer {
		planTime = asOf(private, now)
	}
	if np, ok := s.def.(NullPlanner[M]); ok && okPrior && prior != nil && !proposedValue.IsNull() {
		due = due || np.PlansNull(*prior, configNull)
	}
	var planned *M
	var out PlanResponse[M]
	switch {
	case !okPrior:
	case proposedValue.IsNull():
		// A destroy: planned as proposed.
	case (unchanged || proposedValue.Equal(priorValue)) && !due:
		// A change Terraform proposes that changes nothing: planned as
		// proposed.
		planned = prior
	default:
		proposed, okProposed := s.decodeValue(proposedValue, "proposed new state", &diags)
		if okProposed {
			// Only a create or a change is checked against the model: an
			// unchanged resource reads no model.
			s.def.CheckModel(ctx, data, *proposed, &diags)
			out = s.def.Plan(ctx, PlanRequest[M]{Prior: prior, Proposed: *proposed, Private: private,
				AsOf: planTime, ConfigNull: configNull}, &diags)
			planned = &out.Planned
			if checker, ok := s.def.(PlanChecker[M, D]); ok && !diags.HasError() {
				checker.CheckPlan(ctx, data, PlanRequest[M]{Prior: prior, Proposed: out.Planned, Private: private, AsOf: planTime}, &diags)
			}
			resp.RequiresReplace = out.RequiresReplace
		}
	}
	decided := planned
	if observing && !diags.HasError() {
		planned = s.obs.Plan(ctx, data, &PlanNote[M]{TypeName: s.TypeName(), Prior: prior, Planned: planned,
			Replace: len(out.RequiresReplace) > 0, Private: private, Resp: resp, Changed: s.changedAttributes}, &diags)
	}
	if planned != nil && (planned != prior || decided != planned) {
		resp.PlannedState = s.marshal(planned, &diags)
	}
	if !diags.HasError() {
		resp.PlannedIdentity = s.planIdentity(req, prior, planned, len(resp.RequiresReplace) > 0, &diags)
	}
	resp.Diagnostics = diags
	return resp
}

// configNull is PlanRequest.ConfigNull over a configuration Terraform
// sent: it unmarshals the configuration once, when first asked.
func (s served[M, D]) configNull(config *tfprotov6.DynamicValue) func(string) bool {
	attributes := sync.OnceValue(func() map[string]tftypes.Value {
		var out map[string]tftypes.Value
		if config == nil {
			return out
		}
		if v, err := config.Unmarshal(s.typ()); err == nil {
			_ = v.As(&out) // a configuration that is not an object leaves every attribute null
		}
		return out
	})
	return func(name string) bool {
		v, ok := attributes()[name]
		return !ok || v.IsNull()
	}
}

// changedAttributes returns the attributes whose known values differ
// between prior and planned: those a replacement shows as forcing it.
func (s served[M, D]) changedAttributes(prior, planned *M) []*tftypes.AttributePath {
	var was, will map[string]tftypes.Value
	if s.def.Encode(s.typ(), *prior).As(&was) != nil || s.def.Encode(s.typ(), *planned).As(&will) != nil {
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

func (s served[M, D]) applyChange(ctx context.Context, data D, req *tfprotov6.ApplyResourceChangeRequest) *tfprotov6.ApplyResourceChangeResponse {
	var diags Diagnostics
	// Until the change is carried out, the resource stays as it was.
	resp := &tfprotov6.ApplyResourceChangeResponse{NewState: req.PriorState, Private: req.PlannedPrivate}
	private := ReadPrivateState(req.PlannedPrivate, &diags)
	prior, okPrior := s.decode(req.PriorState, "prior state", &diags)
	planned, okPlanned := s.decode(req.PlannedState, "planned state", &diags)
	var unconfigured D
	if data == unconfigured {
		diags.AddError("Provider not configured",
			"The "+s.provider+" provider was not configured before this resource was applied. This is a bug in the provider or in Terraform.")
	}
	if okPrior && okPlanned && !diags.HasError() {
		if s.obs != nil {
			ctx = s.obs.Apply(ctx, data, ApplyNote[M]{TypeName: s.TypeName(), Prior: prior, Planned: planned, Private: private}, &diags)
		}
		newState, newPrivate := s.def.Apply(ctx, data, ApplyRequest[M]{Prior: prior, Planned: planned, Private: private}, &diags)
		if _, ok := s.def.(Renewer); ok {
			newPrivate = WithReadAt(newPrivate, time.Now())
		}
		resp.NewState = s.marshal(newState, &diags)
		resp.Private = newPrivate.Bytes(&diags)
		if newState != nil {
			now := s.encodeIdentity(*newState)
			if prior != nil && planned != nil {
				s.checkIdentityKept("apply", s.heldIdentity(req.PlannedIdentity, &diags), now, &diags)
			}
			resp.NewIdentity = s.identityData(now, &diags)
		}
	} else if prior != nil {
		// Nothing was carried out: the resource keeps its identity.
		resp.NewIdentity = s.identityData(s.encodeIdentity(*prior), &diags)
	}
	resp.Diagnostics = diags
	return resp
}

func (s served[M, D]) readResource(ctx context.Context, data D, req *tfprotov6.ReadResourceRequest) *tfprotov6.ReadResourceResponse {
	// Unchanged state goes back as Terraform sent it, not re-encoded.
	resp := &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private, NewIdentity: req.CurrentIdentity}
	private, imported := importedBefore(req.Private)
	refreshes := s.def.Refreshes(data)
	_, renewer := s.def.(Renewer)
	if renewer && bytes.Contains(private, []byte(renewAfterKey)) {
		// The time the next plan goes by (Renewer): now, for a state
		// that renews.
		var diags Diagnostics
		stamped := WithReadAt(ReadPrivateState(private, &diags), time.Now())
		private = stamped.Bytes(&diags)
		resp.Private, resp.Diagnostics = private, diags
	}
	if !refreshes && held(req.CurrentIdentity) && !imported {
		return resp
	}
	resp.Private = private
	var diags Diagnostics
	state, ok := s.decode(req.CurrentState, "state", &diags)
	if !ok || state == nil {
		resp.Diagnostics = diags
		return resp
	}
	newState := state
	if refreshes {
		var newPrivate PrivateState
		var changed bool
		newState, newPrivate, changed = s.def.Read(ctx, data, ReadRequest[M]{State: *state, Private: ReadPrivateState(private, &diags)}, &diags)
		if !changed || diags.HasError() {
			newState = state
		} else {
			resp.NewState = s.marshal(newState, &diags)
			if renewer {
				newPrivate = WithReadAt(newPrivate, time.Now())
			}
			resp.Private = newPrivate.Bytes(&diags)
			if newState == nil {
				resp.Private = nil
			}
		}
	}
	if newState == nil {
		resp.NewIdentity = nil
	} else if !diags.HasError() {
		now := s.encodeIdentity(*newState)
		if !imported {
			s.checkIdentityKept("refresh", s.heldIdentity(req.CurrentIdentity, &diags), now, &diags)
		}
		resp.NewIdentity = s.identityData(now, &diags)
	}
	resp.Diagnostics = diags
	return resp
}

func (s served[M, D]) importResource(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) *tfprotov6.ImportResourceStateResponse {
	var diags Diagnostics
	resp := &tfprotov6.ImportResourceStateResponse{}
	id := req.ID
	if req.Identity != nil {
		// import { identity = {…} }: the identity names the import ID.
		if given := s.heldIdentity(req.Identity, &diags); !diags.HasError() {
			identity, err := s.decodeIdentity(given)
			if err != nil {
				diags.AddError("Cannot decode the import identity", err.Error()+". This is a bug in the provider or in Terraform.")
			} else {
				id = s.def.ImportID(identity, &diags)
			}
		}
	}
	if diags.HasError() {
		resp.Diagnostics = diags
		return resp
	}
	state, private := s.def.ImportState(ctx, id, &diags)
	if !diags.HasError() {
		if private == nil {
			private = PrivateState{}
		}
		private[PrivateImportedKey] = []byte("true")
		imported := &tfprotov6.ImportedResource{TypeName: s.TypeName(), State: s.marshal(&state, &diags), Private: private.Bytes(&diags),
			Identity: req.Identity}
		if !diags.HasError() {
			resp.ImportedResources = []*tfprotov6.ImportedResource{imported}
		}
	}
	resp.Diagnostics = diags
	return resp
}

// decode unmarshals and decodes a value Terraform sent: nil when it is
// null or absent; false when it cannot be read.
func (s served[M, D]) decode(v *tfprotov6.DynamicValue, what string, diags *Diagnostics) (*M, bool) {
	value, ok := s.unmarshal(v, what, diags)
	if !ok {
		return nil, false
	}
	return s.decodeValue(value, what, diags)
}

func (s served[M, D]) decodeValue(v tftypes.Value, what string, diags *Diagnostics) (*M, bool) {
	if v.IsNull() {
		return nil, true
	}
	m, err := s.def.Decode(v)
	if err != nil {
		diags.AddError("Cannot decode the "+what, fmt.Sprintf("The %s does not fit the resource's model: %v. This is a bug in the provider.", what, err))
		return nil, false
	}
	return &m, true
}

// unmarshal reads a value Terraform sent; an absent value is null.
func (s served[M, D]) unmarshal(v *tfprotov6.DynamicValue, what string, diags *Diagnostics) (tftypes.Value, bool) {
	if v == nil {
		return tftypes.NewValue(s.typ(), nil), true
	}
	value, err := v.Unmarshal(s.typ())
	if err != nil {
		diags.AddError("Cannot decode the "+what, "Terraform sent a value that does not fit the resource's schema: "+err.Error()+
			". This is a bug in the provider or in Terraform.")
		return tftypes.Value{}, false
	}
	return value, true
}

// marshal encodes m, or null when m is nil, for Terraform.
func (s served[M, D]) marshal(m *M, diags *Diagnostics) *tfprotov6.DynamicValue {
	v := tftypes.NewValue(s.typ(), nil)
	if m != nil {
		v = s.def.Encode(s.typ(), *m)
	}
	dv, err := tfprotov6.NewDynamicValue(s.typ(), v)
	if err != nil {
		diags.AddError("Cannot encode the resource's state", err.Error()+". This is a bug in the provider.")
		return nil
	}
	return &dv
}

// FrameworkResource is the resource as the framework declares it: its
// type name and schema, which the framework serves to Terraform (and
// tfplugindocs). Every other call of
// the resource is answered by the server before the framework sees it.
func (s served[M, D]) FrameworkResource() resource.Resource {
	return frameworkShim{name: s.def.Name(), schema: s.def.Schema, identity: s.def.IdentitySchema, mutable: s.def.MutableIdentity()}
}

type frameworkShim struct {
	name     string
	schema   func(context.Context) schema.Schema
	identity func(context.Context) identityschema.Schema
	mutable  bool
}

// IdentitySchema makes the framework serve the identity schema
// (GetResourceIdentitySchemas, UpgradeResourceIdentity) and list the
// resource's list resource, if it has one.
func (f frameworkShim) IdentitySchema(ctx context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = f.identity(ctx)
}

func (f frameworkShim) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + f.name
	resp.ResourceBehavior.MutableIdentity = f.mutable
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

// Codec is what every served resource offers the tests that hold its
// codec against its schema: its model's type and a value's round trip
// through decode and encode.
type Codec interface {
	ModelType() reflect.Type
	RoundTrip(tftypes.Value) (tftypes.Value, error)
}

// ModelType and RoundTrip let the tests hold each codec against its
// schema (codec_test.go) through protocolResources, so that a new
// resource is covered without a test naming it.
func (s served[M, D]) ModelType() reflect.Type { return reflect.TypeFor[M]() }

func (s served[M, D]) RoundTrip(v tftypes.Value) (tftypes.Value, error) {
	m, err := s.def.Decode(v)
	if err != nil {
		return tftypes.Value{}, err
	}
	return s.def.Encode(s.typ(), m), nil
}
