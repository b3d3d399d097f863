package sandbox

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The backend read routes (bk-iam pkg/api/open), reached through the gateway only. They answer the
// backend envelope {code, message, data} with HTTP 200 for errors too, and speak the backend's own
// policy ids, never the SaaS policy_id.

var (
	reListV1   = regexp.MustCompile(`^/api/v1/systems/([^/]+)/policies$`)
	reListOpen = regexp.MustCompile(`^/api/v1/open/systems/([^/]+)/policies(/?)$`)
	reGetV1    = regexp.MustCompile(`^/api/v1/systems/([^/]+)/policies/([^/]+)$`)
)

type backendBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

// serveRead serves the backend read routes; false when the path is not one of them.
func (s *Server) serveRead(c *call) bool {
	if c.r.Method != http.MethodGet {
		return false
	}
	p := c.r.URL.Path
	var system, backendID string
	list := false
	switch {
	case reListV1.MatchString(p):
		system, list = reListV1.FindStringSubmatch(p)[1], true
	case reListOpen.MatchString(p):
		// The gateway registers this route without the trailing slash and forwards it without one,
		// whatever the client sent; the backend serves only the slashed path and answers 301 with a
		// backend-relative Location. So through a gateway the route never answers a list. The
		// gateway authenticates before proxying.
		if _, ok := s.gatewayAuth(c); !ok {
			return true
		}
		target := strings.TrimSuffix(p, "/") + "/"
		if c.r.URL.RawQuery != "" {
			target += "?" + c.r.URL.RawQuery
		}
		c.w.Header().Set("Location", target)
		c.w.WriteHeader(http.StatusMovedPermanently)
		return true
	case reGetV1.MatchString(p):
		m := reGetV1.FindStringSubmatch(p)
		system, backendID = m[1], m[2]
	default:
		return false
	}
	key := "policy_get"
	if list {
		key = "policy_list"
	}
	failed := true
	defer func() { s.stats.record(key, 0, failed) }()
	if !s.sleepLatency(c.r) {
		return true
	}
	spared := s.faults.sparesReads()
	if !spared && !s.takeReadFault(c) {
		return true
	}
	app, ok := s.gatewayAuth(c)
	if !ok {
		return true
	}
	var data any
	var code int
	var msg string
	if list {
		data, code, msg = s.policyList(app, system, c.r)
	} else {
		data, code, msg = s.policyGet(app, system, backendID)
	}
	if code != 0 {
		c.writeJSON(http.StatusOK, backendBody{Code: code, Message: msg, Data: map[string]any{}})
		return true
	}
	failed = false
	if !spared {
		s.faults.success()
	}
	c.writeJSON(http.StatusOK, backendBody{Code: 0, Message: "ok", Data: data})
	return true
}

// backendSystem checks the system, then the client: the backend's order.
func (s *Server) backendSystem(app *App, system string) (*System, int, string) {
	sys := s.model.systems[system]
	if sys == nil {
		return nil, codeBackendNotFound, fmt.Sprintf("not found:system(%s) not exists", system)
	}
	if !app.clientOf(system) {
		return nil, codeBackendUnauthorized, fmt.Sprintf("unauthorized:app(%s) is not allowed to call system (%s) api", app.Code, system)
	}
	return sys, 0, ""
}

