package sandbox

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Inspection of the management API's state: GET /_sandbox/grade_managers and the Server accessors.

// GradeManagerView is a stored grade manager as inspection shows it. DeleteAt (unix seconds) is
// set while an asked-for delete waits to be carried out.
type GradeManagerView struct {
	ID          int64    `json:"id"`
	System      string   `json:"system"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Members     []string `json:"members"`
	SyncPerm    bool     `json:"sync_perm"`
	GroupName   string   `json:"group_name,omitempty"`
	// AuthorizationScopes and SubjectScopes are what the grade manager was given, which IAM's API
	// never answers back: shown here so that a sandbox user can see what to write in an adopted
	// grade manager's configuration.
	AuthorizationScopes []mgmtScope   `json:"authorization_scopes"`
	SubjectScopes       []mgmtSubject `json:"subject_scopes"`
	DeleteAt            int64         `json:"delete_at,omitempty"`
	// WebUI is set on a grade manager without a creator record (see ForgetCreator).
	WebUI bool `json:"web_ui,omitempty"`
}

// GroupView is a stored management group. GradeManager is its owning grade manager, 0 for the
// system manager of System; Sync marks a grade manager's sync group.
type GroupView struct {
	ID           int64        `json:"id"`
	System       string       `json:"system"`
	GradeManager int64        `json:"grade_manager"`
	Name         string       `json:"name"`
	Description  string       `json:"description"`
	Readonly     bool         `json:"readonly"`
	Sync         bool         `json:"sync,omitempty"`
	Members      []MemberView `json:"members"`
	// Templates are the subject templates bound to the group, newest binding first (absent when
	// there is none).
	Templates []TemplateBindingView `json:"templates,omitempty"`
}

// TemplateBindingView is a subject template bound to a group until ExpiredAt.
type TemplateBindingView struct {
	Template  int64 `json:"template"`
	ExpiredAt int64 `json:"expired_at"`
	CreatedAt int64 `json:"created_at"`
}

// SubjectTemplateView is a stored subject template: its owner (GradeManager 0 is the system
// manager of System), the group it mirrors (SourceGroup) and its members, by type then id.
type SubjectTemplateView struct {
	ID           int64         `json:"id"`
	System       string        `json:"system"`
	GradeManager int64         `json:"grade_manager"`
	Name         string        `json:"name"`
	Description  string        `json:"description"`
	Readonly     bool          `json:"readonly"`
	SourceGroup  int64         `json:"source_group"`
	Members      []mgmtSubject `json:"members"`
}

// MemberView is a group membership, newest relation first in a GroupView.
type MemberView struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	ExpiredAt int64  `json:"expired_at"`
	CreatedAt int64  `json:"created_at"`
}

// ManagementView is the body of GET /_sandbox/grade_managers.
type ManagementView struct {
	GradeManagers []GradeManagerView `json:"grade_managers"`
	Groups        []GroupView        `json:"groups"`
	// SubjectTemplates are ordered by id (absent when there is none).
	SubjectTemplates []SubjectTemplateView `json:"subject_templates,omitempty"`
}

// Management returns the management API's state, grade managers and groups ordered by id, after
// carrying out the grade-manager deletes that are due.
func (s *Server) Management() ManagementView {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	_ = st.purgeMgmtLocked(s.now()) // a failed save keeps the state as it was; the view says so
	v := ManagementView{GradeManagers: []GradeManagerView{}, Groups: []GroupView{}}
	for _, gm := range st.mgmt.gms {
		gv := GradeManagerView{ID: gm.ID, System: gm.System, Name: gm.Name, Description: gm.Description,
			Members: append([]string{}, gm.Members...), SyncPerm: gm.SyncPerm, GroupName: gm.GroupName, WebUI: gm.WebUI,
			AuthorizationScopes: copyScopes(gm.Scopes), SubjectScopes: append([]mgmtSubject{}, gm.SubjectScopes...)}
		if !gm.DeleteAt.IsZero() {
			gv.DeleteAt = gm.DeleteAt.Unix()
		}
		v.GradeManagers = append(v.GradeManagers, gv)
	}
	sort.Slice(v.GradeManagers, func(i, j int) bool { return v.GradeManagers[i].ID < v.GradeManagers[j].ID })
	for _, g := range st.mgmt.groups {
		gv := GroupView{ID: g.ID, System: g.System, GradeManager: g.GradeManager, Name: g.Name, Description: g.Description,
			Readonly: g.Readonly, Sync: g.Sync, Members: []MemberView{}}
		for _, m := range g.sortedMembers() {
			gv.Members = append(gv.Members, MemberView{Type: m.Type, ID: m.ID, ExpiredAt: m.ExpiredAt, CreatedAt: m.CreatedAt})
		}
		for _, tid := range g.sortedTemplates() {
			b := g.Templates[tid]
			gv.Templates = append(gv.Templates, TemplateBindingView{Template: tid, ExpiredAt: b.ExpiredAt, CreatedAt: b.CreatedAt})
		}
		v.Groups = append(v.Groups, gv)
	}
	sort.Slice(v.Groups, func(i, j int) bool { return v.Groups[i].ID < v.Groups[j].ID })
	for _, t := range st.mgmt.templates {
		tv := SubjectTemplateView{ID: t.ID, System: t.System, GradeManager: t.GradeManager, Name: t.Name, Description: t.Description,
			Readonly: t.Readonly, SourceGroup: t.SourceGroup, Members: []mgmtSubject{}}
		for _, k := range t.sortedMembers() {
			tv.Members = append(tv.Members, mgmtSubject(k))
		}
		v.SubjectTemplates = append(v.SubjectTemplates, tv)
	}
	sort.Slice(v.SubjectTemplates, func(i, j int) bool { return v.SubjectTemplates[i].ID < v.SubjectTemplates[j].ID })
	return v
}

// GradeManagers returns the stored grade managers, ordered by id.
func (s *Server) GradeManagers() []GradeManagerView { return s.Management().GradeManagers }

// Groups returns the groups of grade manager gm (0: the system managers' groups), ordered by id.
func (s *Server) Groups(gm int64) []GroupView {
	out := []GroupView{}
	for _, g := range s.Management().Groups {
		if g.GradeManager == gm {
			out = append(out, g)
		}
	}
	return out
}

// SubjectTemplates returns the stored subject templates, ordered by id.
func (s *Server) SubjectTemplates() []SubjectTemplateView { return s.Management().SubjectTemplates }

// Members returns the members of a management group, newest relation first (nil when there is no
// such group).
func (s *Server) Members(group int64) []MemberView {
	for _, g := range s.Management().Groups {
		if g.ID == group {
			return g.Members
		}
	}
	return nil
}

// ForgetCreator removes a grade manager's creator record, leaving it as one made in IAM's web UI
// (POST /_sandbox/grade_managers/{id}/forget_creator): no system lists it, and managing it or its
// groups through the API answers "not created by system" (HTTP 403).
func (s *Server) ForgetCreator(id int64) error {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	gm := st.mgmt.gms[id]
	if gm == nil {
		return fmt.Errorf("forget creator: no grade manager %d", id)
	}
	before := st.mgmt.clone()
	st.mgmt.gms[id].WebUI = true
	if e := st.saveMgmtLocked(before); e != nil {
		return fmt.Errorf("forget creator: %s", e.message)
	}
	return nil
}

// copyScopes is a deep copy of scopes, so that a view never shares what the store changes.
func copyScopes(scopes []mgmtScope) []mgmtScope {
	out := make([]mgmtScope, len(scopes))
	for i, sc := range scopes {
		out[i] = mgmtScope{System: sc.System, Actions: append([]string{}, sc.Actions...), Resources: make([]mgmtScopeType, len(sc.Resources))}
		for j, rt := range sc.Resources {
			out[i].Resources[j] = mgmtScopeType{System: rt.System, Type: rt.Type, Paths: make([][]Node, len(rt.Paths))}
			for k, p := range rt.Paths {
				out[i].Resources[j].Paths[k] = append([]Node{}, p...)
			}
		}
	}
	return out
}

// RenameGroup renames a management group as IAM's web UI does (its group update, POST
// /_sandbox/groups/{id}/rename): the name trimmed, 2 to 128 characters, taken by no other group
// (compared case-insensitively), a read-only group refused. The group keeps everything else: its
// members, policies and attributes, so a grade manager's sync group stays its sync group, which
// only the v1 group list's source_from_role then tells.
func (s *Server) RenameGroup(id int64, name string) error {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	g := st.mgmt.groups[id]
	name = strings.TrimSpace(name)
	switch n := utf8.RuneCountInString(name); {
	case g == nil:
		return fmt.Errorf("rename group: no management group %d", id)
	case g.Readonly:
		return fmt.Errorf("rename group: 只读用户组 (%d) 无法进行 (用户组编辑) 操作！", id)
	case n < 2 || n > 128:
		return fmt.Errorf("rename group: a name of %d characters, want 2 to 128", n)
	}
	for _, other := range st.mgmt.groups {
		if other.ID != id && strings.EqualFold(other.Name, name) {
			return fmt.Errorf("rename group: 存在同名用户组 (group %d is named %q)", other.ID, other.Name)
		}
	}
	before := st.mgmt.clone()
	st.mgmt.groups[id].Name = name
	if e := st.saveMgmtLocked(before); e != nil {
		return fmt.Errorf("rename group: %s", e.message)
	}
	return nil
}
