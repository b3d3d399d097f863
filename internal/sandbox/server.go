package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is the sandbox: an http.Handler serving both transports, the read routes and the /_sandbox
// control routes over one store. Create it with New; it is safe for concurrent use.
type Server struct {
	model     *Model
	now       func() time.Time
	statePath string
	maxBody   int64

	store  *store
	faults faultState
	stats  statsState

	// turns serialise the calls of each subject (see subjectTurn).
	turnsMu sync.Mutex
	turns   map[string]chan struct{}

	// busy counts the authorization calls being served, a slow one
	// whose client gave up included (see WaitIdle).
	busy atomic.Int64

	// gmDeleteDelay overrides the model's grade-manager delete delay (WithGradeManagerDeleteDelay).
	gmDeleteDelay *time.Duration
	// cleanupDelay overrides the model's leaver-cleanup delay (WithCleanupDelay).
	cleanupDelay *time.Duration

	// deletedGroups holds the model groups removed by DeleteGroup (id -> struct{}), until a reset.
	deletedGroups sync.Map
	// frozen holds the subjects frozen by Freeze (frozenKey -> struct{}), until a reset: the
	// backend's subject blacklist.
	frozen sync.Map
}

// Option configures a Server.
type Option func(*Server)

// WithModel serves m instead of the embedded default model. m must come from LoadModel,
// LoadModelFile or DefaultModel (they validate it and build its indexes).
func WithModel(m *Model) Option { return func(s *Server) { s.model = m } }

