package heldpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

var (
	alice = bkiam.Subject{Type: bkiam.SubjectUser, ID: "alice"}
	bob   = bkiam.Subject{Type: bkiam.SubjectUser, ID: "bob"}
)

// fakeSource answers from rows by id, and counts what it was asked.
type fakeSource struct {
	mu sync.Mutex
	// rows are every row, live or expired, by backend id.
	rows map[int64]bkiam.Policy
	now  int64
	// unanswered makes OwnRows answer ErrUnanswered (a manager, no debug).
	unanswered bool
	// unknown are subjects IAM does not know.
	unknown map[bkiam.Subject]bool
	// hook runs inside OwnRows (to write while a read is in flight).
	hook func()
	// policyErr fails every read by id (a gateway that does not grant it).
	policyErr error
	// scanned are the actions whose list is already read.
	scanned map[string]bool

	ownRows, policies, scans int
}

func row(id int64, s bkiam.Subject, action, expr string, expiredAt int64) bkiam.Policy {
	return bkiam.Policy{ID: id, Subject: s, Action: action, Expression: json.RawMessage(expr), ExpiredAt: expiredAt}
}

func (f *fakeSource) OwnRows(_ context.Context, _ string, subject bkiam.Subject, actions []string) (map[string][]Row, bool, error) {
	f.mu.Lock()
	f.ownRows++
	hook := f.hook
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
	if f.unanswered {
		return nil, false, ErrUnanswered
	}
	if f.unknown[subject] {
		return nil, false, nil
	}
	out := map[string][]Row{}
	for id, r := range f.rows {
		if r.Subject == subject && slices.Contains(actions, r.Action) && r.ExpiredAt > f.now {
			out[r.Action] = append(out[r.Action], Row{ID: id, ExpiredAt: r.ExpiredAt})
		}
	}
	return out, true, nil
}

func (f *fakeSource) Policy(_ context.Context, _ string, id int64) (bkiam.Policy, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.policies++
	if f.policyErr != nil {
		return bkiam.Policy{}, f.policyErr
	}
	r, ok := f.rows[id]
	if !ok {
		return bkiam.Policy{}, ErrGone
	}
	return r, nil
}

func (f *fakeSource) Scanned(_, action string, subject bkiam.Subject) (live, expired []bkiam.Policy, ok bool) {
	f.mu.Lock()
	ok = f.scanned[action]
	f.mu.Unlock()
	if !ok {
		return nil, nil, false
	}
	live, expired = f.list(action, subject)
	return live, expired, true
}

func (f *fakeSource) Scan(_ context.Context, _, action string, subject bkiam.Subject) (live, expired []bkiam.Policy, err error) {
	f.mu.Lock()
	f.scans++
	f.mu.Unlock()
	live, expired = f.list(action, subject)
	return live, expired, nil
}

func (f *fakeSource) list(action string, subject bkiam.Subject) (live, expired []bkiam.Policy) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.rows {
		if r.Subject != subject || r.Action != action {
			continue
		}
		if r.ExpiredAt > f.now {
			live = append(live, r)
		} else {
			expired = append(expired, r)
		}
	}
	return live, expired
}

const (
	host1 = `{"field":"host.id","op":"eq","value":"1"}`
	biz1  = `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}`
)

