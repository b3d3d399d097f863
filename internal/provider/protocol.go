package provider

import (
	"bytes"
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The two resources carry maps of up to 10 000 instances. On those, the
// framework's generic machinery (NullifyCollectionBlocks, computed-nil
// marking, schema-path lookups for every element, and for a map of
// objects a full copy of the map for every element it plans) cost 3× to
// 20× Terraform's own time for the same data, and quadratic time for
// bkiam_creator_grant. So the framework serves the provider (its
// configuration, the schemas, import and state upgrades) and
// protocolServer serves the hot calls of both resources directly on
// terraform-plugin-go values: validation, plan, apply and read, each a
// single pass over the value.

// NewServer returns the provider's protocol 6 server, as main and the
// acceptance tests serve it.
func NewServer(version string) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		p := &bkiamProvider{version: version}
		framework, err := providerserver.NewProtocol6WithError(p)()
		if err != nil {
			return nil, err
		}
		types := resourceTypes()
		return &protocolServer{
			ProviderServer: framework,
			provider:       p,
			resources: map[string]protocolResource{
				typeName + "_instance_grant": instanceGrantProtocol{typ: types.instanceGrant},
				typeName + "_creator_grant":  creatorGrantProtocol{typ: types.creatorGrant},
			},
		}, nil
	}
}

// resourceTypes are the resources' value types, derived from their
// framework schemas once per process.
var resourceTypes = sync.OnceValue(func() struct{ instanceGrant, creatorGrant tftypes.Object } {
	ctx := context.Background()
	objectType := func(s schema.Schema) tftypes.Object {
		return s.Type().TerraformType(ctx).(tftypes.Object) //nolint:forcetypeassert // a schema is always an object
	}
	return struct{ instanceGrant, creatorGrant tftypes.Object }{
		instanceGrant: objectType(instanceGrantSchema(ctx)),
		creatorGrant:  objectType(creatorGrantSchema(ctx)),
	}
})

// protocolResource is a resource served at the protocol level. Values
// arrive decoded with the resource's type; the server encodes the answers.
type protocolResource interface {
	objectType() tftypes.Object
	validate(ctx context.Context, config tftypes.Value, diags *diagnostics)
	plan(ctx context.Context, req planInput, diags *diagnostics) planOutput
	apply(ctx context.Context, data *providerData, req applyInput, diags *diagnostics) (tftypes.Value, privateState)
}

// stateReader is a protocolResource whose read may change state; the
// state of the others is returned as it came, without decoding it.
type stateReader interface {
	// read returns the new state and private state, and whether they
	// differ from what came in. data is nil when the provider is not
	// configured.
	read(ctx context.Context, data *providerData, state tftypes.Value, private privateState, diags *diagnostics) (tftypes.Value, privateState, bool)
}

type planInput struct {
	prior, proposed tftypes.Value
	private         privateState
}

type planOutput struct {
	planned         tftypes.Value
	requiresReplace []*tftypes.AttributePath
}

type applyInput struct {
	prior, planned tftypes.Value
	private        privateState
}

// protocolServer is the framework's server with the calls of the
// protocol-level resources answered by those resources.
type protocolServer struct {
	tfprotov6.ProviderServer
	provider  *bkiamProvider
	resources map[string]protocolResource
}

func (s *protocolServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	r, ok := s.resources[req.TypeName]
	if !ok {
		return s.ProviderServer.ValidateResourceConfig(ctx, req)
	}
	var diags diagnostics
	if config, ok := decode(req.Config, r.objectType(), "configuration", &diags); ok {
		r.validate(ctx, config, &diags)
	}
	return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: diags}, nil
}

func (s *protocolServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	r, ok := s.resources[req.TypeName]
	if !ok {
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}
	resp := &tfprotov6.PlanResourceChangeResponse{PlannedPrivate: req.PriorPrivate}
	if sameValue(req.PriorState, req.ProposedNewState) {
		// Nothing changed (refresh changes nothing either): the plan is the
		// state, whatever its size, with no need to decode it.
		resp.PlannedState = req.ProposedNewState
		return resp, nil
	}
	var diags diagnostics
	in := planInput{private: readPrivateState(req.PriorPrivate, &diags)}
	in.prior, in.proposed, ok = decodeChange(req.PriorState, req.ProposedNewState, r.objectType(), "proposed new state", &diags)
	if ok {
		out := r.plan(ctx, in, &diags)
		resp.RequiresReplace = out.requiresReplace
		resp.PlannedState = encode(out.planned, r.objectType(), &diags)
	}
	resp.Diagnostics = diags
	return resp, nil
}

