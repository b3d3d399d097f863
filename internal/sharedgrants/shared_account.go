package sharedgrants

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bkiam/terraform-provider-bkiam/internal/ledger"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// The shared grants' part of every protocol-served resource: an observer
// of the seam (internal/protocol) that records each plan in the process's
// ledger and gives each apply its place in it (shared.go beside it, DESIGN.md
// "Shared grants").

// Claimer is what the ledger needs of a resource.
type Claimer[M any] interface {
	// Claims are the IAM paths m grants, for the process's ledger
	// (shared.go): Actions nil when it grants none, or when any part is
	// unknown. label names m in other resources' warnings.
	Claims(m M) ledger.Claims
	Label(m M) string
	// Reassert marks a planned update as granting again, at apply, what
	// another resource of the command revokes: the update must show a
	// change, or Terraform would not apply it.
	Reassert(planned M) M
}

// Unknowable is what a resource adds whose claims can be unknown at plan,
// as when its instances come from another resource.
type Unknowable[M any] interface {
	// PendingScope reports whether m grants paths not known until apply
	// (Claims then names nothing), and, when known, the scope and actions
	// they will be in (actions nil when not known either); known is false
	// when the scope is not known.
	PendingScope(m M) (pending bool, scope ledger.Scope, actions []string, known bool)
}

// Owner is what a resource adds that owns one object of IAM whole, as
// bkiam_group_members owns a group's membership: two resources of one
// configuration that own the same object would each undo the other on
// every apply, so the plan of the second fails, whichever it is.
type Owner[M any] interface {
	// Owns names the object m owns whole, e.g. "the members of group 42";
	// false while it is not known.
	Owns(m M) (string, bool)
}

// PartOwner is what a resource adds that owns parts of objects another
// resource may own whole, as bkiam_user_groups owns a person's membership
// in groups whose members a bkiam_group_members owns whole: the plan of
// the second of two such resources fails, and so does that of two
// resources owning the same part.
type PartOwner[M any] interface {
	// OwnsParts names the parts m owns; false while they are not known.
	OwnsParts(m M) ([]Part, bool)
}

// Part is a part of an object: Object as Owner names it ("the members of
// group 42"), Part within it ("user alice").
type Part struct{ Object, Part string }

// Data is what the shared grants need of the provider's data. Its
// methods answer on a nil receiver too: the provider before it is
// configured.
type Data interface {
	// AllowsSharedGrants reports whether two resources may grant the same
	// path (allow_shared_grants); true before the provider is configured,
	// when nothing is refused.
	AllowsSharedGrants() bool
	// FailsExpiryConflicts reports whether a plan that changes an expiry
	// unannounced fails rather than warns (expiry_conflicts = "error");
	// false before the provider is configured.
	FailsExpiryConflicts() bool
	// LedgerBook is the process's book; nil before the provider is
	// configured.
	LedgerBook() *Book
}

// Account is the observer of a resource whose claims c gives.
type Account[M any, D Data] struct{ c Claimer[M] }

// Observe is the observer of a resource whose claims c gives.
func Observe[M any, D Data](c Claimer[M]) Account[M, D] { return Account[M, D]{c: c} }

// bookKey and sharedApplyKey carry, in a request's context, the
// process's book to a plan and the apply's place in the ledger to an
// apply.
type (
	bookKey        struct{}
	sharedApplyKey struct{}
)

// WithBook is ctx carrying b to the plans (the provider's server.go).
func WithBook(ctx context.Context, b *Book) context.Context {
	if b == nil {
		return ctx
	}
	return context.WithValue(ctx, bookKey{}, b)
}

func bookOf(ctx context.Context) *Book {
	b, _ := ctx.Value(bookKey{}).(*Book)
	return b
}

// sharedApplyOf is the apply's place in the ledger; nil (no ledger) lets
// every call through.
func HandleOf(ctx context.Context) *Handle {
	s, _ := ctx.Value(sharedApplyKey{}).(*Handle)
	return s
}

