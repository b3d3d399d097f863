package authz

import (
	"context"
	"maps"
	"slices"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/heldpolicy"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// IAM keeps a user's expired policy for a year and merges the next grant
// into it, with everything it held; its policy list shows an expired
// policy for one day only, but the by-id route answers it whatever its
// age. So a grant keeps, in private state, the backend ids of its user's
// own rows of each action that the provider's reads named (the plan's
// expiry check, the refresh's lists), and a later plan that finds nothing
// live reads them by id: what IAM would revive is then known, not only
// for a day.

// privateSeenRowsKey is the private-state key of the rows a grant's reads
// named.
const privateSeenRowsKey = "seen_rows"

// seenRows are the backend ids of a subject's own rows, by action.
type seenRows struct {
	Subject bkiam.Subject      `json:"subject"`
	Rows    map[string][]int64 `json:"rows"`
}

// readSeenRows returns the ids of subject's rows of action the private
// state keeps; none for another subject.
func readSeenRows(private protocol.PrivateState, subject bkiam.Subject, action string) []int64 {
	var seen seenRows
	var diags protocol.Diagnostics // a record that cannot be read is no record
	if !private.Get(privateSeenRowsKey, &seen, &diags) || !bkiam.SameSubject(seen.Subject, subject) {
		return nil
	}
	return seen.Rows[action]
}

// recordSeenRows adds to private the ids of subject's rows of actions that
// this process's expiry check read (conns.Data.Expiry), keeping those of
// the actions private already records for the subject. A grant to a group
// has none: group policies never expire.
func recordSeenRows(data *conns.Data, private protocol.PrivateState, system string, subject bkiam.Subject, actions []string) protocol.PrivateState {
	if data == nil || data.Expiry == nil || subject.Type != bkiam.SubjectUser {
		return private
	}
	ids := map[string][]int64{}
	for _, a := range actions {
		ids[a] = data.Expiry.Seen(system, subject, a)
	}
	out, _ := withSeenRows(private, subject, actions, ids)
	return out
}

// withSeenRows is private with the ids of subject's rows of actions added
// to those it records (only actions are kept); changed says whether the
// record changed.
func withSeenRows(private protocol.PrivateState, subject bkiam.Subject, actions []string, ids map[string][]int64) (protocol.PrivateState, bool) {
	var seen seenRows
	var diags protocol.Diagnostics
	if !private.Get(privateSeenRowsKey, &seen, &diags) || !bkiam.SameSubject(seen.Subject, subject) {
		seen = seenRows{}
	}
	kept := map[string][]int64{}
	for _, a := range actions {
		all := slices.Concat(seen.Rows[a], ids[a])
		slices.Sort(all)
		if all = slices.Compact(all); len(all) > 0 {
			kept[a] = all
		}
	}
	if maps.EqualFunc(kept, seen.Rows, slices.Equal) && (len(kept) == 0 || seen.Subject == subject) {
		return private, false
	}
	out := maps.Clone(private)
	if out == nil {
		out = protocol.PrivateState{}
	}
	if len(kept) == 0 {
		delete(out, privateSeenRowsKey)
	} else {
		out.Set(privateSeenRowsKey, seenRows{Subject: subject, Rows: kept}, &diags)
	}
	return out, true
}

// recalled is what the rows private state keeps for subject's action
// still hold, read by id, for a plan that found nothing live nor listed:
// nil when none is kept or none is still the subject's.
func recalled(ctx context.Context, data *conns.Data, private protocol.PrivateState, system string, subject bkiam.Subject, action string) (*heldpolicy.Policy, error) {
	ids := readSeenRows(private, subject, action)
	if len(ids) == 0 {
		return nil, nil
	}
	return data.Expiry.Recall(ctx, system, subject, action, ids)
}
