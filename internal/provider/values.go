package provider

import "github.com/hashicorp/terraform-plugin-go/tftypes"

// value is an attribute's value as the resources' models hold it: a Go
// value of type T, or null, or unknown. Every attribute of a model, and
// every element of a collection in one, is a value, because Terraform can
// send null or unknown at any depth (a configuration at plan time,
// imported state); the codecs (codec.go) carry both through unchanged.
//
// The zero value is null, so a zero model is an object whose attributes
// are all null.
type value[T any] struct {
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

// known is a known value.
func known[T any](v T) value[T] { return value[T]{v: v, state: stateKnown} }

// unknownValue is a value known only after apply.
func unknownValue[T any]() value[T] { return value[T]{state: stateUnknown} }

func (x value[T]) isNull() bool    { return x.state == stateNull }
func (x value[T]) isUnknown() bool { return x.state == stateUnknown }
func (x value[T]) isKnown() bool   { return x.state == stateKnown }

// get returns the value and whether it is known.
func (x value[T]) get() (T, bool) { return x.v, x.state == stateKnown }

// The shapes the models use, named.
type (
	stringValue    = value[string]
	stringsValue   = value[[]stringValue]           // a set or list of strings
	stringMapValue = value[map[string]stringValue]  // a map of strings
	int64MapValue  = value[map[string]value[int64]] // a map of numbers
)

// knownStrings is a known set or list of known strings.
func knownStrings(items []string) stringsValue {
	out := make([]stringValue, len(items))
	for i, s := range items {
		out[i] = known(s)
	}
	return known(out)
}

// knownStringMap is a known map of known strings.
func knownStringMap(m map[string]string) stringMapValue {
	out := make(map[string]stringValue, len(m))
	for k, s := range m {
		out[k] = known(s)
	}
	return known(out)
}

// stringsOf returns the elements of a fully known set or list of strings.
func stringsOf(x stringsValue) ([]string, bool) {
	elems, ok := x.get()
	if !ok {
		return nil, false
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if out[i], ok = e.get(); !ok {
			return nil, false
		}
	}
	return out, true
}

// stringMapOf returns a fully known map of strings.
func stringMapOf(x stringMapValue) (map[string]string, bool) {
	elems, ok := x.get()
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(elems))
	for k, e := range elems {
		s, ok := e.get()
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

// int64MapOf returns the known elements of a map of numbers; a null or
// unknown map gives an empty one.
func int64MapOf(x int64MapValue) map[string]int64 {
	out := map[string]int64{}
	elems, _ := x.get()
	for k, e := range elems {
		if n, ok := e.get(); ok {
			out[k] = n
		}
	}
	return out
}

// sameStrings reports whether two sets of strings are the same value:
// alike in state and, when known, holding the same elements in any order.
func sameStrings(a, b stringsValue) bool {
	if a.state != b.state || len(a.v) != len(b.v) {
		return false
	}
	count := make(map[stringValue]int, len(a.v))
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
