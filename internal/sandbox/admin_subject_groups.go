package sandbox

// adminSubjectGroups serves GET /api/v1/open/admin/subjects/{type}/{id}/groups/ (m[1] the type,
// m[2] the id). Not served yet.
func (s *Server) adminSubjectGroups(c *call, app *App, m []string) (any, *saasError) {
	return nil, mgmtError(codeSystemError, "not emulated yet")
}
