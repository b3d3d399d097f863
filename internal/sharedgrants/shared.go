package sharedgrants

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/ledger"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// Shared grants: what the resources of one command claim, kept in the
// provider process's ledger (internal/ledger), so that no resource's
// revoke takes what another still grants. DESIGN.md, "Shared grants",
// tells the whole story; in short:
//
//   - every plan records the resource's planned claims and revokes, and
//     warns when it shares paths, or an action's expiry, with a resource
//     planned before it;
//   - a destroy planned after a resource that keeps some of its paths
//     carries them, in its planned private state, as paths to spare: the
//     only planned private state Terraform hands to the apply unchanged;
//   - a resource planned after one that revokes its paths plans an update
//     that grants them again (its policies become "known after apply");
//   - at apply, a resource claims its planned paths before its first
//     call; a revoke leaves every path another resource claims, and a
//     grant waits for the revokes in flight on its paths, so the two
//     cannot undo each other in either order.

// Private state keys of the ledger. Both live only between a plan and
// its apply: apply removes them.
const (
	// privateHolderKey links the apply to the holder its apply-time
	// plan registered in this process.
	privateHolderKey = "ledger_holder"
	// privateSpareKey holds, by action, the paths a destroy must spare.
	privateSpareKey = "ledger_spare"
	// privateOwnerKey carries a plan's ownership token (Book.own) to the
	// create half of a replacement Terraform forces on it, which Terraform
	// plans again with this plan's private state.
	privateOwnerKey = "ledger_owner"
)

// Book is the ledger of one provider process, and the holders its plans
// registered, by the id their planned private state carries.
type Book struct {
	ledger *ledger.Ledger
	// prefix makes holder ids unique across processes: an id in a
	// plan file's private state never names a holder of the apply's
	// process.
	prefix string
	next   atomic.Uint64

	mu      sync.Mutex
	holders map[string]*ledger.Holder
	// befores are, by holder id, the claims of the prior state its plan
	// changed: a replacement Terraform forces on an update plans that
	// holder again as a destroy (served.account).
	befores map[string]ledger.Claims

	// owners are, by the object they own whole (Owner), the resources of
	// the command that own it.
	owners map[string]owner
	// parts are, by object and part (PartOwner), the resources of the
	// command that own a part of an object.
	parts map[string]map[string]owner

	// Refreshed says this process has refreshed a resource, which only a
	// plan walk does (Terraform's apply never calls ReadResource): its
	// updates are planned here, not re-planned by an apply.
	Refreshed atomic.Bool
}

func NewBook() *Book {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &Book{ledger: ledger.New(), prefix: hex.EncodeToString(b), holders: map[string]*ledger.Holder{}, befores: map[string]ledger.Claims{},
		owners: map[string]owner{}, parts: map[string]map[string]owner{}}
}

// holder returns a new holder and its id.
func (b *Book) holder(label string) (*ledger.Holder, string) {
	h := ledger.NewHolder(label)
	id := fmt.Sprintf("%s-%d", b.prefix, b.next.Add(1))
	b.mu.Lock()
	b.holders[id] = h
	b.mu.Unlock()
	return h, id
}

// planned records the prior claims of the holder id names.
func (b *Book) planned(id string, before ledger.Claims) {
	b.mu.Lock()
	b.befores[id] = before
	b.mu.Unlock()
}

// owner is a resource that owns an object whole: its token, and its label,
// computed only for another owner's error (a label of 10 000 members is
// not built on every plan).
type owner struct {
	token string
	label func() string
}

// own records that the resource token names owns object whole, and
// returns the label of another resource of the command that owns it
// already, whole or a part of it (part names the part, "" for the whole).
func (b *Book) own(object, token string, label func() string) (other, part string, taken bool) {
	b.mu.Lock()
	o, ok := b.owners[object]
	if !ok {
		b.owners[object] = owner{token: token, label: label}
	}
	var partOwner *owner
	for _, name := range slices.Sorted(maps.Keys(b.parts[object])) {
		if p := b.parts[object][name]; p.token != token {
			partOwner, part = &p, name
			break
		}
	}
	b.mu.Unlock()
	switch {
	case ok && o.token != token:
		return o.label(), "", true
	case partOwner != nil:
		return partOwner.label(), part, true
	}
	return "", "", false
}

// ownPart records that the resource token names owns part p, and returns
// the label of another resource of the command that owns p's object
// whole (whole), or p itself.
func (b *Book) ownPart(p Part, token string, label func() string) (other string, whole, taken bool) {
	b.mu.Lock()
	o, ownedWhole := b.owners[p.Object]
	if b.parts[p.Object] == nil {
		b.parts[p.Object] = map[string]owner{}
	}
	q, ownedPart := b.parts[p.Object][p.Part]
	if !ownedPart {
		b.parts[p.Object][p.Part] = owner{token: token, label: label}
	}
	b.mu.Unlock()
	switch {
	case ownedWhole && o.token != token:
		return o.label(), true, true
	case ownedPart && q.token != token:
		return q.label(), false, true
	}
	return "", false, false
}

