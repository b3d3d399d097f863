package heldpolicy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// The plan-time expiry check reads, for each user and action a plan grants, the policy the
// grant merges into. Reading it from the action's policy list costs IAM the whole site: the list
// has no subject filter, and a scan is ceil(N/500) pages over every subject's rows. So a Reader
// asks IAM for the one subject instead (Source.OwnRows: the backend's query route, whose debug
// output names the subject's own rows, then each row by id), and falls back to the list where
// that cannot answer (a manager, whom the route answers without reading a policy; a backend that
// gives no debug output). The list is read too when a user holds no live row of an action: a
// row that expired within bkiam.ExpiredWindow is still listed, and a grant revives it whole.
//
// A Reader is a plan-time view of IAM, one per provider process: the first read of a subject's
// action is kept, and a write of this process never makes it read again, so that an apply's
// re-plan of a later resource decides on what the plan decided on. An action this process has
// written to before it was read cannot be read as it was: Read answers ErrWrittenHere for it,
// and the check leaves it to the plan, which read it before anything was written.

// Source is what a Reader reads through: IAM's routes, or a fake in tests.
type Source interface {
	// OwnRows returns, by action, the subject's own unexpired rows (backend id and expiry), and
	// whether IAM knows the subject. It returns ErrUnanswered when IAM's answer cannot tell
	// (the subject is a manager, or the backend gives no debug output).
	OwnRows(ctx context.Context, system string, subject bkiam.Subject, actions []string) (rows map[string][]Row, known bool, err error)
	// Policy reads one row by its backend id; ErrGone when it no longer exists.
	Policy(ctx context.Context, system string, id int64) (bkiam.Policy, error)
	// Scan reads the subject's rows of the action from the action's policy list: live ones, and
	// those that expired within bkiam.ExpiredWindow.
	Scan(ctx context.Context, system, action string, subject bkiam.Subject) (live, expired []bkiam.Policy, err error)
	// Scanned is Scan answered from a list already read (detect_drift's refresh reads every
	// list its resources grant), reading nothing; ok false when there is none.
	Scanned(system, action string, subject bkiam.Subject) (live, expired []bkiam.Policy, ok bool)
}

// Errors of a Source and a Reader.
var (
	// ErrUnanswered: IAM's answer about one subject cannot tell its rows; read the list.
	ErrUnanswered = errors.New("IAM's answer does not name the subject's rows")
	// ErrGone: the row asked for by id no longer exists.
	ErrGone = errors.New("the policy no longer exists")
	// ErrWrittenHere: this process wrote to the subject's action before reading it.
	ErrWrittenHere = errors.New("written by this process before it was read")
)

// Row is one of a subject's own rows as IAM's answer about the subject names it: its backend id
// and expiry.
type Row struct{ ID, ExpiredAt int64 }

// Need says whether the caller needs the expression of what a subject holds of action, given the
// latest expiry of its live rows: without it, a Read that knows the rows from IAM's answer about
// the subject reads none of them by id (Held.Live has the expiry and a nil Expr).
type Need func(action string, expiredAt int64) bool

// Held is what a subject holds of one action, as a grant finds it.
type Held struct {
	// Live is what the subject holds now; nil when nothing. Its Expr is nil when the caller's Need
	// said it needs none.
	Live *Policy
	// Expired is what IAM still lists of the subject's expired rows, which a grant revives, when
	// Live is nil; nil when none is listed (IAM lists a row that expired within
	// bkiam.ExpiredWindow, and keeps older ones, unlisted, for a year).
	Expired *Policy
	// Limited is set when Live is nil and the action's list was too long to look for the
	// subject's recently expired rows in (bkiam.ScanCache.Limit): Expired then says nothing.
	Limited *bkiam.ScanLimitError
}

// Reader reads Held views, once per subject and action.
type Reader struct {
	src Source
	// liveOnly leaves expired rows unread: no list is read for a subject
	// IAM's answer names.
	liveOnly bool

	mu      sync.Mutex
	entries map[heldKey]*heldEntry
	// writes counts this process's writes per subject and action.
	writes map[heldKey]int
	// noticed holds the keys FirstNotice has answered.
	noticed map[heldKey]bool
}

