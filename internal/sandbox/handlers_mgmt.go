package sandbox

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The management API v2 (the package doc of internal/bkiam, "The management API"): grade
// managers (create, get, update as a full replace, delete answered at once and carried out after
// a delay), their groups (batch create, list, update, delete), the groups' members (list, add,
// delete, raise the expiry) and the subject templates an app can see (mgmt_templates.go).
// Gateway only; the SaaS envelope with the error's own HTTP status (v2), IAM backend errors as
// 1902000 in HTTP 200. The state is in mgmt_store.go, the bodies' validation in mgmt_validate.go.

const mgmtPrefix = "/api/v2/open/management/systems/"

// mgmtV1GradeManagers is the v1 list of a system's API-created grade managers, the only route
// that lists grade managers (?system=S, paged, name a case-insensitive substring). Under it,
// {id}/groups/ is the v1 group list, the only route that answers the groups' attributes
// (mgmtV1GroupList).
const mgmtV1GradeManagers = "/api/v1/open/management/grade_managers/"

// mgmtV1GroupList matches GET {mgmtV1GradeManagers}{id}/groups/, the v1 group list.
func mgmtV1GroupList(method, path string) (mgmtRoute, bool) {
	rest, ok := strings.CutPrefix(path, mgmtV1GradeManagers)
	id, ok2 := strings.CutSuffix(rest, "/groups/")
	gm, ok3 := pathID(id)
	if !ok || !ok2 || !ok3 || method != http.MethodGet {
		return mgmtRoute{}, false
	}
	return mgmtRoute{api: "group_list", stat: "group:list_v1", gm: gm, v1: true, byCreator: true}, true
}

const (
	codeConflict = 1902409
	// defaultGradeManagerDeleteDelay stands for IAM's asynchronous delete (a Celery task).
	defaultGradeManagerDeleteDelay = 2 * time.Second
)

// mgmtStatus is the v2 HTTP status of a SaaS error code: its own, except IAM backend errors,
// which the SaaS answers with HTTP 200.
func mgmtStatus(code int) int {
	switch code {
	case codeUnauthorized:
		return http.StatusUnauthorized
	case codeForbidden:
		return http.StatusForbidden
	case codeNotFound:
		return http.StatusNotFound
	case codeConflict:
		return http.StatusConflict
	case codeValidation, codeBadJSON, codeInvalidArgs, codeActionValidate:
		return http.StatusBadRequest
	case codeSystemError:
		return http.StatusInternalServerError
	}
	return http.StatusOK
}

func mgmtError(code int, text string) *saasError {
	name := saasCodeNames[code]
	if code == codeConflict {
		name = "CONFLICT_ERROR"
	}
	return &saasError{code: code, message: text + " (" + name + ")"}
}

func forbidden(detail string) *saasError {
	return mgmtError(codeForbidden, "没有访问权限: "+detail)
}

// mgmtRoute is a management route as the SaaS's permission layer sees it.
type mgmtRoute struct {
	// api is the allow-list name; "" for a request no view action serves (refused with 403).
	api  string
	stat string
	// gm is the grade manager in the path (dash: "-", the system manager); group the group.
	gm, group int64
	dash      bool
	// v1 marks a v1 route, whose errors other than 401, 403, 404 and 500 answer HTTP 200.
	v1 bool
	// byCreator marks a v1 route of a grade manager (ROLE_IN_PATH without a system in the path):
	// the permission layer checks the app against the system that created it only.
	byCreator bool
	// memberType and memberID are the member of a member's-groups route.
	memberType, memberID string
}

