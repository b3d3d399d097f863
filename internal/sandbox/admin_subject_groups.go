package sandbox

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
)

// GET /api/v1/open/admin/subjects/{type}/{id}/groups/ (the SaaS's AdminSubjectGroupViewSet, allow-list
// subject_joined_group_list, gateway resource admin_list_subject_groups of the 2026 generation) lists the
// subject's direct memberships: the backend's subject_relation rows of the subject, expired ones
// included (before_expired_at=0), newest relation first (ORDER BY pk DESC). A group reached through a
// department, or through a subject template, is not among them. The answer is {count, results:[{id,
// name, expired_at}]}.
//
// Paging is the SaaS's CustomPageNumberPagination: page (default 1; not a positive integer → 1902412
// "wrong page …") and page_size (default the REST framework's PAGE_SIZE, 10; a value that is not a
// positive integer falls back to it, and there is no maximum). limit and offset are CompatiblePagination's,
// which this view does not use: they are ignored.
//
// A subject IAM does not know fails the backend's lookup (cacheimpls.GetLocalSubjectPK: sql.ErrNoRows),
// which the backend answers as its system error and the SaaS passes on as 1902000 in HTTP 200. The
// subject type is not checked: any type other than user and department is unknown here.

// adminSubjectGroupsPageSize is the REST framework's PAGE_SIZE of the SaaS (config/default.py).
const adminSubjectGroupsPageSize = 10

// adminSubjectGroups serves the route (m[1] the subject type, m[2] its id).
func (s *Server) adminSubjectGroups(c *call, _ *App, m []string) (any, *saasError) {
	typ, id := m[1], m[2]
	q := c.r.URL.Query()
	page := 1
	if raw, ok := q["page"]; ok {
		n, err := strconv.Atoi(raw[0])
		if err != nil || n <= 0 {
			// _positive_int(strict=True): the SaaS words both failures alike.
			return nil, mgmtError(codeValidation, "wrong page "+raw[0])
		}
		page = n
	}
	size := adminSubjectGroupsPageSize
	if n, err := strconv.Atoi(q.Get("page_size")); err == nil && n > 0 {
		size = n
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	known := false
	switch typ {
	case "user":
		known = s.model.users[id] || st.synced[id]
	case "department":
		known = s.model.departments[id]
	}
	if !known {
		return nil, backendErrorAt(http.MethodGet, "/api/v1/web/subject-groups", backendSystemError, fmt.Sprintf(
			"[Handler:ListSubjectGroups] type=`%s`, id=`%s` => [GroupCTL:GetSubjectGroupCountBeforeExpiredAt] "+
				"cacheimpls.GetLocalSubjectPK _type=`%s`, id=`%s` fail => [Raw:Error] sql: no rows in result set", typ, id, typ, id))
	}
	type relation struct {
		group *mgmtGroup
		mb    *member
	}
	var rels []relation
	for _, g := range st.mgmt.groups {
		if mb := g.Members[memberKey{typ, id}]; mb != nil {
			rels = append(rels, relation{g, mb})
		}
	}
	slices.SortFunc(rels, func(a, b relation) int {
		return cmp.Or(cmp.Compare(b.mb.Seq, a.mb.Seq), cmp.Compare(b.group.ID, a.group.ID))
	})
	results := []map[string]any{}
	offset := (page - 1) * size
	for i := offset; i < len(rels) && i < offset+size; i++ {
		r := rels[i]
		results = append(results, map[string]any{"id": r.group.ID, "name": r.group.Name, "expired_at": r.mb.ExpiredAt})
	}
	return map[string]any{"count": len(rels), "results": results}, nil
}
