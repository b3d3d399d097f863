package memberplan

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

const permanent = 4102444800

func users(from, to int, exp int64) Members {
	m := Members{}
	for i := from; i < to; i++ {
		m[Key{"user", fmt.Sprint(i)}] = exp
	}
	return m
}

func union(ms ...Members) Members {
	out := Members{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

func TestMake(t *testing.T) {
	alice, bob, dept := Key{"user", "alice"}, Key{"user", "bob"}, Key{"department", "7"}
	tests := []struct {
		name         string
		held, wanted Members
		want         []Call
		lowered      []Key
	}{
		{"nothing to do", Members{alice: permanent}, Members{alice: permanent}, nil, nil},
		{"new members, one call per expiry", nil, Members{alice: permanent, bob: 2000000000, dept: permanent},
			[]Call{{Op: Add, ExpiredAt: 2000000000, Members: []Key{bob}}, {Op: Add, ExpiredAt: permanent, Members: []Key{dept, alice}}}, nil},
		{"removed members, one call per type", Members{alice: permanent, bob: permanent, dept: permanent}, nil,
			[]Call{{Op: Delete, Members: []Key{dept}}, {Op: Delete, Members: []Key{alice, bob}}}, nil},
		{"an expiry raised in place, through the expiry route", Members{alice: 2000000000, bob: 2000000000}, Members{alice: permanent, bob: permanent},
			[]Call{{Op: Raise, ExpiredAt: permanent, Members: []Key{alice, bob}}}, nil},
		{"an expiry lowered: delete, then add again", Members{alice: permanent, bob: permanent}, Members{alice: 2000000000, bob: permanent},
			[]Call{{Op: Delete, Members: []Key{alice}}, {Op: Add, ExpiredAt: 2000000000, Members: []Key{alice}, Readd: true}}, []Key{alice}},
		{"deletes of members no longer wanted before adds: room under the member limit", Members{alice: permanent}, Members{bob: permanent},
			[]Call{{Op: Delete, Members: []Key{alice}}, {Op: Add, ExpiredAt: permanent, Members: []Key{bob}}}, nil},
		{"raise, delete, add, then a lowered member's delete and re-add", Members{alice: 2000000000, bob: permanent, dept: permanent},
			Members{alice: permanent, bob: 2000000000, Key{"user", "carol"}: permanent},
			[]Call{{Op: Raise, ExpiredAt: permanent, Members: []Key{alice}}, {Op: Delete, Members: []Key{dept}},
				{Op: Add, ExpiredAt: permanent, Members: []Key{{"user", "carol"}}}, {Op: Delete, Members: []Key{bob}},
				{Op: Add, ExpiredAt: 2000000000, Members: []Key{bob}, Readd: true}}, []Key{bob}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Make(tt.held, tt.wanted)
			if !slices.EqualFunc(p.Calls, tt.want, func(a, b Call) bool {
				return a.Op == b.Op && a.ExpiredAt == b.ExpiredAt && a.Readd == b.Readd && slices.Equal(a.Members, b.Members)
			}) {
				t.Errorf("calls %+v, want %+v", p.Calls, tt.want)
			}
			if !slices.Equal(p.Lowered, tt.lowered) {
				t.Errorf("lowered %v, want %v", p.Lowered, tt.lowered)
			}
		})
	}
}

// TestOnePercentChange: 10 000 members, 1% replaced: one delete and one add call. Renewing all
// 10 000 is ten calls of the expiry route.
func TestOnePercentChange(t *testing.T) {
	held := users(0, 10000, permanent)
	wanted := union(users(100, 10000, permanent), users(10000, 10100, permanent))
	p := Make(held, wanted)
	if len(p.Calls) != 2 || p.Calls[0].Op != Delete || len(p.Calls[0].Members) != 100 || p.Calls[1].Op != Add || len(p.Calls[1].Members) != 100 {
		t.Fatalf("calls: %d (%v)", len(p.Calls), p.Calls)
	}
	renewed := Make(users(0, 10000, 2000000000), users(0, 10000, permanent))
	if len(renewed.Calls) != 10 || slices.ContainsFunc(renewed.Calls, func(c Call) bool { return c.Op != Raise }) {
		t.Fatalf("renewing 10 000 members: %v", renewed.Calls)
	}
	if p := Make(nil, users(0, 2500, permanent)); len(p.Calls) != 3 || len(p.Calls[2].Members) != 500 {
		t.Fatalf("2500 new members: %d calls", len(p.Calls))
	}
}

// TestMakeProperties: for random held and wanted sets, carrying the calls out as IAM does ends
// at wanted; every call is within the limits, a delete is of one type; a wanted member whose
// expiry does not fall is never out of the group once in it; an add never needs more room than
// the wanted group takes (IAM counts the group's members and those sent against its limit); a
// raise names present members only; the number of calls is the least the limits allow.
func TestMakeProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	expiries := []int64{1900000000, 2000000000, permanent}
	random := func(n int) Members {
		m := Members{}
		for range n {
			typ := "user"
			if rng.IntN(4) == 0 {
				typ = "department"
			}
			m[Key{typ, fmt.Sprint(rng.IntN(3000))}] = expiries[rng.IntN(len(expiries))]
		}
		return m
	}
	for i := range 300 {
		held, wanted := random(rng.IntN(2500)), random(rng.IntN(2500))
		p := Make(held, wanted)
		state := held
		lowered := map[Key]bool{}
		for _, k := range p.Lowered {
			lowered[k] = true
		}
		for _, c := range p.Calls {
			if len(c.Members) == 0 || len(c.Members) > MaxPerCall {
				t.Fatalf("case %d: a call of %d members", i, len(c.Members))
			}
			if c.Op == Delete {
				for _, k := range c.Members {
					if k.Type != c.Members[0].Type {
						t.Fatalf("case %d: a delete of several types", i)
					}
				}
			}
			if c.Op == Add && len(state)+len(c.Members) > len(wanted) {
				t.Fatalf("case %d: an add of %d members to a group of %d, which will hold %d", i, len(c.Members), len(state), len(wanted))
			}
			if c.Op == Raise {
				for _, k := range c.Members {
					if _, ok := state[k]; !ok {
						t.Fatalf("case %d: a raise of %v, not in the group", i, k)
					}
				}
			}
			next := Apply(state, c)
			for k := range wanted {
				if _, was := state[k]; was && !lowered[k] {
					if _, is := next[k]; !is {
						t.Fatalf("case %d: %v, wanted, was taken out of the group", i, k)
					}
				}
			}
			state = next
		}
		if !maps.Equal(state, wanted) {
			t.Fatalf("case %d: the calls end at %d members, want %d", i, len(state), len(wanted))
		}
		// The least calls: per distinct expiry of the raises, adds and readds, per type of the
		// deletes of unwanted and of lowered members.
		raises, adds, readds := map[int64]int{}, map[int64]int{}, map[int64]int{}
		dels, lowers := map[string]int{}, map[string]int{}
		for k, exp := range wanted {
			old, ok := held[k]
			switch {
			case !ok:
				adds[exp]++
			case exp > old:
				raises[exp]++
			case exp < old:
				lowers[k.Type]++
				readds[exp]++
			}
		}
		for k := range held {
			if _, ok := wanted[k]; !ok {
				dels[k.Type]++
			}
		}
		least := 0
		for _, m := range []map[int64]int{raises, adds, readds} {
			for _, n := range m {
				least += (n + MaxPerCall - 1) / MaxPerCall
			}
		}
		for _, m := range []map[string]int{dels, lowers} {
			for _, n := range m {
				least += (n + MaxPerCall - 1) / MaxPerCall
			}
		}
		if len(p.Calls) != least {
			t.Fatalf("case %d: %d calls, the least is %d", i, len(p.Calls), least)
		}
	}
}
