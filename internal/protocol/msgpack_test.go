package protocol

import (
	"math/big"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// TestEncodeDynamicRoundTrip: EncodeDynamic's bytes decode, through
// tftypes, to the value encoded, for every type a list result holds, nulls
// and empty collections included; and they are the bytes tftypes writes
// where tftypes is deterministic (no map of several keys).
func TestEncodeDynamicRoundTrip(t *testing.T) {
	inner := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"id": tftypes.String, "n": tftypes.Number}}
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"s": tftypes.String, "b": tftypes.Bool, "n": tftypes.Number, "f": tftypes.Number, "big": tftypes.Number,
		"list":   tftypes.List{ElementType: tftypes.String},
		"set":    tftypes.Set{ElementType: tftypes.String},
		"map":    tftypes.Map{ElementType: tftypes.List{ElementType: tftypes.String}},
		"nums":   tftypes.Map{ElementType: tftypes.Number},
		"nested": tftypes.List{ElementType: inner},
		"one":    inner,
		"null":   tftypes.String,
		"empty":  tftypes.Map{ElementType: tftypes.String},
	}}
	huge, _ := new(big.Float).SetString("123456789012345678901234567890")
	strs := func(ss ...string) []tftypes.Value {
		out := []tftypes.Value{}
		for _, s := range ss {
			out = append(out, tftypes.NewValue(tftypes.String, s))
		}
		return out
	}
	v := tftypes.NewValue(typ, map[string]tftypes.Value{
		"s": tftypes.NewValue(tftypes.String, "héllo/,"), "b": tftypes.NewValue(tftypes.Bool, true),
		"n": tftypes.NewValue(tftypes.Number, 4102444800), "f": tftypes.NewValue(tftypes.Number, 1.5),
		"big":  tftypes.NewValue(tftypes.Number, huge),
		"list": tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, strs("b", "a")),
		"set":  tftypes.NewValue(tftypes.Set{ElementType: tftypes.String}, strs("x", "y")),
		"map": tftypes.NewValue(tftypes.Map{ElementType: tftypes.List{ElementType: tftypes.String}}, map[string]tftypes.Value{
			"bk_cmdb/host": tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, strs("1", "2")),
			"bk_cmdb/biz":  tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, strs()),
		}),
		"nums": tftypes.NewValue(tftypes.Map{ElementType: tftypes.Number}, map[string]tftypes.Value{"view": tftypes.NewValue(tftypes.Number, 7)}),
		"nested": tftypes.NewValue(tftypes.List{ElementType: inner}, []tftypes.Value{
			tftypes.NewValue(inner, map[string]tftypes.Value{"id": tftypes.NewValue(tftypes.String, "1"), "n": tftypes.NewValue(tftypes.Number, nil)}),
		}),
		"one":   tftypes.NewValue(inner, nil),
		"null":  tftypes.NewValue(tftypes.String, nil),
		"empty": tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{}),
	})
	got, err := EncodeDynamic(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := got.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	// tftypes' own round trip changes a big number's precision, which
	// Equal compares: compare theirs with ours.
	viaTheirs, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		t.Fatal(err)
	}
	want, err := viaTheirs.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(want) {
		t.Errorf("decoded %s, want %s", back, want)
	}
	// One map key at most: tftypes then writes deterministically too.
	small := tftypes.NewValue(inner, map[string]tftypes.Value{"id": tftypes.NewValue(tftypes.String, "7"), "n": tftypes.NewValue(tftypes.Number, -3)})
	mine, err := EncodeDynamic(inner, small)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := tfprotov6.NewDynamicValue(inner, small)
	if err != nil {
		t.Fatal(err)
	}
	if string(mine.MsgPack) != string(theirs.MsgPack) {
		t.Errorf("bytes %x, tftypes writes %x", mine.MsgPack, theirs.MsgPack)
	}
	if _, err := EncodeDynamic(inner, tftypes.NewValue(inner, tftypes.UnknownValue)); err == nil {
		t.Error("an unknown value was encoded")
	}
}
