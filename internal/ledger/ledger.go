// Package ledger keeps, inside one provider process, what the resources of
// one Terraform command claim in IAM, so that no resource's revoke takes
// away what another resource of the command still grants.
//
// IAM keeps one policy per (system, subject, action) and a revoke removes
// the paths it names, whoever granted them. Terraform starts one provider
// process per command walk (plan, apply) and sends it every resource of the
// provider configuration, in parallel and in no fixed order. The ledger is
// the process's record, per scope (system and subject) and action, of:
//
//   - the paths each resource claims after the command (its planned new
//     state): a revoke never sends a path another resource claims;
//   - the paths each resource plans to revoke (plan walk only): a resource
//     planned after a revoker of its paths re-asserts them in the apply;
//   - the revokes on their way to IAM: a grant of a path waits until the
//     revoke in flight for it has been answered, so that the revoke cannot
//     land after the grant and undo it.
//
// A path is the unit IAM stores: "/system,type,id/" for an instance, the
// full path of a creator instance, and for a grant on a combined resource
// the whole combination (IAM stores combinations as groups, see the
// provider's docs). The ledger compares paths as strings and never calls
// IAM. It is pure Go, safe for concurrent use.
package ledger

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// Scope is what one IAM policy belongs to, action aside.
type Scope struct {
	System      string
	SubjectType string
	SubjectID   string
}

// AnyAction stands for actions not known yet: a creator grant whose
// actions IAM reports only in its answer. While a resource claims a path
// for AnyAction, revokes of that path by other resources wait until the
// claim names its actions (Claim again) or is released.
const AnyAction = "*"

// Claims are one resource's paths in one scope, by action.
type Claims struct {
	Scope   Scope
	Actions map[string]Action
	// EveryAction, when not 0, is the expiry the resource grants every
	// action of the scope with, whatever Actions names: a creator grant,
	// which IAM makes permanent for each action of the type's creator
	// configuration (the resource may know only some of them).
	EveryAction int64
}

// Action is what a resource claims of one action.
type Action struct {
	Paths []string
	// ExpiresAt is the expiry the resource grants with, in unix seconds (0
	// when it does not grant).
	ExpiresAt int64
}

// Holder is one resource instance's registration. Label names it in the
// messages of other resources: "bkiam_instance_grant bk_cmdb/user/alice".
type Holder struct {
	Label string
	// Changing says the holder's resource changes in the command, so
	// that its apply takes part in the ledger's ordering; set it before
	// the holder's first Plan.
	Changing bool
	id       uint64
	scope    *Scope
	after    Claims
	// revokes are the paths the holder plans to revoke (plan walk only).
	revokes Claims
}

var holderIDs atomic.Uint64

// NewHolder returns a holder that claims nothing yet.
func NewHolder(label string) *Holder {
	return &Holder{Label: label, id: holderIDs.Add(1)}
}

// Ledger is the process's record. The zero value is not usable: use New.
type Ledger struct {
	mu     sync.Mutex
	scopes map[Scope]*scope
}

// New returns an empty ledger.
func New() *Ledger { return &Ledger{scopes: map[Scope]*scope{}} }

type holders map[*Holder]struct{}

// index maps action → path → the holders that name it: a slice, as a
// path has one holder but where resources share it, and an index holds
// one entry per instance of a resource (thousands).
type index map[string]map[string][]*Holder

func (x index) add(h *Holder, c Claims) {
	for action, a := range c.Actions {
		paths := x[action]
		if paths == nil {
			paths = make(map[string][]*Holder, len(a.Paths))
			x[action] = paths
		}
		for _, p := range a.Paths {
			if !slices.Contains(paths[p], h) {
				paths[p] = append(paths[p], h)
			}
		}
	}
}

func (x index) remove(h *Holder, c Claims) {
	for action, a := range c.Actions {
		paths := x[action]
		for _, p := range a.Paths {
			if left := slices.DeleteFunc(paths[p], func(o *Holder) bool { return o == h }); len(left) > 0 {
				paths[p] = left
			} else {
				delete(paths, p)
			}
		}
		if len(paths) == 0 {
			delete(x, action)
		}
	}
}

// others returns the holders other than h that name path for action; with
// any, also those that name it for AnyAction.
func (x index) others(h *Holder, action, path string, anyAction bool) []*Holder {
	var out []*Holder
	for _, o := range x[action][path] {
		if o != h {
			out = append(out, o)
		}
	}
	if anyAction && action != AnyAction {
		for _, o := range x[AnyAction][path] {
			if o != h {
				out = append(out, o)
			}
		}
	}
	return out
}

