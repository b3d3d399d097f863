package provider

// The policies attribute of the grants: the IAM policy id of each action.

// policiesValue is the policies attribute: the policy id of each of
// actions that has one.
func policiesValue(actions []string, ids map[string]int64) Int64MapValue {
	out := make(map[string]Value[int64], len(actions))
	for _, a := range actions {
		if id, ok := ids[a]; ok {
			out[a] = Known(id)
		}
	}
	return Known(out)
}

// plannedPolicies shows the policy ids an update keeps (kept(action)),
// and "known after apply" for the rest.
func plannedPolicies(actions []string, ids map[string]int64, kept func(string) bool) Int64MapValue {
	out := make(map[string]Value[int64], len(actions))
	for _, a := range actions {
		if id, ok := ids[a]; ok && kept(a) {
			out[a] = Known(id)
		} else {
			out[a] = Unknown[int64]()
		}
	}
	return Known(out)
}