// existing returns the holder id names in this process, with the claims
// of its prior state, if this process registered it.
func (b *Book) existing(id string) (*ledger.Holder, ledger.Claims, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, ok := b.holders[id]
	return h, b.befores[id], ok
}

// lookup returns the holder an id names in this process, or a new one.
func (b *Book) lookup(id, label string) *ledger.Holder {
	b.mu.Lock()
	h := b.holders[id]
	b.mu.Unlock()
	if h == nil {
		h, _ = b.holder(label)
	}
	return h
}

// InstancePath is the claim key of an instance: "/system,type,id/…/", a
// path in IAM's notation whose ids are escaped (escapeID) so that two
// different instances never share a key. A plain id (any string to IAM,
// "," and "/" included) is its one-node path, as IAM reads it; a key that
// begins with "/" is a bkiam_group_permission instance given as its path,
// whose ids hold no "," or "/" (verify.ParsePath), so only "%" is escaped. The
// one notation is why bkiam_instance_grant refuses a plain id that begins
// with "/" (checkInstanceIDs).
func InstancePath(system, typ, id string) string {
	if strings.HasPrefix(id, "/") {
		return strings.ReplaceAll(id, "%", "%25")
	}
	return "/" + system + "," + typ + "," + EscapeID(id) + "/"
}

// PathClaim is the claim key of a path IAM listed (see instancePath).
func PathClaim(nodes []bkiam.PathNode) string {
	var b strings.Builder
	b.WriteByte('/')
	for _, n := range nodes {
		b.WriteString(n.System + "," + n.Type + "," + EscapeID(n.ID) + "/")
	}
	return b.String()
}

// EscapeID writes an id so that it cannot be read as more than one node
// of a path or one id of a list: "%", "," and "/" percent-encoded.
func EscapeID(id string) string { return idEscaper.Replace(id) }

var idEscaper = strings.NewReplacer("%", "%25", ",", "%2C", "/", "%2F")

// minusClaims returns the paths of a that b does not name, by action.
func minusClaims(a, b ledger.Claims) ledger.Claims {
	out := ledger.Claims{Scope: a.Scope}
	if a.Actions == nil {
		return out
	}
	sameScope := b.Actions != nil && a.Scope == b.Scope
	for action, claim := range a.Actions {
		var keep map[string]bool
		if sameScope {
			if other, ok := b.Actions[action]; ok {
				keep = make(map[string]bool, len(other.Paths))
				for _, p := range other.Paths {
					keep[p] = true
				}
			}
		}
		var left []string
		for _, p := range claim.Paths {
			if !keep[p] {
				left = append(left, p)
			}
		}
		if len(left) > 0 {
			if out.Actions == nil {
				out.Actions = map[string]ledger.Action{}
			}
			out.Actions[action] = ledger.Action{Paths: left}
		}
	}
	return out
}

// keptClaims returns the paths that before and next both name, by
// action: what a replacement's new object keeps of the old one's, which
// the old one's destroy need not revoke. An action whose expiry next
// lowers is left out: IAM only ever raises an expiry, so only a revoke
// and a new grant lower it.
func keptClaims(before, next ledger.Claims) ledger.Claims {
	both := minusClaims(before, minusClaims(before, next)) // before ∩ next
	for action := range both.Actions {
		if next.Actions[action].ExpiresAt < before.Actions[action].ExpiresAt {
			delete(both.Actions, action)
		}
	}
	return both
}

// SpareSet is what a revoke must leave, by action and path.
type SpareSet map[string]map[string]bool

func (s SpareSet) Has(action, path string) bool { return s[action][path] }

// spareOf returns, by action, the paths shared names and those kept
// names: what a destroy must leave.
func spareOf(shared []ledger.Shared, kept ledger.Claims) map[string][]string {
	out := map[string][]string{}
	seen := map[ledger.Shared]bool{}
	add := func(action, path string) {
		if k := (ledger.Shared{Action: action, Path: path}); !seen[k] {
			seen[k] = true
			out[action] = append(out[action], path)
		}
	}
	for _, sh := range shared {
		add(sh.Action, sh.Path)
	}
	for action, a := range kept.Actions {
		for _, p := range a.Paths {
			add(action, p)
		}
	}
	return out
}

func ReadSpare(private protocol.PrivateState, diags *protocol.Diagnostics) SpareSet {
	var raw map[string][]string
	if !private.Get(privateSpareKey, &raw, diags) {
		return nil
	}
	out := SpareSet{}
	for action, paths := range raw {
		out[action] = map[string]bool{}
		for _, p := range paths {
			out[action][p] = true
		}
	}
	return out
}

