// Package listing holds what the list resources share (Terraform 1.14+,
// `terraform query`): the provider's data from Configure, the stream's
// limit, error results, and the results of resources served at the
// protocol level, whose identity and state their own codecs encode.
//
// Every list resource streams: it reads IAM page by page inside the
// results iterator and stops reading when Terraform has enough (the list
// block's limit) or stops asking, so a listing of thousands of objects
// holds one page at a time (make bench measures it).
package listing

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// Base is embedded by every list resource: its type name (after the
// provider's prefix, the resource's own), and the provider's data, which
// Configure keeps.
type Base struct {
	Name string
	Data *conns.Data
}

func (b *Base) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + b.Name
}

// Begin reads the list block's configuration into a C, and the client.
// It is false once it has put the error in stream.
func Begin[C any](ctx context.Context, b *Base, req list.ListRequest, stream *list.ListResultsStream) (C, *bkiam.Client, bool) {
	var config C
	diags := req.Config.Get(ctx, &config)
	var c *bkiam.Client
	if !diags.HasError() {
		var more diag.Diagnostics
		c, more = b.Client()
		diags.Append(more...)
	}
	if diags.HasError() {
		stream.Results = Errors(diags)
		return config, nil, false
	}
	return config, c, true
}

func (b *Base) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	if d := conns.FromProviderData(req.ProviderData, "list resource", &resp.Diagnostics); d != nil {
		b.Data = d
	}
}

// Client is the configured client, or the error to stream.
func (b *Base) Client() (*bkiam.Client, diag.Diagnostics) {
	var diags diag.Diagnostics
	if b.Data == nil || b.Data.Client == nil {
		diags.AddError("Provider not configured", "The bkiam provider was not configured before the list ran; this is a bug in the provider or in Terraform.")
		return nil, diags
	}
	return b.Data.Client, diags
}

// Errors is a stream of one result reporting diags.
func Errors(diags diag.Diagnostics) iter.Seq[list.ListResult] {
	return list.ListResultsStreamDiagnostics(diags)
}

// Error is a result that only reports an error.
func Error(summary, detail string) list.ListResult {
	var r list.ListResult
	r.Diagnostics.AddError(summary, detail)
	return r
}

// Warning is a result that only reports a warning: an object left out.
func Warning(summary, detail string) list.ListResult {
	var r list.ListResult
	r.Diagnostics.AddWarning(summary, detail)
	return r
}

// Limited stops a stream after limit results (Terraform's list block
// `limit`, 100 unless set; none when 0), so that no page past it is read:
// the push it returns answers false once the limit is reached. Results
// that only report diagnostics do not count.
func Limited(limit int64, push func(list.ListResult) bool) func(list.ListResult) bool {
	n := int64(0)
	return func(r list.ListResult) bool {
		if limit > 0 && n >= limit {
			return false
		}
		if r.Identity != nil {
			n++
		}
		return push(r) && (limit <= 0 || n < limit)
	}
}

// ProtocolResult is a result of a resource served at the protocol level:
// its identity, and with include_resource its state, encoded by the
// resource's own codec with the types of the schemas Terraform holds.
func ProtocolResult(ctx context.Context, req list.ListRequest, name string, identity protocol.Identity,
	encode func(tftypes.Object) tftypes.Value) list.ListResult {
	types := typesOf(ctx, req)
	result := newResult(req, name, protocol.EncodeIdentity(types.Identity, identity))
	if req.IncludeResource {
		result.Resource.Raw = encode(types.Resource)
	}
	return result
}

// typesOf returns the listed resource's types: the router's, computed once
// per list type, else (a framework server alone, as in some tests) the
// schemas'.
func typesOf(ctx context.Context, req list.ListRequest) *protocol.ListTypes {
	if t, ok := protocol.ListTypesFrom(ctx); ok {
		return t
	}
	return &protocol.ListTypes{
		Resource: objectType(ctx, req.ResourceSchema.Type().TerraformType(ctx)),
		Identity: objectType(ctx, req.ResourceIdentitySchema.Type().TerraformType(ctx)),
	}
}

// newResult is a result with its identity, and a null resource when
// include_resource asks for one. (The framework's req.NewListResult would
// compute both schemas' types again for every result.)
func newResult(req list.ListRequest, name string, identity tftypes.Value) list.ListResult {
	result := list.ListResult{DisplayName: name, Identity: &tfsdk.ResourceIdentity{Schema: req.ResourceIdentitySchema, Raw: identity}}
	if req.IncludeResource {
		result.Resource = &tfsdk.Resource{Schema: req.ResourceSchema}
	}
	return result
}

func objectType(_ context.Context, t tftypes.Type) tftypes.Object {
	return t.(tftypes.Object) //nolint:forcetypeassert // a schema's type is an object
}

// ValueResult is a result of a framework resource whose attributes are
// strings, booleans and sets of strings, built straight from its values:
// the framework's SetAttribute and reflection cost tens of kilobytes per
// object, ten times the rest of a listing (make bench). Attributes left
// out are null.
func ValueResult(ctx context.Context, req list.ListRequest, name string, identity map[string]string, attrs map[string]any) list.ListResult {
	types := typesOf(ctx, req)
	result := newResult(req, name, stringsObject(types.Identity, identity))
	if req.IncludeResource {
		result.Resource.Raw = objectOf(types.Resource, attrs)
	}
	return result
}

// stringsObject is an object of string attributes; those left out are null.
func stringsObject(typ tftypes.Object, attrs map[string]string) tftypes.Value {
	vals := make(map[string]tftypes.Value, len(typ.AttributeTypes))
	for name, t := range typ.AttributeTypes {
		if v, ok := attrs[name]; ok {
			vals[name] = tftypes.NewValue(t, v)
		} else {
			vals[name] = tftypes.NewValue(t, nil)
		}
	}
	return tftypes.NewValue(typ, vals)
}

func objectOf(typ tftypes.Object, attrs map[string]any) tftypes.Value {
	vals := make(map[string]tftypes.Value, len(typ.AttributeTypes))
	for name, t := range typ.AttributeTypes {
		switch v := attrs[name].(type) {
		case string, bool:
			vals[name] = tftypes.NewValue(t, v)
		case []string:
			elems := make([]tftypes.Value, len(v))
			for i, s := range v {
				elems[i] = tftypes.NewValue(tftypes.String, s)
			}
			vals[name] = tftypes.NewValue(t, elems)
		default:
			vals[name] = tftypes.NewValue(t, nil)
		}
	}
	return tftypes.NewValue(typ, vals)
}

// Refused runs what the resource checks at plan (validate) on the object a
// list would generate, and when it finds an error, is the warning that
// leaves the object (describe names it) out instead, quoting why (what is in the
// summary too: Terraform folds warnings of one summary into one): no list generates a
// block that the provider refuses at plan (an instance id "*", which IAM
// matches literally, such as a grade manager's sync group holds; an id IAM
// would trim).
func Refused(describe func() string, validate func(*protocol.Diagnostics)) (list.ListResult, bool) {
	var diags protocol.Diagnostics
	validate(&diags)
	if !diags.HasError() {
		return list.ListResult{}, false
	}
	what := describe() // named only when refused: a listing validates every object
	var why []string
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			why = append(why, d.Summary+": "+d.Detail)
		}
	}
	return Warning("Left out, refused at plan: "+what, fmt.Sprintf("%s is left out: the block generated from what IAM holds "+
		"would fail to plan.\n\n%s", what, strings.Join(why, "\n\n"))), true
}
