package protocol

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/vmihailenco/msgpack/v5"
)

// EncodeDynamic encodes a known value of type typ as Terraform's
// DynamicValue, in the msgpack form tftypes writes, for the results the
// router streams (list results): tftypes.NewDynamicValue builds an
// attribute path for every element and a string value for every key,
// most of a listed object's cost. The bytes decode to the same value
// (TestEncodeDynamicRoundTrip); map keys and attributes are written in
// sorted order, so that one value always encodes alike. Unknown values and
// dynamic types, which no list result holds, are refused.
func EncodeDynamic(typ tftypes.Type, v tftypes.Value) (tfprotov6.DynamicValue, error) {
	e := encoders.Get().(*encoder) //nolint:forcetypeassert // the pool holds encoders only
	defer encoders.Put(e)
	e.buf.Reset()
	if err := e.value(typ, v); err != nil {
		return tfprotov6.DynamicValue{}, err
	}
	return tfprotov6.DynamicValue{MsgPack: bytes.Clone(e.buf.Bytes())}, nil
}

type encoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
	// keys holds a slice of sorted keys per nesting depth, reused from
	// value to value: an object's keys are read by the time it is done.
	keys  [][]string
	depth int
	// The targets of tftypes.Value.As, which takes an interface: a local
	// variable passed to it would escape, an allocation per value. Each
	// is copied out at once, before the recursion reuses it.
	str   string
	bool  bool
	num   big.Float
	attrs map[string]tftypes.Value
	elems []tftypes.Value
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = msgpack.NewEncoder(&e.buf)
	return e
}}

func (e *encoder) value(typ tftypes.Type, v tftypes.Value) error {
	e.depth++
	defer e.up()
	if !v.IsKnown() {
		return fmt.Errorf("an unknown %s value", typ)
	}
	if v.IsNull() {
		return e.enc.EncodeNil()
	}
	switch t := typ.(type) {
	case tftypes.Object:
		if err := v.As(&e.attrs); err != nil {
			return err
		}
		attrs := e.attrs
		names := e.scratch(len(t.AttributeTypes))
		for name := range t.AttributeTypes {
			names = append(names, name)
		}
		names = e.sorted(names)
		if err := e.enc.EncodeMapLen(len(names)); err != nil {
			return err
		}
		for _, name := range names {
			a, ok := attrs[name]
			if !ok {
				return fmt.Errorf("attribute %q has no value", name)
			}
			if err := e.enc.EncodeString(name); err != nil {
				return err
			}
			if err := e.value(t.AttributeTypes[name], a); err != nil {
				return fmt.Errorf("attribute %q: %w", name, err)
			}
		}
		return nil
	case tftypes.Map:
		if err := v.As(&e.attrs); err != nil {
			return err
		}
		elems := e.attrs
		keys := e.scratch(len(elems))
		for k := range elems {
			keys = append(keys, k)
		}
		keys = e.sorted(keys)
		if err := e.enc.EncodeMapLen(len(keys)); err != nil {
			return err
		}
		for _, k := range keys {
			if err := e.enc.EncodeString(k); err != nil {
				return err
			}
			if err := e.value(t.ElementType, elems[k]); err != nil {
				return fmt.Errorf("key %q: %w", k, err)
			}
		}
		return nil
	case tftypes.List:
		return e.elements(t.ElementType, v)
	case tftypes.Set:
		return e.elements(t.ElementType, v)
	}
	switch {
	case typ.Is(tftypes.String):
		if err := v.As(&e.str); err != nil {
			return err
		}
		return e.enc.EncodeString(e.str)
	case typ.Is(tftypes.Bool):
		if err := v.As(&e.bool); err != nil {
			return err
		}
		return e.enc.EncodeBool(e.bool)
	case typ.Is(tftypes.Number):
		if err := v.As(&e.num); err != nil {
			return err
		}
		return e.number(&e.num)
	}
	return fmt.Errorf("a value of type %s, which list results do not hold", typ)
}

// number writes n as tftypes does: an integer when exact, else a float
// when exact, else its decimal text.
func (e *encoder) number(n *big.Float) error {
	if n.IsInf() {
		return e.enc.EncodeFloat64(math.Inf(n.Sign()))
	}
	if i, acc := n.Int64(); acc == big.Exact {
		return e.enc.EncodeInt(i)
	}
	if f, acc := n.Float64(); acc == big.Exact && !n.IsInt() {
		return e.enc.EncodeFloat64(f)
	}
	return e.enc.EncodeString(n.Text('f', -1))
}

func (e *encoder) elements(elem tftypes.Type, v tftypes.Value) error {
	if err := v.As(&e.elems); err != nil {
		return err
	}
	elems := e.elems
	if err := e.enc.EncodeArrayLen(len(elems)); err != nil {
		return err
	}
	for i, x := range elems {
		if err := e.value(elem, x); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

func (e *encoder) up() { e.depth-- }

// scratch is the current depth's reused slice for n keys, emptied.
func (e *encoder) scratch(n int) []string {
	for len(e.keys) <= e.depth {
		e.keys = append(e.keys, nil)
	}
	return slices.Grow(e.keys[e.depth][:0], n)
}

// sorted sorts keys and keeps them as the current depth's slice.
func (e *encoder) sorted(keys []string) []string {
	slices.Sort(keys)
	e.keys[e.depth] = keys
	return keys
}
