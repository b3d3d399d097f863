package bkiam

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

var scanNow = time.Unix(2_000_000_000, 0)

func fixedNow() time.Time { return scanNow }

// gateTimeout releases a gated handler that a failing test never opened: httptest's Close waits
// for every handler, so a handler blocked for good would hang the test binary.
const gateTimeout = 10 * time.Second

// enter reports a request's arrival without ever blocking the handler.
func enter(entered chan<- struct{}) {
	select {
	case entered <- struct{}{}:
	default:
	}
}

// gatedReply answers like reply, but only once gate is closed (or the request is cancelled), and
// reports on entered that a request arrived.
func gatedReply(entered chan<- struct{}, gate <-chan struct{}, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		enter(entered)
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		case <-time.After(gateTimeout):
		}
		reply(200, body)(w, r)
	}
}

// waitWaiters waits until n callers wait for the scan in flight of key.
func waitWaiters(t *testing.T, s *ScanCache, k scanKey, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		f := s.flights[k]
		got := 0
		if f != nil {
			got = f.waiters
		}
		s.mu.Unlock()
		if got == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("never saw %d waiters", n)
}

var editHost = scanKey{"bk_cmdb", "edit_host", PolicyKindABAC}

// lookupOne is Lookup for a subject with at most one row: that row, or nil.
func lookupOne(s *ScanCache, ctx context.Context, system, action string, subj Subject) (*Policy, error) {
	rows, err := s.Lookup(ctx, system, action, subj)
	switch {
	case err != nil:
		return nil, err
	case len(rows) > 1:
		return nil, fmt.Errorf("%d rows for %v, want at most one", len(rows), subj)
	case len(rows) == 1:
		return &rows[0], nil
	}
	return nil, nil
}

func user(id string) Subject { return Subject{Type: "user", ID: id} }

type lookupResult struct {
	p   *Policy
	err error
}

func lookupAsync(s *ScanCache, ctx context.Context, subj Subject) <-chan lookupResult {
	ch := make(chan lookupResult, 1)
	go func() {
		p, err := lookupOne(s, ctx, "bk_cmdb", "edit_host", subj)
		ch <- lookupResult{p, err}
	}()
	return ch
}

func TestScanCacheOneScanForConcurrentLookups(t *testing.T) {
	const n = 20
	entered, gate := make(chan struct{}, 100), make(chan struct{})
	var list []string
	for i := range n {
		list = append(list, row(int64(100+i), fmt.Sprintf("u%d", i), PermanentExpiry))
	}
	fs := newFakeServer(t, gatedReply(entered, gate, pageBody(n, 1, list...)))
	s := NewScanCache(mustClient(t, gatewayConfig(fs.URL)), fixedNow)

	var chans []<-chan lookupResult
	for i := range n + 1 { // u0..u19 hold a policy; u20 holds none
		chans = append(chans, lookupAsync(s, context.Background(), user(fmt.Sprintf("u%d", i))))
	}
	<-entered
	waitWaiters(t, s, editHost, n+1) // everyone joined the one scan before it answers
	close(gate)
	for i, ch := range chans {
		r := <-ch
		switch {
		case r.err != nil:
			t.Errorf("u%d: %v", i, r.err)
		case i < n && (r.p == nil || r.p.ID != int64(100+i) || r.p.Subject != user(fmt.Sprintf("u%d", i))):
			t.Errorf("u%d: got %+v", i, r.p)
		case i == n && r.p != nil:
			t.Errorf("u%d holds nothing, got %+v", i, r.p)
		}
	}
	// Later lookups are answered from the finished scan.
	if p, err := lookupOne(s, context.Background(), "bk_cmdb", "edit_host", user("u3")); err != nil || p == nil {
		t.Errorf("cached lookup = %v, %v", p, err)
	}
	if s.Scans() != 1 || len(fs.requests()) != 1 {
		t.Errorf("%d scans, %d requests; want 1 and 1", s.Scans(), len(fs.requests()))
	}
	// Another action is another scan.
	if _, err := lookupOne(s, context.Background(), "bk_cmdb", "view_host", user("u1")); err == nil {
		t.Errorf("view_host: the scripted page is of edit_host, want an error")
	}
	if s.Scans() != 2 {
		t.Errorf("%d scans, want 2", s.Scans())
	}
}

