package sandbox

import (
	"net/http"
	"regexp"
	"sort"
	"strconv"
)

// The backend's open route that lists a user's groups: GET /api/v1/open/users/{id}/groups, with
// ?inherit=true for the groups of the user's departments and their ancestors too. Any
// authenticated app may call it (the gateway route is not public: a real site grants it per app);
// it checks no system. Its answer for a user IAM does not know, 1901404 "not found:subject not
// exist" in HTTP 200, is how a caller tells a typo from a user without permissions: the access
// checks answer such a user false. Expired memberships are left out, and the answer has no expiry.
// It reads the backend's subject_relation, the memberships alone: a group the user reaches only
// through a subject template is not listed, though the access checks count it.

var reUserGroups = regexp.MustCompile(`^/api/v1/open/users/([^/]+)/groups/?$`)

// serveUserGroups serves the route; false when the path is not it.
func (s *Server) serveUserGroups(c *call) bool {
	m := reUserGroups.FindStringSubmatch(c.r.URL.Path)
	if c.r.Method != http.MethodGet || m == nil {
		return false
	}
	failed := true
	defer func() { s.stats.record("user_groups", 0, failed) }()
	if !s.sleepLatency(c.r) {
		return true
	}
	spared := s.faults.sparesReads()
	if !spared && !s.takeReadFault(c) {
		return true
	}
	app, ok := s.gatewayAuth(c)
	if !ok || !s.gatewayResource(c, app, gwOpenUserGroups, false) {
		return true
	}
	user := m[1]
	inherit := c.r.URL.Query().Get("inherit") == "true"
	st := s.store
	st.mu.Lock()
	known := s.model.users[user] || st.synced[user]
	var ids []string
	if known {
		now := s.now().Unix()
		if inherit {
			ids = s.userGroupsLocked(user, now)
		} else {
			for id, g := range st.mgmt.groups {
				if mb := g.Members[memberKey{"user", user}]; mb != nil && mb.ExpiredAt > now {
					ids = append(ids, itoa64(id))
				}
			}
		}
	}
	names := map[string]string{}
	for _, id := range ids {
		n, _ := strconv.ParseInt(id, 10, 64)
		if g := st.mgmt.groups[n]; g != nil {
			names[id] = g.Name
		}
	}
	st.mu.Unlock()
	if !known {
		c.writeJSON(http.StatusOK, backendBody{Code: codeBackendNotFound, Message: "not found:subject not exist", Data: map[string]any{}})
		return true
	}
	sort.Strings(ids)
	out := make([]map[string]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, map[string]string{"type": "group", "id": id, "name": names[id]})
	}
	failed = false
	if !spared {
		s.faults.success()
	}
	c.writeJSON(http.StatusOK, backendBody{Code: 0, Message: "ok", Data: out})
	return true
}
