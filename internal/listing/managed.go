package listing

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// Terraform generates a block for every result of a query, whatever the
// state already manages: a second `terraform query -generate-config-out`
// over an adopted site would write every block again, and applying them
// would put two resources on one object (two authoritative
// bkiam_group_members fighting over a group). No RPC of a listing carries
// the state, so a list block is told what is managed: its `managed`
// argument takes the identities Terraform holds, as `terraform state
// identities -json` prints them, and every result one of them covers is
// left out with a warning that names the resource managing it.

// ManagedAttribute is every list block's `managed` argument.
func ManagedAttribute() listschema.DynamicAttribute {
	return listschema.DynamicAttribute{Optional: true,
		MarkdownDescription: "The identities already in state, to leave out what they manage: " +
			"`jsondecode(file(\"managed.json\"))` after `terraform state identities -json > managed.json`, an object of " +
			"resource addresses and their identities (resources of other types are ignored). A result is left out, with a " +
			"warning naming the resource, when a resource of its type has its identity; a grant or group permission also " +
			"when a `bkiam_instance_grant` or `bkiam_group_permission` of the same subject holds the result's actions, " +
			"whichever of the two kinds it is and whatever instances it manages (IAM keeps one policy per subject and " +
			"action), so a second query over an adopted site generates nothing already managed."}
}

// Managed is what a list block's managed argument names; nil names
// nothing.
type Managed struct {
	typeName string
	entries  []managedEntry
}

type managedEntry struct {
	address, typeName string
	identity          map[string]any
}

// ReadManaged reads the managed argument of a list of the resource type
// typeName (e.g. bkiam_group); false once it has put the error in stream.
func ReadManaged(ctx context.Context, typeName string, v types.Dynamic, stream *list.ListResultsStream) (*Managed, bool) {
	if v.IsNull() || v.IsUnderlyingValueNull() {
		return nil, true
	}
	fail := func(detail string) (*Managed, bool) {
		stream.Results = func(push func(list.ListResult) bool) {
			push(Error("Invalid managed", "managed must be the identities Terraform holds, as `terraform state identities -json` "+
				"prints them: an object of resource addresses and identities, e.g. managed = jsondecode(file(\"managed.json\")). "+detail))
		}
		return nil, false
	}
	if v.IsUnknown() || v.IsUnderlyingValueUnknown() {
		return fail("It is not known until an apply.")
	}
	raw, err := v.UnderlyingValue().ToTerraformValue(ctx)
	if err != nil {
		return fail(err.Error() + ".")
	}
	byAddress, ok := protocol.GoValue(raw).(map[string]any)
	if !ok {
		return fail(fmt.Sprintf("Got a %s.", raw.Type()))
	}
	m := &Managed{typeName: typeName}
	for _, address := range slices.Sorted(maps.Keys(byAddress)) {
		identity, ok := byAddress[address].(map[string]any)
		if !ok {
			return fail(fmt.Sprintf("The identity of %s is not an object.", address))
		}
		if t := addressType(address); t != "" {
			m.entries = append(m.entries, managedEntry{address: address, typeName: t, identity: identity})
		}
	}
	return m, true
}

// Leave wraps push: a result whose identity an entry covers is not pushed
// but a warning naming the resource that manages it.
func (m *Managed) Leave(push func(list.ListResult) bool) func(list.ListResult) bool {
	if m == nil || len(m.entries) == 0 {
		return push
	}
	return func(r list.ListResult) bool {
		if r.Identity == nil || r.Diagnostics.HasError() {
			return push(r)
		}
		identity, _ := protocol.GoValue(r.Identity.Raw).(map[string]any)
		for _, e := range m.entries {
			if covers(m.typeName, identity, e.typeName, e.identity) {
				return push(Warning("Left out: already managed", fmt.Sprintf("%s %q (identity %s) is left out: %s manages it, as "+
					"managed says.", m.typeName, r.DisplayName, render(identity), e.address)))
			}
		}
		return push(r)
	}
}

// covers reports whether a resource of type managedType with identity
// managed manages the listed object of type listed with identity result.
// A grant and a group permission name a slice of the one policy IAM keeps
// per subject and action, so either kind covers the other's results of
// the same subject whose actions it holds; any other identity covers its
// own type's equal one.
func covers(listed string, result map[string]any, managedType string, managed map[string]any) bool {
	rp, okResult := policyOf(listed, result)
	mp, okManaged := policyOf(managedType, managed)
	switch {
	case okResult && okManaged:
		return rp.system == mp.system && rp.subject == mp.subject && isSubset(rp.actions, mp.actions)
	case listed != managedType:
		return false
	}
	return render(result) == render(managed)
}

type policySlice struct {
	system, subject string
	actions         []string
}

func policyOf(typeName string, id map[string]any) (policySlice, bool) {
	s := func(name string) string { v, _ := id[name].(string); return v }
	switch typeName {
	case "bkiam_instance_grant":
		return policySlice{s("system"), s("subject_type") + "/" + s("subject_id"), stringsOf(id["actions"])}, true
	case "bkiam_group_permission":
		return policySlice{s("system"), "group/" + s("group_id"), stringsOf(id["actions"])}, true
	}
	return policySlice{}, false
}

func isSubset(items, of []string) bool {
	if len(items) == 0 {
		return false
	}
	for _, a := range items {
		if !slices.Contains(of, a) {
			return false
		}
	}
	return true
}

func stringsOf(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, i := range items {
		if s, ok := i.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// render is an identity as `name=value,…`, names sorted, as Terraform
// prints it.
func render(id map[string]any) string {
	parts := make([]string, 0, len(id))
	for _, name := range slices.Sorted(maps.Keys(id)) {
		switch v := id[name].(type) {
		case nil:
		case []any:
			parts = append(parts, name+"=["+strings.Join(stringsOf(v), ",")+"]")
		default:
			parts = append(parts, fmt.Sprintf("%s=%v", name, v))
		}
	}
	return strings.Join(parts, ",")
}

// addressType is the resource type of a resource instance address such as
// module.a["x"].bkiam_group.dev[0]: the second-to-last of its parts
// outside brackets and quotes.
func addressType(address string) string {
	var parts []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(address); i++ {
		switch c := address[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == '.' && depth == 0:
			parts = append(parts, address[start:i])
			start = i + 1
		}
	}
	parts = append(parts, address[start:])
	if len(parts) < 2 {
		return ""
	}
	return parts[len(parts)-2]
}
