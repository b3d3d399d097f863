package protocol

import (
	"encoding/json"
	"math/big"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// GoValue is v as encoding/json decodes the JSON of it with UseNumber:
// objects and maps are map[string]any, lists, sets and tuples []any,
// numbers json.Number, null and unknown nil. It reads values whose type
// the provider does not fix, such as a dynamic attribute's.
func GoValue(v tftypes.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	typ := v.Type()
	switch {
	case typ.Is(tftypes.String):
		var s string
		_ = v.As(&s)
		return s
	case typ.Is(tftypes.Bool):
		var b bool
		_ = v.As(&b)
		return b
	case typ.Is(tftypes.Number):
		var n big.Float
		_ = v.As(&n)
		return json.Number(n.Text('g', -1))
	case typ.Is(tftypes.Object{}), typ.Is(tftypes.Map{}):
		var m map[string]tftypes.Value
		_ = v.As(&m)
		out := make(map[string]any, len(m))
		for k, e := range m {
			out[k] = GoValue(e)
		}
		return out
	default:
		var l []tftypes.Value
		_ = v.As(&l)
		out := make([]any, 0, len(l))
		for _, e := range l {
			out = append(out, GoValue(e))
		}
		return out
	}
}
