package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// diagnostics collects what a protocol-level call tells the user.
type diagnostics []*tfprotov6.Diagnostic

func (d *diagnostics) add(severity tfprotov6.DiagnosticSeverity, at *tftypes.AttributePath, summary, detail string) {
	*d = append(*d, &tfprotov6.Diagnostic{Severity: severity, Summary: summary, Detail: detail, Attribute: at})
}

func (d *diagnostics) addError(summary, detail string) {
	d.add(tfprotov6.DiagnosticSeverityError, nil, summary, detail)
}

func (d *diagnostics) addWarning(summary, detail string) {
	d.add(tfprotov6.DiagnosticSeverityWarning, nil, summary, detail)
}

func (d *diagnostics) addAttributeError(at *tftypes.AttributePath, summary, detail string) {
	d.add(tfprotov6.DiagnosticSeverityError, at, summary, detail)
}

func (d *diagnostics) addAttributeWarning(at *tftypes.AttributePath, summary, detail string) {
	d.add(tfprotov6.DiagnosticSeverityWarning, at, summary, detail)
}

func (d diagnostics) hasError() bool {
	for _, x := range d {
		if x.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}

// root is the path of a top-level attribute.
func root(name string) *tftypes.AttributePath {
	return tftypes.NewAttributePath().WithAttributeName(name)
}

// pathString renders a path as users write it: resources[0].instances["7"].
func pathString(p *tftypes.AttributePath) string {
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

// Reading values. Each helper answers for a value that may be null or
// unknown (at plan time any part of the configuration can be); known
// reports a known, non-null value.

// attrsOf returns an object's attributes, nil when null or unknown. The
// map is the value's own: copy it before changing it.
func attrsOf(v tftypes.Value) map[string]tftypes.Value {
	if !v.IsKnown() || v.IsNull() {
		return nil
	}
	var m map[string]tftypes.Value
	if err := v.As(&m); err != nil {
		return nil
	}
	return m
}

func stringOf(v tftypes.Value) (string, bool) {
	if !v.IsKnown() || v.IsNull() {
		return "", false
	}
	var s string
	if err := v.As(&s); err != nil {
		return "", false
	}
	return s, true
}

// elemsOf returns a list's or set's elements.
func elemsOf(v tftypes.Value) ([]tftypes.Value, bool) {
	if !v.IsKnown() || v.IsNull() {
		return nil, false
	}
	var elems []tftypes.Value
	if err := v.As(&elems); err != nil {
		return nil, false
	}
	return elems, true
}

// stringsOf returns the elements of a fully known set or list of strings.
func stringsOf(v tftypes.Value) ([]string, bool) {
	elems, ok := elemsOf(v)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		s, ok := stringOf(e)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// stringMapOf returns a fully known map of strings.
func stringMapOf(v tftypes.Value) (map[string]string, bool) {
	elems := attrsOf(v)
	if elems == nil {
		return nil, false
	}
	out := make(map[string]string, len(elems))
	for k, e := range elems {
		s, ok := stringOf(e)
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

// int64MapOf returns a map of numbers; null, unknown or partly unknown
// maps give an empty one.
func int64MapOf(v tftypes.Value) map[string]int64 {
	out := map[string]int64{}
	for k, e := range attrsOf(v) {
		if !e.IsKnown() || e.IsNull() {
			continue
		}
		var f big.Float
		if err := e.As(&f); err == nil {
			n, _ := f.Int64()
			out[k] = n
		}
	}
	return out
}

// Building values.

func stringValue(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

func stringSetValue(typ tftypes.Type, items []string) tftypes.Value {
	elems := make([]tftypes.Value, len(items))
	for i, s := range items {
		elems[i] = stringValue(s)
	}
	return tftypes.NewValue(typ, elems)
}

func stringMapValue(typ tftypes.Type, m map[string]string) tftypes.Value {
	elems := make(map[string]tftypes.Value, len(m))
	for k, s := range m {
		elems[k] = stringValue(s)
	}
	return tftypes.NewValue(typ, elems)
}

// policiesValue is the policies attribute: the policy id of each of
// actions that has one.
func policiesValue(typ tftypes.Type, actions []string, ids map[string]int64) tftypes.Value {
	elems := make(map[string]tftypes.Value, len(actions))
	for _, a := range actions {
		if id, ok := ids[a]; ok {
			elems[a] = tftypes.NewValue(tftypes.Number, new(big.Float).SetInt64(id))
		}
	}
	return tftypes.NewValue(typ, elems)
}

// plannedPolicies shows the policy ids an update keeps (kept(action)),
// and "known after apply" for the rest.
func plannedPolicies(typ tftypes.Type, actions []string, ids map[string]int64, kept func(string) bool) tftypes.Value {
	elems := make(map[string]tftypes.Value, len(actions))
	for _, a := range actions {
		if id, ok := ids[a]; ok && kept(a) {
			elems[a] = tftypes.NewValue(tftypes.Number, new(big.Float).SetInt64(id))
		} else {
			elems[a] = tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)
		}
	}
	return tftypes.NewValue(typ, elems)
}

func unknownOf(typ tftypes.Type) tftypes.Value { return tftypes.NewValue(typ, tftypes.UnknownValue) }

// withAttrs is obj with some attributes replaced. The others, however
// large, are shared, not copied.
func withAttrs(typ tftypes.Object, obj map[string]tftypes.Value, changes map[string]tftypes.Value) tftypes.Value {
	out := maps.Clone(obj)
	maps.Copy(out, changes)
	return tftypes.NewValue(typ, out)
}

// Checks shared by the validations of both resources.

// checkNotBlank refuses a known string that is empty or white space: IAM
// trims ids and names and then requires them non-blank.
func checkNotBlank(at *tftypes.AttributePath, v tftypes.Value, diags *diagnostics) {
	if s, ok := stringOf(v); ok && strings.TrimSpace(s) == "" {
		diags.addAttributeError(at, "Blank value", pathString(at)+" must not be empty or blank.")
	}
}

// checkActions checks an actions set: at least one, none blank. fix ends
// the message of an empty set: what the user can do instead, which
// depends on whether the resource can go without the attribute.
func checkActions(at *tftypes.AttributePath, v tftypes.Value, fix string, diags *diagnostics) {
	elems, ok := elemsOf(v)
	if !ok {
		return
	}
	if len(elems) == 0 {
		diags.addAttributeError(at, "No actions",
			pathString(at)+" set must contain at least 1 action, got: 0. "+fix)
	}
	for _, e := range elems {
		checkNotBlank(at.WithElementKeyValue(e), e, diags)
	}
}

// checkInstanceCount enforces 1 to maxPolicyInstances instances: an empty
// list means every instance to IAM.
func checkInstanceCount(at *tftypes.AttributePath, n int, diags *diagnostics) {
	if n < 1 || n > maxPolicyInstances {
		diags.addAttributeError(at, "Invalid number of instances",
			fmt.Sprintf("%s map must contain at least 1 element and at most %d elements, got: %d. "+
				"An empty map would mean every instance to IAM; split larger sets across resources with different actions or subjects.",
				pathString(at), maxPolicyInstances, n))
	}
}

// timeoutsOf reads the timeouts attribute: how long operation ("create",
// "update" or "delete") may take.
func timeoutsOf(v tftypes.Value, operation string) time.Duration {
	if s, ok := stringOf(attrsOf(v)[operation]); ok {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return defaultTimeout
}

// checkTimeouts refuses a timeout that is not a positive duration.
func checkTimeouts(v tftypes.Value, diags *diagnostics) {
	attrs := attrsOf(v)
	for _, op := range slices.Sorted(maps.Keys(attrs)) {
		s, ok := stringOf(attrs[op])
		if !ok {
			continue
		}
		if d, err := time.ParseDuration(s); err != nil || d <= 0 {
			at := root("timeouts").WithAttributeName(op)
			diags.addAttributeError(at, "Invalid duration",
				fmt.Sprintf(`%s must be a positive duration such as "30m" or "1h", got %s.`, pathString(at), strconv.Quote(s)))
		}
	}
}

// privateState is a resource's private state: JSON documents by key, in
// the framework's encoding, so that state written by either reads back.
type privateState map[string][]byte

func readPrivateState(raw []byte, diags *diagnostics) privateState {
	p := privateState{}
	if len(raw) == 0 {
		return p
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		diags.addError("Cannot read the resource's private state",
			fmt.Sprintf("The record of what this resource holds in IAM is corrupt (%v). Remove the resource from state "+
				"(terraform state rm) and import it again.", err))
	}
	return p
}

func (p privateState) bytes(diags *diagnostics) []byte {
	if len(p) == 0 {
		return nil
	}
	raw, err := json.Marshal(map[string][]byte(p))
	if err != nil {
		diags.addError("Cannot record what the resource holds", err.Error())
	}
	return raw
}

// get decodes the JSON kept under key, reporting whether there was any.
func (p privateState) get(key string, into any, diags *diagnostics) bool {
	raw := p[key]
	if len(raw) == 0 {
		return false
	}
	if err := json.Unmarshal(raw, into); err != nil {
		diags.addError("Cannot read the resource's private state",
			fmt.Sprintf("The record of what this resource holds in IAM is corrupt (%v). Remove the resource from state "+
				"(terraform state rm) and import it again.", err))
		return false
	}
	return true
}

// set keeps v as JSON under key, or removes the key when v is nil.
func (p privateState) set(key string, v any, diags *diagnostics) {
	if v == nil {
		delete(p, key)
		return
	}
	raw, err := json.Marshal(v)
	if err != nil {
		diags.addError("Cannot record what the resource holds", err.Error())
		return
	}
	p[key] = raw
}
