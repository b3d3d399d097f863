package protocol

import "github.com/hashicorp/terraform-plugin-go/tftypes"

// Value is an attribute's Value as the resources' models hold it: a Go
// Value of type T, or null, or unknown. Every attribute of a model, and
// every element of a collection in one, is a Value, because Terraform can
// send null or unknown at any depth (a configuration at plan time,
// imported state); the codecs (codec.go) carry both through unchanged.
//
// The zero Value is null, so a zero model is an object whose attributes
// are all null.
type Value[T any] struct {
	v     T
	state valueState
	// sent is the value as Terraform sent it, kept for collections only
	// (decodeCollection), so that encoding a collection the provider did
	// not change reuses it instead of building it again: a 10 000-entry
	// map costs milliseconds each time. Values the provider builds have
	// none. Strings and objects never keep it, so that == compares them
	// by content.
	sent *tftypes.Value
}

type valueState uint8

const (
	stateNull valueState = iota
	stateUnknown
	stateKnown
)

// Known is a Known value.
func Known[T any](v T) Value[T] { return Value[T]{v: v, state: stateKnown} }

// Unknown is a value known only after apply.
func Unknown[T any]() Value[T] { return Value[T]{state: stateUnknown} }

func (x Value[T]) IsNull() bool    { return x.state == stateNull }
func (x Value[T]) IsUnknown() bool { return x.state == stateUnknown }
func (x Value[T]) IsKnown() bool   { return x.state == stateKnown }

// Get returns the value and whether it is known.
func (x Value[T]) Get() (T, bool) { return x.v, x.state == stateKnown }

// The shapes the models use, named.
type (
	StringValue    = Value[string]
	BoolValue      = Value[bool]
	StringsValue   = Value[[]StringValue]           // a set or list of strings
	StringMapValue = Value[map[string]StringValue]  // a map of strings
	Int64MapValue  = Value[map[string]Value[int64]] // a map of numbers
)

// KnownStrings is a known set or list of known strings.
func KnownStrings(items []string) StringsValue {
	out := make([]StringValue, len(items))
	for i, s := range items {
		out[i] = Known(s)
	}
	return Known(out)
}

// KnownStringMap is a known map of known strings.
func KnownStringMap(m map[string]string) StringMapValue {
	out := make(map[string]StringValue, len(m))
	for k, s := range m {
		out[k] = Known(s)
	}
	return Known(out)
}

// StringsOf returns the elements of a fully known set or list of strings.
func StringsOf(x StringsValue) ([]string, bool) {
	elems, ok := x.Get()
	if !ok {
		return nil, false
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if out[i], ok = e.Get(); !ok {
			return nil, false
		}
	}
	return out, true
}

// StringMapOf returns a fully known map of strings.
func StringMapOf(x StringMapValue) (map[string]string, bool) {
	elems, ok := x.Get()
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(elems))
	for k, e := range elems {
		s, ok := e.Get()
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

// Int64MapOf returns the known elements of a map of numbers; a null or
// unknown map gives an empty one.
func Int64MapOf(x Int64MapValue) map[string]int64 {
	out := map[string]int64{}
	elems, _ := x.Get()
	for k, e := range elems {
		if n, ok := e.Get(); ok {
			out[k] = n
		}
	}
	return out
}

// SameStrings reports whether two sets of strings are the same value:
// alike in state and, when known, holding the same elements in any order.
func SameStrings(a, b StringsValue) bool {
	if a.state != b.state || len(a.v) != len(b.v) {
		return false
	}
	count := make(map[StringValue]int, len(a.v))
	for _, e := range a.v {
		count[e]++
	}
	for _, e := range b.v {
		if count[e] == 0 {
			return false
		}
		count[e]--
	}
	return true
}