type scope struct {
	claims  index
	revokes index
	// revoked are the paths each holder has sent revokes for (apply walk):
	// a holder that claims one of them after the revoke grants it again.
	revoked index
	// left are the paths each holder's revokes left because another
	// holder claims them, or the caller said to (apply walk): a claimant
	// whose own grant then fails must still record them, as IAM holds
	// them.
	left index
	// expiries counts, per action, the holders granting with each expiry;
	// every, the holders granting every action with one (EveryAction).
	expiries map[string]map[int64]holders
	every    map[int64]holders
	// flights counts the revokes in flight per path, any action.
	flights map[string]int
	// changed is closed, and replaced, whenever a claim or a flight ends,
	// waking those who wait for one.
	changed chan struct{}
	// pending are the holders that will claim paths not known yet (plan
	// walk: their instances come from another resource), with their
	// actions; nil actions: any.
	pending map[*Holder][]string
}

func (l *Ledger) scope(s Scope) *scope {
	sc := l.scopes[s]
	if sc == nil {
		sc = &scope{claims: index{}, revokes: index{}, revoked: index{}, left: index{}, expiries: map[string]map[int64]holders{},
			every:   map[int64]holders{},
			flights: map[string]int{}, changed: make(chan struct{}), pending: map[*Holder][]string{}}
		l.scopes[s] = sc
	}
	return sc
}

func (sc *scope) wake() {
	close(sc.changed)
	sc.changed = make(chan struct{})
}

// set replaces what h claims and plans to revoke. Callers hold l.mu.
func (l *Ledger) set(h *Holder, after, revokes Claims) {
	if h.scope != nil {
		old := l.scope(*h.scope)
		old.claims.remove(h, h.after)
		old.revokes.remove(h, h.revokes)
		for action, a := range h.after.Actions {
			if a.ExpiresAt != 0 && len(a.Paths) > 0 {
				delete(old.expiries[action][a.ExpiresAt], h)
				if len(old.expiries[action][a.ExpiresAt]) == 0 {
					delete(old.expiries[action], a.ExpiresAt)
				}
			}
		}
		if e := h.after.EveryAction; e != 0 {
			delete(old.every[e], h)
			if len(old.every[e]) == 0 {
				delete(old.every, e)
			}
		}
		old.wake()
	}
	h.scope, h.after, h.revokes = nil, Claims{}, Claims{}
	if after.Actions == nil && revokes.Actions == nil {
		return
	}
	s := after.Scope
	if after.Actions == nil {
		s = revokes.Scope
	}
	sc := l.scope(s)
	h.scope, h.after, h.revokes = &s, after, revokes
	sc.claims.add(h, after)
	sc.revokes.add(h, revokes)
	for action, a := range after.Actions {
		if a.ExpiresAt != 0 && len(a.Paths) > 0 {
			if sc.expiries[action] == nil {
				sc.expiries[action] = map[int64]holders{}
			}
			if sc.expiries[action][a.ExpiresAt] == nil {
				sc.expiries[action][a.ExpiresAt] = holders{}
			}
			sc.expiries[action][a.ExpiresAt][h] = struct{}{}
		}
	}
	if e := after.EveryAction; e != 0 && after.Actions != nil {
		if sc.every[e] == nil {
			sc.every[e] = holders{}
		}
		sc.every[e][h] = struct{}{}
	}
}

// Claim records what h claims after the command, replacing what it
// claimed before; it wakes revokes waiting for h's AnyAction claims.
func (l *Ledger) Claim(h *Holder, after Claims) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.set(h, after, h.revokes)
}

// Release forgets h.
func (l *Ledger) Release(h *Holder) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.set(h, Claims{}, Claims{})
}

// Shared is a path h claims or revokes that another holder claims (or,
// for Reassert, revokes).
type Shared struct {
	Action string
	Path   string
	Other  *Holder
}