// describeShared renders what a report names, grouped by the other
// resource: `bkiam_instance_grant "bk_cmdb/user/alice" (view_host on 3
// instances: /bk_cmdb,host,1/, …)`.
func describeShared(shared []ledger.Shared) string {
	type key struct {
		other  *ledger.Holder
		action string
	}
	paths := map[key][]string{}
	seen := map[ledger.Shared]bool{}
	var keys []key
	for _, sh := range shared {
		k := key{sh.Other, sh.Action}
		if _, ok := paths[k]; !ok {
			keys = append(keys, k)
		}
		if !seen[sh] {
			seen[sh] = true
			paths[k] = append(paths[k], sh.Path)
		}
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if keys[i].other.Label != keys[j].other.Label {
			return keys[i].other.Label < keys[j].other.Label
		}
		return keys[i].action < keys[j].action
	})
	var parts []string
	for _, k := range keys {
		ps := paths[k]
		sort.Strings(ps)
		noun := "paths"
		if len(ps) == 1 {
			noun = "path"
		}
		parts = append(parts, fmt.Sprintf("%s with %s (%s on %d %s: %s)", "shared", k.other.Label, k.action, len(ps), noun, protocol.SomeIDs(ps)))
	}
	return strings.Join(parts, "; ")
}

// describeExpiries renders expiry conflicts for a warning.
func describeExpiries(expiries []ledger.Expiry) string {
	seen := map[string]bool{}
	var parts []string
	for _, e := range expiries {
		s := fmt.Sprintf("%s: %s here, %s in %s", e.Action, expiryText(e.Mine), expiryText(e.Theirs), e.Other.Label)
		if !seen[s] {
			seen[s] = true
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

func expiryText(unix int64) string {
	if unix >= bkiam.PermanentExpiry {
		return "permanent"
	}
	return time.Unix(unix, 0).UTC().Format(time.RFC3339)
}

// Handle is one apply's place in the process's ledger. A nil
// *Handle (no ledger) lets every call through unchanged.
type Handle struct {
	book   *Book
	holder *ledger.Holder
	// spare is what the apply's plan found other resources keep: a
	// destroy planned after them leaves it.
	spare SpareSet
}

// Claim records what the resource holds after its apply; before its
// first call, that is its planned state.
func (s *Handle) Claim(c ledger.Claims) {
	if s != nil {
		s.book.ledger.Claim(s.holder, c)
	}
}

// Release forgets the resource: it holds nothing any more.
func (s *Handle) Release() {
	if s != nil {
		s.book.ledger.Release(s.holder)
	}
}

// Taken returns, by action, the paths the resource claims that another
// resource has revoked in this process: the apply grants them again.
func (s *Handle) Taken() map[string]map[string]bool {
	if s == nil {
		return nil
	}
	return pathSets(s.book.ledger.Taken(s.holder))
}

// pathSets turns the ledger's paths by action into sets.
func pathSets(byAction map[string][]string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for action, paths := range byAction {
		for _, p := range paths {
			if out[action] == nil {
				out[action] = map[string]bool{}
			}
			out[action][p] = true
		}
	}
	return out
}

// Grant waits until no revoke of paths is in flight.
func (s *Handle) Grant(ctx context.Context, scope ledger.Scope, paths []string) error {
	if s == nil {
		return nil
	}
	return s.book.ledger.Grant(ctx, scope, paths)
}

// Revoke returns, by action, the paths that no other resource keeps, and
// a func to call once the revoke is answered.
func (s *Handle) Revoke(ctx context.Context, scope ledger.Scope, actions, paths []string) (map[string][]string, func(), error) {
	if s == nil {
		all := make(map[string][]string, len(actions))
		for _, a := range actions {
			all[a] = paths
		}
		return all, func() {}, nil
	}
	var leave func(action, path string) bool
	if s.spare != nil {
		leave = s.spare.Has
	}
	return s.book.ledger.Revoke(ctx, s.holder, scope, actions, paths, leave)
}

// Handed returns, by action, the paths the resource claims that other
// resources' revokes left in IAM: a failed apply records them as held.
func (s *Handle) Handed() map[string]map[string]bool {
	if s == nil {
		return nil
	}
	return pathSets(s.book.ledger.Handed(s.holder))
}

// RevokeGroup is actions that revoke the same paths.
type RevokeGroup struct {
	Actions []string
	Paths   []string // sorted
}

// GroupRevokes groups actions by the paths send keeps for each, in the
// order of actions; an action with none left is left out. Both runners
// split a revoke that the ledger narrowed this way.
func GroupRevokes(actions []string, send map[string][]string) []RevokeGroup {
	var groups []RevokeGroup
	index := map[string]int{}
	for _, a := range actions {
		paths := slices.Sorted(slices.Values(send[a]))
		if len(paths) == 0 {
			continue
		}
		key := strings.Join(paths, "\x00")
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, RevokeGroup{Paths: paths})
		}
		groups[i].Actions = append(groups[i].Actions, a)
	}
	return groups
}