// heldKey keys what a Reader read and wrote: the subject's id folded to
// lower case, as IAM's database compares ids ("Alice" is alice).
type heldKey struct {
	system, action string
	subject        bkiam.Subject
}

// keyOf is the heldKey of subject's action.
func keyOf(system, action string, subject bkiam.Subject) heldKey {
	return heldKey{system, action, bkiam.Subject{Type: subject.Type, ID: strings.ToLower(subject.ID)}}
}

type heldEntry struct {
	done chan struct{}
	held Held
	err  error
	// gen is how many writes the process had made to the key when it was read.
	gen int
	// pending are the subject's own rows IAM named and nobody has read by id yet (held.Live has
	// their expiry, no expression); fill reads them, once, for the first caller that needs them.
	pending []Row
	fill    sync.Mutex
}

// NewReader builds a Reader over src.
func NewReader(src Source) *Reader {
	return &Reader{src: src, entries: map[heldKey]*heldEntry{}, writes: map[heldKey]int{}, noticed: map[heldKey]bool{}}
}

// NewLiveReader builds a Reader over src that reads live rows only (Held.Expired stays nil):
// for what lapses, not what a grant revives.
func NewLiveReader(src Source) *Reader {
	r := NewReader(src)
	r.liveOnly = true
	return r
}

// Writing records that this process is about to write to subject's actions (nil: any action of
// the system, as a creator grant writes every action of a type's creator configuration): from
// then on an action not read yet answers ErrWrittenHere.
func (r *Reader) Writing(system string, subject bkiam.Subject, actions []string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if actions == nil {
		actions = []string{anyAction}
	}
	for _, a := range actions {
		r.writes[keyOf(system, a, subject)]++
	}
}

// anyAction keys the writes to every action of a subject.
const anyAction = "\x00any"

// written is how many writes this process made to k's subject and action; r.mu is held.
func (r *Reader) written(k heldKey) int {
	return r.writes[k] + r.writes[heldKey{k.system, anyAction, k.subject}]
}

// Read returns what subject holds of each action, by action, and the actions it cannot read
// because this process wrote to them first (ErrWrittenHere); err is a read that failed. need
// (nil: always) says which expressions the caller needs.
func (r *Reader) Read(ctx context.Context, system string, subject bkiam.Subject, actions []string, need Need) (held map[string]Held, written []string, err error) {
	if need == nil {
		need = func(string, int64) bool { return true }
	}
	held = map[string]Held{}
	var mine []string
	waits := map[string]*heldEntry{}
	r.mu.Lock()
	for _, a := range actions {
		k := keyOf(system, a, subject)
		if e, ok := r.entries[k]; ok {
			waits[a] = e
			continue
		}
		if r.written(k) > 0 {
			written = append(written, a)
			continue
		}
		e := &heldEntry{done: make(chan struct{}), gen: r.written(k)}
		r.entries[k] = e
		waits[a] = e
		mine = append(mine, a)
	}
	r.mu.Unlock()

	if len(mine) > 0 {
		got, pending, readErr := r.read(ctx, system, subject, mine, need)
		r.mu.Lock()
		for _, a := range mine {
			k := keyOf(system, a, subject)
			e := waits[a]
			switch {
			case readErr != nil:
				e.err = readErr
				delete(r.entries, k) // a failed read is not kept
			case r.written(k) != e.gen:
				// Written while it was read: the answer may be after the write.
				e.err = ErrWrittenHere
				delete(r.entries, k)
			default:
				e.held, e.pending = got[a], pending[a]
			}
			close(e.done)
		}
		r.mu.Unlock()
	}
	for _, a := range slices.Sorted(maps.Keys(waits)) {
		e := waits[a]
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		// e.err is the read's, set before done was closed; what filled
		// finds is this caller's own.
		err := e.err
		if err == nil {
			err = r.filled(ctx, system, a, subject, e, need)
		}
		switch {
		case errors.Is(err, ErrWrittenHere):
			written = append(written, a)
		case err != nil:
			return nil, nil, err
		default:
			r.mu.Lock()
			held[a] = e.held
			r.mu.Unlock()
		}
	}
	slices.Sort(written)
	return held, written, nil
}

