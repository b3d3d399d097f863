package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The kill test: the command runs with --state while several writers grant and revoke, and is killed
// (SIGKILL, no chance to save) at a random moment, several times over one state file. Every restart
// must load the file, and every change the sandbox acknowledged must be in it. Each writer owns its
// instance ids and sends one request at a time, so for each (policy, instance) the order of requests
// is known; only a writer's last request, in flight at the kill, may have gone either way, and then
// wholly or not at all.

const (
	killRounds  = 8
	killWriters = 6
	killSeed    = 20260102
)

type killKey struct{ System, SubjType, SubjID, Action string }

type killItem struct {
	key  killKey
	path string
}

type killSubject struct{ Type, ID string }

// Shared by every writer, anchored; carol's edit_host policy is written by writer 0 alone and is not
// anchored, so it is created and deleted over and over, across restarts.
var (
	killShared = []killSubject{{"user", "alice"}, {"user", "bob"}, {"group", "1"}}
	killCarol  = killSubject{"user", "carol"}
	killHost   = []string{"edit_host", "view_host"}
	killJob    = []string{"edit", "list", "delete", "view"} // bk_job's creator config for job
)

// killRequest is one call and the (policy, instance) pairs it sets present (grant) or absent.
type killRequest struct {
	tr, ep string
	body   map[string]any
	items  []killItem
	grant  bool
}

type killWriter struct {
	n        int
	rng      *rand.Rand
	ids      []string
	known    map[killItem]bool // acknowledged state of every pair this writer touched
	inflight *killRequest      // sent, not acknowledged (only ever the writer's last request)
	acked    int
	// writer 0 only: carol's policy id as last acknowledged or seen after a restart.
	carolID int64
}

type killHarness struct {
	t       *testing.T
	bin     string
	state   string
	anchors map[killKey]int64 // read-only once the writers run
	client  *http.Client
	mu      sync.Mutex
	maxID   int64 // the largest policy_id any answer or restart has shown

	roundAcks atomic.Int64
}

// killRaceEnabled reports whether this test binary was built with -race: the command is then built with
// it too, so a data race in the real process is caught as well.
func killRaceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

func killBuildCommand(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bkiam-sandbox")
	args := []string{"build", "-o", bin}
	if killRaceEnabled() {
		args = append(args, "-race")
	}
	goTool := "go"
	if _, err := exec.LookPath(goTool); err != nil && os.Getenv("GOROOT") != "" {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go") // go test sets GOROOT; PATH may lack go
	}
	out, err := exec.Command(goTool, append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// killProc is a running command.
type killProc struct {
	cmd    *exec.Cmd
	url    string
	stderr string // file
	exited chan struct{}
}

// startProc starts the command on the state file and waits for its listening line; a start that fails
// (a state file that does not load) fails the test with the command's stderr.
func (h *killHarness) startProc(round int) *killProc {
	h.t.Helper()
	stderr := filepath.Join(filepath.Dir(h.bin), fmt.Sprintf("stderr-%d.txt", round))
	ef, err := os.Create(stderr)
	if err != nil {
		h.t.Fatal(err)
	}
	defer ef.Close()
	cmd := exec.Command(h.bin, "--listen", "127.0.0.1:0", "--state", h.state)
	cmd.Stderr = ef
	out, err := cmd.StdoutPipe()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	p := &killProc{cmd: cmd, stderr: stderr, exited: make(chan struct{})}
	h.t.Cleanup(func() { p.kill(h.t) })
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		l, _ := r.ReadString('\n')
		line <- l
		_, _ = io.Copy(io.Discard, r)
	}()
	var l string
	select {
	case l = <-line:
	case <-time.After(30 * time.Second):
		h.t.Fatalf("round %d: no listening line within 30 s", round)
	}
	m := regexp.MustCompile(`^bkiam-sandbox listening on (http://127\.0\.0\.1:[1-9][0-9]*)\n$`).FindStringSubmatch(l)
	if m == nil {
		p.kill(h.t)
		b, _ := os.ReadFile(stderr)
		h.t.Fatalf("round %d: the sandbox did not start on the state file left by the kill (line %q): %s", round, l, b)
	}
	p.url = m[1]
	return p
}

// kill sends SIGKILL (a no-op once done) and fails the test if the process reported a data race.
func (p *killProc) kill(t *testing.T) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	close(p.exited)
	if b, _ := os.ReadFile(p.stderr); bytes.Contains(b, []byte("DATA RACE")) {
		t.Errorf("the sandbox reported a data race:\n%s", b[:min(len(b), 8000)])
	}
}