// pathID matches Django's <int:id>: digits only.
func pathID(s string) (int64, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// parseMgmtRoute matches a management path; false when it is none (the gateway's 404).
func parseMgmtRoute(method, path string) (string, mgmtRoute, bool) {
	rest, ok := strings.CutPrefix(path, mgmtPrefix)
	if !ok || !strings.HasSuffix(rest, "/") {
		return "", mgmtRoute{}, false
	}
	parts := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	system, parts := parts[0], parts[1:]
	if system == "" || len(parts) == 0 {
		return "", mgmtRoute{}, false
	}
	var rt mgmtRoute
	pick := func(apis map[string][2]string) bool {
		a, ok := apis[method]
		rt.api, rt.stat = a[0], a[1]
		return ok
	}
	switch {
	case len(parts) == 1 && parts[0] == "grade_managers":
		ok = pick(map[string][2]string{http.MethodPost: {"v2_grade_manager_create", "grade_manager:create"}})
	case len(parts) == 2 && parts[0] == "grade_managers":
		rt.gm, ok = pathID(parts[1])
		ok = ok && pick(map[string][2]string{http.MethodGet: {"v2_grade_manager_detail", "grade_manager:get"},
			http.MethodPut: {"v2_grade_manager_update", "grade_manager:update"}, http.MethodDelete: {"v2_grade_manager_delete", "grade_manager:delete"}})
	case len(parts) == 3 && parts[0] == "grade_managers" && parts[2] == "groups":
		if parts[1] == "-" {
			rt.dash, ok = true, true
		} else {
			rt.gm, ok = pathID(parts[1])
		}
		ok = ok && pick(map[string][2]string{http.MethodPost: {"v2_group_batch_create", "group:create"},
			http.MethodGet: {"v2_group_list", "group:list"}})
		if ok && rt.dash && method == http.MethodGet {
			rt.api = "" // grade_managers/-/groups/ maps POST only: the permission layer refuses a GET
		}
	case len(parts) == 3 && parts[0] == "grade_managers" && parts[2] == "subject_templates":
		rt.gm, ok = pathID(parts[1])
		ok = ok && pick(map[string][2]string{http.MethodGet: {"v2_subject_template_list", "subject_template:list"}})
	case len(parts) == 3 && parts[0] == "groups" && parts[2] == "subject_templates":
		rt.group, ok = pathID(parts[1])
		ok = ok && pick(map[string][2]string{http.MethodGet: {"v2_group_subject_template_list", "group_subject_template:list"}})
	case len(parts) == 2 && parts[0] == "groups":
		rt.group, ok = pathID(parts[1])
		ok = ok && pick(map[string][2]string{http.MethodPut: {"v2_group_update", "group:update"},
			http.MethodDelete: {"v2_group_delete", "group:delete"}})
	case len(parts) == 3 && parts[0] == "groups" && parts[2] == "members":
		rt.group, ok = pathID(parts[1])
		ok = ok && pick(map[string][2]string{http.MethodGet: {"v2_group_member_list", "member:list"},
			http.MethodPost: {"v2_group_member_add", "member:add"}, http.MethodDelete: {"v2_group_member_delete", "member:delete"}})
	case len(parts) == 3 && parts[0] == "groups" && parts[2] == "policies":
		// The v2 policy routes check the v1 allow-list names.
		rt.group, ok = pathID(parts[1])
		ok = ok && pick(map[string][2]string{http.MethodPost: {"group_policy_grant", "group_policy:grant"},
			http.MethodDelete: {"group_policy_revoke", "group_policy:revoke"}, http.MethodGet: {"group_policy_list", "group_policy:list"}})
	case len(parts) == 5 && parts[0] == "groups" && parts[2] == "actions" && parts[3] == "-" && parts[4] == "policies":
		rt.group, ok = pathID(parts[1])
		ok = ok && pick(map[string][2]string{http.MethodDelete: {"v2_group_policy_delete", "group_policy:delete"}})
	case len(parts) == 5 && parts[0] == "groups" && parts[2] == "policies" && parts[3] == "-" && parts[4] == "actions":
		rt.group, ok = pathID(parts[1])
		ok = ok && pick(map[string][2]string{http.MethodGet: {"v2_group_policy_action_list", "group_policy:actions"}})
	case len(parts) == 5 && parts[0] == "groups" && parts[2] == "members" && parts[3] == "-" && parts[4] == "expired_at":
		rt.group, ok = pathID(parts[1])
		ok = ok && pick(map[string][2]string{http.MethodPut: {"v2_group_member_expired_at_update", "member:expiry"}})
	case len(parts) == 7 && parts[0] == "group_member_types" && parts[2] == "members" && parts[4] == "groups" && parts[5] == "-" && parts[6] == "details":
		rt.memberType, rt.memberID = parts[1], parts[3]
		ok = rt.memberID != "" && pick(map[string][2]string{http.MethodGet: {"v2_member_groups_detail_list", "member_groups:details"}})
	default:
		ok = false
	}
	return system, rt, ok
}

// serveManagement serves the management routes; false when the path is not one of them. Injected
// faults apply as they do to the authorization calls.
func (s *Server) serveManagement(c *call) bool {
	system, rt, ok := parseMgmtRoute(c.r.Method, c.r.URL.Path)
	if c.r.URL.Path == mgmtV1GradeManagers && c.r.Method == http.MethodGet {
		// The system is in the query (SYSTEM_IN_QUERY).
		system, rt, ok = c.r.URL.Query().Get("system"), mgmtRoute{api: "grade_manager_list", stat: "grade_manager:list", v1: true}, true
	}
	if v1, ok1 := mgmtV1GroupList(c.r.Method, c.r.URL.Path); ok1 {
		system, rt, ok = "", v1, true
	}
	if !ok {
		return false
	}
	s.busy.Add(1)
	defer s.busy.Add(-1)
	raw, readErr := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, s.maxBody))
	failed := true
	defer func() { s.stats.record(rt.stat, 0, failed) }()
	if !s.sleepLatency(c.r) {
		return true
	}
	if f := s.faults.take(); f != nil {
		switch {
		case f.slow != nil:
			time.Sleep(time.Duration(f.slow.DelayMS) * time.Millisecond)
		case f.drop != nil:
			if f.drop.Served {
				lost := &call{tr: c.tr, w: discardWriter{header: http.Header{}}, r: c.r}
				failed = !s.serveManagementNow(lost, system, rt, raw, readErr)
			}
			resetConnection(c.w)
			return true
		default:
			s.writeFault(c, f)
			return true
		}
	}
	failed = !s.serveManagementNow(c, system, rt, raw, readErr)
	return true
}

// serveManagementNow serves a call past the injected faults and reports whether it succeeded.
func (s *Server) serveManagementNow(c *call, system string, rt mgmtRoute, raw []byte, readErr error) bool {
	app, ok := s.gatewayAuth(c)
	if !ok {
		return false
	}
	data, e := s.manage(app, system, rt, c.r.URL.Query(), raw, readErr)
	if e != nil {
		status := mgmtStatus(e.code)
		if rt.v1 && status != http.StatusUnauthorized && status != http.StatusForbidden && status != http.StatusNotFound && status != http.StatusInternalServerError {
			status = http.StatusOK
		}
		c.writeJSON(status, saasBody{Result: false, Code: e.code, Message: e.message, Data: nil}) // IAM's management errors carry "data": null
		return false
	}
	s.faults.success()
	c.writeJSON(http.StatusOK, saasBody{Result: true, Code: codeOK, Message: "OK", Data: data})
	return true
}

