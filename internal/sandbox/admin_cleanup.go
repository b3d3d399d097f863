package sandbox

// adminCleanup serves DELETE /api/v1/open/admin/cleanup/users/permission/. Not served yet.
func (s *Server) adminCleanup(c *call, app *App, m []string) (any, *saasError) {
	return nil, mgmtError(codeSystemError, "not emulated yet")
}