type killAnswer struct {
	Code int `json:"code"`
	Data []struct {
		Action struct {
			ID string `json:"id"`
		} `json:"action"`
		PolicyID int64 `json:"policy_id"`
	} `json:"data"`
}

// send posts a request; ok is false when no complete answer arrived (the process is gone). A complete
// answer that is not a success fails the test: nothing sent is invalid.
func (h *killHarness) send(url string, r *killRequest) (killAnswer, bool) {
	path := "/api/v1/open/authorization/" + r.ep + "/"
	if r.tr == "esb" {
		path = "/api/c/compapi/v2/iam/authorization/" + r.ep + "/"
	}
	raw, _ := json.Marshal(r.body)
	req, _ := http.NewRequest(http.MethodPost, url+path, bytes.NewReader(raw))
	req.Header.Set("X-Bkapi-Authorization", `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret","bk_username":"admin"}`)
	resp, err := h.client.Do(req)
	if err != nil {
		return killAnswer{}, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return killAnswer{}, false
	}
	var a killAnswer
	if err := json.Unmarshal(b, &a); err != nil || resp.StatusCode != http.StatusOK || a.Code != 0 {
		h.t.Errorf("%s %s: HTTP %d %s\nrequest %s", r.tr, r.ep, resp.StatusCode, b, raw)
		return a, false
	}
	return a, true
}

func killBody(op string, subj killSubject, system, typ string, actions, ids []string, asPaths bool) map[string]any {
	acts := make([]any, len(actions))
	for i, a := range actions {
		acts[i] = map[string]any{"id": a}
	}
	res := map[string]any{"system": system, "type": typ}
	var list []any
	for _, id := range ids {
		n := map[string]any{"system": system, "type": typ, "id": id, "name": "n" + id}
		if asPaths {
			list = append(list, []any{n})
		} else {
			list = append(list, map[string]any{"id": id, "name": "n" + id})
		}
	}
	if asPaths {
		res["paths"] = list
	} else {
		res["instances"] = list
	}
	b := map[string]any{"system": system, "operate": op, "subject": map[string]any{"type": subj.Type, "id": subj.ID},
		"actions": acts, "resources": []any{res}}
	if op == "grant" && subj.Type == "user" {
		b["expired_at"] = 4102444800
	}
	return b
}

func killItems(system, typ string, subj killSubject, actions, ids []string) []killItem {
	var out []killItem
	for _, a := range actions {
		for _, id := range ids {
			out = append(out, killItem{killKey{system, subj.Type, subj.ID, a}, "/" + system + "," + typ + "," + id + "/"})
		}
	}
	return out
}

func (w *killWriter) pick(list []string) []string {
	l := slices.Clone(list)
	w.rng.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	return l[:1+w.rng.IntN(len(l))]
}

// next builds a random request over this writer's own ids.
func (w *killWriter) next() *killRequest {
	r := &killRequest{tr: "gateway", grant: w.rng.IntN(2) == 0}
	if w.rng.IntN(2) == 0 {
		r.tr = "esb"
	}
	op := "revoke"
	if r.grant {
		op = "grant"
	}
	ids := w.pick(w.ids)
	ids = ids[:min(3, len(ids))]
	subj := killShared[w.rng.IntN(len(killShared))]
	switch k := w.rng.IntN(4); {
	case w.n == 0 && k < 2: // carol's unanchored policy: two ids only, so that it is often emptied
		ids = w.pick(w.ids[:2])
		r.ep = "batch_instance"
		r.body = killBody(op, killCarol, "bk_cmdb", "host", []string{"edit_host"}, ids, false)
		r.items = killItems("bk_cmdb", "host", killCarol, []string{"edit_host"}, ids)
	case k == 1 && subj.Type == "user": // jobs: a creator grant, or a batch_path revoke of some actions
		if r.grant {
			r.ep = "batch_resource_creator_action"
			insts := make([]any, len(ids))
			for i, id := range ids {
				insts[i] = map[string]any{"id": id, "name": "n" + id}
			}
			r.body = map[string]any{"system": "bk_job", "type": "job", "creator": subj.ID, "instances": insts}
			r.items = killItems("bk_job", "job", subj, killJob, ids)
		} else {
			acts := w.pick(killJob)
			r.ep = "batch_path"
			r.body = killBody(op, subj, "bk_job", "job", acts, ids, true)
			r.items = killItems("bk_job", "job", subj, acts, ids)
		}
	default: // host instances by batch_instance or 1-node batch_path
		acts := w.pick(killHost)
		asPaths := w.rng.IntN(2) == 0
		r.ep = "batch_instance"
		if asPaths {
			r.ep = "batch_path"
		}
		r.body = killBody(op, subj, "bk_cmdb", "host", acts, ids, asPaths)
		r.items = killItems("bk_cmdb", "host", subj, acts, ids)
	}
	return r
}

