package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The management API v2 (the package doc of internal/bkiam, "The management API"), grade
// managers so far: create, get, update (a full replace), delete (answered at once, carried out
// after the model's grade_manager_delete_delay). Gateway only; the SaaS envelope with the error's
// own HTTP status (v2), IAM backend errors as 1902000 in HTTP 200.

const mgmtPrefix = "/api/v2/open/management/systems/"

const (
	codeConflict = 1902409
	// defaultGradeManagerDeleteDelay stands for IAM's asynchronous delete (a Celery task).
	defaultGradeManagerDeleteDelay = 2 * time.Second
)

// gradeManager is a grade manager created through the API by System.
type gradeManager struct {
	ID          int64
	System      string
	Name        string
	Description string
	Members     []string
	SyncPerm    bool
	GroupName   string
	Created     time.Time
	Updated     time.Time
	// DeleteAt is when an asked-for delete is carried out; zero when none was asked.
	DeleteAt time.Time
}

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

// serveManagement serves the management routes; false when the path is not one of them.
func (s *Server) serveManagement(c *call) bool {
	rest, ok := strings.CutPrefix(c.r.URL.Path, mgmtPrefix)
	if !ok {
		return false
	}
	system, route, _ := strings.Cut(rest, "/")
	parts := strings.Split(strings.TrimSuffix(route, "/"), "/")
	var api string
	var id int64
	switch {
	case len(parts) == 1 && parts[0] == "grade_managers" && c.r.Method == http.MethodPost:
		api = "v2_grade_manager_create"
	case len(parts) == 2 && parts[0] == "grade_managers" && strings.HasSuffix(route, "/"):
		n, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil || n <= 0 {
			return false // <int:id> does not match: no route
		}
		id = n
		switch c.r.Method {
		case http.MethodGet:
			api = "v2_grade_manager_detail"
		case http.MethodPut:
			api = "v2_grade_manager_update"
		case http.MethodDelete:
			api = "v2_grade_manager_delete"
		default:
			return false
		}
	default:
		return false
	}
	failed := true
	defer func() { s.stats.record("mgmt:"+api, 0, failed) }()
	if !s.sleepLatency(c.r) {
		return true
	}
	if f := s.faults.take(); f != nil {
		s.writeFault(c, f)
		return true
	}
	app, ok := s.gatewayAuth(c)
	if !ok {
		return true
	}
	data, e := s.manage(c, app, system, api, id)
	if e != nil {
		c.writeJSON(mgmtStatus(e.code), saasBody{Result: false, Code: e.code, Message: e.message})
		return true
	}
	failed = false
	s.faults.success()
	c.writeJSON(http.StatusOK, saasBody{Result: true, Code: codeOK, Message: "OK", Data: data})
	return true
}

