package protocol

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Resource identity (Terraform 1.12+, OpenTofu 1.12+): a small object
// beside each resource's state that names the object it manages, which
// `import { identity = {…} }` takes and `terraform query` lists. The
// framework answers it for its own resources; for the resources served
// here the seam does what the framework does, and nothing less
// (TestIdentityAsTheFrameworkDoes):
//
//   - plan, apply, read and import return the identity, computed from the
//     model by Def.IdentityOf, never stored apart from it;
//   - an identity that is not mutable may not change once Terraform holds
//     it ("Unexpected Identity Change", the framework's words), except on
//     the read that completes an import;
//   - an identity Terraform does not hold yet (state written before this
//     version, or by import by ID) is filled in by the next plan or read;
//   - a planned identity is wholly known, or null when the plan does not
//     know it yet (Terraform 1.16 cannot save a plan with an unknown
//     identity, even on a create); the apply then sets it.
//
// IAM's identities are strings and lists of strings: Identity holds a
// StringValue or a StringsValue for each attribute of the identity
// schema (TestIdentitySchemasAreStringsAndLists).
type Identity map[string]any

// Str returns the known string of attribute name, or "".
func (id Identity) Str(name string) string {
	x, _ := id[name].(StringValue)
	s, _ := x.Get()
	return s
}

// List returns the known strings of attribute name, or nil.
func (id Identity) List(name string) []string {
	x, _ := id[name].(StringsValue)
	l, _ := StringsOf(x)
	return l
}

// IdentityDef is what a resource served here adds for its identity.
type IdentityDef[M any] interface {
	// IdentitySchema is the identity's schema: strings and lists of
	// strings, each RequiredForImport unless noted.
	IdentitySchema(ctx context.Context) identityschema.Schema
	// IdentityOf is the identity of a model (a state or a plan), with
	// lists in a canonical order.
	IdentityOf(m M) Identity
	// ImportID turns an identity given to import into the import ID
	// ImportState takes, so that both ways of importing are one.
	ImportID(id Identity, diags *Diagnostics) string
	// MutableIdentity reports whether the identity may change during the
	// life of the object (the framework's ResourceBehavior.MutableIdentity).
	MutableIdentity() bool
}

// PrivateImportedKey marks the state an import returns until the read
// that completes it: that read may change the identity the import was
// given (the framework's ImportBeforeReadKey).
const PrivateImportedKey = "protocol_imported"

func (s served[M, D]) encodeIdentity(m M) tftypes.Value {
	return EncodeIdentity(s.identityType(), s.def.IdentityOf(m))
}

// EncodeIdentity encodes id with typ, its identity schema's type: what a
// list resource returns for a resource served here.
func EncodeIdentity(typ tftypes.Object, id Identity) tftypes.Value {
	vals := make(map[string]tftypes.Value, len(typ.AttributeTypes))
	for name, t := range typ.AttributeTypes {
		switch x := id[name].(type) {
		case StringValue:
			vals[name] = EncodeString(t, x)
		case StringsValue:
			// Built again from its elements: a set Terraform sent is not
			// the list an identity holds.
			vals[name] = EncodeStrings(t, StringsValue{v: x.v, state: x.state})
		default:
			vals[name] = tftypes.NewValue(t, nil)
		}
	}
	return tftypes.NewValue(typ, vals)
}

func (s served[M, D]) decodeIdentity(v tftypes.Value) (Identity, error) {
	var d Decoder
	a := AsAttributes(&d, v)
	id := Identity{}
	for name, t := range s.identityType().AttributeTypes {
		if t.Is(tftypes.String) {
			id[name] = DecodeString(&d, a[name])
		} else {
			id[name] = DecodeStrings(&d, a[name])
		}
	}
	return id, d.Err
}

// identityData wraps an identity value for Terraform.
func (s served[M, D]) identityData(v tftypes.Value, diags *Diagnostics) *tfprotov6.ResourceIdentityData {
	dv, err := tfprotov6.NewDynamicValue(s.identityType(), v)
	if err != nil {
		diags.AddError("Cannot encode the resource's identity", err.Error()+". This is a bug in the provider.")
		return nil
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: &dv}
}

// heldIdentity reads the identity Terraform holds: null when it holds
// none (state written before identities, or imported by ID).
func (s served[M, D]) heldIdentity(data *tfprotov6.ResourceIdentityData, diags *Diagnostics) tftypes.Value {
	null := tftypes.NewValue(s.identityType(), nil)
	if data == nil || data.IdentityData == nil {
		return null
	}
	v, err := data.IdentityData.Unmarshal(s.identityType())
	if err != nil {
		diags.AddError("Cannot decode the resource's identity", "Terraform sent an identity that does not fit the identity schema: "+
			err.Error()+". This is a bug in the provider or in Terraform.")
		return null
	}
	return v
}

func held(data *tfprotov6.ResourceIdentityData) bool {
	return data != nil && data.IdentityData != nil && (len(data.IdentityData.MsgPack) > 0 || len(data.IdentityData.JSON) > 0)
}

// checkIdentityKept is the framework's check: an identity that is not
// mutable stays what Terraform holds.
func (s served[M, D]) checkIdentityKept(during string, was, now tftypes.Value, diags *Diagnostics) {
	if s.def.MutableIdentity() || was.IsNull() || !was.IsFullyKnown() || now.Equal(was) {
		return
	}
	diags.AddError("Unexpected Identity Change",
		fmt.Sprintf("During the %s, the provider returned an identity for %s that differs from the one Terraform holds.\n\n"+
			"Held identity: %s\n\nNew identity: %s\n\nThis is a bug in the provider.", during, s.TypeName(), was, now))
}

// planIdentity is the planned identity of planned (nil on destroy),
// beside the prior identity Terraform holds.
func (s served[M, D]) planIdentity(req *tfprotov6.PlanResourceChangeRequest, prior, planned *M, replace bool, diags *Diagnostics) *tfprotov6.ResourceIdentityData {
	if planned == nil {
		return req.PriorIdentity
	}
	now := s.encodeIdentity(*planned)
	update := prior != nil && !replace
	if !now.IsFullyKnown() {
		// Not known before the apply: planned null, as the framework
		// plans a create. Terraform takes no unknown identity on an update
		// (only a mutable identity can follow an unknown value there), and
		// Terraform 1.16 cannot write a plan with one even on a create.
		return nil
	}
	if update {
		s.checkIdentityKept("plan", s.heldIdentity(req.PriorIdentity, diags), now, diags)
	}
	return s.identityData(now, diags)
}

// importedBefore reports and removes the import's mark.
func importedBefore(raw []byte) ([]byte, bool) {
	if len(raw) == 0 {
		return raw, false
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(raw, &p) != nil {
		return raw, false
	}
	if _, ok := p[PrivateImportedKey]; !ok {
		return raw, false
	}
	delete(p, PrivateImportedKey)
	if len(p) == 0 {
		return nil, true
	}
	out, err := json.Marshal(p)
	if err != nil {
		return raw, true
	}
	return out, true
}

// SortedStrings is the canonical form of a set in an identity.
func SortedStrings(x StringsValue) StringsValue {
	items, ok := StringsOf(x)
	if !ok {
		return x
	}
	return KnownStrings(slices.Sorted(slices.Values(items)))
}