// mgmtCall is one management call past the permission layer's app checks.
type mgmtCall struct {
	s      *Server
	ms     *mgmtState
	app    *App
	system string
	rt     mgmtRoute
	q      url.Values
	raw    []byte
	now    time.Time
	// policyPuts are policy changes the call makes beside the management state (a sync group's
	// permissions), saved with it.
	policyPuts []*policyPut
	// failAfterSave is the error of a call that fails after its change is committed (a grade
	// manager whose sync group the backend refused): the change is saved, the error answered.
	failAfterSave *saasError
}

// policyPut is a policy change saved with the management state: nil deletes the policy.
type policyPut struct {
	key    policyKey
	policy *policy
}

// manage checks the caller as the SaaS does — client, allow-list, then (in apply) ownership — and
// serves the call. A write works on the live state; a failure, or a failed save, restores a clone.
func (s *Server) manage(app *App, system string, rt mgmtRoute, q url.Values, raw []byte, readErr error) (any, *saasError) {
	if rt.api == "" {
		return nil, forbidden("You do not have permission to perform this action.")
	}
	if !rt.byCreator && !app.clientOf(system) {
		return nil, forbidden(fmt.Sprintf("app_code %s can not access system %s", app.Code, system))
	}
	if !rt.byCreator && !app.mayManage(system, rt.api) {
		return nil, forbidden(fmt.Sprintf("system[%s] is not allowed to call management api[%s], please contact the developer to add a whitelist", system, rt.api))
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	now := s.now()
	if e := st.purgeMgmtLocked(now); e != nil {
		return nil, e
	}
	old := st.mgmt.clone()
	mc := &mgmtCall{s: s, ms: st.mgmt, app: app, system: system, rt: rt, q: q, raw: raw, now: now}
	if readErr != nil {
		mc.raw = nil
	}
	data, write, e := mc.apply(readErr)
	if e != nil {
		st.mgmt = old
		return nil, e
	}
	if write {
		if e := st.saveMgmtLocked(old, mc.policyPuts...); e != nil {
			return nil, e
		}
	}
	if mc.failAfterSave != nil {
		return nil, mc.failAfterSave
	}
	return data, nil
}

// saveMgmtLocked saves a change of the management state from before with the policy changes it
// brings (puts), deleting the policies of the groups it deleted (IAM deletes a group with its
// policies); on a failed save both are restored.
func (st *store) saveMgmtLocked(before *mgmtState, puts ...*policyPut) *saasError {
	t := st.begin()
	for _, pp := range puts {
		t.put(pp.key, pp.policy)
	}
	for id := range before.groups {
		if _, kept := st.mgmt.groups[id]; kept {
			continue
		}
		for k := range st.policies {
			if k.SubjectType == "group" && k.SubjectID == itoa64(id) {
				t.put(k, nil)
			}
		}
	}
	if len(t.old) > 0 {
		if e := t.commit(); e != nil { // commit saves the management state too
			st.mgmt = before
			return e
		}
		return nil
	}
	if st.persist != nil {
		if err := st.persist(); err != nil {
			st.mgmt = before
			return newSaaSError(codeSystemError, "save state: "+err.Error())
		}
	}
	return nil
}

// purgeMgmtLocked carries out the grade-manager deletes that are due, and saves the state if any was.
func (st *store) purgeMgmtLocked(now time.Time) *saasError {
	st.runCleanupsLocked(now)
	old := st.mgmt.clone()
	if !st.mgmt.purge(now) {
		return nil
	}
	return st.saveMgmtLocked(old)
}

func (mc *mgmtCall) roleForbidden(id int64) *saasError {
	return forbidden(fmt.Sprintf("role[%d] can not be operated by app_code[%s], since role is not created by system[%s])", id, mc.app.Code, mc.system))
}

func (mc *mgmtCall) groupForbidden(id int64) *saasError {
	return forbidden(fmt.Sprintf("group[%d] can not operated by app_code[%s], since related role of group is not created by system[%s])", id, mc.app.Code, mc.system))
}

// ownedGradeManager is the path's grade manager if the app may manage it: an entry of the 2026
// object allow-list for it (saas_release.go), or its creator (createdGradeManager).
func (mc *mgmtCall) ownedGradeManager(id int64) (*gradeManager, *saasError) {
	if gm := mc.ms.gms[id]; gm != nil && mc.objectAllowed(objectRole, id) {
		return gm, nil
	}
	return mc.createdGradeManager(id)
}

// createdGradeManager is the grade manager if its creator lets the app manage it. As the SaaS
// does, the check goes by the system that created the grade manager, not by the path's system
// (already checked): the app must be a client of the creator, and the creator allow-listed for
// the route. A grade manager without a creator record (gone, or made in the web UI) is "not
// created by".
func (mc *mgmtCall) createdGradeManager(id int64) (*gradeManager, *saasError) {
	gm := mc.ms.gms[id]
	if gm == nil || gm.WebUI {
		return nil, mc.roleForbidden(id)
	}
	if e := mc.verifyCreator(gm.System); e != nil {
		return nil, e
	}
	return gm, nil
}

// verifyCreator is the SaaS's API check repeated for the creating system.
func (mc *mgmtCall) verifyCreator(creator string) *saasError {
	if !mc.app.clientOf(creator) {
		return forbidden(fmt.Sprintf("app_code %s can not access system %s", mc.app.Code, creator))
	}
	if !mc.app.mayManage(creator, mc.rt.api) {
		return forbidden(fmt.Sprintf("system[%s] is not allowed to call management api[%s], please contact the developer to add a whitelist", creator, mc.rt.api))
	}
	return nil
}

// ownedGroup is the path's group if the app may manage it: an entry of the 2026 object
// allow-list for it, or through its grade manager's creator (see createdGradeManager), or as a
// system manager's group when the path names that system.
func (mc *mgmtCall) ownedGroup() (*mgmtGroup, *saasError) {
	return mc.groupOwned(mc.rt.group)
}

// groupOwned is ownedGroup of the group id.
func (mc *mgmtCall) groupOwned(id int64) (*mgmtGroup, *saasError) {
	g := mc.ms.groups[id]
	switch {
	case g != nil && mc.objectAllowed(objectGroup, id):
		return g, nil
	case g == nil:
		return nil, mc.groupForbidden(id)
	case g.GradeManager == 0:
		if g.System != mc.system {
			return nil, mc.groupForbidden(id)
		}
		return g, nil
	}
	if _, e := mc.createdGradeManager(g.GradeManager); e != nil {
		return nil, e
	}
	return g, nil
}

// apply runs the call: its data, whether it may have changed the state, or its error.
func (mc *mgmtCall) apply(readErr error) (any, bool, *saasError) {
	ms, rt := mc.ms, mc.rt
	var gm *gradeManager
	switch rt.api {
	case "v2_grade_manager_detail", "v2_grade_manager_update", "v2_grade_manager_delete", "v2_group_batch_create", "v2_group_list",
		"v2_subject_template_list":
		if !rt.dash {
			var e *saasError
			if gm, e = mc.ownedGradeManager(rt.gm); e != nil {
				return nil, false, e
			}
		}
	}
	var g *mgmtGroup
	if strings.HasPrefix(rt.api, "v2_group_member_") || strings.HasPrefix(rt.api, "group_policy_") || strings.HasPrefix(rt.api, "v2_group_policy_") ||
		rt.api == "v2_group_update" || rt.api == "v2_group_delete" || rt.api == "v2_group_subject_template_list" {
		var e *saasError
		if g, e = mc.ownedGroup(); e != nil {
			return nil, false, e
		}
	}
	if readErr != nil {
		return nil, false, mgmtError(codeBadJSON, "Json格式错误")
	}
	switch rt.api {
	case "grade_manager_list":
		return mc.listGradeManagers()
	case "group_list":
		return mc.listGroupsV1()
	case "group_policy_grant":
		return mc.grantGroupPolicies(g)
	case "group_policy_revoke":
		return mc.revokeGroupPolicies(g)
	case "group_policy_list":
		return mc.listGroupPolicies(g)
	case "v2_group_policy_delete":
		return mc.deleteGroupPolicies(g)
	case "v2_group_policy_action_list":
		return mc.groupPolicyActions(g)
	case "v2_grade_manager_detail":
		return gm.view(), false, nil
	case "v2_grade_manager_create", "v2_grade_manager_update":
		return mc.putGradeManager(gm)
	case "v2_grade_manager_delete":
		if gm.DeleteAt.IsZero() {
			gm.DeleteAt = mc.now.Add(mc.s.gradeManagerDeleteDelay())
		}
		ms.purge(mc.now)
		return map[string]any{}, true, nil
	case "v2_group_batch_create":
		return mc.createGroups(gm)
	case "v2_group_list":
		return mc.listGroups(gm)
	case "v2_group_update":
		return mc.updateGroup(g)
	case "v2_group_delete":
		ms.deleteGroup(g.ID) // members, template bindings and the template mirroring it go with it
		return map[string]any{}, true, nil
	case "v2_group_member_list":
		return mc.listMembers(g)
	case "v2_group_member_add":
		return mc.addMembers(g)
	case "v2_group_member_delete":
		return mc.deleteMembers(g)
	case "v2_group_member_expired_at_update":
		return mc.updateExpiry(g)
	case "v2_subject_template_list":
		return mc.listSubjectTemplates(gm)
	case "v2_group_subject_template_list":
		return mc.listGroupTemplates(g)
	case "v2_member_groups_detail_list":
		return mc.memberGroupDetails()
	}
	return nil, false, forbidden("You do not have permission to perform this action.")
}

// putGradeManager creates (gm nil) or replaces a grade manager.
func (mc *mgmtCall) putGradeManager(gm *gradeManager) (any, bool, *saasError) {
	spec, e := decodeGradeManager(mc.raw, mc.s.model)
	if e != nil {
		return nil, false, e
	}
	// The SaaS's verify_system_scope: another system's actions in a scope need the
	// SystemAllowAuthSystem row (checked against the creating system on an update).
	owner := mc.system
	if gm != nil {
		owner = gm.System
	}
	for _, sc := range spec.Scopes {
		if sys := mc.s.model.systems[owner]; sys == nil || !sys.mayAuthorize(sc.System) {
			return nil, false, forbidden(fmt.Sprintf("system[%s] is not allow to operate system[%s]'s permission data, "+
				"please contact the developer to add a whitelist", owner, sc.System))
		}
	}
	for _, other := range mc.ms.gms {
		if other != gm && strings.EqualFold(other.Name, spec.Name) {
			return nil, false, mgmtError(codeConflict, fmt.Sprintf("与已有资源冲突(重名等): 名称 [%s] 已存在，请修改为其他名称", spec.Name))
		}
	}
	// The SaaS turns the scope into policies, checking them against the model as a grant is checked;
	// a sync group is granted them.
	scopeSpecs := make([][]grantSpec, len(spec.Scopes))
	for i, sc := range spec.Scopes {
		_, specs, e := mc.groupPolicySpecs(sc.System, sc.Actions, sc.resourceReqs())
		if e != nil {
			return nil, false, e
		}
		scopeSpecs[i] = specs
	}
	created := gm == nil
	if created {
		// The SaaS's check_grade_manager_of_system_limit: the grade managers the system created
		// through the API, at most 500 by default; a ValidationError raised in the view.
		if n, limit := mc.ms.createdBy(mc.system), mc.s.model.gradeManagersPerSystem(); n >= limit {
			return nil, false, validationList(fmt.Sprintf("系统 (%s): 可创建的分级管理员数量已超过最大值 %d", mc.system, limit))
		}
		mc.ms.nextGM++
		gm = &gradeManager{ID: mc.ms.nextGM, System: mc.system, Created: mc.now}
		mc.ms.gms[gm.ID] = gm
	}
	gm.Name, gm.Description, gm.Members, gm.SyncPerm, gm.GroupName, gm.Updated = spec.Name, spec.Description, spec.Members, spec.SyncPerm, spec.GroupName, mc.now
	gm.Scopes, gm.SubjectScopes = spec.Scopes, spec.SubjectScopes
	if gm.SyncPerm {
		// The SaaS commits the grade manager, then has the backend put its users in the sync
		// group; the backend refuses a user it does not know, and the grade manager stays,
		// without its sync group (or with the one it had), sync_perm still true.
		for _, u := range gm.Members {
			if !mc.known("user", u) {
				mc.failAfterSave = backendError("http_post", backendSystemError, fmt.Sprintf("[Handler:BatchAddGroupMembers] "+
					"=> [GroupCTL:CreateOrUpdateGroupMembers] cacheimpls.GetLocalSubjectPK _type=`user`, id=`%s` fail => "+
					"[Raw:Error] sql: no rows in result set", u))
				if created {
					return map[string]int64{"id": gm.ID}, true, nil
				}
				return map[string]any{}, true, nil
			}
		}
	}
	mc.ms.syncGradeManager(gm, func(u string) bool { return mc.known("user", u) }, mc.now)
	if g := mc.ms.syncGroup(gm.ID); g != nil {
		if created {
			// The create view gives the sync group source_type openapi beside source_from_role;
			// the update's update_sync_perm_group_by_role gives it source_from_role only.
			g.SourceType = "openapi"
		}
		if created && spec.SyncSubjectTemplate {
			// Only the create passes sync_subject_template on to the sync group's creation; an
			// update that creates the sync group does not.
			mc.ms.mirrorGroup(g, mc.now)
		}
		puts, e := mc.syncGroupPolicies(gm, g, scopeSpecs)
		if e != nil {
			return nil, false, e
		}
		mc.policyPuts = puts
	}
	if created {
		return map[string]int64{"id": gm.ID}, true, nil
	}
	return map[string]any{}, true, nil
}

func (mc *mgmtCall) createGroups(gm *gradeManager) (any, bool, *saasError) {
	specs, syncTemplate, e := decodeGroups(mc.raw)
	if e != nil {
		return nil, false, e
	}
	owner, system := int64(0), mc.system
	if gm != nil {
		owner, system = gm.ID, gm.System // the group is the grade manager's, whichever path made it
		if n := len(mc.ms.groupsOf(mc.system, owner)) + len(specs); n > maxGroupsPerGradeManager {
			return nil, false, validationText(fmt.Sprintf("超过分级管理员最大可创建用户组数%d", maxGroupsPerGradeManager))
		}
	}
	for _, sp := range specs {
		if mc.ms.nameTaken(system, owner, sp.Name, 0) {
			return nil, false, mgmtError(codeConflict, "与已有资源冲突(重名等): 存在同名用户组")
		}
	}
	ids := make([]int64, 0, len(specs))
	for _, sp := range specs {
		g := mc.ms.newGroup(system, owner, sp.Name, sp.Description, sp.Readonly, mc.now)
		g.SourceType = sp.SourceType
		ids = append(ids, g.ID)
		if syncTemplate {
			mc.ms.mirrorGroup(g, mc.now)
		}
	}
	return ids, true, nil
}

// listGradeManagers is the v1 list: the grade managers the system created through the API,
// most recently updated first, rows {id, name, description}.
func (mc *mgmtCall) listGradeManagers() (any, bool, *saasError) {
	off, lim, e := pageOf(mc.q)
	if e != nil {
		return nil, false, e
	}
	name := strings.ToLower(mc.q.Get("name"))
	var gms []*gradeManager
	for _, gm := range mc.ms.gms {
		if !gm.WebUI && gm.System == mc.system && strings.Contains(strings.ToLower(gm.Name), name) {
			gms = append(gms, gm)
		}
	}
	sort.Slice(gms, func(i, j int) bool {
		if !gms[i].Updated.Equal(gms[j].Updated) {
			return gms[i].Updated.After(gms[j].Updated)
		}
		return gms[i].ID > gms[j].ID
	})
	rows := make([]map[string]any, 0, len(gms))
	for _, gm := range gms {
		rows = append(rows, map[string]any{"id": gm.ID, "name": gm.Name, "description": gm.Description})
	}
	if e := pastTheEnd(mc.q, off, len(rows)); e != nil {
		return nil, false, e
	}
	return paged(rows, off, lim), false, nil
}

func (mc *mgmtCall) listGroups(gm *gradeManager) (any, bool, *saasError) {
	off, lim, e := pageOf(mc.q)
	if e != nil {
		return nil, false, e
	}
	id, hasID := int64(0), mc.q.Get("id") != ""
	if hasID {
		n, err := strconv.ParseInt(mc.q.Get("id"), 10, 64)
		if err != nil {
			var fe fieldErrors
			fe.add("Enter a number.", "id")
			return nil, false, validationErr(fe)
		}
		id = n
	}
	name, desc := strings.ToLower(mc.q.Get("name")), strings.ToLower(mc.q.Get("description"))
	// action_id alone keeps the groups holding a policy of that action in the path's system
	// (the SaaS's _filter_by_action, over its policy table: custom and template rows alike). The
	// resource filters (resource_type_system_id, resource_type_id, resource_id, bk_iam_path),
	// which ask the backend for RBAC groups, are not served.
	action := mc.q.Get("action_id")
	holds := func(g *mgmtGroup) bool {
		for k := range mc.s.store.policies {
			if k.System == mc.system && k.SubjectType == "group" && k.SubjectID == itoa64(g.ID) && k.Action == action {
				return true
			}
		}
		return false
	}
	rows := []map[string]any{}
	for _, g := range mc.ms.groupsOf(mc.system, gm.ID) {
		if hasID && g.ID != id || !strings.Contains(strings.ToLower(g.Name), name) || !strings.Contains(strings.ToLower(g.Description), desc) ||
			action != "" && !holds(g) {
			continue
		}
		users, depts := g.counts()
		rows = append(rows, map[string]any{"id": g.ID, "name": g.Name, "user_count": users, "department_count": depts,
			"subject_template_count": len(g.Templates), "description": g.Description, "creator": anonymousUser,
			"created_time": g.Created.Format(timeLayout), "readonly": g.Readonly})
	}
	if e := pastTheEnd(mc.q, off, len(rows)); e != nil {
		return nil, false, e
	}
	return paged(rows, off, lim), false, nil
}

// listGroupsV1 is the v1 group list of the path's grade manager. Its permission layer reads the
// grade manager's creator record (none: 403 with v1's own text, naming the app twice), then
// checks the app against the creator (client, allow-list group_list). It answers the grade
// manager's groups (and its subset managers', which the sandbox has none of), newest first, rows
// {id, name, description, attributes: {source_type, source_from_role}}, every attribute present
// with its default; no filters; paged by page/page_size or limit/offset, and a page past the end
// is an empty page (the view slices the list itself).
func (mc *mgmtCall) listGroupsV1() (any, bool, *saasError) {
	gm := mc.ms.gms[mc.rt.gm]
	if gm == nil || gm.WebUI {
		return nil, false, forbidden(fmt.Sprintf("role[%d] can not be operated by app_code[%s], since role is not created by app_code[%s].",
			mc.rt.gm, mc.app.Code, mc.app.Code))
	}
	if e := mc.verifyCreator(gm.System); e != nil {
		return nil, false, e
	}
	off, lim, e := pageOf(mc.q)
	if e != nil {
		return nil, false, e
	}
	rows := []map[string]any{}
	for _, g := range mc.ms.groupsOf(gm.System, gm.ID) {
		rows = append(rows, map[string]any{"id": g.ID, "name": g.Name, "description": g.Description,
			"attributes": map[string]any{"source_type": g.SourceType, "source_from_role": g.Sync}})
	}
	return paged(rows, off, lim), false, nil
}

func (mc *mgmtCall) updateGroup(g *mgmtGroup) (any, bool, *saasError) {
	name, desc, e := decodeGroupUpdate(mc.raw)
	if e != nil {
		return nil, false, e
	}
	if name == "" {
		name = g.Name
	}
	if desc == "" {
		desc = g.Description
	}
	if mc.ms.nameTaken(g.System, g.GradeManager, name, g.ID) {
		return nil, false, mgmtError(codeConflict, "与已有资源冲突(重名等): 存在同名用户组")
	}
	g.Name, g.Description = name, desc
	return map[string]any{}, true, nil
}

func (mc *mgmtCall) listMembers(g *mgmtGroup) (any, bool, *saasError) {
	off, lim, e := pageOf(mc.q)
	if e != nil {
		return nil, false, e
	}
	rows := []map[string]any{}
	for _, m := range g.sortedMembers() {
		rows = append(rows, map[string]any{"type": m.Type, "id": m.ID, "name": m.ID, "expired_at": m.ExpiredAt, "created_at": m.CreatedAt})
	}
	return paged(rows, off, lim), false, nil
}

// known reports whether IAM's organisation knows the subject.
func (mc *mgmtCall) known(typ, id string) bool {
	switch typ {
	case "user":
		// A directory user IAM has not synced yet is unknown here: the management API does not sync.
		return mc.s.model.users[id] || mc.s.store.synced[id]
	case "department":
		return mc.s.model.departments[id]
	}
	return false
}

// Codes of IAM's backend (its pkg/util), which the SaaS passes on inside a 1902000.
const (
	backendBadRequest  = 1901400
	backendConflict    = 1901409
	backendSystemError = 1901500
)

// backendError is a refusal of IAM's backend as the SaaS passes it on: 1902000 in HTTP 200, whose
// message carries the backend call and the backend's own code and message, in the SaaS's words
// ("request iam error! Request=[…] Response[code=N, message=…]"). The backend prefixes its message
// with the code's name ("bad request:", "conflict:"), or "system error[request_id=…]: " and the
// chain of the failed lookups.
func backendError(method string, code int, msg string) *saasError {
	return backendErrorAt(method, "/api/v1/web/groups/members", code, msg)
}

// backendErrorAt is backendError for the backend route path.
func backendErrorAt(method, path string, code int, msg string) *saasError {
	switch code {
	case backendBadRequest:
		msg = "bad request:" + msg
	case backendConflict:
		msg = "conflict:" + msg
	case backendSystemError:
		msg = "system error[request_id=" + newRequestID() + "]: " + msg
	}
	return mgmtError(codeUpstream, fmt.Sprintf("请求第三方API错误: request iam error! Request=[%s %s request_id=%s] "+
		"Response[code=%d, message=%s]", method, path, newRequestID(), code, msg))
}

func (mc *mgmtCall) addMembers(g *mgmtGroup) (any, bool, *saasError) {
	refs, expiredAt, e := decodeMembers(mc.raw, mc.now, true, mc.s.model)
	if e != nil {
		return nil, false, e
	}
	// The SaaS splits the templates off first, reading their ids as integers.
	templates, e := templateIDs(refs)
	if e != nil {
		return nil, false, e
	}
	var keep []memberKey
	for _, r := range refs {
		switch {
		case r.Type == "template":
			continue // bound below, counted in no member limit
		case r.Type == "user" && r.ID == "admin", !mc.known(r.Type, r.ID):
			continue // dropped without an error
		}
		keep = append(keep, r)
	}
	if gm := mc.ms.gms[g.GradeManager]; gm != nil {
		for _, k := range keep {
			if !mc.inSubjectScope(gm, k) {
				what := map[string]string{"user": "用户", "department": "部门"}[k.Type]
				return nil, false, mgmtError(codeForbidden, fmt.Sprintf("%s (%s) 在分级管理员的授权范围内，请编辑分级管理员授权范围", what, k.ID))
			}
		}
	}
	users, depts := g.counts()
	if limit := mc.s.model.groupMemberLimit(); users+depts+len(keep) > limit {
		return nil, false, validationText(fmt.Sprintf("超过用户组最大可添加成员数%d", limit))
	}
	if e := mc.ms.checkTemplates(g, templates); e != nil {
		return nil, false, e
	}
	if len(keep) > maxMembersPerCall {
		return nil, false, backendError("http_post", backendBadRequest,
			fmt.Sprintf("Members must less or equals to %d", maxMembersPerCall))
	}
	if e := mc.checkGroupsQuota(g, keep); e != nil {
		return nil, false, e
	}
	for _, k := range keep {
		mc.ms.upsert(g, k.Type, k.ID, expiredAt, mc.now)
		if g.Sync && k.Type == "user" {
			mc.syncMemberToGradeManager(g, k.ID, true)
		}
	}
	mc.ms.mirrorMembers(g, keep, true)
	for _, id := range templates {
		mc.ms.bindTemplate(g, id, expiredAt, mc.now)
	}
	return map[string]any{}, true, nil
}

// syncMemberToGradeManager mirrors a sync group's user member change on its grade manager.
func (mc *mgmtCall) syncMemberToGradeManager(g *mgmtGroup, user string, add bool) {
	gm := mc.ms.gms[g.GradeManager]
	if gm == nil {
		return
	}
	i := slicesIndex(gm.Members, user)
	switch {
	case add && i < 0:
		gm.Members = append(gm.Members, user)
	case !add && i >= 0:
		gm.Members = append(gm.Members[:i:i], gm.Members[i+1:]...)
	}
}

func slicesIndex(list []string, v string) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return -1
}

