package protocol

import (
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The building blocks of the resources' codecs: each resource's codec
// (RESOURCE_codec.go) converts between its model and tftypes.Value with
// these, one attribute at a time, in a single pass over the value. The
// server unmarshals what Terraform sends with the resource's type, so a
// value that reaches a codec always fits it; an error here is a bug, and
// the first one is kept.

// Decoder collects the first error of a decode.
type Decoder struct{ Err error }

func (d *Decoder) Fail(what string, err error) {
	if d.Err == nil {
		d.Err = fmt.Errorf("%s: %w", what, err)
	}
}

// DecodeValue decodes a value that may be null or unknown; knownAs
// decodes a known, non-null one.
func DecodeValue[T any](d *Decoder, v tftypes.Value, knownAs func(*Decoder, tftypes.Value) T) Value[T] {
	switch {
	case !v.IsKnown():
		return Unknown[T]()
	case v.IsNull():
		return Value[T]{}
	}
	return Known(knownAs(d, v))
}

// DecodeCollection is decodeValue for a list, set or map: the value keeps
// v, which encodeValue sends back as it is while the collection is not
// replaced. A collection is never changed in place: code that changes
// one builds a new value (knownStrings, knownStringMap and the like).
func DecodeCollection[T any](d *Decoder, v tftypes.Value, knownAs func(*Decoder, tftypes.Value) T) Value[T] {
	x := DecodeValue(d, v, knownAs)
	if x.state == stateKnown {
		x.sent = &v
	}
	return x
}

func AsString(d *Decoder, v tftypes.Value) string {
	var s string
	if err := v.As(&s); err != nil {
		d.Fail("string", err)
	}
	return s
}

func AsBool(d *Decoder, v tftypes.Value) bool {
	var b bool
	if err := v.As(&b); err != nil {
		d.Fail("bool", err)
	}
	return b
}

func AsInt64(d *Decoder, v tftypes.Value) int64 {
	var f big.Float
	if err := v.As(&f); err != nil {
		d.Fail("number", err)
		return 0
	}
	n, accuracy := f.Int64()
	if accuracy != big.Exact {
		d.Fail("number", fmt.Errorf("%s is not a 64-bit integer", f.String()))
	}
	return n
}

// AsAttributes returns a known object's attributes.
func AsAttributes(d *Decoder, v tftypes.Value) map[string]tftypes.Value {
	var m map[string]tftypes.Value
	if err := v.As(&m); err != nil {
		d.Fail("object", err)
	}
	return m
}

// ListOf decodes a known list or set, element by element.
func ListOf[T any](elem func(*Decoder, tftypes.Value) T) func(*Decoder, tftypes.Value) []Value[T] {
	return func(d *Decoder, v tftypes.Value) []Value[T] {
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			d.Fail("list or set", err)
			return nil
		}
		out := make([]Value[T], len(elems))
		for i, e := range elems {
			out[i] = DecodeValue(d, e, elem)
		}
		return out
	}
}

// MapOf decodes a known map, element by element.
func MapOf[T any](elem func(*Decoder, tftypes.Value) T) func(*Decoder, tftypes.Value) map[string]Value[T] {
	return func(d *Decoder, v tftypes.Value) map[string]Value[T] {
		var elems map[string]tftypes.Value
		if err := v.As(&elems); err != nil {
			d.Fail("map", err)
			return nil
		}
		out := make(map[string]Value[T], len(elems))
		for k, e := range elems {
			out[k] = DecodeValue(d, e, elem)
		}
		return out
	}
}

func DecodeString(d *Decoder, v tftypes.Value) StringValue { return DecodeValue(d, v, AsString) }

func DecodeBool(d *Decoder, v tftypes.Value) BoolValue { return DecodeValue(d, v, AsBool) }

func DecodeStrings(d *Decoder, v tftypes.Value) StringsValue {
	return DecodeCollection(d, v, ListOf(AsString))
}

func DecodeStringMap(d *Decoder, v tftypes.Value) StringMapValue {
	return DecodeCollection(d, v, MapOf(AsString))
}

func DecodeInt64Map(d *Decoder, v tftypes.Value) Int64MapValue {
	return DecodeCollection(d, v, MapOf(AsInt64))
}

// EncodeValue encodes a value of type typ; fromKnown encodes a known one.
func EncodeValue[T any](typ tftypes.Type, x Value[T], fromKnown func(tftypes.Type, T) tftypes.Value) tftypes.Value {
	switch x.state {
	case stateUnknown:
		return tftypes.NewValue(typ, tftypes.UnknownValue)
	case stateNull:
		return tftypes.NewValue(typ, nil)
	}
	if x.sent != nil {
		return *x.sent
	}
	return fromKnown(typ, x.v)
}

