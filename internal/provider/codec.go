package provider

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

// decoder collects the first error of a decode.
type decoder struct{ err error }

func (d *decoder) fail(what string, err error) {
	if d.err == nil {
		d.err = fmt.Errorf("%s: %w", what, err)
	}
}

// decodeValue decodes a value that may be null or unknown; knownAs
// decodes a known, non-null one.
func decodeValue[T any](d *decoder, v tftypes.Value, knownAs func(*decoder, tftypes.Value) T) value[T] {
	switch {
	case !v.IsKnown():
		return unknownValue[T]()
	case v.IsNull():
		return value[T]{}
	}
	return known(knownAs(d, v))
}

// decodeCollection is decodeValue for a list, set or map: the value keeps
// v, which encodeValue sends back as it is while the collection is not
// replaced. A collection is never changed in place: code that changes
// one builds a new value (knownStrings, knownStringMap and the like).
func decodeCollection[T any](d *decoder, v tftypes.Value, knownAs func(*decoder, tftypes.Value) T) value[T] {
	x := decodeValue(d, v, knownAs)
	if x.state == stateKnown {
		x.sent = &v
	}
	return x
}

func asString(d *decoder, v tftypes.Value) string {
	var s string
	if err := v.As(&s); err != nil {
		d.fail("string", err)
	}
	return s
}

func asInt64(d *decoder, v tftypes.Value) int64 {
	var f big.Float
	if err := v.As(&f); err != nil {
		d.fail("number", err)
		return 0
	}
	n, accuracy := f.Int64()
	if accuracy != big.Exact {
		d.fail("number", fmt.Errorf("%s is not a 64-bit integer", f.String()))
	}
	return n
}

// asAttributes returns a known object's attributes.
func asAttributes(d *decoder, v tftypes.Value) map[string]tftypes.Value {
	var m map[string]tftypes.Value
	if err := v.As(&m); err != nil {
		d.fail("object", err)
	}
	return m
}

// listOf decodes a known list or set, element by element.
func listOf[T any](elem func(*decoder, tftypes.Value) T) func(*decoder, tftypes.Value) []value[T] {
	return func(d *decoder, v tftypes.Value) []value[T] {
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			d.fail("list or set", err)
			return nil
		}
		out := make([]value[T], len(elems))
		for i, e := range elems {
			out[i] = decodeValue(d, e, elem)
		}
		return out
	}
}

// mapOf decodes a known map, element by element.
func mapOf[T any](elem func(*decoder, tftypes.Value) T) func(*decoder, tftypes.Value) map[string]value[T] {
	return func(d *decoder, v tftypes.Value) map[string]value[T] {
		var elems map[string]tftypes.Value
		if err := v.As(&elems); err != nil {
			d.fail("map", err)
			return nil
		}
		out := make(map[string]value[T], len(elems))
		for k, e := range elems {
			out[k] = decodeValue(d, e, elem)
		}
		return out
	}
}

func decodeString(d *decoder, v tftypes.Value) stringValue { return decodeValue(d, v, asString) }

func decodeStrings(d *decoder, v tftypes.Value) stringsValue {
	return decodeCollection(d, v, listOf(asString))
}

func decodeStringMap(d *decoder, v tftypes.Value) stringMapValue {
	return decodeCollection(d, v, mapOf(asString))
}

func decodeInt64Map(d *decoder, v tftypes.Value) int64MapValue {
	return decodeCollection(d, v, mapOf(asInt64))
}

// encodeValue encodes a value of type typ; fromKnown encodes a known one.
func encodeValue[T any](typ tftypes.Type, x value[T], fromKnown func(tftypes.Type, T) tftypes.Value) tftypes.Value {
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

func fromString(typ tftypes.Type, s string) tftypes.Value { return tftypes.NewValue(typ, s) }

func fromInt64(typ tftypes.Type, n int64) tftypes.Value {
	return tftypes.NewValue(typ, new(big.Float).SetInt64(n))
}

// elementType is the element type of a list, set or map type.
func elementType(typ tftypes.Type) tftypes.Type {
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

// attributeType is the type of an object type's attribute.
func attributeType(typ tftypes.Type, name string) tftypes.Type {
	t, ok := typ.(tftypes.Object).AttributeTypes[name]
	if !ok {
		panic(fmt.Sprintf("%s has no attribute %q", typ, name)) // a codec that names no attribute of its schema: a bug
	}
	return t
}

// fromList encodes a known list or set, element by element.
func fromList[T any](elem func(tftypes.Type, T) tftypes.Value) func(tftypes.Type, []value[T]) tftypes.Value {
	return func(typ tftypes.Type, elems []value[T]) tftypes.Value {
		et := elementType(typ)
		out := make([]tftypes.Value, len(elems))
		for i, e := range elems {
			out[i] = encodeValue(et, e, elem)
		}
		return tftypes.NewValue(typ, out)
	}
}

// fromMap encodes a known map, element by element.
func fromMap[T any](elem func(tftypes.Type, T) tftypes.Value) func(tftypes.Type, map[string]value[T]) tftypes.Value {
	return func(typ tftypes.Type, elems map[string]value[T]) tftypes.Value {
		et := elementType(typ)
		out := make(map[string]tftypes.Value, len(elems))
		for k, e := range elems {
			out[k] = encodeValue(et, e, elem)
		}
		return tftypes.NewValue(typ, out)
	}
}

func encodeString(typ tftypes.Type, x stringValue) tftypes.Value {
	return encodeValue(typ, x, fromString)
}

func encodeStrings(typ tftypes.Type, x stringsValue) tftypes.Value {
	return encodeValue(typ, x, fromList(fromString))
}

func encodeStringMap(typ tftypes.Type, x stringMapValue) tftypes.Value {
	return encodeValue(typ, x, fromMap(fromString))
}

func encodeInt64Map(typ tftypes.Type, x int64MapValue) tftypes.Value {
	return encodeValue(typ, x, fromMap(fromInt64))
}

// attrs builds an object value, attribute by attribute, each encoded
// with the attribute's type as the object type declares it.
type attrs struct {
	typ tftypes.Object
	m   map[string]tftypes.Value
}

func newAttrs(typ tftypes.Type) *attrs {
	obj := typ.(tftypes.Object) //nolint:forcetypeassert // called with object types only
	return &attrs{typ: obj, m: make(map[string]tftypes.Value, len(obj.AttributeTypes))}
}

// with sets attribute name to encode(its type).
func (a *attrs) with(name string, encode func(tftypes.Type) tftypes.Value) *attrs {
	a.m[name] = encode(attributeType(a.typ, name))
	return a
}

func (a *attrs) string(name string, x stringValue) *attrs {
	return a.with(name, func(t tftypes.Type) tftypes.Value { return encodeString(t, x) })
}

func (a *attrs) strings(name string, x stringsValue) *attrs {
	return a.with(name, func(t tftypes.Type) tftypes.Value { return encodeStrings(t, x) })
}

func (a *attrs) stringMap(name string, x stringMapValue) *attrs {
	return a.with(name, func(t tftypes.Type) tftypes.Value { return encodeStringMap(t, x) })
}

func (a *attrs) int64Map(name string, x int64MapValue) *attrs {
	return a.with(name, func(t tftypes.Type) tftypes.Value { return encodeInt64Map(t, x) })
}

func (a *attrs) object() tftypes.Value { return tftypes.NewValue(a.typ, a.m) }