// filled reads by id the rows of e still pending when need asks for their expression, before any
// write of this process to the key (after one, the answer is the plan's: ErrWrittenHere, for this
// caller only).
func (r *Reader) filled(ctx context.Context, system, action string, subject bkiam.Subject, e *heldEntry, need Need) error {
	e.fill.Lock()
	defer e.fill.Unlock()
	r.mu.Lock()
	pending, live := e.pending, e.held.Live
	writtenSince := r.written(keyOf(system, action, subject)) != e.gen
	r.mu.Unlock()
	if pending == nil || live == nil || !need(action, live.ExpiredAt) {
		return nil
	}
	if writtenSince {
		return ErrWrittenHere
	}
	h, err := r.byID(ctx, system, action, subject, pending)
	if err != nil {
		return err
	}
	r.mu.Lock()
	e.held, e.pending = h, nil
	r.mu.Unlock()
	return nil
}

// read reads actions of subject from IAM: from lists already read (detect_drift's), else by
// asking IAM about the subject and reading by id the rows of each action need asks for; the rows
// of the others are pending.
func (r *Reader) read(ctx context.Context, system string, subject bkiam.Subject, actions []string, need Need) (map[string]Held, map[string][]Row, error) {
	out, pending := map[string]Held{}, map[string][]Row{}
	var ask []string
	for _, a := range actions {
		live, expired, ok := r.src.Scanned(system, a, subject)
		if !ok {
			ask = append(ask, a)
			continue
		}
		var err error
		if out[a], err = r.held(subject, a, live, expired); err != nil {
			return nil, nil, err
		}
	}
	if len(ask) == 0 {
		return out, pending, nil
	}
	rows, known, err := r.src.OwnRows(ctx, system, subject, ask)
	switch {
	case errors.Is(err, ErrUnanswered):
		for _, a := range ask {
			if out[a], err = r.listed(ctx, system, a, subject); err != nil {
				return nil, nil, err
			}
		}
		return out, pending, nil
	case err != nil:
		return nil, nil, err
	case !known:
		// IAM does not know the subject: it holds nothing, and no row of it is listed.
		for _, a := range ask {
			out[a] = Held{}
		}
		return out, pending, nil
	}
	for _, a := range ask {
		var latest int64
		for _, row := range rows[a] {
			latest = max(latest, row.ExpiredAt)
		}
		switch {
		case len(rows[a]) == 0:
			// Nothing live: the list says what a grant would revive.
			if out[a], err = r.scanned(ctx, system, a, subject, nil); err != nil {
				return nil, nil, err
			}
		case need(a, latest):
			if out[a], err = r.byID(ctx, system, a, subject, rows[a]); err != nil {
				return nil, nil, err
			}
		default:
			out[a], pending[a] = Held{Live: &Policy{ExpiredAt: latest}}, rows[a]
		}
	}
	return out, pending, nil
}

// byID reads the subject's rows of action by id; a row revoked since is not held, one whose id
// was reused is not the subject's, and a read that fails (a gateway may not grant the route)
// gives way to the action's list.
func (r *Reader) byID(ctx context.Context, system, action string, subject bkiam.Subject, rows []Row) (Held, error) {
	var live []bkiam.Policy
	for _, row := range rows {
		p, err := r.src.Policy(ctx, system, row.ID)
		switch {
		case errors.Is(err, ErrGone):
			continue
		case err != nil:
			h, listErr := r.listed(ctx, system, action, subject)
			if listErr != nil {
				return Held{}, fmt.Errorf("reading %s's policy %d for %s: %w (and the policy list: %w)", SubjectName(subject), row.ID, action, err, listErr)
			}
			return h, nil
		case !bkiam.SameSubject(p.Subject, subject) || p.Action != action:
			continue
		}
		live = append(live, p)
	}
	return r.scanned(ctx, system, action, subject, live)
}