// WithNow injects the clock used for expiry (default time.Now), so tests can move time.
func WithNow(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// WithStateFile persists policies to path: loaded by New, rewritten atomically on every change.
func WithStateFile(path string) Option { return func(s *Server) { s.statePath = path } }

// WithGradeManagerDeleteDelay sets how long a grade-manager delete of the management API takes to
// be carried out, overriding the model's limits.grade_manager_delete_delay_ms; 0 carries it out at
// once. With WithNow, the delay runs on the injected clock.
func WithGradeManagerDeleteDelay(d time.Duration) Option {
	return func(s *Server) { s.gmDeleteDelay = &d }
}

// WithMaxBodyBytes bounds request bodies (default 10 MiB).
func WithMaxBodyBytes(n int64) Option { return func(s *Server) { s.maxBody = n } }

// New builds a Server. With a state file, its policies are loaded; a state file that exists but
// cannot be read or parsed is an error (never silently emptied); one that does not exist yet starts
// empty and is created on the first change.
func New(opts ...Option) (*Server, error) {
	s := &Server{now: time.Now, maxBody: 10 << 20, turns: map[string]chan struct{}{}}
	for _, o := range opts {
		o(s)
	}
	if s.model == nil {
		s.model = DefaultModel()
	}
	if s.model.systems == nil {
		return nil, fmt.Errorf("sandbox: model was not loaded with LoadModel/DefaultModel")
	}
	s.store = newStore()
	s.store.groupFloor = s.model.maxGroupID()
	s.store.mgmt = newMgmtState(s.store.groupFloor)
	s.stats.s = newStats()
	if s.statePath != "" {
		if err := s.store.loadState(s.statePath); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		path := s.statePath
		s.store.persist = func() error { return s.store.saveLocked(path) }
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	if s.store.seedTemplatesLocked(s.model) && s.store.persist != nil {
		if err := s.store.persist(); err != nil {
			return nil, fmt.Errorf("sandbox: save the model's template policies: %w", err)
		}
	}
	return s, nil
}

// Model returns the model the server serves (treat it as read-only).
func (s *Server) Model() *Model { return s.model }

// Policies returns the stored policies matching f: the structure of GET /_sandbox/policies.
func (s *Server) Policies(f PolicyFilter) PolicyList { return s.store.view(f, s.model, s.now()) }

// Stats returns the request counters: the structure of GET /_sandbox/stats.
func (s *Server) Stats() Stats { return s.stats.get() }

// WaitIdle waits until no authorization call is being served: calls a
// client gave up on (a slow fault, or a client's time-out under load) are
// still carried out, and a test that compares state with the store after
// a failed apply must let them land first. It returns ctx's error if ctx
// ends first.
func (s *Server) WaitIdle(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for s.busy.Load() > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("sandbox: %d calls still being served: %w", s.busy.Load(), ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// SetFaults replaces the injected faults; the zero Faults clears them.
func (s *Server) SetFaults(f Faults) error {
	if err := f.validate(); err != nil {
		return fmt.Errorf("faults: %w", err)
	}
	s.faults.set(f)
	return nil
}

// AddTemplatePolicy gives a group a policy row held through a permission template (see
// System.TemplatePolicies): a test's way to put a template row beside a custom policy, on a model
// group or on a group of the management API (as the web UI binds a template to a grade manager's
// group; the management API's own bind route is not emulated). A row for the same group, action
// and template is replaced; the group's delete takes it away.
func (s *Server) AddTemplatePolicy(system string, tp TemplatePolicy) error {
	p, err := s.model.templatePolicy(system, tp, s.groupExists)
	if err != nil {
		return fmt.Errorf("template policy: %w", err)
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	t := s.store.begin()
	t.put(p.Key, p)
	if e := t.commit(); e != nil {
		return fmt.Errorf("template policy: %s", e.message)
	}
	return nil
}

// DeleteGroup deletes a user group as IAM's group management does: its policies, custom and
// template rows, go with it, and from then on it is a group IAM does not know (a grant fails, a
// revoke answers OK with nothing). A reset brings the model's groups back.
func (s *Server) DeleteGroup(id string) error {
	if !s.model.groups[id] {
		return fmt.Errorf("delete group: %q is not a group of the model", id)
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	t := s.store.begin()
	for k := range s.store.policies {
		if k.SubjectType == "group" && k.SubjectID == id {
			t.put(k, nil)
		}
	}
	if e := t.commit(); e != nil {
		return fmt.Errorf("delete group: %s", e.message)
	}
	s.deletedGroups.Store(id, struct{}{})
	return nil
}

// groupExists reports whether IAM knows the group: a model group not deleted since the last reset,
// or a group of the management API that still exists.
func (s *Server) groupExists(id string) bool {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	_ = st.purgeMgmtLocked(s.now())
	return s.groupKnownLocked(id)
}

// Reset clears policies (and the state file's content), stats and faults; the model, with its
// template policies, is kept.
func (s *Server) Reset() error {
	s.faults.set(Faults{})
	s.stats.reset()
	s.deletedGroups.Clear()
	s.frozen.Clear()
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	s.store.resetLocked()
	s.store.seedTemplatesLocked(s.model)
	if s.statePath != "" {
		if err := s.store.saveLocked(s.statePath); err != nil {
			return fmt.Errorf("reset: %w", err)
		}
	}
	return nil
}

// Save writes the state file now (a no-op without one). Every change is already saved; the command
// calls this once more on shutdown.
func (s *Server) Save() error {
	if s.statePath == "" {
		return nil
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	return s.store.saveLocked(s.statePath)
}

const (
	esbPrefix  = "/api/c/compapi/v2/iam/authorization/"
	gwPrefix   = "/api/v1/open/authorization/"
	gwAPIRoot  = "/api/v1/"
	ctrlPrefix = "/_sandbox/"
)

type endpoint string

const (
	epInstance endpoint = "batch_instance"
	epCreator  endpoint = "batch_resource_creator_action"
	epPath     endpoint = "batch_path"
)

var endpoints = map[string]endpoint{"batch_instance/": epInstance, "batch_resource_creator_action/": epCreator, "batch_path/": epPath}

// ServeHTTP routes a request. Every answer echoes the client's X-Request-Id (one is generated when
// absent, as the backend does).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rid := r.Header.Get("X-Request-Id")
	if rid == "" {
		rid = newRequestID()
	}
	w.Header().Set("X-Request-Id", rid)
	p := r.URL.Path
	if !strings.HasPrefix(p, ctrlPrefix) {
		s.runDueCleanups() // before any route reads what a leaver cleanup (admin_cleanup.go) changes
	}
	switch {
	case strings.HasPrefix(p, ctrlPrefix):
		s.serveControl(w, r)
	case strings.HasPrefix(p, esbPrefix):
		c := &call{tr: esb, w: w, r: r, esbID: newRequestID()}
		ep, ok := endpoints[strings.TrimPrefix(p, esbPrefix)]
		if !ok || r.Method != http.MethodPost {
			c.writeESBError(codeESBAppUser, "Component not found: "+r.Method+" "+p)
			return
		}
		s.serveAuthz(c, ep)
	case strings.HasPrefix(p, gwAPIRoot), strings.HasPrefix(p, mgmtPrefix), strings.HasPrefix(p, accessV2Root):
		c := &call{tr: gateway, w: w, r: r}
		w.Header().Set("X-Bkapi-Request-Id", newUUID())
		if ep, ok := endpoints[strings.TrimPrefix(p, gwPrefix)]; ok && strings.HasPrefix(p, gwPrefix) && r.Method == http.MethodPost {
			s.serveAuthz(c, ep)
			return
		}
		if s.serveRead(c) || s.serveModel(c) || s.serveAccess(c) || s.serveUserGroups(c) || s.serveAdmin(c) || s.serveManagement(c) {
			return
		}
		c.writeGatewayError(http.StatusNotFound, codeGWNotFound, "API not found [method="+r.Method+" path="+p+"]")
	default:
		http.NotFound(w, r)
	}
}

// newRequestID returns 32 hex characters, the form the backend accepts.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func newUUID() string {
	id := newRequestID()
	return id[0:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:]
}