// TestScanCacheInvalidate: a write of this process to a subject's rows makes the next lookup of
// that subject (in any case: IAM's database compares names without it) scan again, and the new
// scan answers everyone after it; a write to another action, or to another subject, leaves the
// scan answering, so that the grants of one apply to many users of one action cost one scan.
func TestScanCacheInvalidate(t *testing.T) {
	fs := newFakeServer(t,
		reply(200, pageBody(2, 1, row(1, "alice", PermanentExpiry), row(5, "bob", PermanentExpiry))),
		reply(200, pageBody(2, 1, row(2, "alice", PermanentExpiry), row(5, "bob", PermanentExpiry))),
		reply(200, pageBody(2, 1, row(2, "alice", PermanentExpiry), row(6, "bob", PermanentExpiry))))
	s := NewScanCache(mustClient(t, gatewayConfig(fs.URL)), fixedNow)
	ctx := context.Background()
	id := func(who string) int64 {
		t.Helper()
		p, err := lookupOne(s, ctx, "bk_cmdb", "edit_host", user(who))
		if err != nil || p == nil {
			t.Fatalf("Lookup(%s) = %v, %v", who, p, err)
		}
		return p.ID
	}
	expect := func(what string, alice, bob int64, scans int) {
		t.Helper()
		if a, b := id("alice"), id("bob"); a != alice || b != bob || s.Scans() != scans {
			t.Fatalf("%s: alice's row %d, bob's %d after %d scans; want %d, %d after %d", what, a, b, s.Scans(), alice, bob, scans)
		}
	}
	expect("the first scan", 1, 5, 1)
	s.Invalidate("bk_cmdb", "view_host", user("alice")) // another action
	expect("a write to another action", 1, 5, 1)
	s.Invalidate("bk_cmdb", "edit_host", user("carol")) // another subject
	expect("a write to another subject", 1, 5, 1)
	s.Invalidate("bk_cmdb", "edit_host", user("Alice"))
	if live, _, ok := s.LookupCached("bk_cmdb", "edit_host", user("alice")); ok {
		t.Fatalf("LookupCached answers alice's rows %+v from a scan older than the write", live)
	}
	if _, _, ok := s.LookupCached("bk_cmdb", "edit_host", user("bob")); !ok {
		t.Fatal("LookupCached does not answer bob's rows, which no write changed")
	}
	expect("a write to Alice", 2, 5, 2)
	s.Invalidate("bk_cmdb", "edit_host", user("bob"))
	expect("a write to bob", 2, 6, 3)
}

// TestScanCacheInvalidateDuringScan: a scan that was running when this process wrote to alice may
// have read the list before the write; it answers the callers already waiting, and later callers
// of other subjects, but a later lookup of alice scans again, and the older scan, ending last,
// does not replace the newer one.
func TestScanCacheInvalidateDuringScan(t *testing.T) {
	entered, gate := make(chan struct{}, 100), make(chan struct{})
	fs := newFakeServer(t,
		gatedReply(entered, gate, pageBody(1, 1, row(1, "alice", PermanentExpiry))), // before the write
		reply(200, pageBody(1, 1, row(2, "alice", PermanentExpiry))))                // after it
	s := NewScanCache(mustClient(t, gatewayConfig(fs.URL)), fixedNow)
	ctx := context.Background()

	early := lookupAsync(s, ctx, user("alice"))
	<-entered
	s.Invalidate("bk_cmdb", "edit_host", user("alice")) // a write happened while the first scan runs
	late, err := lookupOne(s, ctx, "bk_cmdb", "edit_host", user("alice"))
	if err != nil || late == nil || late.ID != 2 {
		t.Fatalf("lookup after Invalidate = %+v, %v; want the new scan's policy 2", late, err)
	}
	close(gate)
	if r := <-early; r.err != nil || r.p == nil || r.p.ID != 1 {
		t.Fatalf("early lookup = %+v, %v; want the first scan's policy 1", r.p, r.err)
	}
	// The stale result finished last but must not have replaced the fresh one.
	again, err := lookupOne(s, ctx, "bk_cmdb", "edit_host", user("alice"))
	if err != nil || again == nil || again.ID != 2 {
		t.Fatalf("lookup after both = %+v, %v; want policy 2", again, err)
	}
	if s.Scans() != 2 || len(fs.requests()) != 2 {
		t.Errorf("%d scans, %d requests; want 2 and 2", s.Scans(), len(fs.requests()))
	}
}