// Report is what Plan finds for one holder, against the holders
// registered before it.
type Report struct {
	// Overlaps are the paths h claims that others claim too.
	Overlaps []Shared
	// Spare are the paths h plans to revoke that others claim: h's
	// revoke must leave them.
	Spare []Shared
	// Reassert are the paths h claims that others plan to revoke: h must
	// grant them again in the apply, after those revokes.
	Reassert []Shared
	// Expiries are the other holders that grant one of h's actions with
	// another expiry: IAM keeps one, the later.
	Expiries []Expiry
	// Pending are the holders registered before h (Pend) that will claim,
	// for one of h's actions, paths not known yet: none can tell at plan
	// whether they and h share a path.
	Pending []*Holder
}

// Expiry is another holder's expiry for one of h's actions.
type Expiry struct {
	Action string
	Mine   int64
	Theirs int64
	Other  *Holder
}

// Plan records h's planned claims and revokes, replacing earlier ones, and
// reports how they meet those of the holders registered so far. It is the
// plan walk's call: the holder planned second learns of the first.
// AnyAction claims take part in Reassert and Overlaps but never make
// another holder's revoke spare a path: the apply decides those.
func (l *Ledger) Plan(h *Holder, after, revokes Claims) Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.set(h, after, revokes)
	var r Report
	if h.scope == nil {
		return r
	}
	sc := l.scopes[*h.scope]
	for _, action := range sortedKeys(after.Actions) {
		a := after.Actions[action]
		for _, p := range a.Paths {
			for _, o := range sc.claims.others(h, action, p, true) {
				r.Overlaps = append(r.Overlaps, Shared{Action: action, Path: p, Other: o})
			}
			for _, o := range sc.revokes.others(h, action, p, false) {
				r.Reassert = append(r.Reassert, Shared{Action: action, Path: p, Other: o})
			}
			for _, o := range sc.revoked.others(h, action, p, false) {
				r.Reassert = append(r.Reassert, Shared{Action: action, Path: p, Other: o})
			}
		}
		if a.ExpiresAt == 0 || len(a.Paths) == 0 {
			continue
		}
		for exp, hs := range sc.expiries[action] {
			for o := range hs {
				if o != h && exp != a.ExpiresAt {
					r.Expiries = append(r.Expiries, Expiry{Action: action, Mine: a.ExpiresAt, Theirs: exp, Other: o})
				}
			}
		}
		if action == AnyAction {
			continue
		}
		for exp, hs := range sc.every {
			for o := range hs {
				if _, named := o.after.Actions[action]; o != h && exp != a.ExpiresAt && !named {
					r.Expiries = append(r.Expiries, Expiry{Action: action, Mine: a.ExpiresAt, Theirs: exp, Other: o})
				}
			}
		}
	}
	if e := after.EveryAction; e != 0 {
		// Every action of the scope: another holder's action with another
		// expiry meets it, unless h names that action (compared above).
		for action, byExpiry := range sc.expiries {
			if _, named := after.Actions[action]; named || action == AnyAction {
				continue
			}
			for exp, hs := range byExpiry {
				for o := range hs {
					if o != h && exp != e {
						r.Expiries = append(r.Expiries, Expiry{Action: action, Mine: e, Theirs: exp, Other: o})
					}
				}
			}
		}
	}
	for _, action := range sortedKeys(revokes.Actions) {
		for _, p := range revokes.Actions[action].Paths {
			for _, o := range sc.claims.others(h, action, p, false) {
				r.Spare = append(r.Spare, Shared{Action: action, Path: p, Other: o})
			}
		}
	}
	for p, actions := range sc.pending {
		if p != h && (actions == nil || slices.ContainsFunc(actions, func(a string) bool { _, ok := after.Actions[a]; return ok })) {
			r.Pending = append(r.Pending, p)
		}
	}
	slices.SortStableFunc(r.Expiries, func(a, b Expiry) int {
		return cmp.Or(cmp.Compare(a.Other.id, b.Other.id), cmp.Compare(a.Action, b.Action))
	})
	slices.SortFunc(r.Pending, func(a, b *Holder) int { return cmp.Compare(a.id, b.id) })
	return r
}