func (mc *mgmtCall) deleteMembers(g *mgmtGroup) (any, bool, *saasError) {
	typ, ids := mc.q.Get("type"), []string{}
	for _, id := range strings.Split(mc.q.Get("ids"), ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	var fe fieldErrors
	switch {
	case !mc.q.Has("type"):
		fe.add("This field is required.", "type")
	case typ != "user" && typ != "department" && typ != "template":
		fe.add(fmt.Sprintf("\"%s\" is not a valid choice.", typ), "type")
	}
	switch {
	case !mc.q.Has("ids"):
		fe.add("This field is required.", "ids")
	case len(ids) == 0:
		fe.add("This field may not be blank.", "ids")
	}
	if !fe.empty() {
		return nil, false, validationErr(fe)
	}
	if typ == "template" {
		// Templates are unbound by the SaaS alone: none of the backend's member checks below.
		return mc.unbindTemplates(g, ids)
	}
	if len(ids) > maxMembersPerCall {
		return nil, false, backendError("http_delete", backendBadRequest,
			fmt.Sprintf("Members must less or equals to %d", maxMembersPerCall))
	}
	for _, id := range ids {
		if !mc.known(typ, id) {
			return nil, false, backendError("http_delete", backendSystemError,
				fmt.Sprintf("[Handler:ctl.DeleteGroupMembers] type=`group`, id=`%d` => [GroupCTL:DeleteGroupMembers] "+
					"cacheimpls.GetLocalSubjectPK _type=`%s`, id=`%s` fail => [Raw:Error] sql: no rows in result set", g.ID, typ, id))
		}
	}
	keys := make([]memberKey, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, memberKey{typ, id})
		if _, ok := g.Members[memberKey{typ, id}]; ok {
			delete(g.Members, memberKey{typ, id})
			if g.Sync && typ == "user" {
				mc.syncMemberToGradeManager(g, id, false)
			}
		}
	}
	mc.ms.mirrorMembers(g, keys, false)
	return map[string]any{}, true, nil
}