// Observing: a plan is recorded when the process has a ledger, which
// the provider makes before it is configured.
func (a Account[M, D]) Observing(ctx context.Context) bool { return bookOf(ctx) != nil }

// Plan records a plan in the process's ledger and answers what it
// finds (see shared.go): warnings about shared paths and expiries, the
// paths a destroy must spare, and an update that grants again what
// another resource revokes. It returns the planned model, changed when
// it must grant again.
func (a Account[M, D]) Plan(ctx context.Context, data D, n *protocol.PlanNote[M], diags *protocol.Diagnostics) *M {
	b := bookOf(ctx)
	allowShared := data.AllowsSharedGrants()
	prior, planned, replace, private, resp := n.Prior, n.Planned, n.Replace, n.Private, n.Resp
	var before, next, after ledger.Claims
	if prior != nil {
		before = a.c.Claims(*prior)
	}
	if planned != nil {
		next = a.c.Claims(*planned)
	}
	if !replace {
		// A replacement's new object is planned by the next call, with no
		// prior state; this one only destroys.
		after = next
	}
	// A replacement's destroy leaves what its new object keeps.
	kept := keptClaims(before, next)
	revokes := minusClaims(before, next)
	if replace {
		revokes = minusClaims(before, kept)
	}
	// The create half of a replacement that Terraform forces on what this
	// provider planned as an update (-replace, replace_triggered_by): the
	// update's call registered a holder and named it in its planned private
	// state, which Terraform hands to this call. That object is destroyed
	// instead: its holder claims nothing any more, and its destroy, which
	// gets this call's planned private state, leaves what others claim and
	// what the new object keeps.
	var forcedSpare map[string][]string
	var oldID string
	if prior == nil && planned != nil && private.Get(privateHolderKey, &oldID, diags) {
		if old, oldBefore, ok := b.existing(oldID); ok {
			oldKept := keptClaims(oldBefore, next)
			old.Changing = true
			forcedSpare = spareOf(b.ledger.Plan(old, ledger.Claims{}, minusClaims(oldBefore, oldKept)).Spare, oldKept)
		}
	}
	labelOf := prior
	if planned != nil {
		labelOf = planned
	}
	owner := a.own(b, n, labelOf, diags)
	// Only a plan that claims nothing can be pending: a grant's claims are
	// not read twice on the way.
	if u, ok := a.c.(Unknowable[M]); ok && planned != nil && next.Actions == nil {
		if pending, scope, actions, known := u.PendingScope(*planned); pending {
			a.pend(b, n.TypeName+" "+a.c.Label(*labelOf), scope, actions, known, allowShared, diags)
		}
	}
	if after.Actions == nil && revokes.Actions == nil && oldID == "" {
		if owner != "" {
			newPrivate := maps.Clone(private)
			newPrivate.Set(privateOwnerKey, owner, diags)
			resp.PlannedPrivate = newPrivate.Bytes(diags)
		}
		return planned
	}
	h, id := b.holder(n.TypeName + " " + a.c.Label(*labelOf))
	b.planned(id, before)
	h.Changing = planned != prior || replace
	report := b.ledger.Plan(h, after, revokes)
	if len(report.Pending) > 0 && !h.Changing && !allowShared {
		diags.AddError("Grants not comparable until apply",
			fmt.Sprintf("This resource does not change in this plan, and %s grants the same subject %s with instances not "+
				"known until apply. Terraform applies only what changes, so the apply, where those instances become known, "+
				"cannot compare them with this resource's: if they shared one, both resources would keep granting it, and a "+
				"revoke by either would take it from the other. %s", labels(report.Pending), actionsOf(after), notComparableFix))
	}
	if len(report.Overlaps) > 0 && !allowShared {
		// A lasting overlap: both resources stay and grant the path
		// (DESIGN.md, "Shared grants").
		diags.AddError("Grants shared with another resource",
			fmt.Sprintf("After this plan, this resource and another of the configuration would both grant the same paths: %s. "+
				"IAM keeps one policy per subject and action, so a revoke by either resource takes a path from both, and on "+
				"the paths of the CLI that do not plan both resources together (-target, -exclude, a taint, -refresh=false) a "+
				"change of one would take away what the other still grants. Let one resource grant each path (move the "+
				"shared instances into one of them), or set allow_shared_grants = true in the provider configuration to allow "+
				"it with those limits.", describeShared(report.Overlaps)))
	} else if len(report.Overlaps) > 0 {
		diags.AddWarning("Grants shared with another resource",
			fmt.Sprintf("After this plan, %s; IAM keeps one policy per subject and action, so these paths are granted once for both. "+
				"A revoke by one resource of this configuration leaves what the other still grants, but a resource in another "+
				"state or workspace, a provider alias or an apply with -target cannot see this one: let one resource grant each path.",
				describeShared(report.Overlaps)))
	}
	if len(report.Expiries) > 0 {
		detail := fmt.Sprintf("Another resource grants the same subject and action with a different expiry (%s). IAM keeps one "+
			"expiry per subject and action, the later, for every instance of the policy: the earlier one never applies.",
			describeExpiries(report.Expiries))
		if data.FailsExpiryConflicts() {
			diags.AddError("One expiry per subject and action", detail+" Give both resources the same expiry, or grant the "+
				"instances in one resource. The plan fails because the provider sets expiry_conflicts = \"error\".")
		} else {
			diags.AddWarning("One expiry per subject and action", detail)
		}
	}
	// An update that revokes paths an unchanged resource keeps cannot
	// leave them by itself: the unchanged resource is not in the apply,
	// and the update's plan-time private state does not reach it.
	var unchanged []ledger.Shared
	for _, sh := range report.Spare {
		if !sh.Other.Changing {
			unchanged = append(unchanged, sh)
		}
	}
	update := planned != nil && planned != prior && !replace
	if update && len(unchanged) > 0 {
		if b.Refreshed.Load() {
			// A plan walk: plan a replacement, whose destroy carries what to
			// spare. Its new object claims the paths in the next call.
			if paths := n.Changed(prior, planned); len(paths) > 0 {
				resp.RequiresReplace = paths
				replace, update = true, false
				report.Spare = b.ledger.Plan(h, ledger.Claims{}, minusClaims(before, kept)).Spare
				diags.AddWarning("Replaced to keep a shared grant",
					fmt.Sprintf("This change revokes paths that another resource still grants and that does not change in this plan (%s). "+
						"Terraform applies only what changes, so an update in place would take them from that resource. The change is "+
						"planned as a replacement instead: the old object's destroy leaves these paths and those the new object keeps, "+
						"and the new object grants its own.", describeShared(unchanged)))
			}
		} else {
			diags.AddWarning("Revoke of a shared grant",
				fmt.Sprintf("This update revokes paths that another resource still grants (%s). Within one process the revoke "+
					"leaves them, but a plan's notes do not reach its apply, which runs in another: if this is a plan with "+
					"-refresh=false and the other resource does not change, the apply will take the paths from it. A plan that "+
					"refreshes state plans such an update as a replacement that leaves them: plan with refresh, or with -replace "+
					"on this resource.", describeShared(unchanged)))
		}
	}
	newPrivate := maps.Clone(private)
	if oldID != "" {
		// The old object's holder id is no use to the new object.
		delete(newPrivate, privateHolderKey)
	}
	if len(forcedSpare) > 0 {
		newPrivate.Set(privateSpareKey, forcedSpare, diags)
	}
	if planned == nil || replace || len(unchanged) > 0 {
		// What a destroy (also a replacement's, and one -replace makes of
		// this update) leaves: what others claim and what the new object
		// keeps.
		if spare := spareOf(report.Spare, kept); len(spare) > 0 {
			newPrivate.Set(privateSpareKey, spare, diags)
		}
	}
	// A resource that changes anyway grants again at apply what another
	// revoked (Handle.Taken); an unchanged one must plan a change to
	// be applied at all.
	if len(report.Reassert) > 0 && planned == prior && prior != nil {
		re := a.c.Reassert(*planned)
		planned = &re
		update = true
		diags.AddWarning("Grants again what another resource revokes",
			fmt.Sprintf("Another resource of this configuration revokes paths that this one keeps (%s), and was planned "+
				"first: this resource grants them again in the same apply, after that revoke.", describeShared(report.Reassert)))
	}
	if update || (prior != nil && planned == prior) {
		// Only a change is applied; its apply finds its holder by this id.
		// An unchanged object names it too: a replacement Terraform forces
		// on it (-replace) plans the new object in the next call, which
		// takes this holder's claims over by the id (forcedSpare above)
		// instead of sharing them with it.
		newPrivate.Set(privateHolderKey, id, diags)
	}
	if owner != "" {
		newPrivate.Set(privateOwnerKey, owner, diags)
	}
	if len(newPrivate) != len(private) || newPrivate[privateHolderKey] != nil || newPrivate[privateSpareKey] != nil {
		resp.PlannedPrivate = newPrivate.Bytes(diags)
	}
	return planned
}

