package sandbox

import (
	"net/http"
	"regexp"
)

// The SaaS's admin API, /api/v1/open/admin/…: the super manager's routes, keyed by app code in
// IAM's admin allow-list (apps[].admin) and carried only by the 2026 gateway generation
// (gateway_generation.go), which also asks a grant of each resource to the app. Its errors are the
// v1 open API's: HTTP 200 with result false for all but 401, 403, 404 and 500.

// adminRoute is one admin route: its gateway resource, its admin allow-list name, its stat key
// and what serves it once the gateway and the allow-list let the call through.
type adminRoute struct {
	method, resource, api, stat string
	path                        *regexp.Regexp
	serve                       func(s *Server, c *call, app *App, m []string) (any, *saasError)
}

var adminRoutes = []adminRoute{
	{http.MethodGet, gwAdminSubjectGroups, "subject_joined_group_list", "admin:subject_groups",
		regexp.MustCompile(`^/api/v1/open/admin/subjects/([^/]+)/([^/]+)/groups/$`), (*Server).adminSubjectGroups},
	{http.MethodDelete, gwAdminCleanupPermission, "subject_permission_cleanup", "admin:cleanup",
		regexp.MustCompile(`^/api/v1/open/admin/cleanup/users/permission/$`), (*Server).adminCleanup},
}

// serveAdmin serves the admin routes; false when the path is not one of them.
func (s *Server) serveAdmin(c *call) bool {
	var rt *adminRoute
	var m []string
	for i := range adminRoutes {
		if m = adminRoutes[i].path.FindStringSubmatch(c.r.URL.Path); m != nil && adminRoutes[i].method == c.r.Method {
			rt = &adminRoutes[i]
			break
		}
	}
	if rt == nil {
		return false
	}
	failed := true
	defer func() { s.stats.record(rt.stat, 0, failed) }()
	if !s.sleepLatency(c.r) || !s.takeReadFault(c) {
		return true
	}
	app, ok := s.gatewayAuth(c)
	if !ok || !s.gatewayResource(c, app, rt.resource, true) {
		return true
	}
	if !app.mayAdmin(rt.api) {
		c.writeJSON(http.StatusForbidden, saasBody{Result: false, Code: codeForbidden,
			Message: "没有访问权限: app_code(" + app.Code + ") do not be allowed to call api(" + rt.api + ")"})
		return true
	}
	data, e := rt.serve(s, c, app, m)
	if e != nil {
		status := mgmtStatus(e.code)
		if status != http.StatusUnauthorized && status != http.StatusForbidden && status != http.StatusNotFound && status != http.StatusInternalServerError {
			status = http.StatusOK
		}
		c.writeJSON(status, saasBody{Result: false, Code: e.code, Message: e.message, Data: nil})
		return true
	}
	failed = false
	s.faults.success()
	c.writeJSON(http.StatusOK, saasBody{Result: true, Code: codeOK, Message: "OK", Data: data})
	return true
}
