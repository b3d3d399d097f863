// Package memberplan plans the calls that make a user group's members in IAM what a configuration
// wants: the fewest add and delete calls the management API allows. It is pure: no I/O, no
// Terraform.
//
// What IAM does with members (the package doc of internal/bkiam, "The management API"): a member
// is (type, id) with an expiry; an add is an upsert of up to MaxPerCall members with one expiry,
// which creates a missing member and raises an existing member's expiry but never lowers it, and
// which IAM refuses when the members the group holds plus those sent (present ones counted again)
// pass its member limit; the expiry route raises the expiry of up to MaxPerCall present members
// with one expiry, with no such count; a delete removes up to MaxPerCall members of one type. So:
//
//   - a member whose expiry rises is raised through the expiry route (one call per distinct
//     expiry, split at MaxPerCall): renewing a whole group costs one call per thousand members and
//     never meets the member limit;
//   - a member no longer wanted is deleted (one call per type, split at MaxPerCall);
//   - a new member is added (one call per distinct expiry, split at MaxPerCall);
//   - a member whose expiry falls is deleted and added again: the only way IAM lowers it. Between
//     the two calls the member is out of the group; the plan says so (Plan.Lowered).
//
// The calls go in that order: raises, the deletes of members no longer wanted (which free room
// under the member limit and take nothing wanted away), the adds, then each lowered member's
// delete and re-add, back to back.
package memberplan

import (
	"cmp"
	"maps"
	"slices"
)

// MaxPerCall is the most members IAM's backend takes in one add or delete.
const MaxPerCall = 1000

// Key is a member: Type "user" or "department", and its id.
type Key struct {
	Type string
	ID   string
}

// Members maps each member to its expiry (unix seconds; the permanent expiry for permanent).
type Members map[Key]int64

// Op is what a call does.
type Op int

const (
	Add Op = iota
	Delete
	// Raise raises the expiry of members the group holds (IAM's expiry route).
	Raise
)

func (o Op) String() string {
	switch o {
	case Add:
		return "add"
	case Raise:
		return "raise"
	}
	return "delete"
}

// Call is one management call: an add of Members with ExpiredAt, a raise of their expiry to
// ExpiredAt, or a delete of Members (all of one type).
type Call struct {
	Op        Op
	ExpiredAt int64 // adds and raises
	Members   []Key // sorted
	// Readd marks the add of members whose expiry was lowered, after their delete.
	Readd bool
}

// Plan is the calls, in order, and what the user should be told.
type Plan struct {
	Calls []Call
	// Lowered are the members whose expiry falls: deleted and added again, out of the group
	// between the two calls.
	Lowered []Key
}

// Make plans the calls from what IAM holds to what is wanted.
func Make(held, wanted Members) Plan {
	var p Plan
	adds, raises, readds := map[int64][]Key{}, map[int64][]Key{}, map[int64][]Key{}
	var deletes, lowered []Key
	for k, exp := range wanted {
		old, ok := held[k]
		switch {
		case !ok:
			adds[exp] = append(adds[exp], k)
		case exp > old:
			raises[exp] = append(raises[exp], k)
		case exp < old:
			p.Lowered = append(p.Lowered, k)
			lowered = append(lowered, k)
			readds[exp] = append(readds[exp], k)
		}
	}
	for k := range held {
		if _, ok := wanted[k]; !ok {
			deletes = append(deletes, k)
		}
	}
	p.Calls = append(p.Calls, byExpiryCalls(Raise, raises, false)...)
	p.Calls = append(p.Calls, deleteCalls(deletes)...)
	p.Calls = append(p.Calls, byExpiryCalls(Add, adds, false)...)
	p.Calls = append(p.Calls, deleteCalls(lowered)...)
	p.Calls = append(p.Calls, byExpiryCalls(Add, readds, true)...)
	sortKeys(p.Lowered)
	return p
}

func byExpiryCalls(op Op, byExpiry map[int64][]Key, readd bool) []Call {
	var out []Call
	for _, exp := range slices.Sorted(maps.Keys(byExpiry)) {
		keys := byExpiry[exp]
		sortKeys(keys)
		for chunk := range slices.Chunk(keys, MaxPerCall) {
			out = append(out, Call{Op: op, ExpiredAt: exp, Members: chunk, Readd: readd})
		}
	}
	return out
}

func deleteCalls(keys []Key) []Call {
	byType := map[string][]Key{}
	for _, k := range keys {
		byType[k.Type] = append(byType[k.Type], k)
	}
	var out []Call
	for _, typ := range slices.Sorted(maps.Keys(byType)) {
		ks := byType[typ]
		sortKeys(ks)
		for chunk := range slices.Chunk(ks, MaxPerCall) {
			out = append(out, Call{Op: Delete, Members: chunk})
		}
	}
	return out
}

// Apply returns what IAM holds after call, from held, as IAM carries it out.
func Apply(held Members, call Call) Members {
	out := make(Members, len(held))
	for k, v := range held {
		out[k] = v
	}
	for _, k := range call.Members {
		switch call.Op {
		case Add:
			if old, ok := out[k]; !ok || call.ExpiredAt > old {
				out[k] = call.ExpiredAt
			}
		case Raise:
			if old, ok := out[k]; ok && call.ExpiredAt > old {
				out[k] = call.ExpiredAt
			}
		case Delete:
			delete(out, k)
		}
	}
	return out
}

func sortKeys(keys []Key) {
	slices.SortFunc(keys, func(a, b Key) int { return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.ID, b.ID)) })
}
