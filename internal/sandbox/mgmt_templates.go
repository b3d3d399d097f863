package sandbox

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Subject templates (人员模板) as an app meets them through the management API v2: the SaaS's
// subject_template app and the backend's subject template groups. No open route creates a
// free-standing one. A group created with sync_subject_template (the group batch create, or a grade
// manager's sync group on the grade manager's create) gets a read-only template mirroring it: named
// and described as the group was then, related to the group's owner, holding the group's members.
// The member routes' adds and removes of users and departments are mirrored on it (the SaaS's
// GroupBiz.add_members and remove_members), and it is deleted with the group. A template is bound
// to groups of the same owner as a member of type template, each binding with its own expiry; the
// backend's access checks count the groups a user reaches through a bound template (access.go),
// its user-groups route does not.

// subjectTemplate is a subject template. System and GradeManager are its owner, as a group's:
// GradeManager 0 is the system manager of System.
type subjectTemplate struct {
	ID           int64
	System       string
	GradeManager int64
	Name         string
	Description  string
	Readonly     bool
	// SourceGroup is the group the template mirrors, 0 for none.
	SourceGroup int64
	Created     time.Time
	// Members are the template's users and departments; a relation has no expiry of its own, the
	// binding to a group has.
	Members map[memberKey]bool
}

// templateBinding is a subject template's membership of a group (the SaaS's SubjectTemplateGroup);
// Seq orders the bindings, newest first in the list.
type templateBinding struct {
	ExpiredAt int64
	CreatedAt int64
	Seq       int64
}

func (t *subjectTemplate) clone() *subjectTemplate {
	c := *t
	c.Members = make(map[memberKey]bool, len(t.Members))
	for k := range t.Members {
		c.Members[k] = true
	}
	return &c
}

// sameOwner reports whether the template is related to the group's owner: the SaaS's
// check_subject_template takes only the templates of the group's role.
func (t *subjectTemplate) sameOwner(g *mgmtGroup) bool {
	return t.GradeManager == g.GradeManager && (g.GradeManager != 0 || t.System == g.System)
}