func (mc *mgmtCall) updateExpiry(g *mgmtGroup) (any, bool, *saasError) {
	refs, expiredAt, e := decodeMembers(mc.raw, mc.now, false, mc.s.model)
	if e != nil {
		return nil, false, e
	}
	// The SaaS passes every member to one backend call, whose serializer takes at most 1000.
	if len(refs) > maxMembersPerCall {
		return nil, false, backendErrorAt("http_put", "/api/v1/web/group-members/expired_at", backendBadRequest,
			fmt.Sprintf("Members must less or equals to %d", maxMembersPerCall))
	}
	for _, r := range refs {
		if m := g.Members[r]; m != nil && expiredAt > m.ExpiredAt {
			m.ExpiredAt = expiredAt
		}
	}
	return map[string]any{}, true, nil
}

// pageOf reads page/page_size (or limit/offset): an offset and a limit; default page size 10, no
// maximum.
func pageOf(q url.Values) (int, int, *saasError) {
	var fe fieldErrors
	num := func(key string, def, least int) int {
		v := q.Get(key)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			fe.add("A valid integer is required.", key)
			return def
		}
		if n < least {
			fe.add(fmt.Sprintf("Ensure this value is greater than or equal to %d.", least), key)
		}
		return n
	}
	var off, lim int
	if q.Get("page") == "" && q.Get("page_size") == "" && q.Get("limit") != "" {
		lim, off = num("limit", defaultPageSize, 1), num("offset", 0, 0)
	} else {
		page, size := num("page", 1, 1), num("page_size", defaultPageSize, 1)
		off, lim = (page-1)*size, size
	}
	if !fe.empty() {
		return 0, 0, validationErr(fe)
	}
	return off, lim, nil
}

