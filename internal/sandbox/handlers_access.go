package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// The backend's access checks (bk-iam pkg/api/policy): may this subject do this? Gateway only,
// the backend envelope, the app's credentials alone (it must be a client of the system). What a
// subject holds is counted in access.go. They are reads: the faults treat them as the policy
// reads (spare_reads spares them), and they change nothing.

// accessV2Root holds the v2 access checks, beside the gateway's /api/v1/ routes.
const accessV2Root = "/api/v2/policy/"

var reAccessV2 = regexp.MustCompile(`^/api/v2/policy/systems/([^/]+)/(auth|auth_by_actions|query|query_by_actions)/$`)

const authByResourcesPath = "/api/v1/policy/auth_by_resources"

// managerMessage is the backend's message for a subject allowed as a manager, without any policy
// being read.
const managerMessage = "ok, as super_manager or system_manager"

// Binding limits of the backend's request types.
const (
	maxAuthActions      = 10
	maxAuthResourceSets = 100
)

// accessBody is the request body of every access check; each route reads its own fields.
type accessBody struct {
	System        string             `json:"system"`
	Subject       subject            `json:"subject"`
	Action        actionRef          `json:"action"`
	Actions       []actionRef        `json:"actions"`
	Resources     []accessResource   `json:"resources"`
	ResourcesList [][]accessResource `json:"resources_list"`
}

// accessCall is one access check past the gateway: its route, system and body, and the request
// id the backend puts in a system error's message.
type accessCall struct {
	s       *Server
	route   string // auth, auth_by_actions, query, query_by_actions, auth_by_resources
	system  string
	body    accessBody
	now     int64
	request string
	// debug asks for the backend's debug tree (?debug, any value; the v2 routes); force bypasses its
	// caches (?force), which changes the expiry test of the rows (rowUnexpired).
	debug, force bool
}

// accessAnswer is the backend's answer before the transport: data and message, or an error; with
// ?debug, the debug tree to send beside them (nil for none).
type accessAnswer struct {
	code  int
	msg   string
	data  any
	debug *debugEntry
}

// debugBody is the backend envelope with its debug tree.
type debugBody struct {
	Code    int         `json:"code"`
	Message string      `json:"message"`
	Data    any         `json:"data"`
	Debug   *debugEntry `json:"debug"`
}

func accessOK(data any) accessAnswer { return accessAnswer{msg: "ok", data: data} }

// asManager is the answer for a manager: the same shape, the backend's own message.
func asManager(data any) accessAnswer { return accessAnswer{msg: managerMessage, data: data} }

func accessError(code int, msg string) accessAnswer { return accessAnswer{code: code, msg: msg} }

// badAccess is the backend's 1901400, its text after "bad request:".
func badAccess(text string) accessAnswer {
	return accessError(codeBackendBadRequest, "bad request:"+text)
}

func invalidAction() accessAnswer { return badAccess("action.id invalid") }

// systemError is the backend's 1901500, whose message carries the request id and the chain of
// the failed layers.
func (ac *accessCall) systemError(chain string) accessAnswer {
	return accessError(backendSystemError, fmt.Sprintf("system error[request_id=%s]: %s", ac.request, chain))
}

// serveAccess serves the access checks; false when the path is not one of them.
func (s *Server) serveAccess(c *call) bool {
	if c.r.Method != http.MethodPost {
		return false
	}
	var system, route string
	if m := reAccessV2.FindStringSubmatch(c.r.URL.Path); m != nil {
		system, route = m[1], m[2]
	} else if c.r.URL.Path == authByResourcesPath {
		route = "auth_by_resources"
	} else {
		return false
	}
	failed := true
	defer func() { s.stats.record("policy_"+route, 0, failed) }()
	raw, readErr := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, s.maxBody))
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
	ac := &accessCall{s: s, route: route, system: system, request: c.w.Header().Get("X-Request-Id")}
	if route != "auth_by_resources" {
		q := c.r.URL.Query()
		_, ac.debug = q["debug"]
		_, ac.force = q["force"]
	}
	a := ac.serve(app, raw, readErr)
	if a.code != 0 {
		if a.debug != nil {
			// The backend's system error with a debug tree answers HTTP 200 (its
			// SystemErrorJSONResponseWithDebug), where the same error without one is a 500.
			c.writeJSON(http.StatusOK, debugBody{Code: a.code, Message: a.msg, Data: map[string]any{}, Debug: a.debug})
			return true
		}
		c.writeJSON(ac.status(a.code), backendBody{Code: a.code, Message: a.msg, Data: map[string]any{}})
		return true
	}
	failed = false
	if !spared {
		s.faults.success()
	}
	if a.debug != nil {
		c.writeJSON(http.StatusOK, debugBody{Code: 0, Message: a.msg, Data: a.data, Debug: a.debug})
		return true
	}
	c.writeJSON(http.StatusOK, backendBody{Code: 0, Message: a.msg, Data: a.data})
	return true
}