func FromString(typ tftypes.Type, s string) tftypes.Value { return tftypes.NewValue(typ, s) }

func FromBool(typ tftypes.Type, b bool) tftypes.Value { return tftypes.NewValue(typ, b) }

func FromInt64(typ tftypes.Type, n int64) tftypes.Value {
	return tftypes.NewValue(typ, new(big.Float).SetInt64(n))
}

// ElementType is the element type of a list, set or map type.
func ElementType(typ tftypes.Type) tftypes.Type {
	switch t := typ.(type) {
	case tftypes.List:
		return t.ElementType
	case tftypes.Set:
		return t.ElementType
	case tftypes.Map:
		return t.ElementType
	}
	panic(fmt.Sprintf("%s has no element type", typ)) // the codecs ask only of collections: a bug
}

// FromList encodes a known list or set, element by element.
func FromList[T any](elem func(tftypes.Type, T) tftypes.Value) func(tftypes.Type, []Value[T]) tftypes.Value {
	return func(typ tftypes.Type, elems []Value[T]) tftypes.Value {
		et := ElementType(typ)
		out := make([]tftypes.Value, len(elems))
		for i, e := range elems {
			out[i] = EncodeValue(et, e, elem)
		}
		return tftypes.NewValue(typ, out)
	}
}

// FromMap encodes a known map, element by element.
func FromMap[T any](elem func(tftypes.Type, T) tftypes.Value) func(tftypes.Type, map[string]Value[T]) tftypes.Value {
	return func(typ tftypes.Type, elems map[string]Value[T]) tftypes.Value {
		et := ElementType(typ)
		out := make(map[string]tftypes.Value, len(elems))
		for k, e := range elems {
			out[k] = EncodeValue(et, e, elem)
		}
		return tftypes.NewValue(typ, out)
	}
}

func EncodeString(typ tftypes.Type, x StringValue) tftypes.Value {
	return EncodeValue(typ, x, FromString)
}

func EncodeBool(typ tftypes.Type, x BoolValue) tftypes.Value {
	return EncodeValue(typ, x, FromBool)
}

func EncodeStrings(typ tftypes.Type, x StringsValue) tftypes.Value {
	return EncodeValue(typ, x, FromList(FromString))
}

func EncodeStringMap(typ tftypes.Type, x StringMapValue) tftypes.Value {
	return EncodeValue(typ, x, FromMap(FromString))
}

func EncodeInt64Map(typ tftypes.Type, x Int64MapValue) tftypes.Value {
	return EncodeValue(typ, x, FromMap(FromInt64))
}

// Attrs builds an object value, attribute by attribute, each encoded
// with the attribute's type as the object type declares it.
type Attrs struct {
	typ tftypes.Object
	m   map[string]tftypes.Value
}

func NewAttrs(typ tftypes.Type) *Attrs {
	obj := typ.(tftypes.Object) //nolint:forcetypeassert // called with object types only
	return &Attrs{typ: obj, m: make(map[string]tftypes.Value, len(obj.AttributeTypes))}
}

// With sets attribute name to encode(its type).
func (a *Attrs) With(name string, encode func(tftypes.Type) tftypes.Value) *Attrs {
	// Looked up on the object itself: attributeType's tftypes.Type would
	// box the object type anew for every attribute of every value.
	t, ok := a.typ.AttributeTypes[name]
	if !ok {
		panic(fmt.Sprintf("%s has no attribute %q", a.typ, name)) // a codec that names no attribute of its schema: a bug
	}
	a.m[name] = encode(t)
	return a
}

func (a *Attrs) String(name string, x StringValue) *Attrs {
	return a.With(name, func(t tftypes.Type) tftypes.Value { return EncodeString(t, x) })
}

func (a *Attrs) Bool(name string, x BoolValue) *Attrs {
	return a.With(name, func(t tftypes.Type) tftypes.Value { return EncodeBool(t, x) })
}

func (a *Attrs) Strings(name string, x StringsValue) *Attrs {
	return a.With(name, func(t tftypes.Type) tftypes.Value { return EncodeStrings(t, x) })
}

func (a *Attrs) StringMap(name string, x StringMapValue) *Attrs {
	return a.With(name, func(t tftypes.Type) tftypes.Value { return EncodeStringMap(t, x) })
}

func (a *Attrs) Int64Map(name string, x Int64MapValue) *Attrs {
	return a.With(name, func(t tftypes.Type) tftypes.Value { return EncodeInt64Map(t, x) })
}

func (a *Attrs) Object() tftypes.Value { return tftypes.NewValue(a.typ, a.m) }