// queryInt reads an optional integer query parameter.
func queryInt(r *http.Request, name string, def int64) (int64, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

type policyRow struct {
	Version   string         `json:"version"`
	ID        int64          `json:"id"`
	Subject   backendSubject `json:"subject"`
	Expr      expr           `json:"expression"`
	ExpiredAt int64          `json:"expired_at"`
}

type backendSubject struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

func (s *Server) policyList(app *App, system string, r *http.Request) (any, int, string) {
	sys, code, msg := s.backendSystem(app, system)
	if code != 0 {
		return nil, code, msg
	}
	actionID := r.URL.Query().Get("action_id")
	if actionID == "" {
		return nil, codeBackendBadRequest, "bad request:action_id is required"
	}
	action := sys.actions[actionID]
	if action == nil {
		return nil, codeBackendNotFound, fmt.Sprintf("not found:action(%s) of system(%s) not exists", actionID, system)
	}
	q := r.URL.Query()
	kind := q.Get("type")
	switch kind {
	case "":
		kind = "abac"
	case "abac", "rbac":
	default:
		return nil, codeBackendBadRequest, fmt.Sprintf("bad request:type %q is not abac or rbac", kind)
	}
	now := s.now()
	y, m, d := now.Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, now.Location()).Unix()
	page, okP := queryInt(r, "page", 1)
	size, okS := queryInt(r, "page_size", 100)
	ts, okT := queryInt(r, "timestamp", 0)
	switch {
	case !okP || page < 1:
		return nil, codeBackendBadRequest, "bad request:page must be an integer >= 1"
	case !okS || size < 10 || size > 500:
		return nil, codeBackendBadRequest, "bad request:page_size must be an integer between 10 and 500"
	case !okT || ts < 0:
		return nil, codeBackendBadRequest, "bad request:timestamp must be a non-negative integer"
	case ts == 0:
		ts = today // absent or 0: today 00:00
	case ts < today-24*3600:
		return nil, codeBackendBadRequest, "bad request:timestamp is more than one day before today"
	}
	s.store.mu.Lock()
	_ = s.store.purgeExpiredLocked(now) // a failed save keeps the state as it was; the list says so
	var matched []*policy
	for _, p := range s.store.policies {
		// Rows expiring exactly at the timestamp are gone (expired_at > timestamp).
		if p.Key.System == system && p.Key.Action == actionID && p.ExpiredAt > ts && p.rbac(action) == (kind == "rbac") {
			matched = append(matched, p)
		}
	}
	sort.Slice(matched, func(i, j int) bool { return matched[i].BackendID < matched[j].BackendID })
	var results []policyRow // null, not [], when empty or past the end
	start := (page - 1) * size
	for i := start; i < int64(len(matched)) && i < start+size; i++ {
		p := matched[i]
		id := p.BackendID
		if kind == "rbac" {
			id += rbacIDOffset
		}
		results = append(results, policyRow{Version: "1", ID: id, ExpiredAt: p.ExpiredAt, Expr: p.expression(action),
			Subject: backendSubject{Type: p.Key.SubjectType, ID: p.Key.SubjectID, Name: p.Key.SubjectID}})
	}
	s.store.mu.Unlock()
	return map[string]any{
		"metadata": map[string]any{"system": system, "action": actionRef{ID: actionID}, "timestamp": ts},
		"count":    len(matched),
		"results":  results,
	}, 0, ""
}

// rbacIDOffset is added by the backend to the ids of RBAC rows, keeping them apart from ABAC ids.
const rbacIDOffset = 500000000

func (s *Server) policyGet(app *App, system, rawID string) (any, int, string) {
	sys, code, msg := s.backendSystem(app, system)
	if code != 0 {
		return nil, code, msg
	}
	id, err := strconv.ParseInt(rawID, 10, 64)
	if err != nil {
		return nil, codeBackendBadRequest, fmt.Sprintf("bad request:policy id %q is not an integer", rawID)
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	_ = s.store.purgeExpiredLocked(s.now()) // as the list does
	for _, p := range s.store.policies {
		if p.BackendID != id || p.rbac(s.model.systems[p.Key.System].actions[p.Key.Action]) {
			continue // an RBAC-stored policy has no ABAC row to get
		}
		if p.Key.System != system {
			return nil, codeBackendForbidden, fmt.Sprintf("no permission:system(%s) can't access system(%s)'s policy", system, p.Key.System)
		}
		return map[string]any{
			"version": "1", "id": p.BackendID, "system": system,
			"subject":    backendSubject{Type: p.Key.SubjectType, ID: p.Key.SubjectID, Name: p.Key.SubjectID},
			"action":     actionRef{ID: p.Key.Action},
			"expression": p.expression(sys.actions[p.Key.Action]),
			"expired_at": p.ExpiredAt,
		}, 0, ""
	}
	// The backend's prp.ErrPolicyNotFound, the same words whatever the id or system (as recorded
	// from a real IAM).
	return nil, codeBackendNotFound, "not found:policy not found"
}
