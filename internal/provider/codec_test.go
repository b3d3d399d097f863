package provider

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// codecUnderTest is what served[M, D] offers the codec tests.
type codecUnderTest interface {
	protocol.Resource[*conns.Data]
	protocol.Codec
}

func codecsUnderTest(t *testing.T) []codecUnderTest {
	t.Helper()
	var out []codecUnderTest
	for _, r := range protocolResources {
		c, ok := r.(codecUnderTest)
		if !ok {
			t.Fatalf("%s is not served by serve(): its codec cannot be checked", r.TypeName())
		}
		out = append(out, c)
	}
	return out
}

// TestCodecsRoundTrip: every value of a resource's type, whatever is
// null, unknown or known in it and at whatever depth, comes back from
// decode and encode unchanged. A codec that drops an attribute, misspells
// its name, or loses the difference between null, unknown and empty
// fails here: Terraform would see a planned value that differs from the
// configuration, or state that lost a value.
func TestCodecsRoundTrip(t *testing.T) {
	for _, c := range codecsUnderTest(t) {
		t.Run(c.TypeName(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(20261123, 1))
			for i := range 2000 {
				in := genValue(rng, c.ObjectType(), 0, true)
				out, err := c.RoundTrip(in)
				if err != nil {
					t.Fatalf("value %d: decode: %v\n%s", i, err, in)
				}
				if !out.Equal(in) {
					t.Fatalf("value %d changed in the round trip:\n in: %s\nout: %s", i, in, out)
				}
			}
		})
	}
}

// genValue generates a value of typ: null, unknown or known (always known
// at the root), and collections of up to three elements.
func genValue(rng *rand.Rand, typ tftypes.Type, depth int, root bool) tftypes.Value {
	if !root {
		switch rng.IntN(6) {
		case 0:
			return tftypes.NewValue(typ, nil)
		case 1:
			return tftypes.NewValue(typ, tftypes.UnknownValue)
		}
	}
	switch {
	case typ.Is(tftypes.String):
		return tftypes.NewValue(typ, []string{"", " ", "alice", "主机 1", "bk_cmdb", "0"}[rng.IntN(6)])
	case typ.Is(tftypes.Number):
		return tftypes.NewValue(typ, new(big.Float).SetInt64(rng.Int64()-rng.Int64()))
	case typ.Is(tftypes.Bool):
		return tftypes.NewValue(typ, rng.IntN(2) == 0)
	case typ.Is(tftypes.Object{}):
		obj := typ.(tftypes.Object) //nolint:forcetypeassert // checked by Is
		attrs := map[string]tftypes.Value{}
		for name, at := range obj.AttributeTypes {
			attrs[name] = genValue(rng, at, depth+1, false)
		}
		return tftypes.NewValue(typ, attrs)
	case typ.Is(tftypes.Map{}):
		elems := map[string]tftypes.Value{}
		for i := range rng.IntN(4) {
			elems[fmt.Sprintf("k%d", i)] = genValue(rng, protocol.ElementType(typ), depth+1, false)
		}
		return tftypes.NewValue(typ, elems)
	case typ.Is(tftypes.List{}):
		elems := make([]tftypes.Value, rng.IntN(4))
		for i := range elems {
			elems[i] = genValue(rng, protocol.ElementType(typ), depth+1, false)
		}
		return tftypes.NewValue(typ, elems)
	case typ.Is(tftypes.Set{}):
		// Set elements are distinct: generate and keep the new ones.
		var elems []tftypes.Value
		for range rng.IntN(4) {
			e := genValue(rng, protocol.ElementType(typ), depth+1, false)
			if !slices.ContainsFunc(elems, e.Equal) {
				elems = append(elems, e)
			}
		}
		return tftypes.NewValue(typ, elems)
	}
	panic(fmt.Sprintf("genValue: no generator for %s", typ))
}