// manage checks the caller as the SaaS does — client, allow-list, ownership — and serves api.
func (s *Server) manage(c *call, app *App, system, api string, id int64) (any, *saasError) {
	if !app.clientOf(system) {
		return nil, forbidden(fmt.Sprintf("app_code %s can not access system %s", app.Code, system))
	}
	if !app.mayManage(system, api) {
		return nil, forbidden(fmt.Sprintf("system[%s] is not allowed to call management api[%s], please contact the developer to add a whitelist", system, api))
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	now := s.now()
	s.store.purgeGradeManagersLocked(now)
	var gm *gradeManager
	if id != 0 {
		gm = s.store.gms[id]
		if gm == nil || gm.System != system {
			return nil, forbidden(fmt.Sprintf("role[%d] can not be operated by app_code[%s], since role is not created by system[%s])", id, app.Code, system))
		}
	}
	switch api {
	case "v2_grade_manager_detail":
		return gm.view(), nil
	case "v2_grade_manager_delete":
		if gm.DeleteAt.IsZero() {
			gm.DeleteAt = now.Add(s.model.gradeManagerDeleteDelay())
		}
		return map[string]any{}, nil
	}
	spec, e := decodeGradeManager(c.r, s.maxBody)
	if e != nil {
		return nil, e
	}
	for _, other := range s.store.gms {
		if other != gm && strings.EqualFold(other.Name, spec.Name) {
			return nil, mgmtError(codeConflict, fmt.Sprintf("与已有资源冲突(重名等): 名称 [%s] 已存在，请修改为其他名称", spec.Name))
		}
	}
	if gm == nil {
		s.store.nextGM++
		gm = &gradeManager{ID: s.store.nextGM, System: system, Created: now}
		s.store.gms[gm.ID] = gm
	}
	gm.Name, gm.Description, gm.Members, gm.SyncPerm, gm.GroupName, gm.Updated = spec.Name, spec.Description, spec.Members, spec.SyncPerm, spec.GroupName, now
	if api == "v2_grade_manager_create" {
		return map[string]int64{"id": gm.ID}, nil
	}
	return map[string]any{}, nil
}

// gradeManagerSpec is the create and update body.
type gradeManagerSpec struct {
	Name                *string           `json:"name"`
	Description         *string           `json:"description"`
	Members             []string          `json:"members"`
	AuthorizationScopes []json.RawMessage `json:"authorization_scopes"`
	SubjectScopes       []json.RawMessage `json:"subject_scopes"`
	SyncPerm            bool              `json:"sync_perm"`
	GroupName           string            `json:"group_name"`
}

type gradeManagerFields struct {
	Name, Description, GroupName string
	Members                      []string
	SyncPerm                     bool
}

func decodeGradeManager(r *http.Request, limit int64) (gradeManagerFields, *saasError) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	var b gradeManagerSpec
	if err != nil || int64(len(raw)) > limit || json.Unmarshal(raw, &b) != nil {
		return gradeManagerFields{}, mgmtError(codeBadJSON, "Json格式错误")
	}
	var fe fieldErrors
	switch {
	case b.Name == nil:
		fe.add("This field is required.", "name")
	case strings.TrimSpace(*b.Name) == "":
		fe.add("This field may not be blank.", "name")
	case len([]rune(*b.Name)) > 512:
		fe.add("Ensure this field has no more than 512 characters.", "name")
	}
	if b.Description == nil {
		fe.add("This field is required.", "description")
	}
	if b.Members == nil {
		fe.add("This field is required.", "members")
	}
	if len(b.AuthorizationScopes) == 0 {
		fe.add("This list may not be empty.", "authorization_scopes")
	}
	if len(b.SubjectScopes) == 0 {
		fe.add("This list may not be empty.", "subject_scopes")
	}
	if !fe.empty() {
		e := fe.err() // on v2 open paths the JSON of the field errors is followed by the name
		e.message += " (VALIDATE_ERROR)"
		return gradeManagerFields{}, e
	}
	return gradeManagerFields{Name: strings.TrimSpace(*b.Name), Description: *b.Description, Members: b.Members,
		SyncPerm: b.SyncPerm, GroupName: b.GroupName}, nil
}

func (gm *gradeManager) view() map[string]any {
	const layout = "2006-01-02 15:04:05"
	members := gm.Members
	if members == nil {
		members = []string{}
	}
	return map[string]any{"id": gm.ID, "name": gm.Name, "description": gm.Description, "creator": "bk__anonymous_user",
		"created_time": gm.Created.Format(layout), "updated_time": gm.Updated.Format(layout), "updater": "bk__anonymous_user",
		"members": members, "sync_perm": gm.SyncPerm}
}

// purgeGradeManagersLocked carries out the grade-manager deletes whose time has come.
func (st *store) purgeGradeManagersLocked(now time.Time) {
	for id, gm := range st.gms {
		if !gm.DeleteAt.IsZero() && !now.Before(gm.DeleteAt) {
			delete(st.gms, id)
		}
	}
}