// pastTheEnd is the SaaS's answer to a page number past the end of a list paged by page number
// (the group list, the v1 grade-manager list): DRF's paginator raises NotFound, 404 1902404. The
// first page of an empty list is not past the end; the member list pages by offset and answers an
// empty page.
func pastTheEnd(q url.Values, off, n int) *saasError {
	if q.Get("page") != "" && off > 0 && off >= n {
		return mgmtError(codeNotFound, "数据不存在")
	}
	return nil
}

func paged[T any](rows []T, off, lim int) map[string]any {
	n := len(rows)
	lo, hi := min(off, n), min(off+lim, n)
	return map[string]any{"count": n, "results": rows[lo:hi]}
}

const (
	anonymousUser            = "bk__anonymous_user"
	timeLayout               = "2006-01-02 15:04:05"
	defaultPageSize          = 10
	maxGroupsPerGradeManager = 10000
	maxGradeManagerMembers   = 1000
	maxMembersPerCall        = 1000
	maxGroupsPerCreate       = 10
)

// gradeManagerDeleteDelay is how long a grade-manager delete takes to be carried out: the
// WithGradeManagerDeleteDelay option, else the model's limit.
func (s *Server) gradeManagerDeleteDelay() time.Duration {
	if s.gmDeleteDelay != nil {
		return *s.gmDeleteDelay
	}
	return s.model.gradeManagerDeleteDelay()
}