// own registers the object the planned resource owns whole (Owner), and
// fails the plan when another resource of the command owns it already. It
// returns the resource's ownership token, for its planned private state:
// the create half of a replacement Terraform forces on this plan comes
// back with it, and is the same resource. A replacement's first plan
// registers nothing: its create half, planned next, does.
func (a Account[M, D]) own(b *Book, n *protocol.PlanNote[M], labelOf *M, diags *protocol.Diagnostics) string {
	if n.Planned == nil || n.Replace {
		return ""
	}
	object, whole := "", false
	if o, ok := a.c.(Owner[M]); ok {
		object, whole = o.Owns(*n.Planned)
	}
	var parts []Part
	if o, ok := a.c.(PartOwner[M]); ok {
		parts, _ = o.OwnsParts(*n.Planned)
	}
	if !whole && len(parts) == 0 {
		return ""
	}
	var token string
	if !n.Private.Get(privateOwnerKey, &token, diags) {
		token = fmt.Sprintf("%s-owner-%d", b.prefix, b.next.Add(1))
	}
	label := func() string { return n.TypeName + " " + a.c.Label(*labelOf) }
	if whole {
		if other, part, taken := b.own(object, token, label); taken {
			diags.AddError("Owned by another resource", ownedMessage(object, part, other))
		}
	}
	for _, p := range parts {
		if other, whole, taken := b.ownPart(p, token, label); taken {
			if whole {
				diags.AddError("Owned by another resource", fmt.Sprintf("This resource owns %s's membership in %s, and %s of "+
					"this configuration owns %s whole: it would remove a member it does not declare on every apply. Keep the "+
					"membership in one of them: list %s in that resource, or leave the group out of this one. To let one go without "+
					"changing IAM, replace its block with a removed block (lifecycle { destroy = false }).",
					p.Part, strings.TrimPrefix(p.Object, "the members of "), other, p.Object, p.Part))
				continue
			}
			diags.AddError("Owned by another resource", fmt.Sprintf("This resource owns %s's membership in %s, and so does %s "+
				"of this configuration: each would undo the other's expiry on every apply. Keep one resource per membership.",
				p.Part, strings.TrimPrefix(p.Object, "the members of "), other))
		}
	}
	return token
}