func (s *protocolServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	r, ok := s.resources[req.TypeName]
	if !ok {
		return s.ProviderServer.ApplyResourceChange(ctx, req)
	}
	var diags diagnostics
	resp := &tfprotov6.ApplyResourceChangeResponse{}
	private := readPrivateState(req.PlannedPrivate, &diags)
	prior, planned, decoded := decodeChange(req.PriorState, req.PlannedState, r.objectType(), "planned state", &diags)
	data := s.provider.data.Load()
	if data == nil {
		diags.addError("Provider not configured",
			"The bkiam provider was not configured before this resource was applied. This is a bug in the provider or in Terraform.")
	}
	if !decoded || data == nil {
		// Nothing was sent: the resource stays as it was.
		resp.NewState, resp.Private, resp.Diagnostics = req.PriorState, req.PlannedPrivate, diags
		return resp, nil
	}
	newState, newPrivate := r.apply(ctx, data, applyInput{prior: prior, planned: planned, private: private}, &diags)
	resp.NewState = encode(newState, r.objectType(), &diags)
	resp.Private = newPrivate.bytes(&diags)
	resp.Diagnostics = diags
	return resp, nil
}

func (s *protocolServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	r, ok := s.resources[req.TypeName]
	if !ok {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	// Unchanged state goes back as Terraform sent it, not re-encoded.
	resp := &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private}
	reader, ok := r.(stateReader)
	if !ok {
		return resp, nil
	}
	data := s.provider.data.Load()
	if lazy, ok := reader.(interface{ needsRead(*providerData) bool }); ok && !lazy.needsRead(data) {
		return resp, nil
	}
	var diags diagnostics
	if state, ok := decode(req.CurrentState, r.objectType(), "state", &diags); ok {
		private := readPrivateState(req.Private, &diags)
		newState, newPrivate, changed := reader.read(ctx, data, state, private, &diags)
		if changed && !diags.hasError() {
			resp.NewState = encode(newState, r.objectType(), &diags)
			resp.Private = newPrivate.bytes(&diags)
			if newState.IsNull() {
				resp.Private = nil
			}
		}
	}
	resp.Diagnostics = diags
	return resp, nil
}

// sameValue reports whether a and b are encoded alike, and so are the
// same value: Terraform encodes values deterministically (map keys
// sorted).
func sameValue(a, b *tfprotov6.DynamicValue) bool {
	return a != nil && b != nil && len(a.MsgPack) > 0 && len(a.JSON) == 0 && len(b.JSON) == 0 && bytes.Equal(a.MsgPack, b.MsgPack)
}

// decodeChange unmarshals the prior state and the next value of a change;
// false when either cannot be read, or diags already hold an error.
func decodeChange(prior, next *tfprotov6.DynamicValue, typ tftypes.Object, nextWhat string, diags *diagnostics) (tftypes.Value, tftypes.Value, bool) {
	p, okPrior := decode(prior, typ, "prior state", diags)
	n, okNext := decode(next, typ, nextWhat, diags)
	return p, n, okPrior && okNext && !diags.hasError()
}

// decode unmarshals a value Terraform sent; an absent value is null.
func decode(v *tfprotov6.DynamicValue, typ tftypes.Object, what string, diags *diagnostics) (tftypes.Value, bool) {
	if v == nil {
		return tftypes.NewValue(typ, nil), true
	}
	value, err := v.Unmarshal(typ)
	if err != nil {
		diags.addError("Cannot decode the "+what, "Terraform sent a value that does not fit the resource's schema: "+err.Error()+
			". This is a bug in the provider or in Terraform.")
		return tftypes.Value{}, false
	}
	return value, true
}

func encode(v tftypes.Value, typ tftypes.Object, diags *diagnostics) *tfprotov6.DynamicValue {
	dv, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		diags.addError("Cannot encode the resource's state", err.Error()+". This is a bug in the provider.")
		return nil
	}
	return &dv
}

// servedByProtocol is the framework's CRUD of a resource whose calls
// protocolServer answers. The framework never reaches it when the
// provider is served by NewServer; serving the framework provider alone
// is a mistake these methods report.
type servedByProtocol struct{}

func notServed() (string, string) {
	return "Resource served by the wrong server",
		"This resource is served at the protocol level by the provider's NewServer; the framework server alone cannot apply it. This is a bug in the provider."
}

func (servedByProtocol) Create(_ context.Context, _ resource.CreateRequest, resp *resource.CreateResponse) {
	resp.Diagnostics.AddError(notServed())
}

func (servedByProtocol) Read(_ context.Context, _ resource.ReadRequest, resp *resource.ReadResponse) {
	resp.Diagnostics.AddError(notServed())
}

func (servedByProtocol) Update(_ context.Context, _ resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddError(notServed())
}

func (servedByProtocol) Delete(_ context.Context, _ resource.DeleteRequest, resp *resource.DeleteResponse) {
	resp.Diagnostics.AddError(notServed())
}
