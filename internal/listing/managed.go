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
			"action), and a user's grant when a `bkiam_creator_grant` of that creator holds its actions (those of the " +
			"type's creator configuration); a group's members when a `bkiam_user_groups` holds a membership of it, and a " +
			"person's membership when a `bkiam_group_members` owns the group or a `bkiam_user_groups` holds it; so a second " +
			"query over an adopted site generates nothing already managed."}
}

// Managed is what a list block's managed argument names, indexed so that
// each result is looked up once, however many resources state holds; nil
// names nothing.
type Managed struct {
	typeName string
	// exact is, by type and identity (render), the address that manages it.
	exact map[string]string
	// policies are, by system and subject, the grants and group permissions
	// that manage a slice of the subject's policies (policyOf), and the
	// creator grants WithCreatorActions resolved.
	policies map[[2]string][]managedPolicy
	// creators are the creator grants managed names, whose actions only
	// the system's model tells (WithCreatorActions).
	creators []managedCreator
	// wholeGroups are, by system and group, the bkiam_group_members that
	// own the group's members whole; memberships, by system, group and
	// person ("user/alice"), the bkiam_user_groups that own one; and
	// partGroups, by system and group, one bkiam_user_groups owning a
	// membership in it.
	wholeGroups, memberships, partGroups map[string]string
}

type managedCreator struct {
	system, typ, creator, address string
}

type managedPolicy struct {
	actions []string
	address string
}

func newManaged(typeName string) *Managed {
	return &Managed{typeName: typeName, exact: map[string]string{}, policies: map[[2]string][]managedPolicy{},
		wholeGroups: map[string]string{}, memberships: map[string]string{}, partGroups: map[string]string{}}
}

// add indexes the resource at address, of type typeName, with identity.
func (m *Managed) add(address, typeName string, identity map[string]any) {
	if typeName == "bkiam_creator_grant" {
		s := func(name string) string { v, _ := identity[name].(string); return v }
		m.creators = append(m.creators, managedCreator{s("system"), s("type"), s("creator"), address})
		return
	}
	s := func(name string) string { v, _ := identity[name].(string); return v }
	switch typeName {
	case "bkiam_group_members":
		m.wholeGroups[s("system")+"/"+s("group_id")] = address
	case "bkiam_user_groups":
		for _, g := range stringsOf(identity["groups"]) {
			m.memberships[s("system")+"/"+g+"/"+s("member_type")+"/"+s("member_id")] = address
			m.partGroups[s("system")+"/"+g] = address
		}
	}
	if p, ok := policyOf(typeName, identity); ok {
		k := [2]string{p.system, p.subject}
		m.policies[k] = append(m.policies[k], managedPolicy{actions: p.actions, address: address})
		return
	}
	if k := typeName + "\x00" + render(identity); m.exact[k] == "" {
		m.exact[k] = address
	}
}

// WithCreatorActions resolves the creator grants managed names: a
// bkiam_creator_grant holds a slice of its creator's policy of every
// action the type's creator configuration names (IAM keeps one policy per
// subject and action, and the creator grant makes each permanent), so it
// manages the creator's grants of those actions as a grant of them would.
// actionsOf is the creator actions of a system's type, from its model (nil
// where the model is not the list's).
func (m *Managed) WithCreatorActions(actionsOf func(system, typ string) []string) *Managed {
	if m == nil {
		return m
	}
	for _, c := range m.creators {
		if actions := actionsOf(c.system, c.typ); len(actions) > 0 {
			k := [2]string{c.system, "user/" + c.creator}
			m.policies[k] = append(m.policies[k], managedPolicy{actions: actions, address: c.address})
		}
	}
	m.creators = nil
	return m
}

// managedBy is the address of the resource that manages the listed object
// with identity, "" for none. A grant and a group permission name a slice
// of the one policy IAM keeps per subject and action, so either kind
// manages the other's results of the same subject whose actions it holds;
// any other identity manages its own type's equal one.
func (m *Managed) managedBy(identity map[string]any) string {
	if p, ok := policyOf(m.typeName, identity); ok {
		for _, mp := range m.policies[[2]string{p.system, p.subject}] {
			if isSubset(p.actions, mp.actions) {
				return mp.address
			}
		}
		return ""
	}
	return m.exact[m.typeName+"\x00"+render(identity)]
}

// GroupOwner is the address of the bkiam_group_members managed names
// that owns group's members whole, "" for none.
func (m *Managed) GroupOwner(system, group string) string {
	if m == nil {
		return ""
	}
	return m.wholeGroups[system+"/"+group]
}

// MembershipOwner is the address of the bkiam_user_groups managed names
// that owns the membership of the person (memberType, memberID) in group;
// with memberType "", of any person: "" for none.
func (m *Managed) MembershipOwner(system, group, memberType, memberID string) string {
	if m == nil {
		return ""
	}
	if memberType == "" {
		return m.partGroups[system+"/"+group]
	}
	return m.memberships[system+"/"+group+"/"+memberType+"/"+memberID]
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
	m := newManaged(typeName)
	for _, address := range slices.Sorted(maps.Keys(byAddress)) {
		identity, ok := byAddress[address].(map[string]any)
		if !ok {
			return fail(fmt.Sprintf("The identity of %s is not an object.", address))
		}
		if t := addressType(address); t != "" {
			m.add(address, t, identity)
		}
	}
	return m, true
}

// Leave wraps push: a result whose object a resource in managed manages
// is not pushed but a warning naming that resource.
func (m *Managed) Leave(push func(list.ListResult) bool) func(list.ListResult) bool {
	if m == nil || len(m.exact) == 0 && len(m.policies) == 0 {
		return push
	}
	if m.typeName == "bkiam_user_groups" {
		return push // its results are filtered group by group (GroupOwner, MembershipOwner)
	}
	return func(r list.ListResult) bool {
		if r.Identity == nil || r.Diagnostics.HasError() {
			return push(r)
		}
		identity, _ := protocol.GoValue(r.Identity.Raw).(map[string]any)
		if address := m.managedBy(identity); address != "" {
			return push(Warning("Left out: already managed", fmt.Sprintf("%s %q (identity %s) is left out: %s manages it, as "+
				"managed says.", m.typeName, r.DisplayName, render(identity), address)))
		}
		return push(r)
	}
}

// covers reports whether a resource of type managedType with identity
// managed manages the listed object of type listed with identity result
// (managedBy).
func covers(listed string, result map[string]any, managedType string, managed map[string]any) bool {
	m := newManaged(listed)
	m.add("managed", managedType, managed)
	return m.managedBy(result) != ""
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