func (gm *gradeManager) view() map[string]any {
	members := gm.Members
	if members == nil {
		members = []string{}
	}
	return map[string]any{"id": gm.ID, "name": gm.Name, "description": gm.Description, "creator": anonymousUser,
		"created_time": gm.Created.Format(timeLayout), "updated_time": gm.Updated.Format(timeLayout), "updater": anonymousUser,
		"members": members, "sync_perm": gm.SyncPerm}
}

// inSubjectScope is the SaaS's RoleSubjectScopeChecker: a member is in the grade manager's subject
// scope when the scope is everyone or names it, or names a department it is in — a department
// itself or one of its ancestors; for a user, one of its departments' lines. A grade manager
// without subject scopes (from an older state file) admits everyone.
func (mc *mgmtCall) inSubjectScope(gm *gradeManager, k memberKey) bool {
	if len(gm.SubjectScopes) == 0 {
		return true
	}
	depts := map[string]bool{}
	for _, sc := range gm.SubjectScopes {
		if sc.Type == "*" || sc.Type == k.Type && sc.ID == k.ID {
			return true
		}
		if sc.Type == "department" {
			depts[sc.ID] = true
		}
	}
	m := mc.s.model
	var direct []string
	switch k.Type {
	case "department":
		direct = []string{k.ID}
	case "user":
		direct = m.UserDepartments[k.ID]
	}
	for _, d := range direct {
		for _, a := range m.departmentLine(d) {
			if depts[a] {
				return true
			}
		}
	}
	return false
}

