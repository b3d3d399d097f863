package sandbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// The load test: many clients over real HTTP, both transports, every write endpoint, all writing into
// the same few policies at once. The interleaving is unknown, so each client owns its instance ids and
// tracks what it alone should have left in each shared policy; the final store must be exactly the
// union. Every shared policy is anchored by an instance granted before the load and never revoked, so
// it exists throughout and its policy_id must never change.

const (
	loadClients   = 24
	loadSteps     = 40
	loadPermanent = 4102444800
	loadSeedEnv   = "BKIAM_LOAD_SEED" // overrides the fixed seed, to explore other request sequences
)

type loadKey struct{ System, SubjType, SubjID, Action string }

type loadSubject struct{ Type, ID string }

// Four clients per subject, so several clients write into each (subject, action) policy at once.
var loadSubjects = []loadSubject{{"user", "alice"}, {"user", "bob"}, {"user", "carol"}, {"user", "dave"}, {"group", "1"}, {"group", "2"}}

var (
	loadHostActions = []string{"edit_host", "view_host"}
	loadAppActions  = []string{"mini_app_edit", "mini_app_view"}
	loadJobActions  = []string{"edit", "list", "delete", "view"} // the creator config of bk_job's job
)

// loadGroup is one group of the combined resource edit_biz_host: type -> set of paths.
type loadGroup map[string]map[string]bool

func (g loadGroup) canonical() string {
	m := map[string][]string{}
	for typ, ps := range g {
		m[typ] = slices.Sorted(maps.Keys(ps))
	}
	b, _ := json.Marshal(m) // map keys are marshalled sorted
	return string(b)
}

// loadWant is what one writer expects to have left in the store.
type loadWant struct {
	paths  map[loadKey]map[string]bool
	groups map[loadKey][]loadGroup
}

func newLoadWant() *loadWant {
	return &loadWant{paths: map[loadKey]map[string]bool{}, groups: map[loadKey][]loadGroup{}}
}

func (w *loadWant) set(k loadKey, path string, present bool) {
	if w.paths[k] == nil {
		w.paths[k] = map[string]bool{}
	}
	if present {
		w.paths[k][path] = true
	} else {
		delete(w.paths[k], path)
	}
}

// grantGroup and revokeGroup are the real server's combined-resource rules (package doc of
// internal/bkiam, "Writing"), applied to this writer's own groups: other writers' groups never share
// a path with its requests, so the rules touch no other group. A grant appends its group unless an
// existing one contains it, dropping the groups it contains; a revoke removes only the groups it
// fully contains.
func (w *loadWant) grantGroup(k loadKey, g loadGroup) {
	for _, e := range w.groups[k] {
		if e.contains(g) {
			return
		}
	}
	var kept []loadGroup
	for _, e := range w.groups[k] {
		if !g.contains(e) {
			kept = append(kept, e)
		}
	}
	w.groups[k] = append(kept, g)
}

func (w *loadWant) revokeGroup(k loadKey, req loadGroup) {
	var kept []loadGroup
	for _, g := range w.groups[k] {
		if !req.contains(g) {
			kept = append(kept, g)
		}
	}
	w.groups[k] = kept
}

// contains reports whether every type's paths of inner are among g's.
func (g loadGroup) contains(inner loadGroup) bool {
	for typ, ps := range inner {
		for p := range ps {
			if !g[typ][p] {
				return false
			}
		}
	}
	return true
}

// loadHarness sends requests and counts them per stats key.
type loadHarness struct {
	t      *testing.T
	url    string
	client *http.Client

	mu   sync.Mutex
	sent map[string]int
	// anchors: the policy_id of every shared policy, fixed before the load starts, read-only after.
	anchors map[loadKey]int64
	failed  atomic.Bool
}

type loadEntry struct {
	Action struct {
		ID string `json:"id"`
	} `json:"action"`
	PolicyID int64 `json:"policy_id"`
}