// checkIDs: an anchored policy keeps its policy_id; so does carol's while it exists, and once it was
// emptied (deleted) a grant gives it an id never seen before. carolExisted is the state before r.
func (h *killHarness) checkIDs(w *killWriter, r *killRequest, a killAnswer, carolExisted bool) {
	subj, _ := r.body["subject"].(map[string]any)
	typ, id := "user", r.body["creator"]
	if subj != nil {
		typ, id = subj["type"].(string), subj["id"]
	}
	for _, e := range a.Data {
		k := killKey{r.body["system"].(string), typ, id.(string), e.Action.ID}
		if k.SubjID == killCarol.ID {
			h.noteCarolID(w, e.PolicyID, carolExisted, "an answer")
			continue
		}
		if want := h.anchors[k]; e.PolicyID != want {
			h.t.Errorf("policy_id of %+v is %d, want %d (anchored): %+v", k, e.PolicyID, want, a)
		}
	}
}

func (h *killHarness) noteCarolID(w *killWriter, id int64, existed bool, where string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case existed && id != w.carolID:
		h.t.Errorf("%s: carol's policy changed its id from %d to %d while it existed", where, w.carolID, id)
	case !existed && id <= h.maxID:
		h.t.Errorf("%s gives carol's re-created policy the id %d, not above every id seen before (%d): an id was reused", where, id, h.maxID)
	}
	w.carolID, h.maxID = id, max(h.maxID, id)
}

// carolExists reports whether carol's policy holds an acknowledged instance (so exists).
func (w *killWriter) carolExists() bool {
	for it, present := range w.known {
		if present && it.key.SubjID == killCarol.ID {
			return true
		}
	}
	return false
}

// run sends requests one at a time until the process is gone.
func (h *killHarness) run(w *killWriter, url string) {
	for {
		r := w.next()
		w.inflight = r
		a, ok := h.send(url, r)
		if !ok {
			return
		}
		h.checkIDs(w, r, a, w.carolExists())
		for _, it := range r.items {
			w.known[it] = r.grant
		}
		w.inflight = nil
		w.acked++
		h.roundAcks.Add(1)
	}
}

type killPolicy struct {
	PolicyID int64 `json:"policy_id"`
	System   string
	Subject  struct{ Type, ID string }
	Action   string
	Paths    []string
}

func (h *killHarness) store(url string) map[killKey]killPolicy {
	h.t.Helper()
	resp, err := http.Get(url + "/_sandbox/policies")
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct{ Policies []killPolicy }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		h.t.Fatal(err)
	}
	out := map[killKey]killPolicy{}
	for _, p := range list.Policies {
		out[killKey{p.System, p.Subject.Type, p.Subject.ID, p.Action}] = p
	}
	return out
}

// verify compares the restarted store with what was acknowledged, then adopts the outcome of each
// in-flight request as known.
func (h *killHarness) verify(round int, writers []*killWriter, got map[killKey]killPolicy) {
	h.t.Helper()
	has := func(it killItem) bool { return slices.Contains(got[it.key].Paths, it.path) }
	var lostGrants, lostRevokes []killItem
	// Carol's policy is written by writer 0 alone: if it existed before the kill, it keeps its id
	// (an in-flight request either merged into it or deleted it); if not, an in-flight grant created it.
	carolExisted := writers[0].carolExists()
	for _, w := range writers {
		if r := w.inflight; r != nil {
			before, after := true, true
			for _, it := range r.items {
				before = before && has(it) == w.known[it]
				after = after && has(it) == r.grant
			}
			if !before && !after {
				h.t.Errorf("round %d: writer %d's in-flight %s %s (grant %v) was applied in part: %v", round, w.n, r.tr, r.ep, r.grant, r.items)
			}
			for _, it := range r.items {
				w.known[it] = has(it)
			}
			w.inflight = nil
		}
		for it, present := range w.known {
			if has(it) != present {
				if present {
					lostGrants = append(lostGrants, it)
				} else {
					lostRevokes = append(lostRevokes, it)
				}
			}
		}
	}
	for _, lost := range []struct {
		what  string
		items []killItem
	}{{"acknowledged grants are missing", lostGrants}, {"acknowledged revokes were undone", lostRevokes}} {
		if len(lost.items) > 0 {
			h.t.Errorf("round %d: %d %s, e.g. %+v", round, len(lost.items), lost.what, lost.items[:min(3, len(lost.items))])
		}
	}
	for k, p := range got {
		switch {
		case k.SubjID == killCarol.ID:
			h.noteCarolID(writers[0], p.PolicyID, carolExisted, fmt.Sprintf("round %d's restart", round))
		case p.PolicyID != h.anchors[k]:
			h.t.Errorf("round %d: %+v has policy_id %d after the restart, want %d", round, k, p.PolicyID, h.anchors[k])
		}
		for _, path := range p.Paths {
			owned := path == killAnchorPath(k.System)
			for _, w := range writers {
				_, touched := w.known[killItem{k, path}]
				owned = owned || touched
			}
			if !owned {
				h.t.Errorf("round %d: %+v holds %s, which no request named", round, k, path)
			}
		}
	}
	for k := range h.anchors {
		if _, ok := got[k]; !ok {
			h.t.Errorf("round %d: anchored policy %+v is gone", round, k)
		}
	}
}