// sortedMembers lists the template's members by type, then id.
func (t *subjectTemplate) sortedMembers() []memberKey {
	out := make([]memberKey, 0, len(t.Members))
	for k := range t.Members {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// mirrorGroup creates the read-only template mirroring g, holding g's members: the SaaS's
// SubjectTemplateBiz.create with source_group_id, called for sync_subject_template.
func (ms *mgmtState) mirrorGroup(g *mgmtGroup, now time.Time) {
	ms.nextTemplate++
	t := &subjectTemplate{ID: ms.nextTemplate, System: g.System, GradeManager: g.GradeManager, Name: g.Name,
		Description: g.Description, Readonly: true, SourceGroup: g.ID, Created: now, Members: map[memberKey]bool{}}
	for k := range g.Members {
		t.Members[k] = true
	}
	ms.templates[t.ID] = t
}

// mirrorOf is the template mirroring the group, nil when none does.
func (ms *mgmtState) mirrorOf(group int64) *subjectTemplate {
	for _, t := range ms.templates {
		if t.SourceGroup == group {
			return t
		}
	}
	return nil
}

// mirrorMembers applies a member-route change of g's users and departments to the template
// mirroring g. The SaaS passes every subject of the call on, not only those that were (or were not)
// members, so a removal of a subject the group did not hold still leaves the template.
func (ms *mgmtState) mirrorMembers(g *mgmtGroup, keys []memberKey, add bool) {
	t := ms.mirrorOf(g.ID)
	if t == nil {
		return
	}
	for _, k := range keys {
		if add {
			t.Members[k] = true
		} else {
			delete(t.Members, k)
		}
	}
}

// deleteGroup deletes a group with its members and template bindings, and the template mirroring
// it with that template's bindings to other groups (the SaaS's GroupBiz.delete).
func (ms *mgmtState) deleteGroup(id int64) {
	delete(ms.groups, id)
	if t := ms.mirrorOf(id); t != nil {
		ms.deleteTemplate(t.ID)
	}
}

// deleteTemplate deletes a template and its bindings.
func (ms *mgmtState) deleteTemplate(id int64) {
	delete(ms.templates, id)
	for _, g := range ms.groups {
		delete(g.Templates, id)
	}
}

// templatesOf lists the templates related to an owner (0 with system: the system manager's),
// newest first (the model's ordering ["-id"]).
func (ms *mgmtState) templatesOf(system string, gm int64) []*subjectTemplate {
	var out []*subjectTemplate
	for _, t := range ms.templates {
		if t.GradeManager == gm && (gm != 0 || t.System == system) {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out
}

// bindTemplate binds a template to g until expiredAt. A template bound already is skipped, its
// expiry unchanged: the SaaS's grant_subject_template returns early, and this route never renews
// a binding.
func (ms *mgmtState) bindTemplate(g *mgmtGroup, id, expiredAt int64, now time.Time) {
	if g.Templates[id] != nil {
		return
	}
	ms.nextRel++
	g.Templates[id] = &templateBinding{ExpiredAt: expiredAt, CreatedAt: now.Unix(), Seq: ms.nextRel}
}

// checkTemplates is the SaaS's check_subject_template: every template must be related to the
// group's owner, else 400 "人员模板不存在：N" for the first that is not.
func (ms *mgmtState) checkTemplates(g *mgmtGroup, ids []int64) *saasError {
	for _, id := range ids {
		if t := ms.templates[id]; t == nil || !t.sameOwner(g) {
			return validationText(fmt.Sprintf("人员模板不存在：%d", id))
		}
	}
	return nil
}

// templateIDs reads the ids of the members of type template as the SaaS's
// split_members_to_subject_and_template does, with Python's int(): surrounding white space and a
// sign are accepted, anything else is 400 "人员模板 ID 非法".
func templateIDs(refs []memberKey) ([]int64, *saasError) {
	var ids []int64
	for _, r := range refs {
		if r.Type != "template" {
			continue
		}
		id, err := strconv.ParseInt(strings.TrimSpace(r.ID), 10, 64)
		if err != nil {
			return nil, validationText("人员模板 ID 非法")
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// unbindTemplates is the member delete of type template: each id must read as an integer; the
// bindings named go, an id the group is not bound to is ignored (the SaaS deletes by filter).
func (mc *mgmtCall) unbindTemplates(g *mgmtGroup, ids []string) (any, bool, *saasError) {
	refs := make([]memberKey, 0, len(ids))
	for _, id := range ids {
		refs = append(refs, memberKey{"template", id})
	}
	tids, e := templateIDs(refs)
	if e != nil {
		return nil, false, e
	}
	for _, id := range tids {
		delete(g.Templates, id)
	}
	return map[string]any{}, true, nil
}

// listSubjectTemplates is GET grade_managers/{id}/subject_templates/: the grade manager's templates,
// newest first, paged as the group list, name and description case-insensitive substrings, creator
// exact (compared as the database's collation does); rows {id, name, description, readonly,
// source_group_id, creator, created_time}.
func (mc *mgmtCall) listSubjectTemplates(gm *gradeManager) (any, bool, *saasError) {
	off, lim, e := pageOf(mc.q)
	if e != nil {
		return nil, false, e
	}
	name, desc, creator := strings.ToLower(mc.q.Get("name")), strings.ToLower(mc.q.Get("description")), mc.q.Get("creator")
	rows := []map[string]any{}
	for _, t := range mc.ms.templatesOf(gm.System, gm.ID) {
		if !strings.Contains(strings.ToLower(t.Name), name) || !strings.Contains(strings.ToLower(t.Description), desc) ||
			creator != "" && !strings.EqualFold(creator, anonymousUser) {
			continue
		}
		rows = append(rows, map[string]any{"id": t.ID, "name": t.Name, "description": t.Description, "readonly": t.Readonly,
			"source_group_id": t.SourceGroup, "creator": anonymousUser, "created_time": t.Created.Format(timeLayout)})
	}
	if e := pastTheEnd(mc.q, off, len(rows)); e != nil {
		return nil, false, e
	}
	return paged(rows, off, lim), false, nil
}

// listGroupTemplates is GET groups/{id}/subject_templates/: the templates bound to the group,
// newest binding first, expired ones included, rows {id (a string, as the SaaS's CharField
// renders it), name, expired_at}.
func (mc *mgmtCall) listGroupTemplates(g *mgmtGroup) (any, bool, *saasError) {
	off, lim, e := pageOf(mc.q)
	if e != nil {
		return nil, false, e
	}
	rows := []map[string]any{}
	for _, id := range g.sortedTemplates() {
		// The SaaS names a row by its template, or by the template id when the name is gone.
		var name any = id
		if t := mc.ms.templates[id]; t != nil && t.Name != "" {
			name = t.Name
		}
		rows = append(rows, map[string]any{"id": strconv.FormatInt(id, 10), "name": name, "expired_at": g.Templates[id].ExpiredAt})
	}
	if e := pastTheEnd(mc.q, off, len(rows)); e != nil {
		return nil, false, e
	}
	return paged(rows, off, lim), false, nil
}

// templateGroupsLocked lists the groups user reaches through a subject template: a group bound,
// with an unexpired binding, to a template holding the user or one of the departments it is held
// as (keys, see userSubjectsLocked). The backend folds these bindings into the subject's system
// groups, which its access checks read.
func (s *Server) templateGroupsLocked(keys []memberKey, now int64) []string {
	ms := s.store.mgmt
	holds := map[int64]bool{}
	for id, t := range ms.templates {
		for _, k := range keys {
			if t.Members[k] {
				holds[id] = true
				break
			}
		}
	}
	if len(holds) == 0 {
		return nil
	}
	var out []string
	for id, g := range ms.groups {
		for tid, b := range g.Templates {
			if holds[tid] && b.ExpiredAt > now {
				out = append(out, itoa64(id))
				break
			}
		}
	}
	return out
}

// sortedTemplates lists the ids of the templates bound to g, newest binding first.
func (g *mgmtGroup) sortedTemplates() []int64 {
	ids := make([]int64, 0, len(g.Templates))
	for id := range g.Templates {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return g.Templates[ids[i]].Seq > g.Templates[ids[j]].Seq })
	return ids
}