type loadAnswer struct {
	status int
	raw    string
	Code   int         `json:"code"`
	Result bool        `json:"result"`
	Data   []loadEntry `json:"data"`
}

func (h *loadHarness) count(key string) {
	h.mu.Lock()
	h.sent[key]++
	h.mu.Unlock()
}

// errorf reports a failure and makes every client stop soon, so one bug does not print a thousand lines.
func (h *loadHarness) errorf(format string, args ...any) {
	h.t.Helper()
	if !h.failed.Swap(true) {
		h.t.Errorf(format, args...)
	}
}

// post sends one authorization call through tr ("gateway" or "esb"); statKey is what the sandbox must
// count it under. Any answer but a success is a failure: nothing here is invalid or faulted.
func (h *loadHarness) post(tr, ep, statKey string, body map[string]any) (loadAnswer, bool) {
	h.t.Helper()
	path := "/api/v1/open/authorization/" + ep + "/"
	if tr == esb {
		path = "/api/c/compapi/v2/iam/authorization/" + ep + "/"
		body["bk_app_code"], body["bk_app_secret"], body["bk_username"] = "bkiam-sandbox", "sandbox-secret", "admin"
	}
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, h.url+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if tr == gw {
		req.Header.Set("X-Bkapi-Authorization", goodAuth)
	}
	h.count(statKey)
	resp, err := h.client.Do(req)
	if err != nil {
		h.errorf("%s %s: %v", tr, ep, err)
		return loadAnswer{}, false
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	a := loadAnswer{status: resp.StatusCode, raw: string(b)}
	if err == nil {
		err = json.Unmarshal(b, &a)
	}
	switch {
	case err != nil:
		h.errorf("%s %s: HTTP %d, unreadable answer %v: %s\nrequest %s", tr, ep, resp.StatusCode, err, b, raw)
		return a, false
	case resp.StatusCode >= 500:
		h.errorf("%s %s: 5xx under load: HTTP %d %s\nrequest %s", tr, ep, resp.StatusCode, b, raw)
		return a, false
	case resp.StatusCode != http.StatusOK || a.Code != 0 || !a.Result:
		h.errorf("%s %s: want success, got HTTP %d %s\nrequest %s", tr, ep, resp.StatusCode, b, raw)
		return a, false
	}
	return a, true
}

// checkIDs asserts that every policy the answer names carries its anchored policy_id, and that every
// requested action is named. A grant answer lists all the subject's policies in the system (the known
// server bug); all of them are anchored, so an unknown one is a failure too.
func (h *loadHarness) checkIDs(a loadAnswer, system string, subj loadSubject, actions []string) bool {
	h.t.Helper()
	named := map[string]bool{}
	for _, e := range a.Data {
		k := loadKey{system, subj.Type, subj.ID, e.Action.ID}
		want, ok := h.anchors[k]
		switch {
		case !ok:
			h.errorf("answer names a policy that was never granted: %+v in %s", k, a.raw)
			return false
		case e.PolicyID != want:
			h.errorf("policy_id of %+v changed from %d to %d while the policy existed: %s", k, want, e.PolicyID, a.raw)
			return false
		}
		named[e.Action.ID] = true
	}
	for _, act := range actions {
		if !named[act] {
			h.errorf("answer does not name requested action %s of %s/%s: %s", act, subj.Type, subj.ID, a.raw)
			return false
		}
	}
	return true
}

func loadSubjectBody(op string, subj loadSubject, system string, actions []string, resources []any) map[string]any {
	acts := make([]any, len(actions))
	for i, a := range actions {
		acts[i] = map[string]any{"id": a}
	}
	b := map[string]any{"system": system, "operate": op, "subject": map[string]any{"type": subj.Type, "id": subj.ID},
		"actions": acts, "resources": resources}
	if op == "grant" && subj.Type == "user" {
		// Permanent, so every policy's expiry is known whatever the order (a new user policy would
		// otherwise expire a year after whichever grant created it).
		b["expired_at"] = loadPermanent
	}
	return b
}

func loadInstances(system, typ string, idList []string) map[string]any {
	insts := make([]any, len(idList))
	for i, id := range idList {
		insts[i] = map[string]any{"id": id, "name": "n" + id}
	}
	return map[string]any{"system": system, "type": typ, "instances": insts}
}

// loadPaths builds a batch_path resource entry; each path is a list of (type, id) pairs of one system.
func loadPaths(system, typ string, paths [][][2]string) map[string]any {
	out := make([]any, len(paths))
	for i, p := range paths {
		nodes := make([]any, len(p))
		for j, n := range p {
			nodes[j] = map[string]any{"system": system, "type": n[0], "id": n[1], "name": "n" + n[1]}
		}
		out[i] = nodes
	}
	return map[string]any{"system": system, "type": typ, "paths": out}
}

func loadPathKey(system string, nodes ...[2]string) string {
	var b strings.Builder
	b.WriteByte('/')
	for _, n := range nodes {
		b.WriteString(system + "," + n[0] + "," + n[1] + "/")
	}
	return b.String()
}

// loadAppProject is the project a mini app lives under: fixed per id, so grant and revoke name one path.
func loadAppProject(i int) string { return "project" + strconv.Itoa(i%2+1) }

// loadClient is one concurrent writer: a subject it shares with three others, its own ids.
type loadClient struct {
	h     *loadHarness
	rng   *rand.Rand
	subj  loadSubject
	hosts []string // edit_host/view_host instances
	apps  []string // mini apps (with a project ancestor)
	jobs  []string
	bizs  []string // edit_biz_host: biz side
	chost []string // edit_biz_host: host side
	want  *loadWant
}

func newLoadClient(h *loadHarness, seed uint64, n int) *loadClient {
	c := &loadClient{h: h, rng: rand.New(rand.NewPCG(seed, uint64(n))), subj: loadSubjects[n%len(loadSubjects)], want: newLoadWant()}
	for i := range 6 {
		c.hosts = append(c.hosts, fmt.Sprintf("c%02d-h%d", n, i))
		c.apps = append(c.apps, fmt.Sprintf("c%02d-m%d", n, i))
		c.jobs = append(c.jobs, fmt.Sprintf("c%02d-j%d", n, i))
	}
	for i := range 3 {
		c.bizs = append(c.bizs, fmt.Sprintf("c%02d-b%d", n, i))
		c.chost = append(c.chost, fmt.Sprintf("c%02d-x%d", n, i))
	}
	return c
}

// pick returns a random non-empty subset of list (order shuffled), at most most elements.
func (c *loadClient) pick(list []string, most int) []string {
	l := slices.Clone(list)
	c.rng.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	return l[:1+c.rng.IntN(min(most, len(l)))]
}

func (c *loadClient) tr() string {
	if c.rng.IntN(2) == 0 {
		return gw
	}
	return esb
}

func (c *loadClient) op() string {
	if c.rng.IntN(5) < 3 {
		return "grant" // grants a little more often, so policies fill up and revokes have targets
	}
	return "revoke"
}

func (c *loadClient) key(system, action string) loadKey {
	return loadKey{system, c.subj.Type, c.subj.ID, action}
}

// step sends one random request and, once it is acknowledged, applies it to the client's expectation.
func (c *loadClient) step() bool {
	switch c.rng.IntN(7) {
	case 0, 1: // host instances, through batch_instance or batch_path (1-node paths: the same identity)
		op, acts, idList := c.op(), c.pick(loadHostActions, 2), c.pick(c.hosts, 3)
		ep, res := "batch_instance", loadInstances("bk_cmdb", "host", idList)
		if c.rng.IntN(2) == 0 {
			var ps [][][2]string
			for _, id := range idList {
				ps = append(ps, [][2]string{{"host", id}})
			}
			ep, res = "batch_path", loadPaths("bk_cmdb", "host", ps)
		}
		a, ok := c.h.post(c.tr(), ep, ep+":"+op, loadSubjectBody(op, c.subj, "bk_cmdb", acts, []any{res}))
		if !ok || !c.h.checkIDs(a, "bk_cmdb", c.subj, acts) {
			return false
		}
		for _, act := range acts {
			for _, id := range idList {
				c.want.set(c.key("bk_cmdb", act), loadPathKey("bk_cmdb", [2]string{"host", id}), op == "grant")
			}
		}
	case 2, 3: // mini apps under a project: batch_path either way, or a creator grant for a user
		op, acts, idx := c.op(), c.pick(loadAppActions, 2), c.pickIdx(len(c.apps), 3)
		var a loadAnswer
		var ok bool
		if op == "grant" && c.subj.Type == "user" && c.rng.IntN(2) == 0 {
			acts = loadAppActions // the creator config of mini_app
			insts := make([]any, len(idx))
			for i, j := range idx {
				insts[i] = map[string]any{"id": c.apps[j], "name": "m", "ancestors": []any{
					map[string]any{"system": "bk_sops", "type": "project", "id": loadAppProject(j)}}}
			}
			a, ok = c.h.post(c.tr(), "batch_resource_creator_action", "batch_resource_creator_action",
				map[string]any{"system": "bk_sops", "type": "mini_app", "creator": c.subj.ID, "instances": insts})
		} else {
			var ps [][][2]string
			for _, j := range idx {
				ps = append(ps, [][2]string{{"project", loadAppProject(j)}, {"mini_app", c.apps[j]}})
			}
			a, ok = c.h.post(c.tr(), "batch_path", "batch_path:"+op,
				loadSubjectBody(op, c.subj, "bk_sops", acts, []any{loadPaths("bk_sops", "mini_app", ps)}))
		}
		if !ok || !c.h.checkIDs(a, "bk_sops", c.subj, acts) {
			return false
		}
		for _, act := range acts {
			for _, j := range idx {
				path := loadPathKey("bk_sops", [2]string{"project", loadAppProject(j)}, [2]string{"mini_app", c.apps[j]})
				c.want.set(c.key("bk_sops", act), path, op == "grant")
			}
		}
	case 4, 5: // jobs: a creator grant (users) or batch_instance grant (groups); revokes by instance or path
		op, acts, idList := c.op(), c.pick(loadJobActions, 4), c.pick(c.jobs, 3)
		tr := c.tr()
		var a loadAnswer
		var ok bool
		switch {
		case op == "grant" && c.subj.Type == "user":
			acts = loadJobActions
			a, ok = c.h.post(tr, "batch_resource_creator_action", "batch_resource_creator_action",
				map[string]any{"system": "bk_job", "type": "job", "creator": c.subj.ID, "instances": loadInstances("bk_job", "job", idList)["instances"]})
		case op == "revoke" && c.rng.IntN(2) == 0:
			var ps [][][2]string
			for _, id := range idList {
				ps = append(ps, [][2]string{{"job", id}})
			}
			a, ok = c.h.post(tr, "batch_path", "batch_path:revoke", loadSubjectBody(op, c.subj, "bk_job", acts, []any{loadPaths("bk_job", "job", ps)}))
		default:
			a, ok = c.h.post(tr, "batch_instance", "batch_instance:"+op, loadSubjectBody(op, c.subj, "bk_job", acts, []any{loadInstances("bk_job", "job", idList)}))
		}
		if !ok || !c.h.checkIDs(a, "bk_job", c.subj, acts) {
			return false
		}
		for _, act := range acts {
			for _, id := range idList {
				c.want.set(c.key("bk_job", act), loadPathKey("bk_job", [2]string{"job", id}), op == "grant")
			}
		}
	default: // the combined resource edit_biz_host
		op, bizs, hosts := c.op(), c.pick(c.bizs, 2), c.pick(c.chost, 2)
		res := []any{loadInstances("bk_cmdb", "biz", bizs), loadInstances("bk_cmdb", "host", hosts)}
		a, ok := c.h.post(c.tr(), "batch_instance", "batch_instance:"+op, loadSubjectBody(op, c.subj, "bk_cmdb", []string{"edit_biz_host"}, res))
		if !ok || !c.h.checkIDs(a, "bk_cmdb", c.subj, []string{"edit_biz_host"}) {
			return false
		}
		g := loadGroup{"biz": {}, "host": {}}
		for _, id := range bizs {
			g["biz"][loadPathKey("bk_cmdb", [2]string{"biz", id})] = true
		}
		for _, id := range hosts {
			g["host"][loadPathKey("bk_cmdb", [2]string{"host", id})] = true
		}
		if op == "grant" {
			c.want.grantGroup(c.key("bk_cmdb", "edit_biz_host"), g)
		} else {
			c.want.revokeGroup(c.key("bk_cmdb", "edit_biz_host"), g)
		}
	}
	return true
}

func (c *loadClient) pickIdx(n, most int) []int {
	return c.rng.Perm(n)[:1+c.rng.IntN(most)]
}

// anchor grants every shared policy of subj one instance that no client ever revokes, and records the
// policy ids. The anchors are part of the expected store.
func (h *loadHarness) anchor(subj loadSubject, want *loadWant) {
	h.t.Helper()
	const id = "anchor"
	type call struct {
		ep, system string
		actions    []string
		body       map[string]any
	}
	calls := []call{
		{"batch_instance", "bk_cmdb", loadHostActions, loadSubjectBody("grant", subj, "bk_cmdb", loadHostActions,
			[]any{loadInstances("bk_cmdb", "host", []string{id})})},
		{"batch_instance", "bk_cmdb", []string{"edit_biz_host"}, loadSubjectBody("grant", subj, "bk_cmdb", []string{"edit_biz_host"},
			[]any{loadInstances("bk_cmdb", "biz", []string{id}), loadInstances("bk_cmdb", "host", []string{id})})},
		{"batch_path", "bk_sops", loadAppActions, loadSubjectBody("grant", subj, "bk_sops", loadAppActions,
			[]any{loadPaths("bk_sops", "mini_app", [][][2]string{{{"project", "project1"}, {"mini_app", id}}})})},
		{"batch_instance", "bk_job", loadJobActions, loadSubjectBody("grant", subj, "bk_job", loadJobActions,
			[]any{loadInstances("bk_job", "job", []string{id})})},
	}
	for _, c := range calls {
		a, ok := h.post(gw, c.ep, c.ep+":grant", c.body)
		if !ok {
			h.t.FailNow()
		}
		for _, act := range c.actions {
			e := slices.IndexFunc(a.Data, func(e loadEntry) bool { return e.Action.ID == act })
			if e < 0 || a.Data[e].PolicyID <= 0 {
				h.t.Fatalf("anchor grant of %s: %s", act, a.raw)
			}
			h.anchors[loadKey{c.system, subj.Type, subj.ID, act}] = a.Data[e].PolicyID
		}
	}
	want.set(loadKey{"bk_cmdb", subj.Type, subj.ID, "edit_host"}, loadPathKey("bk_cmdb", [2]string{"host", id}), true)
	want.set(loadKey{"bk_cmdb", subj.Type, subj.ID, "view_host"}, loadPathKey("bk_cmdb", [2]string{"host", id}), true)
	want.grantGroup(loadKey{"bk_cmdb", subj.Type, subj.ID, "edit_biz_host"}, loadGroup{
		"biz": {loadPathKey("bk_cmdb", [2]string{"biz", id}): true}, "host": {loadPathKey("bk_cmdb", [2]string{"host", id}): true}})
	for _, act := range loadAppActions {
		want.set(loadKey{"bk_sops", subj.Type, subj.ID, act}, loadPathKey("bk_sops", [2]string{"project", "project1"}, [2]string{"mini_app", id}), true)
	}
	for _, act := range loadJobActions {
		want.set(loadKey{"bk_job", subj.Type, subj.ID, act}, loadPathKey("bk_job", [2]string{"job", id}), true)
	}
}

// readBackendIDs reads the policy list of one action and returns subject -> backend id.
func (h *loadHarness) readBackendIDs(system, action string) (map[string]int64, bool) {
	h.t.Helper()
	h.count("policy_list")
	req, _ := http.NewRequest(http.MethodGet, h.url+"/api/v1/systems/"+system+"/policies?page_size=500&action_id="+action, nil)
	req.Header.Set("X-Bkapi-Authorization", goodAuth)
	resp, err := h.client.Do(req)
	if err != nil {
		h.errorf("policy list: %v", err)
		return nil, false
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	var body struct {
		Code int `json:"code"`
		Data struct {
			Count   int `json:"count"`
			Results []struct {
				ID      int64 `json:"id"`
				Subject struct{ Type, ID string }
			} `json:"results"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &body); err != nil || resp.StatusCode != http.StatusOK || body.Code != 0 {
		h.errorf("policy list of %s: HTTP %d %s", action, resp.StatusCode, b)
		return nil, false
	}
	ids := map[string]int64{}
	for _, r := range body.Data.Results {
		ids[r.Subject.Type+"/"+r.Subject.ID] = r.ID
	}
	if body.Data.Count != len(ids) {
		h.errorf("policy list of %s: count %d for %d distinct subjects: %s", action, body.Data.Count, len(ids), b)
		return nil, false
	}
	return ids, true
}

func loadSeed(t *testing.T) uint64 {
	seed := uint64(20260101)
	if v := os.Getenv(loadSeedEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", loadSeedEnv, v, err)
		}
		seed = n
	}
	t.Logf("seed %d (set %s to change it)", seed, loadSeedEnv)
	return seed
}

func TestLoadOverlappingClients(t *testing.T) {
	seed := loadSeed(t)
	state := filepath.Join(loadStateDir(t), "state.json")
	s := newServer(t, sandbox.WithStateFile(state))
	ts := httptest.NewServer(s)
	defer ts.Close()
	h := &loadHarness{t: t, url: ts.URL, sent: map[string]int{}, anchors: map[loadKey]int64{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadClients + 4}}}
	defer h.client.CloseIdleConnections()

	anchors := newLoadWant()
	for _, subj := range loadSubjects {
		h.anchor(subj, anchors)
	}
	// The backend ids the read API shows for anchored policies: also stable throughout.
	readActions := [][2]string{{"bk_cmdb", "edit_host"}, {"bk_job", "list"}, {"bk_sops", "mini_app_view"}}
	backendIDs := map[[2]string]map[string]int64{}
	for _, ra := range readActions {
		ids, ok := h.readBackendIDs(ra[0], ra[1])
		if !ok || len(ids) != len(loadSubjects) {
			t.Fatalf("backend ids of %v before the load: %v", ra, ids)
		}
		backendIDs[ra] = ids
	}

	clients := make([]*loadClient, loadClients)
	for i := range clients {
		clients[i] = newLoadClient(h, seed, i)
	}
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			for range loadSteps {
				if h.failed.Load() || !c.step() {
					return
				}
			}
		})
	}
	// A reader during the load: the anchored policies are in every list with the same backend ids, and
	// the inspection route always shows the anchored policy_ids.
	done := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if h.failed.Load() {
				return
			}
			ra := readActions[i%len(readActions)]
			ids, ok := h.readBackendIDs(ra[0], ra[1])
			if !ok {
				return
			}
			for subj, id := range backendIDs[ra] {
				if ids[subj] != id {
					h.errorf("during the load, the policy list of %v shows %s with backend id %d, want %d", ra, subj, ids[subj], id)
					return
				}
			}
			for _, p := range s.Policies(sandbox.PolicyFilter{}).Policies {
				k := loadKey{p.System, p.Subject.Type, p.Subject.ID, p.Action}
				if p.PolicyID != h.anchors[k] {
					h.errorf("during the load, %+v has policy_id %d, want %d", k, p.PolicyID, h.anchors[k])
					return
				}
			}
		}
	})
	wg.Wait()
	close(done)
	readers.Wait()
	if t.Failed() {
		return
	}

	// The final store is exactly the anchors plus what each client left.
	want := map[loadKey]string{}
	for _, w := range append([]*loadWant{anchors}, loadWants(clients)...) {
		for k, ps := range w.paths {
			want[k] = loadJoinSorted(want[k], maps.Keys(ps))
		}
		for k, gs := range w.groups {
			for _, g := range gs {
				want[k] = loadJoinSorted(want[k], func(yield func(string) bool) { yield(g.canonical()) })
			}
		}
	}
	final := s.Policies(sandbox.PolicyFilter{})
	got := map[loadKey]string{}
	for _, p := range final.Policies {
		k := loadKey{p.System, p.Subject.Type, p.Subject.ID, p.Action}
		if p.PolicyID != h.anchors[k] || p.ExpiredAt != loadPermanent || p.Any {
			t.Errorf("policy %+v: id %d (anchored %d), expired_at %d, any %v", k, p.PolicyID, h.anchors[k], p.ExpiredAt, p.Any)
		}
		var items []string
		items = append(items, p.Paths...)
		for _, g := range p.Groups {
			b, _ := json.Marshal(g)
			items = append(items, string(b))
		}
		got[k] = loadJoinSorted(got[k], slices.Values(items))
	}
	for k := range loadMergeKeys(want, got) {
		if got[k] != want[k] {
			t.Errorf("final store, %+v:\n got %s\nwant %s", k, got[k], want[k])
		}
	}

	// The stats count every request, by kind, and no error.
	st := s.Stats()
	total := 0
	for key, n := range h.sent {
		total += n
		if st.Requests[key] != n {
			t.Errorf("stats %s = %d, sent %d", key, st.Requests[key], n)
		}
	}
	if st.Total != total || st.Errors != 0 {
		t.Errorf("stats total %d errors %d, sent %d: %+v", st.Total, st.Errors, total, st)
	}
	t.Logf("%d requests: %v", total, h.sent)

	// The inspection route and a sandbox restarted from the state file show the same store.
	resp, err := http.Get(ts.URL + "/_sandbox/policies")
	if err != nil {
		t.Fatal(err)
	}
	overHTTP, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	inMemory, _ := json.Marshal(final)
	if string(bytes.TrimSpace(overHTTP)) != string(inMemory) {
		t.Errorf("GET /_sandbox/policies differs from Policies():\n%s\n%s", overHTTP, inMemory)
	}
	if restarted := policies(t, newServer(t, sandbox.WithStateFile(state)), sandbox.PolicyFilter{}); restarted != string(inMemory) {
		t.Errorf("state file does not hold the final store:\n%s\n%s", restarted, inMemory)
	}
}

// loadStateDir is where the load test keeps its state file: in memory (tmpfs) when the machine has
// one. Every change is fsynced, and a thousand fsyncs on a busy disk take tens of seconds; this test is
// about concurrency, the kill test in cmd/bkiam-sandbox covers durability on a real disk.
func loadStateDir(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "bkiam-load-"); err == nil {
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

func loadWants(clients []*loadClient) []*loadWant {
	out := make([]*loadWant, len(clients))
	for i, c := range clients {
		out[i] = c.want
	}
	return out
}

// loadJoinSorted adds items to a space-joined sorted list: the comparable form of a policy's content.
func loadJoinSorted(list string, items iter.Seq[string]) string {
	all := slices.Collect(items)
	if list != "" {
		all = append(all, strings.Split(list, " ")...)
	}
	slices.Sort(all)
	return strings.Join(all, " ")
}

func loadMergeKeys(a, b map[loadKey]string) map[loadKey]bool {
	out := map[loadKey]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
