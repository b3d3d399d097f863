package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// serveAuthz serves one grant/revoke/creator call in the real check order: injected faults (latency,
// rate limit, failure, dropped connection, slow call), credentials (gateway or ESB), then the SaaS: body JSON, system client,
// allow-list, field validation, model checks, admin, user lookup, apply.
func (s *Server) serveAuthz(c *call, ep endpoint) {
	s.busy.Add(1)
	defer s.busy.Add(-1)
	raw, readErr := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, s.maxBody))
	body, jsonErr := decodeBody(raw)
	if readErr != nil {
		jsonErr = readErr
	}
	key, instances := statKey(ep, body)
	failed := true
	defer func() { s.stats.record(key, instances, failed) }()

	release, ok := s.subjectTurn(c.r, subjectKey(ep, body))
	if !ok {
		return // the client went away while waiting
	}
	defer release()
	if !s.sleepLatency(c.r) {
		return
	}
	if f := s.faults.take(); f != nil {
		switch {
		case f.slow != nil:
			// The server goes on after the client has given up, as a real one does.
			time.Sleep(time.Duration(f.slow.DelayMS) * time.Millisecond)
		case f.drop != nil:
			if f.drop.Served {
				lost := &call{tr: c.tr, w: discardWriter{header: http.Header{}}, r: c.r, esbID: c.esbID}
				failed = !s.serveAuthzNow(lost, ep, body, jsonErr)
			}
			resetConnection(c.w)
			return
		default:
			s.writeFault(c, f)
			return
		}
	}
	failed = !s.serveAuthzNow(c, ep, body, jsonErr)
}

// serveAuthzNow serves a call past the injected faults: credentials, then the SaaS. It reports
// whether the call succeeded.
func (s *Server) serveAuthzNow(c *call, ep endpoint, body any, jsonErr error) bool {
	var app *App
	var ok bool
	if c.tr == gateway {
		app, ok = s.gatewayAuth(c)
	} else {
		app, ok = s.esbAuth(c, body)
	}
	if !ok {
		return false
	}
	var data any
	var err *saasError
	if jsonErr != nil {
		err = badJSON(jsonErr)
	} else if ep == epCreator {
		data, err = s.creatorGrant(app, body)
	} else {
		data, err = s.instanceCall(app, body, ep == epPath)
	}
	c.writeSaaS(data, err)
	if err == nil {
		s.faults.success()
	}
	return err == nil
}

// discardWriter takes the answer of a call whose connection is about to be dropped.
type discardWriter struct{ header http.Header }

func (d discardWriter) Header() http.Header         { return d.header }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}

// resetConnection ends the request without an answer. Over HTTP/1 the connection is closed with a
// TCP RST (the client reads "connection reset by peer"); where the connection cannot be taken over
// (HTTP/2), the handler aborts, which resets the stream.
func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

func badJSON(err error) *saasError {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return newSaaSError(codeBadJSON, fmt.Sprintf("JSON parse error - request body exceeds %d bytes", mbe.Limit))
	}
	return newSaaSError(codeBadJSON, "JSON parse error - "+err.Error())
}

// subjectTurn waits until no other call for the same subject is being
// served, as the real SaaS serialises a subject's calls with a lock: the
// injected latency, standing for IAM's own time, is spent holding the
// turn, so parallel calls for one subject gain nothing, as on the real
// server. False when the client went away while waiting.
func (s *Server) subjectTurn(r *http.Request, subject string) (func(), bool) {
	s.turnsMu.Lock()
	turn, ok := s.turns[subject]
	if !ok {
		turn = make(chan struct{}, 1)
		s.turns[subject] = turn
	}
	s.turnsMu.Unlock()
	select {
	case turn <- struct{}{}:
		return func() { <-turn }, true
	case <-r.Context().Done():
		return nil, false
	}
}

// subjectKey names the subject of a call's body ("" when it has none).
func subjectKey(ep endpoint, body any) string {
	m, _ := body.(map[string]any)
	if ep == epCreator {
		return "user/" + looseString(m, "creator")
	}
	subject, _ := m["subject"].(map[string]any)
	typ, _ := subject["type"].(string)
	return typ + "/" + looseString(subject, "id") // ids are trimmed, so " alice" is alice
}

