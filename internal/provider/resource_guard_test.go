package provider

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// TestProtocolSchemasUseNothingIgnored: the framework serves only the
// schemas of the protocol-level resources; their validation, plan, apply,
// read, import and state upgrades are the resources' own (resource.go,
// state_upgrade.go). A validator, plan
// modifier, default or custom type in such a schema, or a framework hook
// on its shim, would be accepted by the framework and silently never run.
// This keeps them out: what such a feature would do belongs in the
// resource's validate or plan.
func TestProtocolSchemasUseNothingIgnored(t *testing.T) {
	ctx := context.Background()
	for _, r := range protocolResources {
		t.Run(r.TypeName(), func(t *testing.T) {
			shim := r.FrameworkResource()
			for _, problem := range shimProblems(shim) {
				t.Error(problem)
			}
			var resp resource.SchemaResponse
			shim.Schema(ctx, resource.SchemaRequest{}, &resp)
			for _, problem := range schemaProblems(resp.Schema) {
				t.Error(problem)
			}
			// Every resource has an identity, which the seam encodes
			// from strings and lists of strings only (protocol/identity.go).
			withIdentity, ok := shim.(resource.ResourceWithIdentity)
			if !ok {
				t.Error("the shim has no identity schema: the resource must implement protocol.IdentityDef")
			} else {
				var id resource.IdentitySchemaResponse
				withIdentity.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &id)
				for _, problem := range identityProblems(id.IdentitySchema) {
					t.Error(problem)
				}
			}
			// A schema version needs its upgrade steps (state_upgrade.go).
			for _, problem := range r.UpgradeProblems() {
				t.Error(problem)
			}
		})
	}
}

// shimProblems lists the framework hooks a shim implements that the
// protocol path never calls.
func shimProblems(shim resource.Resource) []string {
	hooks := []struct {
		name        string
		implemented bool
	}{
		{"ImportState (import is the resource's importState)", implements[resource.ResourceWithImportState](shim)},
		{"ModifyPlan", implements[resource.ResourceWithModifyPlan](shim)},
		{"ValidateConfig", implements[resource.ResourceWithValidateConfig](shim)},
		{"ConfigValidators", implements[resource.ResourceWithConfigValidators](shim)},
		{"UpgradeState", implements[resource.ResourceWithUpgradeState](shim)},
		{"MoveState", implements[resource.ResourceWithMoveState](shim)},
		{"UpgradeIdentity", implements[resource.ResourceWithUpgradeIdentity](shim)},
		{"Configure", implements[resource.ResourceWithConfigure](shim)},
	}
	var problems []string
	for _, h := range hooks {
		if h.implemented {
			problems = append(problems, fmt.Sprintf("the shim implements %s, which the protocol path never calls", h.name))
		}
	}
	return problems
}

// identityProblems lists what the seam's identity codec cannot carry:
// anything but strings and lists of strings, or a custom type.
func identityProblems(s identityschema.Schema) []string {
	var problems []string
	if len(s.Attributes) == 0 {
		problems = append(problems, "the identity schema has no attribute")
	}
	for name, a := range s.Attributes {
		switch a := a.(type) {
		case identityschema.StringAttribute:
			if a.CustomType != nil {
				problems = append(problems, fmt.Sprintf("identity attribute %s has a custom type", name))
			}
		case identityschema.ListAttribute:
			if a.CustomType != nil || !a.ElementType.Equal(types.StringType) {
				problems = append(problems, fmt.Sprintf("identity attribute %s is a list of %s, want a list of strings", name, a.ElementType))
			}
		default:
			problems = append(problems, fmt.Sprintf("identity attribute %s is a %T: the seam encodes strings and lists of strings", name, a))
		}
	}
	return problems
}

func implements[I any](v any) bool {
	_, ok := v.(I)
	return ok
}

// ignoredFields are the fields of the framework's attribute types whose
// settings only the framework's own validation and planning carry out.
var ignoredFields = []string{"Validators", "PlanModifiers", "Default", "CustomType", "WriteOnly"}

// schemaProblems lists what a schema declares that the protocol path
// would ignore.
func schemaProblems(s schema.Schema) []string {
	var problems []string
	if len(s.Blocks) > 0 {
		problems = append(problems, "the schema has blocks: use nested attributes, which the codecs read")
	}
	for _, name := range slices.Sorted(maps.Keys(s.Attributes)) {
		problems = append(problems, attributeProblems(name, reflect.ValueOf(s.Attributes[name]))...)
	}
	return problems
}

// attributeProblems checks an attribute (a schema.XxxAttribute, or a
// NestedAttributeObject) by its fields, so that every kind of attribute,
// including kinds a framework upgrade adds, is covered.
func attributeProblems(path string, v reflect.Value) []string {
	if v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return []string{fmt.Sprintf("%s: cannot inspect an attribute of kind %s", path, v.Kind())}
	}
	var problems []string
	for _, field := range ignoredFields {
		if f := v.FieldByName(field); f.IsValid() && !f.IsZero() {
			problems = append(problems, fmt.Sprintf("%s sets %s, which the protocol path ignores", path, field))
		}
	}
	if f := v.FieldByName("ElementType"); f.IsValid() && !f.IsZero() {
		if et, ok := f.Interface().(attr.Type); ok && !isBaseType(et) {
			problems = append(problems, fmt.Sprintf("%s has the custom element type %T, whose validation and semantic equality the protocol path ignores", path, et))
		}
	}
	if f := v.FieldByName("NestedObject"); f.IsValid() {
		problems = append(problems, attributeProblems(path+".<element>", f)...)
	}
	if f := v.FieldByName("Attributes"); f.IsValid() && f.Kind() == reflect.Map {
		keys := f.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			problems = append(problems, attributeProblems(path+"."+k.String(), f.MapIndex(k))...)
		}
	}
	return problems
}

// isBaseType reports an element type of the framework's own (String,
// Int64, lists and maps of them and so on), which carries no validation.
func isBaseType(t attr.Type) bool {
	return reflect.TypeOf(t).PkgPath() == reflect.TypeFor[basetypes.StringType]().PkgPath()
}