// scanned completes a Held from the live rows IAM's answer named: when they are none, the list
// says what the subject holds, with the expired rows a grant would revive (a Reader of live rows
// only takes the answer as it is).
func (r *Reader) scanned(ctx context.Context, system, action string, subject bkiam.Subject, live []bkiam.Policy) (Held, error) {
	var expired []bkiam.Policy
	var limited *bkiam.ScanLimitError
	if live == nil && !r.liveOnly {
		var err error
		live, expired, err = r.src.Scan(ctx, system, action, subject)
		switch {
		case errors.As(err, &limited):
			// IAM's answer about the subject named no live row: what the page read shows
			// stands, and the rest of the list is not read.
		case err != nil:
			return Held{}, err
		}
	}
	h, err := held(subject, action, live, expired)
	if h.Live == nil && h.Expired == nil {
		h.Limited = limited
	}
	return h, err
}

// listed is what the action's policy list says the subject holds.
func (r *Reader) listed(ctx context.Context, system, action string, subject bkiam.Subject) (Held, error) {
	live, expired, err := r.src.Scan(ctx, system, action, subject)
	if err != nil {
		// A list too long to read whole cannot say what the subject holds live.
		return Held{}, err
	}
	return r.held(subject, action, live, expired)
}

// held is what live and expired rows hold, as this Reader reads them: the expired ones left out
// for a Reader of live rows only.
func (r *Reader) held(subject bkiam.Subject, action string, live, expired []bkiam.Policy) (Held, error) {
	if r.liveOnly {
		expired = nil
	}
	return held(subject, action, live, expired)
}

// held merges live and expired rows into a Held: the expired ones count only when nothing lives.
func held(subject bkiam.Subject, action string, live, expired []bkiam.Policy) (Held, error) {
	var h Held
	var err error
	if h.Live, err = Of(subject, action, live); err != nil {
		return Held{}, err
	}
	if h.Live == nil {
		if h.Expired, err = Of(subject, action, expired); err != nil {
			return Held{}, err
		}
	}
	return h, nil
}

// Seen returns the backend ids of the subject's own rows of action that this Reader's read named
// (none when it has not read them, or the read failed): a resource keeps them, so that a later
// plan can read them by id once they have expired (Recall).
func (r *Reader) Seen(system string, subject bkiam.Subject, action string) []int64 {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	e, ok := r.entries[keyOf(system, action, subject)]
	r.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-e.done:
	default:
		return nil // still being read
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.err != nil {
		return nil
	}
	var ids []int64
	for _, p := range []*Policy{e.held.Live, e.held.Expired} {
		if p != nil {
			for _, row := range p.Rows {
				ids = append(ids, row.ID)
			}
		}
	}
	for _, row := range e.pending {
		ids = append(ids, row.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Recall reads by id the rows of subject's action whose ids the caller kept (Seen), for what a
// grant would revive when the subject holds nothing live: IAM keeps a user's expired row for a
// year and merges the next grant into it, and its list shows the row for a day only, where the
// by-id route answers it whatever its age. It returns what those rows hold, nil when none is
// still a row of the subject's action (deleted by IAM's housekeeping or a revoke, or its id
// reused). Call it only where IAM's answer named no live row: what it returns is taken as
// expired.
func (r *Reader) Recall(ctx context.Context, system string, subject bkiam.Subject, action string, ids []int64) (*Policy, error) {
	var rows []bkiam.Policy
	for _, id := range ids {
		p, err := r.src.Policy(ctx, system, id)
		switch {
		case errors.Is(err, ErrGone):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading %s's policy %d for %s: %w", SubjectName(subject), id, action, err)
		case !bkiam.SameSubject(p.Subject, subject) || p.Action != action:
			continue
		}
		rows = append(rows, p)
	}
	return Of(subject, action, rows)
}

// FirstNotice reports whether the process has not asked it yet for subject's action: a notice
// about what IAM does not let the provider see, said once per process however many resources
// grant the action (subject ids compared without case, as IAM does).
func (r *Reader) FirstNotice(system string, subject bkiam.Subject, action string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := keyOf(system, action, subject)
	first := !r.noticed[k]
	r.noticed[k] = true
	return first
}