// sleepLatency applies the injected latency; false when the client went away meanwhile.
func (s *Server) sleepLatency(r *http.Request) bool {
	ms := s.faults.latencyMS()
	if ms <= 0 {
		return true
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// writeFault answers an injected failure in the form of the layer that would produce it.
func (s *Server) writeFault(c *call, f *injected) {
	if f.rate != nil {
		c.w.Header().Set("Retry-After", strconv.Itoa(f.rate.RetryAfterS))
		if c.tr == gateway {
			c.writeGatewayError(http.StatusTooManyRequests, codeGWRateLimited,
				"Request rate exceeds the limit of the app [injected by the sandbox]")
		} else {
			c.writeESBError(codeESBRateLimited, "Request rate exceeds the limit of the app [injected by the sandbox]")
		}
		return
	}
	code, status := f.fail.Code, f.fail.Status
	msg := "fault injected by the sandbox"
	if f.fail.Message != "" {
		msg = f.fail.Message
	}
	if f.fail.Body == "html" {
		// A reverse proxy's own page: no envelope, no IAM code.
		c.w.Header().Set("Content-Type", "text/html")
		c.w.WriteHeader(status)
		_, _ = fmt.Fprintf(c.w, "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
			status, http.StatusText(status), status, http.StatusText(status))
		return
	}
	switch {
	case code >= 1600000 && code < 1700000 && c.tr == gateway:
		c.writeGatewayError(status, code, msg)
	case code >= 1300000 && code < 1400000 && c.tr == esb:
		c.writeESBError(code, msg)
	case c.tr == esb:
		// ESB answers 200 whatever happened behind it.
		c.writeESBError(code, newSaaSError(code, msg).message)
	default:
		err := newSaaSError(code, msg)
		c.writeJSON(status, saasBody{Result: false, Code: err.code, Message: err.message})
	}
}

// statKey names the operation for the stats and counts the instances/paths the call carries.
func statKey(ep endpoint, body any) (string, int) {
	m, _ := body.(map[string]any)
	if ep == epCreator {
		list, _ := m["instances"].([]any)
		return string(epCreator), len(list)
	}
	n := 0
	res, _ := m["resources"].([]any)
	field := "instances"
	if ep == epPath {
		field = "paths"
	}
	for _, r := range res {
		rm, _ := r.(map[string]any)
		list, _ := rm[field].([]any)
		n += len(list)
	}
	op := looseString(body, "operate")
	if op != "grant" && op != "revoke" {
		return "", n
	}
	return string(ep) + ":" + op, n
}

// checkClient enforces that the app is a registered client of the system (checked before the fields,
// so only when the system can be read at all).
func checkClient(app *App, system string) *saasError {
	if system != "" && !app.clientOf(system) {
		return newSaaSError(codeForbidden, fmt.Sprintf("app_code %s can not access system %s", app.Code, system))
	}
	return nil
}

// instanceCall serves batch_instance (paths=false) and batch_path (paths=true).
func (s *Server) instanceCall(app *App, body any, paths bool) (any, *saasError) {
	sysID := looseString(body, "system")
	if err := checkClient(app, sysID); err != nil {
		return nil, err
	}
	// The per-action allow-list guards batch_instance only; batch_path checks just the client.
	if sys := s.model.systems[sysID]; sys != nil && !paths {
		for _, a := range looseActionIDs(body) {
			if !allowed(sys.AllowList.InstanceActions, a) {
				return nil, newSaaSError(codeForbidden, fmt.Sprintf("authorization_instance api don't support the [%s] of system[%s]", a, sysID))
			}
		}
	}
	now := s.now()
	req, err := parseInstanceRequest(body, paths, s.model.Limits, now)
	if err != nil {
		return nil, err
	}
	sys := s.model.systems[req.System]
	if sys == nil {
		return nil, newSaaSError(codeInvalidArgs, fmt.Sprintf("system[%s] not exists", req.System))
	}
	if paths {
		s.model.fillPathSystems(req)
		if err := pathSelectionCheck(sys, req); err != nil {
			return nil, err
		}
	}
	specs, err := s.buildSpecs(sys, req)
	if err != nil {
		return nil, err
	}
	if req.Subject.Type == "user" {
		req.Subject.ID = s.model.userID(req.Subject.ID)
	}
	if req.Subject.Type == "user" && strings.EqualFold(req.Subject.ID, "admin") {
		n := 0
		for _, r := range req.Resources {
			n += len(r.Paths)
		}
		counts := make([]int, len(req.Actions))
		for i := range counts {
			counts[i] = n
		}
		return adminEcho(req.Actions, counts), nil
	}
	if req.Subject.Type == "group" && !s.groupExists(req.Subject.ID) {
		// The real server does not check group ids: a grant to an unknown group fails with an
		// unhandled error (1902500, HTTP 500); a revoke finds nothing and answers OK with data [].
		if req.Operate == "revoke" {
			return []resultEntry{}, nil
		}
		return nil, newSaaSError(codeSystemError, fmt.Sprintf("unhandled error while granting to group[%s]: the group does not exist", req.Subject.ID))
	}
	if err := s.lookupSubject(req.Subject); err != nil {
		return nil, err
	}
	if req.Operate == "grant" && req.Subject.Type == "user" && loneAnyPath(req.Resources) {
		// The SaaS prepares a user's policy by stripping each path's last "*" node (its
		// ignore-path step), asserting that a path of one node is not "*": a user's grant of the
		// lone id "*" fails unhandled, writing nothing (seen on the real IAM). A group's is kept.
		return nil, newSaaSError(codeSystemError, fmt.Sprintf("unhandled error while granting to user[%s]: a path of the lone id * (AssertionError)", req.Subject.ID))
	}
	if req.Operate == "revoke" {
		return s.store.revoke(now, sys.ID, req.Subject, specs)
	}
	// Group policies never expire. For a user, the 365-day default applies to a new policy only; an
	// existing policy's expiry changes only when expired_at is given and greater.
	expiry, newExpiry := int64(permanentExpiredAt), int64(permanentExpiredAt)
	if req.Subject.Type == "user" {
		expiry, newExpiry = req.ExpiredAt, req.ExpiredAt
		if newExpiry == 0 {
			newExpiry = now.Unix() + defaultUserExpirySec
		}
	}
	return s.store.grant(now, sys.ID, req.Subject, specs, expiry, newExpiry, s.model.Limits)
}

// buildSpecs runs the model checks: actions exist (1902412 "x action not exists"), resources match
// each action's related types in count, order and type (1902417 ACTION_VALIDATE_ERROR), path nodes
// name known types.
func (s *Server) buildSpecs(sys *System, req *instanceReq) ([]grantSpec, *saasError) {
	specs := make([]grantSpec, 0, len(req.Actions))
	seen := map[string]bool{}
	for _, id := range req.Actions {
		a := sys.actions[id]
		if a == nil {
			// The real server: VALIDATE_ERROR "x action not exists", after the allow-list check.
			return nil, validateError(fmt.Sprintf("%s action not exists", id))
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		if err := actionCheck(a, req.Resources); err != nil {
			return nil, err
		}
		sp := grantSpec{action: a}
		for _, r := range req.Resources {
			sp.perType = append(sp.perType, r.Paths)
		}
		specs = append(specs, sp)
	}
	for _, r := range req.Resources {
		for _, p := range r.Paths {
			for _, n := range p {
				if ns := s.model.systems[n.System]; ns == nil || ns.types[n.Type] == nil {
					return nil, newSaaSError(codeInvalidArgs, fmt.Sprintf("resource type[%s:%s] in path %s not exists", n.System, n.Type, pathKey(p)))
				}
			}
			if repeated, ok := repeatedNode(r.Type, p); ok {
				return nil, newSaaSError(codeInvalidArgs, fmt.Sprintf("path: %s nodes must not repeat", repeated))
			}
		}
	}
	return specs, nil
}

// repeatedNode is the SaaS's check when it translates a policy for the backend: the nodes above an
// instance (the whole path when it ends above the related type) must not name one type and id
// twice. It answers the checked nodes in the SaaS's /type,id/ notation. The instance itself is not
// compared with its ancestors, as in the SaaS.
func repeatedNode(relatedType string, p []Node) (string, bool) {
	checked := p
	if len(p) > 0 && p[len(p)-1].Type == relatedType {
		checked = p[:len(p)-1]
	}
	seen := map[[2]string]bool{}
	var b strings.Builder
	b.WriteByte('/')
	repeat := false
	for _, n := range checked {
		k := [2]string{n.Type, n.ID}
		repeat = repeat || seen[k]
		seen[k] = true
		b.WriteString(n.Type + "," + n.ID + "/")
	}
	return b.String(), repeat
}

// actionCheck is the SaaS's action check (ActionCheckBiz): the resources must match the action's
// related types in count (1902417 "… related resource types wrong"), then one by one in order,
// system and type (1902417 naming the first resource type out of place). A related type of another
// system is named with that system (bk_job's access_business takes {"system": "bk_cmdb", "type":
// "biz"}).
func actionCheck(a *Action, res []resourceReq) *saasError {
	if len(res) != len(a.related) {
		return newSaaSError(codeActionValidate, fmt.Sprintf("Action check error: action `%s` related resource types wrong", a.ID))
	}
	for i, r := range res {
		if (typeRef{System: r.System, Type: r.Type}) != a.related[i] {
			return newSaaSError(codeActionValidate, fmt.Sprintf("Action check error: action `%s` related resource types `%s` wrong", a.ID, r.Type))
		}
	}
	return nil
}

// pathSelectionCheck is batch_path's first check on the real SaaS, before the action check
// (OpenPolicy.fill_instance_system): action by action in the request's order, every resource type
// given paths must be one the action has an instance selection for, one of its related types (else
// 1902412 "action(x) not support to grant instance"). An unknown action fails there too, in the
// SaaS's call to the backend for it: 1902000 in HTTP 200, not "x action not exists".
func pathSelectionCheck(sys *System, req *instanceReq) *saasError {
	for _, id := range req.Actions {
		a := sys.actions[id]
		if a == nil {
			return newSaaSError(codeUpstream, fmt.Sprintf("请求第三方API错误: request iam error! Request=[http_get "+
				"/api/v1/web/systems/%s/actions/%s] Response[code=1901500, message=system error: [Handler:GetAction] systemID=`%s`, "+
				"actionID=`%s` => [ActionSVC:Get] saasManager.Get(system=%s, actionID=%s) fail => [Raw:Error] sql: no rows in result set]",
				sys.ID, id, sys.ID, id, sys.ID, id))
		}
		for _, r := range req.Resources {
			if len(r.Paths) > 0 && !a.relatesTo(r.System, r.Type) {
				return validateError(fmt.Sprintf("action(%s) not support to grant instance", id))
			}
		}
	}
	return nil
}

// fillPathSystems gives the batch_path nodes sent without a system their system, as the SaaS fills
// them from the instance selection a path matches (OpenRelatedResource.fill_instance_system): here
// the sandbox's one selection of the resource's type, its chain of first parents, each node of its
// own system (bk_cmdb for a biz above a bk_job script). A node takes the system of the chain's node
// at its position when that is of its type, else of the chain's node of its type, else the
// request's system (a path the chain does not place, which the sandbox, checking no topology,
// accepts as it did before it knew other systems' types).
func (m *Model) fillPathSystems(req *instanceReq) {
	for _, r := range req.Resources {
		chain := m.chain(typeRef{System: r.System, Type: r.Type})
		for _, p := range r.Paths {
			for i := range p {
				if p[i].System == "" {
					p[i].System = chainSystem(chain, i, p[i].Type, req.System)
				}
			}
		}
	}
}

// chainSystem is the system the chain gives a node of typ at position i, or fallback.
func chainSystem(chain []modelTypeRef, i int, typ, fallback string) string {
	if i < len(chain) && chain[i].ID == typ {
		return chain[i].System
	}
	for _, c := range chain {
		if c.ID == typ {
			return c.System
		}
	}
	return fallback
}

// adminEcho is the answer for user admin: the requested actions with policy_id 0, each counting the
// instances requested for it (statistics is always present).
func adminEcho(actions []string, counts []int) []resultEntry {
	data := make([]resultEntry, 0, len(actions))
	for i, a := range actions {
		data = append(data, resultEntry{Action: actionRef{ID: a}, PolicyID: 0, Statistics: statistics{InstanceCount: counts[i]}})
	}
	return data
}

// lookupSubject checks that a user exists (1902412 "user[x] not exists"); unknown groups are handled
// by the caller, as the real server treats them differently per operation.
func (s *Server) lookupSubject(subj subject) *saasError {
	if subj.Type == "user" && !s.syncUser(subj.ID) {
		return validateError(fmt.Sprintf("user[%s] not exists", subj.ID))
	}
	return nil
}

// syncUser reports whether IAM knows the user, syncing one the user directory knows into IAM first,
// as the authorization API does on a user's first use.
func (s *Server) syncUser(id string) bool {
	if s.model.users[id] {
		return true
	}
	if !s.model.directory[id] {
		return false
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.synced[id] {
		st.synced[id] = true
		if st.persist != nil && st.persist() != nil {
			delete(st.synced, id)
			return false
		}
	}
	return true
}

// creatorGrant serves batch_resource_creator_action: every action the system registered for the type
// (anywhere in its creator tree), on paths ancestors + instance, permanent.
func (s *Server) creatorGrant(app *App, body any) (any, *saasError) {
	sysID, typ := looseString(body, "system"), looseString(body, "type")
	if err := checkClient(app, sysID); err != nil {
		return nil, err
	}
	if sys := s.model.systems[sysID]; sys != nil && typ != "" && !allowed(sys.AllowList.CreatorTypes, typ) {
		return nil, newSaaSError(codeForbidden, fmt.Sprintf("authorization_resource_creator_action api don't support the [%s] of system[%s]", typ, sysID))
	}
	req, err := parseCreatorRequest(body, s.model.Limits)
	if err != nil {
		return nil, err
	}
	sys := s.model.systems[req.System]
	if sys == nil {
		return nil, newSaaSError(codeInvalidArgs, fmt.Sprintf("system[%s] not exists", req.System))
	}
	if len(sys.CreatorActions) == 0 {
		return nil, validateError(fmt.Sprintf("system[%s] do not register resource_creator_actions config", sys.ID))
	}
	node := sys.creatorNode(req.Type)
	if node == nil || len(node.Actions) == 0 {
		return nil, validateError(fmt.Sprintf("system[%s]-action[%s] do not register actions for authorization of creator", sys.ID, req.Type))
	}
	for _, path := range req.Instances {
		for _, anc := range path[:len(path)-1] {
			if err := s.checkAncestor(anc); err != nil {
				return nil, err
			}
		}
	}
	actionIDs := make([]string, len(node.Actions))
	specs := make([]grantSpec, len(node.Actions))
	for i, ca := range node.Actions {
		actionIDs[i] = ca.ID
		a := sys.actions[ca.ID]
		switch {
		case len(a.related) == 0:
			// An action related to no resource type: the creator gets it unlimited (an any policy).
			specs[i] = grantSpec{action: a}
		case len(a.related) == 1 && a.related[0] == typeRef{System: sys.ID, Type: req.Type}:
			specs[i] = grantSpec{action: a, perType: [][][]Node{req.Instances}}
		default:
			// As the action check words it: the count first, then the type.
			return nil, actionCheck(a, []resourceReq{{System: sys.ID, Type: req.Type}})
		}
	}
	if strings.EqualFold(req.Creator, "admin") {
		counts := make([]int, len(specs))
		for i, sp := range specs {
			for _, paths := range sp.perType {
				counts[i] += len(paths)
			}
		}
		return adminEcho(actionIDs, counts), nil
	}
	if err := s.lookupSubject(subject{Type: "user", ID: req.Creator}); err != nil {
		return nil, err
	}
	return s.store.grant(s.now(), sys.ID, subject{Type: "user", ID: req.Creator}, specs, permanentExpiredAt, permanentExpiredAt, s.model.Limits)
}

// checkAncestor resolves an ancestor's name through the system's "callback" (the model's instance
// names); the server fails with 1902416 when the callback does not know it.
func (s *Server) checkAncestor(n Node) *saasError {
	sys := s.model.systems[n.System]
	if sys == nil {
		return newSaaSError(codeInvalidArgs, fmt.Sprintf("system[%s] of ancestor %s not exists", n.System, pathKey([]Node{n})))
	}
	t := sys.types[n.Type]
	if t == nil {
		return newSaaSError(codeInvalidArgs, fmt.Sprintf("resource type[%s:%s] of ancestor not exists", n.System, n.Type))
	}
	if _, ok := t.Instances[n.ID]; !ok {
		return newSaaSError(codeInvalidArgs, fmt.Sprintf("query instance name of system[%s] resource type[%s] id[%s] by callback failed: not found", n.System, n.Type, n.ID))
	}
	return nil
}

// loneAnyPath reports whether a resource gives a path of one node whose id is "*".
func loneAnyPath(resources []resourceReq) bool {
	for _, r := range resources {
		for _, p := range r.Paths {
			if len(p) == 1 && p[0].ID == "*" {
				return true
			}
		}
	}
	return false
}