// ownedMessage is the error of a resource owning object whole when
// another resource (other) owns it whole, or a part of it (part: "" for
// the whole).
func ownedMessage(object, part, other string) string {
	if part != "" {
		return fmt.Sprintf("This resource owns %s whole, and %s of this configuration owns %s's membership in it: this resource "+
			"would remove that member on every apply, and the other add it again. Keep the membership in one of them: list %s "+
			"in this resource, or leave the group out of the other. To let one go without changing IAM, replace its block with a "+
			"removed block (lifecycle { destroy = false }).", object, other, part, part)
	}
	return fmt.Sprintf("This resource owns %s whole, and so does %s of this configuration: each would undo what only the "+
		"other declares on every apply. Keep one resource per object. To let one go without changing IAM, replace its "+
		"block with a removed block (lifecycle { destroy = false }); terraform query, given the identities in state "+
		"(managed), generates nothing already managed.", object, other)
}

// notComparableFix is what to do about grants not comparable until apply.
const notComparableFix = "Nothing is sent. Apply the resource the instances come from first (terraform apply " +
	"-target=<its address>), so that the plan knows them; or write them literally; or set allow_shared_grants = true in " +
	"the provider configuration to let resources share paths."

// pend records a resource whose paths are not known until apply (its
// instances come from another resource). An unchanged resource that
// grants the same subject one of its actions cannot be compared with it
// at apply, where only what changes is planned again: the plan fails,
// whichever of the two is planned first (Plan refuses the unchanged one
// planned after). Resources that change are compared with it in the
// apply's own plans, before either's calls: it warns of that.
func (a Account[M, D]) pend(b *Book, label string, scope ledger.Scope, actions []string, known, allowShared bool, diags *protocol.Diagnostics) {
	if allowShared {
		return
	}
	if !known {
		diags.AddWarning("Shared grants checked at apply",
			"Neither what this resource grants nor its subject is known until apply (they come from other resources), so the "+
				"plan cannot compare it with the other resources of the configuration. The apply compares it with those that "+
				"change in it, before either's calls; a resource that does not change is not compared.")
		return
	}
	h, _ := b.holder(label)
	var unchanged []*ledger.Holder
	for _, o := range b.ledger.Pend(h, scope, actions) {
		if !o.Changing {
			unchanged = append(unchanged, o)
		}
	}
	if len(unchanged) > 0 {
		diags.AddError("Grants not comparable until apply",
			fmt.Sprintf("What this resource grants is not known until apply (it comes from another resource), and %s grants "+
				"the same subject %s and does not change in this plan. Terraform applies only what changes, so the apply, "+
				"where this resource's instances become known, cannot compare them with that resource's: if they shared one, "+
				"both resources would keep granting it, and a revoke by either would take it from the other. %s",
				labels(unchanged), actionText(actions), notComparableFix))
		return
	}
	diags.AddWarning("Shared grants checked at apply",
		"What this resource grants is not known until apply (it comes from another resource), so the plan cannot compare it "+
			"with the other resources that grant the same subject. The apply compares it with those that change in it, "+
			"before either's calls: if they share a path, the one the apply plans later fails, sending nothing. A resource "+
			"that grants the same subject one of its actions and does not change cannot be compared there, so the plan "+
			"fails instead.")
}