// TestReaderReadsOneSubject: a subject IAM names its rows for is read by them, one call for all
// its actions and one per row, never the list; an action it holds no live row of is looked for
// in the list, whose expired rows are what a grant revives; a subject IAM does not know holds
// nothing and costs no list.
func TestReaderReadsOneSubject(t *testing.T) {
	src := &fakeSource{now: 100, rows: map[int64]bkiam.Policy{
		7: row(7, alice, "view_host", biz1, 500),
		8: row(8, alice, "edit_host", host1, 50), // expired
		9: row(9, bob, "view_host", host1, 500),
	}, unknown: map[bkiam.Subject]bool{{Type: "user", ID: "ghost"}: true}}
	r := NewReader(src)
	held, written, err := r.Read(context.Background(), "bk_cmdb", alice, []string{"view_host", "edit_host", "delete_host"}, nil)
	if err != nil || written != nil {
		t.Fatalf("Read: %v, written %v", err, written)
	}
	if p := held["view_host"].Live; p == nil || p.ExpiredAt != 500 || len(p.Rows) != 1 || p.Rows[0].ID != 7 {
		t.Errorf("view_host: got %+v, want row 7", held["view_host"])
	}
	if h := held["edit_host"]; h.Live != nil || h.Expired == nil || h.Expired.ExpiredAt != 50 {
		t.Errorf("edit_host, expired: got %+v, want the expired row", h)
	}
	if h := held["delete_host"]; h.Live != nil || h.Expired != nil {
		t.Errorf("delete_host, never granted: got %+v", h)
	}
	if src.ownRows != 1 || src.policies != 1 || src.scans != 2 {
		t.Errorf("calls: %d own-rows, %d by id, %d scans; want 1, 1 and 2 (the two actions without a live row)",
			src.ownRows, src.policies, src.scans)
	}
	// Read again: nothing is asked again.
	if _, _, err := r.Read(context.Background(), "bk_cmdb", alice, []string{"view_host", "edit_host"}, nil); err != nil {
		t.Fatal(err)
	}
	if src.ownRows != 1 || src.policies != 1 || src.scans != 2 {
		t.Errorf("a second read asked IAM again: %d, %d, %d", src.ownRows, src.policies, src.scans)
	}
	held, _, err = r.Read(context.Background(), "bk_cmdb", bkiam.Subject{Type: "user", ID: "ghost"}, []string{"view_host"}, nil)
	if err != nil || held["view_host"].Live != nil || src.scans != 2 {
		t.Errorf("an unknown user: %+v, %v, %d scans", held, err, src.scans)
	}
	// A live reader never reads the list for what a grant revives.
	src.scans = 0
	held, _, err = NewLiveReader(src).Read(context.Background(), "bk_cmdb", alice, []string{"edit_host"}, nil)
	if err != nil || held["edit_host"].Live != nil || held["edit_host"].Expired != nil || src.scans != 0 {
		t.Errorf("live reader: %+v, %v, %d scans", held, err, src.scans)
	}
}

