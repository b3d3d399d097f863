package authz

import "github.com/bkiam/terraform-provider-bkiam/internal/protocol"

// The policies attribute of the grants: the IAM policy id of each action.

// policiesValue is the policies attribute: the policy id of each of
// actions that has one.
func policiesValue(actions []string, ids map[string]int64) protocol.Int64MapValue {
	out := make(map[string]protocol.Value[int64], len(actions))
	for _, a := range actions {
		if id, ok := ids[a]; ok {
			out[a] = protocol.Known(id)
		}
	}
	return protocol.Known(out)
}

// plannedPolicies shows the policy ids an update keeps (kept(action)),
// and "known after apply" for the rest. A kept action whose id state does
// not know (an imported grant: IAM's policy list does not show the ids a
// grant answers) stays without one, as the apply, which sends it nothing,
// leaves it.
func plannedPolicies(actions []string, ids map[string]int64, kept func(string) bool) protocol.Int64MapValue {
	out := make(map[string]protocol.Value[int64], len(actions))
	for _, a := range actions {
		id, ok := ids[a]
		switch {
		case ok && kept(a):
			out[a] = protocol.Known(id)
		case !kept(a):
			out[a] = protocol.Unknown[int64]()
		}
	}
	return protocol.Known(out)
}