func TestScanCacheExpiry(t *testing.T) {
	now := scanNow.Unix()
	fs := newFakeServer(t, reply(200, pageBody(3, 1,
		row(1, "past", now-1), row(2, "now", now), row(3, "later", now+1))))
	s := NewScanCache(mustClient(t, gatewayConfig(fs.URL)), fixedNow)
	tests := []struct {
		subject string
		want    bool
	}{
		{"past", false},
		{"now", false}, // expired_at <= now counts as gone
		{"later", true},
		{"nobody", false},
	}
	for _, tt := range tests {
		t.Run(tt.subject, func(t *testing.T) {
			p, err := lookupOne(s, context.Background(), "bk_cmdb", "edit_host", user(tt.subject))
			if err != nil || (p != nil) != tt.want {
				t.Errorf("Lookup = %+v, %v; want found=%v", p, err, tt.want)
			}
		})
	}
	if s.Scans() != 1 {
		t.Errorf("%d scans, want 1", s.Scans())
	}
}

// TestScanCacheErrorNotCached: every waiter of a failed scan gets its error; the next caller scans
// again.
func TestScanCacheErrorNotCached(t *testing.T) {
	entered, gate := make(chan struct{}, 100), make(chan struct{})
	fs := newFakeServer(t,
		gatedReply(entered, gate, `{"code":1901401,"message":"unauthorized:app(my-app) is not allowed to call system (bk_cmdb) api","data":{}}`),
		reply(200, pageBody(1, 1, row(1, "alice", PermanentExpiry))))
	s := NewScanCache(mustClient(t, gatewayConfig(fs.URL)), fixedNow)
	a, b := lookupAsync(s, context.Background(), user("alice")), lookupAsync(s, context.Background(), user("bob"))
	<-entered
	waitWaiters(t, s, editHost, 2)
	close(gate)
	for _, ch := range []<-chan lookupResult{a, b} {
		r := <-ch
		var e *Error
		if !errors.As(r.err, &e) || e.Code != 1901401 || r.p != nil {
			t.Errorf("waiter got %+v, %v; want the 1901401 *Error", r.p, r.err)
		}
	}
	p, err := lookupOne(s, context.Background(), "bk_cmdb", "edit_host", user("alice"))
	if err != nil || p == nil || p.ID != 1 {
		t.Errorf("after the error: %+v, %v", p, err)
	}
	if s.Scans() != 2 {
		t.Errorf("%d scans, want 2", s.Scans())
	}
}