// TestCodecsCoverEverySchemaAttribute: each model has exactly one field
// for each attribute of the schema, at every depth, tagged with the
// attribute's name and holding a value of the attribute's shape, so that
// a new schema attribute cannot be forgotten by its codec.
func TestCodecsCoverEverySchemaAttribute(t *testing.T) {
	for _, c := range codecsUnderTest(t) {
		t.Run(c.TypeName(), func(t *testing.T) {
			for _, problem := range modelProblems(c.ModelType(), c.ObjectType(), "") {
				t.Error(problem)
			}
		})
	}
}

// valueInner is T of a Value[T] type, or nil when typ is no Value.
func valueInner(typ reflect.Type) reflect.Type {
	seam := reflect.TypeFor[protocol.Value[string]]().PkgPath()
	if typ.Kind() != reflect.Struct || !strings.HasPrefix(typ.Name(), "Value[") || typ.PkgPath() != seam {
		return nil
	}
	return typ.Field(0).Type
}

// modelProblems compares a model struct with an object type.
func modelProblems(model reflect.Type, obj tftypes.Object, at string) []string {
	var problems []string
	seen := map[string]bool{}
	for i := range model.NumField() {
		f := model.Field(i)
		name := f.Tag.Get("tf")
		path := at + name
		attrType, ok := obj.AttributeTypes[name]
		switch {
		case name == "":
			problems = append(problems, fmt.Sprintf("%s.%s has no tf tag naming its attribute", model.Name(), f.Name))
			continue
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: the model's field %s names no attribute of the schema", path, f.Name))
			continue
		case seen[name]:
			problems = append(problems, fmt.Sprintf("%s: two fields of %s", path, model.Name()))
		}
		seen[name] = true
		problems = append(problems, shapeProblems(f.Type, attrType, path)...)
	}
	for name := range obj.AttributeTypes {
		if !seen[name] {
			problems = append(problems, fmt.Sprintf("%s%s: the schema's attribute has no field in %s", at, name, model.Name()))
		}
	}
	return problems
}

// shapeProblems checks that field, a Value[T], has the shape of typ.
func shapeProblems(field reflect.Type, typ tftypes.Type, path string) []string {
	inner := valueInner(field)
	if inner == nil {
		return []string{fmt.Sprintf("%s: field of type %s is not a Value[T], so it cannot hold null or unknown", path, field)}
	}
	switch {
	case typ.Is(tftypes.String):
		return kindProblem(inner, reflect.String, path)
	case typ.Is(tftypes.Number):
		return kindProblem(inner, reflect.Int64, path)
	case typ.Is(tftypes.Bool):
		return kindProblem(inner, reflect.Bool, path)
	case typ.Is(tftypes.Object{}):
		if inner.Kind() != reflect.Struct {
			return []string{fmt.Sprintf("%s: an object held in %s", path, inner)}
		}
		return modelProblems(inner, typ.(tftypes.Object), path+".") //nolint:forcetypeassert // checked by Is
	case typ.Is(tftypes.List{}), typ.Is(tftypes.Set{}):
		if inner.Kind() != reflect.Slice {
			return []string{fmt.Sprintf("%s: a list or set held in %s", path, inner)}
		}
		return shapeProblems(inner.Elem(), protocol.ElementType(typ), path+"[]")
	case typ.Is(tftypes.Map{}):
		if inner.Kind() != reflect.Map || inner.Key().Kind() != reflect.String {
			return []string{fmt.Sprintf("%s: a map held in %s", path, inner)}
		}
		return shapeProblems(inner.Elem(), protocol.ElementType(typ), path+"[key]")
	}
	return []string{fmt.Sprintf("%s: no model shape for %s", path, typ)}
}

func kindProblem(inner reflect.Type, want reflect.Kind, path string) []string {
	if inner.Kind() != want {
		return []string{fmt.Sprintf("%s: held in %s, want %s", path, inner, want)}
	}
	return nil
}
