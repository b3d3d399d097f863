package verify

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// Checks shared by the validations of the protocol-level resources. Each
// passes over what is not known yet: at plan time any part of a
// configuration can be unknown, and is checked again once it is known.

// CheckNotBlank refuses a known string that is empty or white space: IAM
// trims ids and names and then requires them non-blank.
func CheckNotBlank(at *tftypes.AttributePath, v protocol.StringValue, diags *protocol.Diagnostics) {
	if s, ok := v.Get(); ok && strings.TrimSpace(s) == "" {
		diags.AddAttributeError(at, "Blank value", protocol.PathString(at)+" must not be empty or blank.")
	}
}

// CheckNames refuses the known names of an instances map (id or path →
// name) that are empty or white space, as CheckNotBlank does each, in the
// order of their keys. The path of a name is built only when it is
// refused: a path per instance was most of the check's cost at 10 000
// instances, and of a listing's, which validates every object it lists.
func CheckNames(at *tftypes.AttributePath, names map[string]protocol.StringValue, diags *protocol.Diagnostics) {
	var blank []string
	for key, name := range names {
		if s, ok := name.Get(); ok && strings.TrimSpace(s) == "" {
			blank = append(blank, key)
		}
	}
	slices.Sort(blank)
	for _, key := range blank {
		CheckNotBlank(at.WithElementKeyString(key), names[key], diags)
	}
}

// CheckID checks an id IAM stores (a system, type, action, subject,
// instance or ancestor id): not blank, and neither surrounded by white
// space nor holding control characters. IAM trims ids as it stores them,
// so an id sent as " 1" is stored as "1", and the grant would read back
// as lost forever.
func CheckID(at *tftypes.AttributePath, v protocol.StringValue, diags *protocol.Diagnostics) {
	s, ok := v.Get()
	if !ok {
		return
	}
	if strings.TrimSpace(s) == "" {
		diags.AddAttributeError(at, "Blank value", protocol.PathString(at)+" must not be empty or blank.")
		return
	}
	if problem := IDProblem(s); problem != "" {
		diags.AddAttributeError(at, "Invalid IAM id",
			fmt.Sprintf("%s is %q, which %s. IAM trims the white space around ids as it stores them, so the id it "+
				"would keep is not the one configured; write the id exactly as IAM knows it.", protocol.PathString(at), s, problem))
	}
}

// IDProblem says what is wrong with an id, or "".
func IDProblem(id string) string {
	switch {
	case strings.TrimSpace(id) != id:
		return "starts or ends with white space"
	case strings.ContainsFunc(id, unicode.IsControl):
		return "holds a control character"
	}
	return ""
}

// CheckActions checks an actions set: at least one, none blank. fix ends
// the message of an empty set: what the user can do instead, which
// depends on whether the resource can go without the attribute.
func CheckActions(at *tftypes.AttributePath, v protocol.StringsValue, fix string, diags *protocol.Diagnostics) {
	elems, ok := v.Get()
	if !ok {
		return
	}
	if len(elems) == 0 {
		diags.AddAttributeError(at, "No actions",
			protocol.PathString(at)+" set must contain at least 1 action, got: 0. "+fix)
	}
	for _, e := range elems {
		if s, ok := e.Get(); ok {
			CheckID(at.WithElementKeyValue(tftypes.NewValue(tftypes.String, s)), e, diags)
		}
	}
}

// CheckInstanceCount enforces 1 to maxPolicyInstances instances: an empty
// list means every instance to IAM.
func CheckInstanceCount(at *tftypes.AttributePath, n int, diags *protocol.Diagnostics) {
	if n < 1 || n > conns.MaxPolicyInstances {
		diags.AddAttributeError(at, "Invalid number of instances",
			fmt.Sprintf("%s map must contain at least 1 element and at most %d elements, got: %d. "+
				"An empty map would mean every instance to IAM; split larger sets across resources with different actions or subjects.",
				protocol.PathString(at), conns.MaxPolicyInstances, n))
	}
}

// CheckInstanceIDs refuses blank instance ids, the keys of a map at at,
// and those IAM would trim (see checkID).
func CheckInstanceIDs[T any](at *tftypes.AttributePath, instances map[string]T, diags *protocol.Diagnostics) {
	for _, id := range slices.Sorted(maps.Keys(instances)) {
		switch problem := IDProblem(id); {
		case strings.TrimSpace(id) == "":
			diags.AddAttributeError(at, "Blank value",
				fmt.Sprintf("The instance IDs (keys) of %s must not be empty or blank, got %q.", protocol.PathString(at), id))
		case id == "*":
			// IAM turns a one-node path into an id comparison (StringEquals).
			diags.AddAttributeError(at.WithElementKeyString(id), "The id * is literal",
				fmt.Sprintf("The instance ID (key) \"*\" of %s is not every instance: IAM matches it as the literal id \"*\", "+
					"so the grant would match no real instance. Name the instances to grant (or, in a bkiam_group_permission, "+
					"give a path that ends in *, such as /bk_cmdb,biz,2/bk_cmdb,host,*/, for every instance under a parent).", protocol.PathString(at)))
		case strings.HasPrefix(id, "/"):
			// instancePath: a key that begins with "/" is a path in the provider's notation.
			diags.AddAttributeError(at.WithElementKeyString(id), "An id that begins with /",
				fmt.Sprintf("The instance ID (key) %q of %s begins with \"/\", which this provider reads as a path "+
					"(/SYSTEM,TYPE,ID/…/, as bkiam_group_permission takes them) and so cannot tell from one: an IAM id "+
					"that begins with \"/\" cannot be granted with this provider. Check that the key is the instance's id.", id, protocol.PathString(at)))
		case problem != "":
			diags.AddAttributeError(at.WithElementKeyString(id), "Invalid IAM id",
				fmt.Sprintf("The instance ID (key) %q of %s %s. IAM trims the white space around ids as it stores them, so "+
					"the id it would keep is not the one configured; write the id exactly as IAM knows it.", id, protocol.PathString(at), problem))
		}
	}
}

// CheckRepeatedNode refuses a path whose nodes above the instance — given as type and id pairs,
// outermost first — name one type and id twice: IAM refuses such a grant ("nodes must not repeat")
// when it translates the policy, so the plan says so instead. what names the path for the error.
func CheckRepeatedNode(at *tftypes.AttributePath, what string, nodes [][2]string, diags *protocol.Diagnostics) {
	seen := map[[2]string]bool{}
	for _, n := range nodes {
		if seen[n] {
			diags.AddAttributeError(at, "Repeated path node",
				fmt.Sprintf("%s names the node %s,%s twice. IAM refuses a path that repeats a node above the instance "+
					"(\"nodes must not repeat\"); remove the repeated node.", what, n[0], n[1]))
			return
		}
		seen[n] = true
	}
}