// TestScanCacheCancelledCaller: a caller whose context ends returns at once; the scan goes on for
// the others. When the last waiter leaves, the scan itself stops.
func TestScanCacheCancelledCaller(t *testing.T) {
	entered, gate := make(chan struct{}, 100), make(chan struct{})
	fs := newFakeServer(t, gatedReply(entered, gate, pageBody(2, 1, row(1, "alice", PermanentExpiry), row(2, "bob", PermanentExpiry))))
	s := NewScanCache(mustClient(t, gatewayConfig(fs.URL)), fixedNow)

	ctx, cancel := context.WithCancel(context.Background())
	quitter := lookupAsync(s, ctx, user("alice")) // starts the scan: it must not own it
	stayer := lookupAsync(s, context.Background(), user("bob"))
	<-entered
	waitWaiters(t, s, editHost, 2)
	cancel()
	select {
	case r := <-quitter:
		if !errors.Is(r.err, context.Canceled) || r.p != nil {
			t.Errorf("cancelled caller got %+v, %v", r.p, r.err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a cancelled caller still waits for the scan")
	}
	waitWaiters(t, s, editHost, 1)
	close(gate)
	if r := <-stayer; r.err != nil || r.p == nil || r.p.ID != 2 {
		t.Errorf("remaining caller got %+v, %v", r.p, r.err)
	}
	if s.Scans() != 1 || len(fs.requests()) != 1 {
		t.Errorf("%d scans, %d requests; want 1 and 1", s.Scans(), len(fs.requests()))
	}
}

func TestScanCacheLastWaiterStopsScan(t *testing.T) {
	entered, gate := make(chan struct{}, 100), make(chan struct{})
	stopped := make(chan struct{})
	var once sync.Once
	fs := newFakeServer(t,
		func(w http.ResponseWriter, r *http.Request) {
			enter(entered)
			select {
			case <-gate:
			case <-r.Context().Done():
				once.Do(func() { close(stopped) })
			case <-time.After(gateTimeout):
			}
		},
		reply(200, pageBody(1, 1, row(1, "alice", PermanentExpiry))))
	defer close(gate)
	s := NewScanCache(mustClient(t, gatewayConfig(fs.URL)), fixedNow)
	ctx, cancel := context.WithCancel(context.Background())
	ch := lookupAsync(s, ctx, user("alice"))
	<-entered
	cancel()
	if r := <-ch; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("got %+v, %v", r.p, r.err)
	}
	select {
	case <-stopped:
	case <-time.After(2 * time.Second): // well before the client's 5s attempt timeout would end it
		t.Fatal("the scan went on with nobody waiting")
	}
	// The abandoned scan is not joined: the next caller starts afresh.
	p, err := lookupOne(s, context.Background(), "bk_cmdb", "edit_host", user("alice"))
	if err != nil || p == nil || p.ID != 1 || s.Scans() != 2 {
		t.Errorf("next lookup = %+v, %v after %d scans", p, err, s.Scans())
	}
}

// TestScanCacheEveryRowAndBothLists: a subject holds the union of its
// rows (a group's custom policy and each permission template's are
// separate rows, the package doc's "Where the real server differs"), and
// a group's RBAC-stored grants are listed only with ?type=rbac. A group's
// lookup reads both lists, each once however many callers; a user's only
// the default one.
func TestScanCacheEveryRowAndBothLists(t *testing.T) {
	groupRow := func(id int64, group, ids string) string {
		return fmt.Sprintf(`{"version":"1","id":%d,"subject":{"type":"group","id":%q,"name":%q},"expression":{"field":"host.id","op":"in","value":%s},"expired_at":%d}`,
			id, group, group, ids, PermanentExpiry)
	}
	var queries []string
	var mu sync.Mutex
	fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.Query().Get("type"))
		mu.Unlock()
		if r.URL.Query().Get("type") == "rbac" {
			reply(200, pageBody(1, 1, groupRow(500000003, "1", `["9"]`)))(w, r)
			return
		}
		// Group 1: a template row (id 4) and its custom row (id 2, older); alice: one row.
		reply(200, pageBody(3, 1, groupRow(4, "1", `["1","2"]`), row(3, "alice", PermanentExpiry), groupRow(2, "1", `["3"]`)))(w, r)
	})
	s := NewScanCache(mustClient(t, gatewayConfig(fs.URL)), fixedNow)
	ctx := context.Background()
	group := Subject{Type: "group", ID: "1"}
	for range 2 {
		rows, err := s.Lookup(ctx, "bk_cmdb", "edit_host", group)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		if fmt.Sprint(ids) != "[2 4 500000003]" {
			t.Errorf("group 1's rows %v, want its custom row, its template row and its RBAC row", ids)
		}
	}
	if rows, err := s.Lookup(ctx, "bk_cmdb", "edit_host", user("alice")); err != nil || len(rows) != 1 || rows[0].ID != 3 {
		t.Errorf("alice's rows %+v, %v", rows, err)
	}
	if fmt.Sprint(queries) != "[ rbac]" || s.Scans() != 2 {
		t.Errorf("list types read %q in %d scans, want the default list and the RBAC list once each", queries, s.Scans())
	}
	// A write to the group invalidates both lists for it.
	s.Invalidate("bk_cmdb", "edit_host", group)
	if _, err := s.Lookup(ctx, "bk_cmdb", "edit_host", group); err != nil || s.Scans() != 4 {
		t.Errorf("after Invalidate: %d scans, %v; want both lists read again", s.Scans(), err)
	}
}