// takeReadFault applies the injected fault due, if any, to a read; false when the call ends
// there: answered with the fault, or its connection dropped (a read has nothing to carry out). A
// slow fault delays the read, which then goes on.
func (s *Server) takeReadFault(c *call) bool {
	f := s.faults.take()
	switch {
	case f == nil:
		return true
	case f.slow != nil:
		time.Sleep(time.Duration(f.slow.DelayMS) * time.Millisecond)
		return true
	case f.drop != nil:
		resetConnection(c.w)
		return false
	}
	s.writeFault(c, f)
	return false
}

// status is the HTTP status of an error: the code's own on the v2 routes, 200 on v1.
func (ac *accessCall) status(code int) int {
	if ac.route == "auth_by_resources" {
		return http.StatusOK
	}
	switch code {
	case codeBackendBadRequest:
		return http.StatusBadRequest
	case codeBackendUnauthorized:
		return http.StatusUnauthorized
	case codeBackendForbidden:
		return http.StatusForbidden
	case codeBackendNotFound:
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// serve answers in the backend's order: on v2 the system and client (a middleware, before the
// body); the body's binding; on v1 the client; then the managers, allowed without a policy read;
// then each action: the action, the resources against it, the subject, its rows.
func (ac *accessCall) serve(app *App, raw []byte, readErr error) accessAnswer {
	s := ac.s
	v1 := ac.route == "auth_by_resources"
	if !v1 {
		if _, code, msg := s.backendSystem(app, ac.system); code != 0 {
			return accessError(code, msg)
		}
	}
	if text := ac.decode(raw, readErr); text != "" {
		return badAccess(text)
	}
	if v1 {
		ac.system = ac.body.System
		if text := clientCheck(s, app, ac.system); text != "" {
			return badAccess(text)
		}
	}
	subj := ac.body.Subject
	if s.isFrozen(subj.Type, subj.ID) {
		// The backend's shouldReturnIfSubjectInBlackList: after the system and client, before
		// the managers and any policy read, on every access check and query route.
		return accessError(codeBackendForbidden, fmt.Sprintf("no permission:subject(type=%s,id=%s) has been frozen", subj.Type, subj.ID))
	}
	if subj.Type == "user" {
		// IAM's subject table compares ids without regard to case: "Alice" is alice.
		ac.body.Subject.ID = s.model.userID(subj.ID)
		subj = ac.body.Subject
	}
	manager := subj.Type == "user" && s.model.manager(ac.system, subj.ID)
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	now := s.now()
	_ = st.purgeExpiredLocked(now) // a failed save keeps the state as it was, as the reads do
	_ = st.purgeMgmtLocked(now)
	ac.now = now.Unix()
	switch ac.route {
	case "auth":
		return ac.auth(manager)
	case "auth_by_actions":
		return ac.authByActions(manager)
	case "query":
		return ac.query(manager)
	case "query_by_actions":
		return ac.queryByActions(manager)
	}
	return ac.authByResources(manager)
}

// clientCheck is the v1 routes' own client check, which answers a bad request.
func clientCheck(s *Server, app *App, system string) string {
	if s.model.systems[system] == nil {
		return fmt.Sprintf("get system(%s) valid clients fail, err=sql: no rows in result set", system)
	}
	if !app.clientOf(system) {
		return fmt.Sprintf("client(%s) can not request system(%s)", app.Code, system)
	}
	return ""
}

// decode binds the body as the backend's request types do: the JSON, then the first field that
// breaks a rule, in the type's field order, in the validator's words ("" when none).
func (ac *accessCall) decode(raw []byte, readErr error) string {
	if readErr != nil {
		return "json decode or validate fail, err=" + readErr.Error()
	}
	err := json.NewDecoder(bytes.NewReader(raw)).Decode(&ac.body)
	switch {
	case errors.Is(err, io.EOF):
		return "EOF, json decode fail"
	case err != nil:
		return "json decode or validate fail, err=" + err.Error()
	}
	b := &ac.body
	var checks []func() string
	switch ac.route {
	case "auth":
		checks = []func() string{b.subjectRule, b.actionRule, b.resourcesRule(true)}
	case "auth_by_actions":
		checks = []func() string{b.subjectRule, b.resourcesRule(true), b.actionsRule(maxAuthActions)}
	case "query":
		checks = []func() string{b.subjectRule, b.actionRule, b.resourcesRule(false)}
	case "query_by_actions":
		checks = []func() string{b.subjectRule, b.resourcesRule(false), b.actionsRule(0)}
	default:
		checks = []func() string{b.systemRule, b.subjectRule, b.actionRule, b.resourcesListRule}
	}
	for _, check := range checks {
		if text := check(); text != "" {
			return text
		}
	}
	return ""
}

func (b *accessBody) systemRule() string {
	if b.System == "" {
		return "System is required"
	}
	return ""
}

func (b *accessBody) subjectRule() string {
	switch {
	case b.Subject.Type == "":
		return "Type is required"
	case b.Subject.ID == "":
		return "ID is required"
	}
	return ""
}

func (b *accessBody) actionRule() string {
	if b.Action.ID == "" {
		return "ID is required"
	}
	return ""
}

// actionsRule: actions must be present ([] passes) and hold at most most (0: no maximum).
func (b *accessBody) actionsRule(most int) func() string {
	return func() string {
		switch {
		case b.Actions == nil:
			return "Actions is required"
		case most > 0 && len(b.Actions) > most:
			return fmt.Sprintf("Actions cannot be longer than %d", most)
		}
		for _, a := range b.Actions {
			if a.ID == "" {
				return "ID is required"
			}
		}
		return ""
	}
}

// resourcesRule: resources must be present when required ([] passes), and every resource whole,
// attribute included ({} passes).
func (b *accessBody) resourcesRule(required bool) func() string {
	return func() string {
		if required && b.Resources == nil {
			return "Resources is required"
		}
		return resourceRule(b.Resources)
	}
}

func (b *accessBody) resourcesListRule() string {
	switch {
	case b.ResourcesList == nil:
		return "ResourcesList is required"
	case len(b.ResourcesList) > maxAuthResourceSets:
		return fmt.Sprintf("ResourcesList cannot be longer than %d", maxAuthResourceSets)
	}
	for _, rs := range b.ResourcesList {
		if text := resourceRule(rs); text != "" {
			return text
		}
	}
	return ""
}

func resourceRule(rs []accessResource) string {
	for _, r := range rs {
		switch {
		case r.System == "":
			return "System is required"
		case r.Type == "":
			return "Type is required"
		case r.ID == "":
			return "ID is required"
		case r.Attribute == nil:
			return "Attribute is required"
		}
	}
	return ""
}

// action looks an action of the call's system up; nil when the system has none of that id.
func (ac *accessCall) action(id string) *Action {
	return ac.s.model.systems[ac.system].actions[id]
}

// resourceMismatch is the system error of resources that do not match the action, and the
// decision point's part of it (what its debug entry records).
func (ac *accessCall) resourceMismatch(handler, layer, action string) (accessAnswer, string) {
	pdp := fmt.Sprintf("[PDP:%s] ValidateActionResource systemID=`%s`, actionID=`%s` fail, "+
		"request resources not match action => validateActionResource fail", layer, ac.system, action)
	return ac.systemError(fmt.Sprintf("[Handler:%s] systemID=`%s` => %s", handler, ac.system, pdp)), pdp
}

// allowed decides one action for the call's subject and resources, after checking them; with
// ?debug, trace receives the action's debug entry (also when the resources do not match).
func (ac *accessCall) allowed(id, handler string, trace func(*debugEntry)) (bool, *accessAnswer) {
	a := ac.action(id)
	if a == nil {
		e := invalidAction()
		return false, &e
	}
	if !matchesAction(a, ac.body.Resources) {
		e, pdp := ac.resourceMismatch(handler, "Eval", id)
		if ac.debug {
			trace(ac.actionEntry(actionTrace{id: id, a: a, fail: pdp}))
		}
		return false, &e
	}
	rows := ac.s.effectiveRowsLocked(ac.system, id, ac.body.Subject, ac.now, ac.force)
	if ac.debug {
		trace(ac.actionEntry(actionTrace{id: id, a: a}))
	}
	return allowedBy(rows, a, ac.body.Resources, time.Unix(ac.now, 0)), nil
}

// auth's debug tree is the action's entry itself, where the batch routes hang one entry per action
// under a root.
func (ac *accessCall) auth(manager bool) accessAnswer {
	if manager {
		return asManager(map[string]bool{"allowed": true})
	}
	var entry *debugEntry
	ok, e := ac.allowed(ac.body.Action.ID, "AuthV2", func(d *debugEntry) { entry = d })
	if e != nil {
		e.debug = entry
		return *e
	}
	a := accessOK(map[string]bool{"allowed": ok})
	a.debug = entry
	return a
}

// authByActions: a system error answers the root as it stands, without the failing action's
// entry (the backend adds an entry only after its action succeeded).
func (ac *accessCall) authByActions(manager bool) accessAnswer {
	data := map[string]bool{}
	root := ac.debugRoot()
	for _, a := range ac.body.Actions {
		if manager {
			data[a.ID] = true
			continue
		}
		var entry *debugEntry
		ok, e := ac.allowed(a.ID, "BatchAuthV2ByActions", func(d *debugEntry) { entry = d })
		if e != nil {
			if e.code == backendSystemError {
				e.debug = root
			}
			return *e
		}
		data[a.ID] = ok
		if root != nil {
			root.SubDebugs = append(root.SubDebugs, entry)
		}
	}
	if manager {
		return asManager(data)
	}
	a := accessOK(data)
	a.debug = root
	return a
}

// debugRoot is the root of a batch route's debug tree, nil without ?debug.
func (ac *accessCall) debugRoot() *debugEntry {
	if !ac.debug {
		return nil
	}
	return newDebugEntry(ac.s.now())
}

// actionCondition is one row of query_by_actions' answer.
type actionCondition struct {
	Action    actionRef `json:"action"`
	Condition expr      `json:"condition"`
}

// isQuery reports whether the call is one of the queries, which answer conditions.
func (ac *accessCall) isQuery() bool { return ac.route == "query" || ac.route == "query_by_actions" }

// checksRemote reports whether a query checks its resources against the action's types of other
// systems (matchesRemote): the batch query always does, the single query only when resources are
// given (bk-iam QueryV2's willCheckRemoteResource).
func (ac *accessCall) checksRemote() bool {
	return ac.route == "query_by_actions" || len(ac.body.Resources) > 0
}

// condition is the effective expression of action a for the call's subject and resources: its
// rows, each partly evaluated against the resources, merged. A resource of another system is
// evaluated by what the caller sent, where the backend asks that system's provider for the
// attributes its rows name (fillRemoteResourceAttrs; the id needs no call).
func (ac *accessCall) condition(a *Action) expr {
	rows := ac.s.effectiveRowsLocked(ac.system, a.ID, ac.body.Subject, ac.now, ac.force)
	set := newResourceSet(a, ac.body.Resources)
	var conds []expr
	for _, p := range rows {
		if ok, left := partialRow(p, a, set, time.Unix(ac.now, 0)); ok {
			conds = append(conds, left)
		}
	}
	return effectiveExpression(conds)
}

// query answers one action's effective expression, the data itself. An unknown action is a bad
// request here (QueryV2 tells pdp.ErrInvalidAction apart), and its answer has no debug tree; the
// resources are checked against the action's types of other systems only when some are given.
// With ?debug the tree is the action's entry, as auth's.
func (ac *accessCall) query(manager bool) accessAnswer {
	if manager {
		return asManager(anyLeaf(""))
	}
	a := ac.action(ac.body.Action.ID)
	if a == nil {
		return badAccess("[PDP:Query] queryAndPartialEvalConditions fail => action.id invalid")
	}
	if ac.checksRemote() && !matchesRemote(a, ac.body.Resources) {
		e, pdp := ac.resourceMismatch("Query", "queryAndPartialEvalConditions", a.ID)
		if ac.debug {
			e.debug = ac.actionEntry(actionTrace{id: a.ID, a: a, fail: pdp})
		}
		return e
	}
	cond := ac.condition(a)
	answer := accessOK(cond)
	if ac.debug {
		answer.debug = ac.actionEntry(actionTrace{id: a.ID, a: a, answer: cond})
	}
	return answer
}

// queryByActions answers each action's effective expression. Unlike the auth routes, the
// backend's batch query does not tell an unknown action from a failure: it is a system error. It
// always checks the resources against each action's types of other systems, so an action related
// to one fails the whole call unless the resources give it. With ?debug a system error answers
// the failing action's entry alone, as the backend does.
func (ac *accessCall) queryByActions(manager bool) accessAnswer {
	data := []actionCondition{}
	root := ac.debugRoot()
	fail := func(e accessAnswer, tr actionTrace) accessAnswer {
		if ac.debug {
			e.debug = ac.actionEntry(tr)
		}
		return e
	}
	for _, ref := range ac.body.Actions {
		if manager {
			data = append(data, actionCondition{Action: ref, Condition: anyLeaf("")})
			continue
		}
		a := ac.action(ref.ID)
		if a == nil {
			pdp := "[PDP:Query] queryAndPartialEvalConditions fail => action.id invalid"
			return fail(ac.systemError(fmt.Sprintf("[Handler:BatchQueryV2ByActions] systemID=`%s`, request.Action.ID=`%s` => %s",
				ac.system, ref.ID, pdp)), actionTrace{id: ref.ID, fail: pdp})
		}
		if !matchesRemote(a, ac.body.Resources) {
			e, pdp := ac.resourceMismatch("BatchQueryV2ByActions", "queryAndPartialEvalConditions", ref.ID)
			return fail(e, actionTrace{id: ref.ID, a: a, fail: pdp})
		}
		cond := ac.condition(a)
		data = append(data, actionCondition{Action: ref, Condition: cond})
		if root != nil {
			root.SubDebugs = append(root.SubDebugs, ac.actionEntry(actionTrace{id: ref.ID, a: a, answer: cond}))
		}
	}
	if manager {
		return asManager(data)
	}
	a := accessOK(data)
	a.debug = root
	return a
}

// authByResources decides one action for each resource set. The backend reads the subject's rows
// once and evaluates every set against them without checking it against the action: a set that
// does not match is not an error, it simply matches nothing it lacks.
func (ac *accessCall) authByResources(manager bool) accessAnswer {
	data := map[string]bool{}
	if manager {
		for _, rs := range ac.body.ResourcesList {
			data[resourceSetKey(rs)] = true
		}
		return asManager(data)
	}
	a := ac.action(ac.body.Action.ID)
	if a == nil {
		return invalidAction()
	}
	rows := ac.s.effectiveRowsLocked(ac.system, a.ID, ac.body.Subject, ac.now, false)
	for _, rs := range ac.body.ResourcesList {
		data[resourceSetKey(rs)] = allowedBy(rows, a, rs, time.Unix(ac.now, 0))
	}
	return accessOK(data)
}

// resourceSetKey is the backend's key of a resource set: "system,type,id" nodes joined by "/".
func resourceSetKey(rs []accessResource) string {
	nodes := make([]string, len(rs))
	for i, r := range rs {
		nodes[i] = r.System + "," + r.Type + "," + r.ID
	}
	return strings.Join(nodes, "/")
}
