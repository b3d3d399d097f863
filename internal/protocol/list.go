package protocol

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The list resources (terraform query) are written against the framework's
// list API, but the router streams their results itself. The framework's
// list server converts every result anew: the schemas' types computed
// again, null collection blocks reified by a walk of the value, msgpack
// written with an attribute path per element. At 10 000 objects that was
// four fifths of a listing's bytes (make bench). Here the types are
// computed once per list type, a list resource's results are built on
// them (ListTypes, which internal/listing reads), and each value is
// encoded once by EncodeDynamic. Configuration, validation and schemas
// stay the framework's.

// ListType is a list resource the router serves: New makes it, as the
// provider's ListResources do, and Resource is the resource it lists (its
// schema and identity schema).
type ListType struct {
	New      func() list.ListResource
	Resource resource.Resource
}

// ListTypes are the types of a listed resource's state and identity, which
// a list resource builds its results' values with.
type ListTypes struct {
	Resource, Identity tftypes.Object
}

type listTypesKey struct{}

// ListTypesFrom returns the types the router put in a listing's context;
// false when the listing is not the router's (a framework server alone).
func ListTypesFrom(ctx context.Context) (*ListTypes, bool) {
	t, ok := ctx.Value(listTypesKey{}).(*ListTypes)
	return t, ok
}

// servedList is a ListType with its schemas and types, read once.
type servedList struct {
	ListType
	once     sync.Once
	config   listschema.Schema
	resource schema.Schema
	identity identityschema.Schema
	types    ListTypes
	// configType is the list block's configuration type.
	configType tftypes.Type
}

func (l *servedList) load(ctx context.Context) {
	l.once.Do(func() {
		var cs list.ListResourceSchemaResponse
		l.New().ListResourceConfigSchema(ctx, list.ListResourceSchemaRequest{}, &cs)
		l.config = cs.Schema
		l.configType = cs.Schema.Type().TerraformType(ctx)
		var rs resource.SchemaResponse
		l.Resource.Schema(ctx, resource.SchemaRequest{}, &rs)
		l.resource = rs.Schema
		var is resource.IdentitySchemaResponse
		if r, ok := l.Resource.(resource.ResourceWithIdentity); ok {
			r.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &is)
		}
		l.identity = is.IdentitySchema
		l.types = ListTypes{
			Resource: rs.Schema.Type().TerraformType(ctx).(tftypes.Object),         //nolint:forcetypeassert // a schema's type is an object
			Identity: is.IdentitySchema.Type().TerraformType(ctx).(tftypes.Object), //nolint:forcetypeassert // as above
		}
	})
}

// listResource streams the results of list type l for req, with the
// provider's data.
func listResource(ctx context.Context, l *servedList, providerData any, req *tfprotov6.ListResourceRequest) *tfprotov6.ListResourceServerStream {
	l.load(ctx)
	fail := func(diags Diagnostics) *tfprotov6.ListResourceServerStream {
		return &tfprotov6.ListResourceServerStream{Results: func(push func(tfprotov6.ListResourceResult) bool) {
			push(tfprotov6.ListResourceResult{Diagnostics: diags})
		}}
	}
	config := tftypes.NewValue(l.configType, nil)
	if req.Config != nil {
		v, err := req.Config.Unmarshal(l.configType)
		if err != nil {
			var diags Diagnostics
			diags.AddError("Cannot read the list block", "Terraform sent a list block that does not fit its schema: "+err.Error()+
				". This is a bug in Terraform or the provider.")
			return fail(diags)
		}
		config = v
	}
	lr := l.New()
	if c, ok := lr.(list.ListResourceWithConfigure); ok {
		var resp resource.ConfigureResponse
		c.Configure(ctx, resource.ConfigureRequest{ProviderData: providerData}, &resp)
		if resp.Diagnostics.HasError() {
			return fail(fromFramework(resp.Diagnostics))
		}
	}
	lreq := list.ListRequest{
		Config:          tfsdk.Config{Raw: config, Schema: l.config},
		IncludeResource: req.IncludeResource, Limit: req.Limit,
		ResourceSchema: l.resource, ResourceIdentitySchema: l.identity,
	}
	stream := &list.ListResultsStream{}
	lr.List(context.WithValue(ctx, listTypesKey{}, &l.types), lreq, stream)
	if stream.Results == nil {
		stream.Results = list.NoListResults
	}
	return &tfprotov6.ListResourceServerStream{Results: func(push func(tfprotov6.ListResourceResult) bool) {
		for r := range stream.Results {
			if !push(l.result(r, req.IncludeResource)) {
				return
			}
		}
	}}
}

// result encodes one result, as the framework's list server checks it: an
// error carries its diagnostics alone, as does a result of diagnostics
// only; any other needs an identity.
func (l *servedList) result(r list.ListResult, includeResource bool) tfprotov6.ListResourceResult {
	diags := fromFramework(r.Diagnostics)
	if r.Diagnostics.HasError() || (r.DisplayName == "" && r.Identity == nil && r.Resource == nil) {
		return tfprotov6.ListResourceResult{Diagnostics: diags}
	}
	if r.Identity == nil || r.Identity.Raw.IsFullyNull() {
		diags.AddError("Incomplete list result", "A list result has no identity. This is a bug in the provider.")
		return tfprotov6.ListResourceResult{Diagnostics: diags}
	}
	identity, err := EncodeDynamic(l.types.Identity, r.Identity.Raw)
	if err != nil {
		diags.AddError("Cannot encode a list result's identity", err.Error()+". This is a bug in the provider.")
		return tfprotov6.ListResourceResult{Diagnostics: diags}
	}
	out := tfprotov6.ListResourceResult{DisplayName: r.DisplayName, Identity: &tfprotov6.ResourceIdentityData{IdentityData: &identity}}
	if includeResource && r.Resource != nil && !r.Resource.Raw.IsNull() {
		state, err := EncodeDynamic(l.types.Resource, r.Resource.Raw)
		if err != nil {
			diags.AddError("Cannot encode a list result's resource", err.Error()+". This is a bug in the provider.")
			return tfprotov6.ListResourceResult{Diagnostics: diags}
		}
		out.Resource = &state
	}
	out.Diagnostics = diags
	return out
}

// fromFramework turns the framework's diagnostics into the protocol's; a
// list result's carry no attribute path.
func fromFramework(in diag.Diagnostics) Diagnostics {
	var out Diagnostics
	for _, d := range in {
		severity := tfprotov6.DiagnosticSeverityWarning
		if d.Severity() == diag.SeverityError {
			severity = tfprotov6.DiagnosticSeverityError
		}
		out.add(severity, nil, d.Summary(), d.Detail())
	}
	return out
}
