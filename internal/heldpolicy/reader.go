package heldpolicy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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
	// OwnRows returns, by action, the backend ids of the subject's own unexpired rows, and
	// whether IAM knows the subject. It returns ErrUnanswered when IAM's answer cannot tell
	// (the subject is a manager, or the backend gives no debug output).
	OwnRows(ctx context.Context, system string, subject bkiam.Subject, actions []string) (rows map[string][]int64, known bool, err error)
	// Policy reads one row by its backend id; ErrGone when it no longer exists.
	Policy(ctx context.Context, system string, id int64) (bkiam.Policy, error)
	// Scan reads the subject's rows of the action from the action's policy list: live ones, and
	// those that expired within bkiam.ExpiredWindow.
	Scan(ctx context.Context, system, action string, subject bkiam.Subject) (live, expired []bkiam.Policy, err error)
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

// Held is what a subject holds of one action, as a grant finds it.
type Held struct {
	// Live is what the subject holds now; nil when nothing.
	Live *Policy
	// Expired is what IAM still lists of the subject's expired rows, which a grant revives, when
	// Live is nil; nil when none is listed (IAM lists a row that expired within
	// bkiam.ExpiredWindow, and keeps older ones, unlisted, for a year).
	Expired *Policy
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
}

type heldKey struct {
	system, action string
	subject        bkiam.Subject
}

type heldEntry struct {
	done chan struct{}
	held Held
	err  error
}

// NewReader builds a Reader over src.
func NewReader(src Source) *Reader {
	return &Reader{src: src, entries: map[heldKey]*heldEntry{}, writes: map[heldKey]int{}}
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
		r.writes[heldKey{system, a, subject}]++
	}
}

// anyAction keys the writes to every action of a subject.
const anyAction = "\x00any"

// written is how many writes this process made to k's subject and action; r.mu is held.
func (r *Reader) written(k heldKey) int {
	return r.writes[k] + r.writes[heldKey{k.system, anyAction, k.subject}]
}

// Read returns what subject holds of each action, by action, and the actions it cannot read
// because this process wrote to them first (ErrWrittenHere); err is a read that failed.
func (r *Reader) Read(ctx context.Context, system string, subject bkiam.Subject, actions []string) (held map[string]Held, written []string, err error) {
	held = map[string]Held{}
	var mine []string
	waits := map[string]*heldEntry{}
	r.mu.Lock()
	gen := map[string]int{}
	for _, a := range actions {
		k := heldKey{system, a, subject}
		if e, ok := r.entries[k]; ok {
			waits[a] = e
			continue
		}
		if r.written(k) > 0 {
			written = append(written, a)
			continue
		}
		e := &heldEntry{done: make(chan struct{})}
		r.entries[k] = e
		waits[a] = e
		mine = append(mine, a)
		gen[a] = r.written(k)
	}
	r.mu.Unlock()

	if len(mine) > 0 {
		got, readErr := r.read(ctx, system, subject, mine)
		r.mu.Lock()
		for _, a := range mine {
			k := heldKey{system, a, subject}
			e := waits[a]
			switch {
			case readErr != nil:
				e.err = readErr
				delete(r.entries, k) // a failed read is not kept
			case r.written(k) != gen[a]:
				// Written while it was read: the answer may be after the write.
				e.err = ErrWrittenHere
				delete(r.entries, k)
			default:
				e.held = got[a]
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
		switch {
		case errors.Is(e.err, ErrWrittenHere):
			written = append(written, a)
		case e.err != nil:
			return nil, nil, e.err
		default:
			held[a] = e.held
		}
	}
	slices.Sort(written)
	return held, written, nil
}

// read reads actions of subject from IAM.
func (r *Reader) read(ctx context.Context, system string, subject bkiam.Subject, actions []string) (map[string]Held, error) {
	out := map[string]Held{}
	rows, known, err := r.src.OwnRows(ctx, system, subject, actions)
	switch {
	case errors.Is(err, ErrUnanswered):
		for _, a := range actions {
			live, expired, err := r.src.Scan(ctx, system, a, subject)
			if err != nil {
				return nil, err
			}
			if r.liveOnly {
				expired = nil
			}
			if out[a], err = held(subject, a, live, expired); err != nil {
				return nil, err
			}
		}
		return out, nil
	case err != nil:
		return nil, err
	case !known:
		// IAM does not know the subject: it holds nothing, and no row of it is listed.
		for _, a := range actions {
			out[a] = Held{}
		}
		return out, nil
	}
	for _, a := range actions {
		var live []bkiam.Policy
		for _, id := range rows[a] {
			p, err := r.src.Policy(ctx, system, id)
			switch {
			case errors.Is(err, ErrGone):
				continue // revoked since: not held
			case err != nil:
				return nil, fmt.Errorf("reading %s's policy %d for %s: %w", SubjectName(subject), id, a, err)
			case p.Subject != subject || p.Action != a:
				// Ids are reused after a delete: not the row the route named.
				continue
			}
			live = append(live, p)
		}
		h, err := r.scanned(ctx, system, a, subject, live)
		if err != nil {
			return nil, err
		}
		out[a] = h
	}
	return out, nil
}

// scanned completes a Held from the live rows IAM's answer named: when they are none, the list
// says what the subject holds, with the expired rows a grant would revive (a Reader of live rows
// only takes the answer as it is).
func (r *Reader) scanned(ctx context.Context, system, action string, subject bkiam.Subject, live []bkiam.Policy) (Held, error) {
	var expired []bkiam.Policy
	if live == nil && !r.liveOnly {
		var err error
		if live, expired, err = r.src.Scan(ctx, system, action, subject); err != nil {
			return Held{}, err
		}
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