func killAnchorPath(system string) string {
	if system == "bk_job" {
		return "/bk_job,job,anchor/"
	}
	return "/bk_cmdb,host,anchor/"
}

func TestKillAtRandomLosesNoAcknowledgedChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(killSeed, 0))
	t.Logf("seed %d", killSeed)
	dir := t.TempDir()
	h := &killHarness{t: t, bin: killBuildCommand(t), state: filepath.Join(dir, "state.json"), anchors: map[killKey]int64{},
		client: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: killWriters}}}
	defer h.client.CloseIdleConnections()

	// A temp file of an interrupted save is removed at start; other files are left alone.
	stale, other := filepath.Join(dir, ".state.json.tmp-12345"), filepath.Join(dir, ".state.json.tmp-notes")
	for _, f := range []string{stale, other} {
		if err := os.WriteFile(f, []byte(`{"version":1,`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Anchors: every shared policy holds the instance "anchor", granted first and never revoked.
	p := h.startProc(0)
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("start kept the stale temp file %s", stale)
	}
	if err := os.Remove(other); err != nil {
		t.Errorf("start removed a file that is not its temp file: %v", err)
	}
	for _, subj := range killShared {
		calls := []*killRequest{{tr: "gateway", ep: "batch_instance", body: killBody("grant", subj, "bk_cmdb", "host", killHost, []string{"anchor"}, false)}}
		if subj.Type == "user" {
			calls = append(calls, &killRequest{tr: "gateway", ep: "batch_instance", body: killBody("grant", subj, "bk_job", "job", killJob, []string{"anchor"}, false)})
		}
		for _, c := range calls {
			a, ok := h.send(p.url, c)
			if !ok {
				t.Fatalf("anchor grant failed")
			}
			for _, e := range a.Data {
				k := killKey{c.body["system"].(string), subj.Type, subj.ID, e.Action.ID}
				h.anchors[k] = e.PolicyID
				h.maxID = max(h.maxID, e.PolicyID)
			}
		}
	}

	writers := make([]*killWriter, killWriters)
	for i := range writers {
		writers[i] = &killWriter{n: i, rng: rand.New(rand.NewPCG(killSeed, uint64(i+1))), known: map[killItem]bool{}}
		for j := range 5 {
			writers[i].ids = append(writers[i].ids, fmt.Sprintf("w%d-%d", i, j))
		}
	}
	total := 0
	for round := 1; round <= killRounds; round++ {
		h.roundAcks.Store(0)
		var wg sync.WaitGroup
		for _, w := range writers {
			wg.Go(func() { h.run(w, p.url) })
		}
		// Kill at a random moment once the round has some acknowledged changes, so that a slow disk
		// (every change is fsynced) cannot leave a round with nothing to check.
		for deadline := time.Now().Add(20 * time.Second); h.roundAcks.Load() < killWriters && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(250)) * time.Millisecond)
		p.kill(t)
		wg.Wait()
		inflight := 0
		for _, w := range writers {
			total += w.acked
			w.acked = 0
			if w.inflight != nil {
				inflight++
			}
		}
		p = h.startProc(round)
		// A kill during a save leaves its temp file; the restart removes it.
		if left, _ := filepath.Glob(filepath.Join(dir, ".state.json.tmp-*")); len(left) > 0 {
			t.Errorf("round %d: the restart left the interrupted save's temp files: %v", round, left)
		}
		h.verify(round, writers, h.store(p.url))
		t.Logf("round %d: %d writers had a request in flight at the kill", round, inflight)
		if t.Failed() {
			break
		}
	}
	p.kill(t)
	t.Logf("%d acknowledged changes over %d kills", total, killRounds)
	if !t.Failed() && total < killRounds*killWriters {
		t.Errorf("only %d requests were acknowledged: the kills came too early to test anything", total)
	}
}
