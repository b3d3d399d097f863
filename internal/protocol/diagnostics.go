package protocol

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Diagnostics collects what a protocol-level call tells the user.
type Diagnostics []*tfprotov6.Diagnostic

func (d *Diagnostics) add(severity tfprotov6.DiagnosticSeverity, at *tftypes.AttributePath, summary, detail string) {
	*d = append(*d, &tfprotov6.Diagnostic{Severity: severity, Summary: summary, Detail: detail, Attribute: at})
}

func (d *Diagnostics) AddError(summary, detail string) {
	d.add(tfprotov6.DiagnosticSeverityError, nil, summary, detail)
}

func (d *Diagnostics) AddWarning(summary, detail string) {
	d.add(tfprotov6.DiagnosticSeverityWarning, nil, summary, detail)
}

func (d *Diagnostics) AddAttributeError(at *tftypes.AttributePath, summary, detail string) {
	d.add(tfprotov6.DiagnosticSeverityError, at, summary, detail)
}

func (d *Diagnostics) AddAttributeWarning(at *tftypes.AttributePath, summary, detail string) {
	d.add(tfprotov6.DiagnosticSeverityWarning, at, summary, detail)
}

func (d Diagnostics) HasError() bool {
	for _, x := range d {
		if x.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}

// Root is the path of a top-level attribute.
func Root(name string) *tftypes.AttributePath {
	return tftypes.NewAttributePath().WithAttributeName(name)
}

// PathString renders a path as users write it: resources[0].instances["7"].
func PathString(p *tftypes.AttributePath) string {
	var b strings.Builder
	for _, step := range p.Steps() {
		switch s := step.(type) {
		case tftypes.AttributeName:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(s))
		case tftypes.ElementKeyInt:
			fmt.Fprintf(&b, "[%d]", int64(s))
		case tftypes.ElementKeyString:
			fmt.Fprintf(&b, "[%q]", string(s))
		case tftypes.ElementKeyValue:
			var v string
			if err := tftypes.Value(s).As(&v); err == nil {
				fmt.Fprintf(&b, "[Value(%q)]", v)
			} else {
				b.WriteString("[Value]")
			}
		}
	}
	return b.String()
}

// SomeIDs lists ids sorted, the first ten of them, for a warning.
func SomeIDs(ids []string) string {
	slices.Sort(ids)
	if len(ids) > 10 {
		return strings.Join(ids[:10], ", ") + ", …"
	}
	return strings.Join(ids, ", ")
}
