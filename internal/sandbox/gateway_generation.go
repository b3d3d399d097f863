package sandbox

import (
	"fmt"
	"net/http"
)

// The bk-iam gateway's resource list changed in 2026. The generation before it (the one the real
// IAM run here routes by) has no admin resources and lets any app call the backend's
// users/{id}/groups, which is not public but needs no grant. The 2026 generation adds admin
// resources (the leaver cleanup, a subject's groups) and makes them and users/{id}/groups ask for
// a grant of the resource to the app, which an ordinary app does not hold: the gateway answers 403
// APP_NO_PERMISSION before IAM sees the call. A resource the gateway lacks is its 404
// API_NOT_FOUND.
const (
	gateway2024 = "2024"
	gateway2026 = "2026"
)

// Gateway resources named by the generations' resource lists.
const (
	gwOpenUserGroups         = "open_user_groups"
	gwAdminSubjectGroups     = "admin_list_subject_groups"
	gwAdminCleanupPermission = "admin_cleanup_users_permission"
)

// newerGateway reports whether the sandbox plays the 2026 gateway generation.
func (s *Server) newerGateway() bool { return s.model.Gateway == gateway2026 }

// gatewayResource checks what the gateway checks of a resource the generations treat apart:
// whether the generation has it (adminOnly resources are the 2026 generation's), and, on the 2026
// generation, whether the app holds a grant of it. It answers the refusal itself and reports
// false.
func (s *Server) gatewayResource(c *call, app *App, resource string, adminOnly bool) bool {
	if !s.newerGateway() {
		if adminOnly {
			c.writeGatewayError(http.StatusNotFound, codeGWNotFound, "API not found [method="+c.r.Method+" path="+c.r.URL.Path+"]")
			return false
		}
		return true
	}
	if !app.granted(resource) {
		c.writeGatewayError(http.StatusForbidden, codeGWNoPerm,
			fmt.Sprintf(`App has no permission to the resource [reason="app_code=%s has no permission to resource %s of gateway bk-iam, apply for it on the API gateway"]`, app.Code, resource))
		return false
	}
	return true
}