func labels(hs []*ledger.Holder) string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Label
	}
	return strings.Join(out, ", ")
}

func actionsOf(c ledger.Claims) string {
	return actionText(slices.Sorted(maps.Keys(c.Actions)))
}

func actionText(actions []string) string {
	if actions == nil {
		return "actions not known until apply"
	}
	return strings.Join(actions, ", ")
}

// Apply finds the apply's holder in the process's ledger: the one
// its apply-time plan registered, or a new one for a destroy. It takes
// the ledger's keys out of private state, which keeps them only from
// plan to apply.
func (a Account[M, D]) Apply(ctx context.Context, data D, n protocol.ApplyNote[M], diags *protocol.Diagnostics) context.Context {
	prior, planned, private := n.Prior, n.Planned, n.Private
	var id string
	private.Get(privateHolderKey, &id, diags)
	spare := ReadSpare(private, diags)
	delete(private, privateHolderKey)
	delete(private, privateSpareKey)
	delete(private, privateOwnerKey)
	b := data.LedgerBook()
	if b == nil {
		return ctx
	}
	m := planned
	if m == nil {
		m = prior
	}
	label := n.TypeName
	if m != nil {
		label += " " + a.c.Label(*m)
	}
	return context.WithValue(ctx, sharedApplyKey{}, &Handle{book: b, holder: b.lookup(id, label), spare: spare})
}
