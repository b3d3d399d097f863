package sandbox

import (
	"fmt"
	"sort"
	"time"
)

// The management state in the state file: an optional "management" object, so that a state file
// written before it existed still loads (as an empty management state).

type stateMgmt struct {
	NextGradeManagerID int64               `json:"next_grade_manager_id"`
	NextGroupID        int64               `json:"next_group_id"`
	NextRelation       int64               `json:"next_relation"`
	GradeManagers      []stateGradeManager `json:"grade_managers"`
	Groups             []stateGroup        `json:"groups"`
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
	ID           int64         `json:"id"`
	System       string        `json:"system"`
	GradeManager int64         `json:"grade_manager"`
	Name         string        `json:"name"`
	Description  string        `json:"description"`
	Readonly     bool          `json:"readonly,omitempty"`
	Sync         bool          `json:"sync,omitempty"`
	Created      time.Time     `json:"created"`
	Members      []stateMember `json:"members"`
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
			Readonly: g.Readonly, Sync: g.Sync, Created: g.Created, Members: []stateMember{}}
		for _, m := range g.sortedMembers() {
			sg.Members = append(sg.Members, stateMember{Type: m.Type, ID: m.ID, ExpiredAt: m.ExpiredAt, CreatedAt: m.CreatedAt, Seq: m.Seq})
		}
		out.Groups = append(out.Groups, sg)
	}
	sort.Slice(out.Groups, func(i, j int) bool { return out.Groups[i].ID < out.Groups[j].ID })
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
			Readonly: sg.Readonly, Sync: sg.Sync, Created: sg.Created, Members: map[memberKey]*member{}}
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
	if sm.NextGradeManagerID < maxGM || sm.NextGroupID < maxGroup || sm.NextRelation < maxRel {
		return nil, fmt.Errorf("management: id sequences (%d, %d, %d) are behind the stored ids (%d, %d, %d)",
			sm.NextGradeManagerID, sm.NextGroupID, sm.NextRelation, maxGM, maxGroup, maxRel)
	}
	ms.nextGM, ms.nextGroup, ms.nextRel = sm.NextGradeManagerID, max(sm.NextGroupID, groupFloor), sm.NextRelation
	return ms, nil
}
