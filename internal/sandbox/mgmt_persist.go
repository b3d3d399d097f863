package sandbox

import (
	"fmt"
	"sort"
	"time"
)

// The management state in the state file: an optional "management" object, so that a state file
// written before it existed still loads (as an empty management state). The subject templates and
// the groups' template bindings are optional in it too, absent from an older sandbox's file.

type stateMgmt struct {
	NextGradeManagerID int64               `json:"next_grade_manager_id"`
	NextGroupID        int64               `json:"next_group_id"`
	NextRelation       int64               `json:"next_relation"`
	GradeManagers      []stateGradeManager `json:"grade_managers"`
	Groups             []stateGroup        `json:"groups"`
	NextTemplateID     int64               `json:"next_subject_template_id,omitempty"`
	SubjectTemplates   []stateTemplate     `json:"subject_templates,omitempty"`
}

type stateGradeManager struct {
	ID          int64    `json:"id"`
	System      string   `json:"system"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Members     []string `json:"members"`
	SyncPerm    bool     `json:"sync_perm,omitempty"`
	GroupName   string   `json:"group_name,omitempty"`
	// Scopes is absent from a file of an older sandbox: its grade managers then have none.
	Scopes []mgmtScope `json:"scopes,omitempty"`
	// SubjectScopes is absent from a file of an older sandbox: its grade managers then admit everyone.
	SubjectScopes []mgmtSubject `json:"subject_scopes,omitempty"`
	Created       time.Time     `json:"created"`
	Updated       time.Time     `json:"updated"`
	DeleteAt      time.Time     `json:"delete_at,omitzero"`
	WebUI         bool          `json:"web_ui,omitempty"`
}

type stateGroup struct {
	ID           int64          `json:"id"`
	System       string         `json:"system"`
	GradeManager int64          `json:"grade_manager"`
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	Readonly     bool           `json:"readonly,omitempty"`
	Sync         bool           `json:"sync,omitempty"`
	SourceType   string         `json:"source_type,omitempty"`
	Created      time.Time      `json:"created"`
	Members      []stateMember  `json:"members"`
	Templates    []stateBinding `json:"templates,omitempty"`
}

// stateBinding is a subject template bound to a group.
type stateBinding struct {
	Template  int64 `json:"template"`
	ExpiredAt int64 `json:"expired_at"`
	CreatedAt int64 `json:"created_at"`
	Seq       int64 `json:"seq"`
}

type stateTemplate struct {
	ID           int64         `json:"id"`
	System       string        `json:"system"`
	GradeManager int64         `json:"grade_manager"`
	Name         string        `json:"name"`
	Description  string        `json:"description"`
	Readonly     bool          `json:"readonly,omitempty"`
	SourceGroup  int64         `json:"source_group,omitempty"`
	Created      time.Time     `json:"created"`
	Members      []mgmtSubject `json:"members"`
}

type stateMember struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	ExpiredAt int64  `json:"expired_at"`
	CreatedAt int64  `json:"created_at"`
	Seq       int64  `json:"seq"`
}

func (ms *mgmtState) snapshot() *stateMgmt {
	out := &stateMgmt{NextGradeManagerID: ms.nextGM, NextGroupID: ms.nextGroup, NextRelation: ms.nextRel,
		GradeManagers: []stateGradeManager{}, Groups: []stateGroup{}}
	for _, gm := range ms.gms {
		out.GradeManagers = append(out.GradeManagers, stateGradeManager{ID: gm.ID, System: gm.System, Name: gm.Name,
			Description: gm.Description, Members: append([]string{}, gm.Members...), SyncPerm: gm.SyncPerm, GroupName: gm.GroupName,
			Scopes: gm.Scopes, SubjectScopes: gm.SubjectScopes, Created: gm.Created, Updated: gm.Updated, DeleteAt: gm.DeleteAt, WebUI: gm.WebUI})
	}
	sort.Slice(out.GradeManagers, func(i, j int) bool { return out.GradeManagers[i].ID < out.GradeManagers[j].ID })
	for _, g := range ms.groups {
		sg := stateGroup{ID: g.ID, System: g.System, GradeManager: g.GradeManager, Name: g.Name, Description: g.Description,
			Readonly: g.Readonly, Sync: g.Sync, SourceType: g.SourceType, Created: g.Created, Members: []stateMember{}}
		for _, m := range g.sortedMembers() {
			sg.Members = append(sg.Members, stateMember{Type: m.Type, ID: m.ID, ExpiredAt: m.ExpiredAt, CreatedAt: m.CreatedAt, Seq: m.Seq})
		}
		for _, tid := range g.sortedTemplates() {
			b := g.Templates[tid]
			sg.Templates = append(sg.Templates, stateBinding{Template: tid, ExpiredAt: b.ExpiredAt, CreatedAt: b.CreatedAt, Seq: b.Seq})
		}
		out.Groups = append(out.Groups, sg)
	}
	sort.Slice(out.Groups, func(i, j int) bool { return out.Groups[i].ID < out.Groups[j].ID })
	out.NextTemplateID = ms.nextTemplate
	for _, t := range ms.templates {
		st := stateTemplate{ID: t.ID, System: t.System, GradeManager: t.GradeManager, Name: t.Name, Description: t.Description,
			Readonly: t.Readonly, SourceGroup: t.SourceGroup, Created: t.Created, Members: []mgmtSubject{}}
		for _, k := range t.sortedMembers() {
			st.Members = append(st.Members, mgmtSubject(k))
		}
		out.SubjectTemplates = append(out.SubjectTemplates, st)
	}
	sort.Slice(out.SubjectTemplates, func(i, j int) bool { return out.SubjectTemplates[i].ID < out.SubjectTemplates[j].ID })
	return out
}

// restoreMgmt rebuilds a management state from the state file, checking it for consistency.
func restoreMgmt(sm *stateMgmt, groupFloor int64) (*mgmtState, error) {
	ms := newMgmtState(groupFloor)
	if sm == nil {
		return ms, nil
	}
	var maxGM, maxGroup, maxRel int64
	for i, gm := range sm.GradeManagers {
		if gm.ID <= 0 || gm.System == "" || gm.Name == "" {
			return nil, fmt.Errorf("management.grade_managers[%d]: incomplete grade manager", i)
		}
		if ms.gms[gm.ID] != nil {
			return nil, fmt.Errorf("management.grade_managers[%d]: duplicate id %d", i, gm.ID)
		}
		ms.gms[gm.ID] = &gradeManager{ID: gm.ID, System: gm.System, Name: gm.Name, Description: gm.Description,
			Members: gm.Members, SyncPerm: gm.SyncPerm, GroupName: gm.GroupName, Scopes: gm.Scopes, SubjectScopes: gm.SubjectScopes,
			Created: gm.Created, Updated: gm.Updated,
			DeleteAt: gm.DeleteAt, WebUI: gm.WebUI}
		maxGM = max(maxGM, gm.ID)
	}
	for i, sg := range sm.Groups {
		at := fmt.Sprintf("management.groups[%d]", i)
		if sg.ID <= 0 || sg.System == "" || sg.Name == "" {
			return nil, fmt.Errorf("%s: incomplete group", at)
		}
		if ms.groups[sg.ID] != nil {
			return nil, fmt.Errorf("%s: duplicate id %d", at, sg.ID)
		}
		if sg.GradeManager != 0 && ms.gms[sg.GradeManager] == nil {
			return nil, fmt.Errorf("%s: unknown grade manager %d", at, sg.GradeManager)
		}
		g := &mgmtGroup{ID: sg.ID, System: sg.System, GradeManager: sg.GradeManager, Name: sg.Name, Description: sg.Description,
			Readonly: sg.Readonly, Sync: sg.Sync, SourceType: sg.SourceType, Created: sg.Created, Members: map[memberKey]*member{}, Templates: map[int64]*templateBinding{}}
		for j, m := range sg.Members {
			k := memberKey{m.Type, m.ID}
			if (m.Type != "user" && m.Type != "department") || m.ID == "" || m.Seq <= 0 || g.Members[k] != nil {
				return nil, fmt.Errorf("%s.members[%d]: bad or duplicate member", at, j)
			}
			g.Members[k] = &member{Type: m.Type, ID: m.ID, ExpiredAt: m.ExpiredAt, CreatedAt: m.CreatedAt, Seq: m.Seq}
			maxRel = max(maxRel, m.Seq)
		}
		ms.groups[g.ID] = g
		maxGroup = max(maxGroup, g.ID)
	}
	maxTemplate, err := restoreTemplates(ms, sm.SubjectTemplates)
	if err != nil {
		return nil, err
	}
	for i, sg := range sm.Groups {
		n, err := restoreBindings(ms, ms.groups[sg.ID], sg.Templates, fmt.Sprintf("management.groups[%d]", i))
		if err != nil {
			return nil, err
		}
		maxRel = max(maxRel, n)
	}
	if sm.NextGradeManagerID < maxGM || sm.NextGroupID < maxGroup || sm.NextRelation < maxRel || sm.NextTemplateID < maxTemplate {
		return nil, fmt.Errorf("management: id sequences (%d, %d, %d, %d) are behind the stored ids (%d, %d, %d, %d)",
			sm.NextGradeManagerID, sm.NextGroupID, sm.NextRelation, sm.NextTemplateID, maxGM, maxGroup, maxRel, maxTemplate)
	}
	ms.nextGM, ms.nextGroup, ms.nextRel = sm.NextGradeManagerID, max(sm.NextGroupID, groupFloor), sm.NextRelation
	ms.nextTemplate = sm.NextTemplateID
	return ms, nil
}

// restoreTemplates adds the state file's subject templates to ms (whose grade managers and groups
// are restored), checking each: its owner exists, so does the group it mirrors; it answers the
// highest template id.
func restoreTemplates(ms *mgmtState, sts []stateTemplate) (int64, error) {
	var maxID int64
	for i, st := range sts {
		at := fmt.Sprintf("management.subject_templates[%d]", i)
		switch {
		case st.ID <= 0 || st.System == "" || st.Name == "":
			return 0, fmt.Errorf("%s: incomplete subject template", at)
		case ms.templates[st.ID] != nil:
			return 0, fmt.Errorf("%s: duplicate id %d", at, st.ID)
		case st.GradeManager != 0 && ms.gms[st.GradeManager] == nil:
			return 0, fmt.Errorf("%s: unknown grade manager %d", at, st.GradeManager)
		case st.SourceGroup != 0 && ms.groups[st.SourceGroup] == nil:
			return 0, fmt.Errorf("%s: unknown source group %d", at, st.SourceGroup)
		}
		t := &subjectTemplate{ID: st.ID, System: st.System, GradeManager: st.GradeManager, Name: st.Name, Description: st.Description,
			Readonly: st.Readonly, SourceGroup: st.SourceGroup, Created: st.Created, Members: map[memberKey]bool{}}
		for j, m := range st.Members {
			if (m.Type != "user" && m.Type != "department") || m.ID == "" {
				return 0, fmt.Errorf("%s.members[%d]: bad member", at, j)
			}
			t.Members[memberKey(m)] = true
		}
		ms.templates[t.ID] = t
		maxID = max(maxID, t.ID)
	}
	return maxID, nil
}

// restoreBindings binds g to the state file's templates, each one of g's owner and bound once; it
// answers the highest relation sequence number.
func restoreBindings(ms *mgmtState, g *mgmtGroup, sbs []stateBinding, at string) (int64, error) {
	var maxSeq int64
	for j, sb := range sbs {
		t := ms.templates[sb.Template]
		if t == nil || !t.sameOwner(g) || sb.Seq <= 0 || g.Templates[sb.Template] != nil {
			return 0, fmt.Errorf("%s.templates[%d]: bad or duplicate template binding", at, j)
		}
		g.Templates[sb.Template] = &templateBinding{ExpiredAt: sb.ExpiredAt, CreatedAt: sb.CreatedAt, Seq: sb.Seq}
		maxSeq = max(maxSeq, sb.Seq)
	}
	return maxSeq, nil
}
