package testutil

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ObjectValue builds a value of objType, a provider block or a resource's
// configuration, as Terraform would send it: attributes not given are
// null; a value of Unknown marks an unknown one.
func ObjectValue(t testing.TB, objType tftypes.Object, attrs map[string]any) *tfprotov6.DynamicValue {
	t.Helper()
	values := map[string]tftypes.Value{}
	for name, typ := range objType.AttributeTypes {
		v, given := attrs[name]
		switch {
		case !given:
			values[name] = tftypes.NewValue(typ, nil)
		case v == Unknown:
			values[name] = tftypes.NewValue(typ, tftypes.UnknownValue)
		default:
			if i, isInt := v.(int); isInt {
				v = int64(i)
			}
			if i, isInt := v.(int64); isInt {
				values[name] = tftypes.NewValue(typ, i)
				continue
			}
			values[name] = tftypes.NewValue(typ, v)
		}
	}
	for name := range attrs {
		if _, known := objType.AttributeTypes[name]; !known {
			t.Fatalf("no attribute %q", name)
		}
	}
	dv, err := tfprotov6.NewDynamicValue(objType, tftypes.NewValue(objType, values))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// UnknownMarker is the type of Unknown.
type UnknownMarker struct{}

// Unknown, as an attribute's value in ObjectValue, marks it unknown.
var Unknown = UnknownMarker{}

// HasError reports whether diags hold an error.
func HasError(diags []*tfprotov6.Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}

// RenderDiags renders diagnostics a line each, with their attribute paths.
func RenderDiags(diags []*tfprotov6.Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		b.WriteString("  " + d.Severity.String() + " " + d.Summary + ": " + d.Detail)
		if d.Attribute != nil {
			b.WriteString(" @ " + d.Attribute.String())
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Keys are the keys of m, in no particular order.
func Keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