// Pend records that h will claim, in scope s, paths not known yet (its
// instances come from another resource) for actions, nil for any action
// or actions not known yet either, and returns the holders registered
// so far that claim paths there for one of them: none can tell at plan
// whether they and h share a path. Holders planned after h learn of it
// from Plan (Report.Pending).
func (l *Ledger) Pend(h *Holder, s Scope, actions []string) []*Holder {
	l.mu.Lock()
	defer l.mu.Unlock()
	sc := l.scope(s)
	sc.pending[h] = actions
	seen := map[*Holder]bool{}
	var out []*Holder
	for action, paths := range sc.claims {
		if actions != nil && !slices.Contains(actions, action) {
			continue
		}
		for _, hs := range paths {
			for _, o := range hs {
				if o != h && !seen[o] {
					seen[o] = true
					out = append(out, o)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b *Holder) int { return cmp.Compare(a.id, b.id) })
	return out
}

// Revoke decides what h may revoke of paths, per action, in scope s: what
// no other holder claims and leave (when not nil) does not ask to keep.
// It waits while another holder claims one of the paths for AnyAction.
// The returned send maps each action to the paths to revoke (actions
// with none left are absent); done must be called once the revoke has
// been answered, or has failed, and before that no grant of those paths
// by another holder is sent.
func (l *Ledger) Revoke(ctx context.Context, h *Holder, s Scope, actions []string, paths []string, leave func(action, path string) bool) (send map[string][]string, done func(), err error) {
	l.mu.Lock()
	for {
		sc := l.scope(s)
		pending := false
		for _, p := range paths {
			if len(sc.claims.others(h, AnyAction, p, false)) > 0 {
				pending = true
				break
			}
		}
		if !pending {
			break
		}
		changed := sc.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, func() {}, ctx.Err()
		}
		l.mu.Lock()
	}
	defer l.mu.Unlock()
	sc := l.scope(s)
	send = map[string][]string{}
	inFlight := map[string]bool{}
	left := Claims{Scope: s, Actions: map[string]Action{}}
	for _, action := range actions {
		for _, p := range paths {
			if len(sc.claims.others(h, action, p, true)) > 0 || leave != nil && leave(action, p) {
				a := left.Actions[action]
				a.Paths = append(a.Paths, p)
				left.Actions[action] = a
				continue
			}
			send[action] = append(send[action], p)
			inFlight[p] = true
		}
	}
	for p := range inFlight {
		sc.flights[p]++
	}
	sent := Claims{Scope: s, Actions: map[string]Action{}}
	for action, ps := range send {
		sent.Actions[action] = Action{Paths: ps}
	}
	sc.revoked.add(h, sent)
	sc.left.add(h, left)
	var once sync.Once
	return send, func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			for p := range inFlight {
				sc.flights[p]--
				if sc.flights[p] == 0 {
					delete(sc.flights, p)
				}
			}
			sc.wake()
		})
	}, nil
}

// Taken returns the paths h claims that other holders have sent revokes
// for in this process, by action: h must grant them again. Call it after
// Claim, which makes every later revoke leave h's paths.
func (l *Ledger) Taken(h *Holder) map[string][]string {
	return l.named(h, func(sc *scope) index { return sc.revoked })
}

// Handed returns the paths h claims that other holders' revokes left in
// IAM, by action: paths h holds whether or not its own grant of them
// succeeds, which h must record even when its apply fails.
func (l *Ledger) Handed(h *Holder) map[string][]string {
	return l.named(h, func(sc *scope) index { return sc.left })
}

// named returns the paths h claims that other holders name in the index
// which, by action. For h's AnyAction claims, any action counts.
func (l *Ledger) named(h *Holder, which func(*scope) index) map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.scope == nil {
		return nil
	}
	x := which(l.scopes[*h.scope])
	out := map[string][]string{}
	for action, a := range h.after.Actions {
		for _, p := range a.Paths {
			if len(x.others(h, action, p, false)) > 0 {
				out[action] = append(out[action], p)
			}
		}
	}
	if anyPaths := h.after.Actions[AnyAction].Paths; anyPaths != nil {
		for a, paths := range x {
			for _, p := range anyPaths {
				for _, o := range paths[p] {
					if o != h && !slices.Contains(out[a], p) {
						out[a] = append(out[a], p)
					}
				}
			}
		}
	}
	return out
}

// Grant waits until no revoke of any of paths in scope s is in flight.
// The holder's claims must already name the paths (Claim), so that a
// revoke decided from now on leaves them.
func (l *Ledger) Grant(ctx context.Context, s Scope, paths []string) error {
	l.mu.Lock()
	for {
		sc := l.scope(s)
		busy := false
		for _, p := range paths {
			if sc.flights[p] > 0 {
				busy = true
				break
			}
		}
		if !busy {
			l.mu.Unlock()
			return nil
		}
		changed := sc.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
		l.mu.Lock()
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