// checkGroupsQuota is the backend's checkSubjectGroupsQuota: in each system where the group holds
// permissions, a subject joining it may be in at most limits.subject_max_groups groups holding
// permissions there (its unexpired memberships; a member already in the group only has its expiry
// raised). Over it the backend answers 409, which the SaaS passes on as 1902000.
func (mc *mgmtCall) checkGroupsQuota(g *mgmtGroup, joining []memberKey) *saasError {
	// The systems in which each group holds permissions, read once.
	held := map[string]map[string]bool{}
	for k := range mc.s.store.policies {
		if k.SubjectType == "group" {
			if held[k.SubjectID] == nil {
				held[k.SubjectID] = map[string]bool{}
			}
			held[k.SubjectID][k.System] = true
		}
	}
	systems := held[itoa64(g.ID)]
	if len(systems) == 0 {
		return nil
	}
	limit := mc.s.model.subjectMaxGroups()
	now := mc.now.Unix()
	for _, system := range slices.Sorted(maps.Keys(systems)) {
		for _, k := range joining {
			if m := g.Members[k]; m != nil && m.ExpiredAt > now {
				continue
			}
			n := 0
			for _, other := range mc.ms.groups {
				if m := other.Members[k]; other.ID != g.ID && m != nil && m.ExpiredAt > now && held[itoa64(other.ID)][system] {
					n++
				}
			}
			if n+1 > limit {
				return backendError("http_post", backendConflict,
					fmt.Sprintf("[Handler:checkSubjectGroupsQuota] subject {%s %s} can only have %d groups in system %s.[current %d] => quota error",
						k.Type, k.ID, limit, system, n))
			}
		}
	}
	return nil
}