// TestReaderFallsBackToTheList: where IAM's answer cannot tell the subject's rows (a manager, a
// backend without debug output), the list says what it holds, live and expired.
func TestReaderFallsBackToTheList(t *testing.T) {
	src := &fakeSource{now: 100, unanswered: true, rows: map[int64]bkiam.Policy{
		7: row(7, alice, "view_host", biz1, 500),
		8: row(8, alice, "edit_host", host1, 50),
	}}
	held, _, err := NewReader(src).Read(context.Background(), "bk_cmdb", alice, []string{"view_host", "edit_host"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if held["view_host"].Live == nil || held["edit_host"].Expired == nil || src.policies != 0 || src.scans != 2 {
		t.Errorf("got %+v, %d by id, %d scans", held, src.policies, src.scans)
	}
}

// TestReaderSkipsRowsNoLongerItsOwn: a row revoked between the answer and its read is not held;
// an id reused by another subject's row after a delete is not the subject's.
func TestReaderSkipsRowsNoLongerItsOwn(t *testing.T) {
	src := &fakeSource{now: 100, rows: map[int64]bkiam.Policy{7: row(7, alice, "view_host", biz1, 500)}}
	src.hook = func() {
		src.mu.Lock()
		defer src.mu.Unlock()
		src.rows[7] = row(7, bob, "view_host", host1, 500) // alice's revoked, the id reused
		src.hook = nil
	}
	held, _, err := NewReader(src).Read(context.Background(), "bk_cmdb", alice, []string{"view_host"}, nil)
	if err != nil || held["view_host"].Live != nil {
		t.Errorf("got %+v, %v; want nothing held", held["view_host"], err)
	}
}

// TestReaderKeepsWhatItReadBeforeWrites: a plan-time view. What was read stays as it was read
// after this process writes; an action written before it was read is not read (the plan
// decided), and neither is one written while it was being read; another subject's, or another
// action's, is read as usual.
func TestReaderKeepsWhatItReadBeforeWrites(t *testing.T) {
	src := &fakeSource{now: 100, rows: map[int64]bkiam.Policy{7: row(7, alice, "view_host", host1, 500)}}
	r := NewReader(src)
	ctx := context.Background()
	if _, _, err := r.Read(ctx, "bk_cmdb", alice, []string{"view_host"}, nil); err != nil {
		t.Fatal(err)
	}
	r.Writing("bk_cmdb", alice, []string{"view_host", "edit_host"})
	src.rows[7] = row(7, alice, "view_host", biz1, 900) // what the write did
	held, written, err := r.Read(ctx, "bk_cmdb", alice, []string{"view_host", "edit_host", "delete_host"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := held["view_host"].Live; p == nil || p.ExpiredAt != 500 {
		t.Errorf("view_host after this process's write: got %+v, want what was read before it", p)
	}
	if !slices.Equal(written, []string{"edit_host"}) {
		t.Errorf("written = %v, want [edit_host]: written before it was read", written)
	}
	if _, ok := held["delete_host"]; !ok {
		t.Error("delete_host, never written, was not read")
	}
	// A creator grant writes every action of the subject.
	r.Writing("bk_cmdb", bob, nil)
	if _, written, _ := r.Read(ctx, "bk_cmdb", bob, []string{"view_host"}, nil); !slices.Equal(written, []string{"view_host"}) {
		t.Errorf("after a write of every action of bob: written = %v", written)
	}
	if _, written, _ := r.Read(ctx, "bk_job", bob, []string{"view"}, nil); written != nil {
		t.Errorf("another system's: written = %v", written)
	}
	// IAM compares user ids without case: a write to "Carol" is one to carol's policy.
	r.Writing("bk_cmdb", bkiam.Subject{Type: "user", ID: "Carol"}, []string{"view_host"})
	if _, written, _ := r.Read(ctx, "bk_cmdb", bkiam.Subject{Type: "user", ID: "carol"}, []string{"view_host"}, nil); !slices.Equal(written, []string{"view_host"}) {
		t.Errorf("after a write to Carol, carol's: written = %v", written)
	}
	// A write while the read is in flight: the answer is not kept.
	src.hook = func() { r.Writing("bk_cmdb", alice, []string{"create_biz"}) }
	if _, written, err := r.Read(ctx, "bk_cmdb", alice, []string{"create_biz"}, nil); err != nil || !slices.Equal(written, []string{"create_biz"}) {
		t.Errorf("written during the read: %v, %v", written, err)
	}
}

// TestReaderSharesOneReadAmongCallers: callers that ask at once for one subject's action wait for
// one read.
func TestReaderSharesOneReadAmongCallers(t *testing.T) {
	release := make(chan struct{})
	src := &fakeSource{now: 100, rows: map[int64]bkiam.Policy{7: row(7, alice, "view_host", host1, 500)}}
	src.hook = func() { <-release }
	r := NewReader(src)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			held, _, err := r.Read(context.Background(), "bk_cmdb", alice, []string{"view_host"}, nil)
			if err == nil && held["view_host"].Live == nil {
				err = errors.New("nothing held")
			}
			errs <- err
		})
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if src.ownRows != 1 || src.policies != 1 {
		t.Errorf("%d own-row reads and %d by id for 8 callers, want 1 and 1", src.ownRows, src.policies)
	}
}

// TestReaderListsWhatItCannotReadByID: a row IAM named but the read by id fails for (a gateway may
// not grant that route) is read from the list instead.
func TestReaderListsWhatItCannotReadByID(t *testing.T) {
	src := &fakeSource{now: 100, policyErr: errors.New("HTTP 403"), rows: map[int64]bkiam.Policy{7: row(7, alice, "view_host", biz1, 500)}}
	held, _, err := NewReader(src).Read(context.Background(), "bk_cmdb", alice, []string{"view_host"}, nil)
	if err != nil || held["view_host"].Live == nil || src.scans != 1 {
		t.Errorf("got %+v, %v, %d scans; want the row from the list", held["view_host"], err, src.scans)
	}
}

// TestReaderTakesListsAlreadyRead: with detect_drift the refresh has read the list of every action
// a resource grants; what it read answers without a call.
func TestReaderTakesListsAlreadyRead(t *testing.T) {
	src := &fakeSource{now: 100, scanned: map[string]bool{"view_host": true}, rows: map[int64]bkiam.Policy{
		7: row(7, alice, "view_host", biz1, 500),
		8: row(8, alice, "edit_host", host1, 500),
	}}
	held, _, err := NewReader(src).Read(context.Background(), "bk_cmdb", alice, []string{"view_host", "edit_host"}, nil)
	if err != nil || held["view_host"].Live == nil || held["edit_host"].Live == nil {
		t.Fatalf("got %+v, %v", held, err)
	}
	if src.ownRows != 1 || src.policies != 1 || src.scans != 0 {
		t.Errorf("calls: %d own-rows, %d by id, %d scans; want IAM asked of edit_host alone", src.ownRows, src.policies, src.scans)
	}
}

// TestReaderReadsByIDOnlyWhatIsNeeded: a caller that needs no expression
// for the expiry IAM's answer gives (a grant expiring when the policy
// does changes nothing of it) costs no read by id; a later caller that
// needs it reads the rows then, once, unless this process wrote to the
// action in between (then the plan decided).
func TestReaderReadsByIDOnlyWhatIsNeeded(t *testing.T) {
	src := &fakeSource{now: 100, rows: map[int64]bkiam.Policy{
		7: row(7, alice, "view_host", biz1, 500),
		8: row(8, alice, "edit_host", host1, 500),
	}}
	r := NewReader(src)
	ctx := context.Background()
	expires := func(at int64) Need { return func(_ string, expiredAt int64) bool { return expiredAt != at } }
	held, _, err := r.Read(ctx, "bk_cmdb", alice, []string{"view_host", "edit_host"}, expires(500))
	if err != nil || held["view_host"].Live == nil || held["view_host"].Live.ExpiredAt != 500 || held["view_host"].Live.Expr != nil {
		t.Fatalf("got %+v, %v; want the expiry without an expression", held["view_host"], err)
	}
	if src.ownRows != 1 || src.policies != 0 {
		t.Errorf("calls: %d own-rows, %d by id; want the one query alone", src.ownRows, src.policies)
	}
	held, _, err = r.Read(ctx, "bk_cmdb", alice, []string{"view_host"}, expires(900))
	if err != nil || held["view_host"].Live == nil || held["view_host"].Live.Expr == nil {
		t.Fatalf("a caller that needs the expression: %+v, %v", held["view_host"], err)
	}
	if _, _, err := r.Read(ctx, "bk_cmdb", alice, []string{"view_host"}, nil); err != nil || src.ownRows != 1 || src.policies != 1 {
		t.Errorf("calls: %d own-rows, %d by id (%v); want view_host read by id once", src.ownRows, src.policies, err)
	}
	r.Writing("bk_cmdb", alice, []string{"edit_host"})
	if _, written, err := r.Read(ctx, "bk_cmdb", alice, []string{"edit_host"}, nil); err != nil || !slices.Equal(written, []string{"edit_host"}) || src.policies != 1 {
		t.Errorf("edit_host, written before its rows were read: written %v, %v, %d by id; want it left to the plan", written, err, src.policies)
	}
}
