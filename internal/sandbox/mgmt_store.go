package sandbox

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// The management API's state (see the package doc of internal/bkiam, "The management API"): grade
// managers, their user groups (and the system managers' groups, created under "-") and the groups'
// members. It lives in the store beside the policies, under the same lock, and is written to the
// state file with them.

// gradeManager is a grade manager created through the API by System.
type gradeManager struct {
	ID          int64
	System      string
	Name        string
	Description string
	Members     []string
	SyncPerm    bool
	GroupName   string
	// Scopes is the authorization scope: what the grade manager's groups may be granted.
	Scopes []mgmtScope
	// SubjectScopes is who its groups may hold; none (a grade manager of an older state file) means
	// everyone.
	SubjectScopes []mgmtSubject
	Created       time.Time
	Updated       time.Time
	// DeleteAt is when an asked-for delete is carried out; zero when none was asked.
	DeleteAt time.Time
	// WebUI marks a grade manager with no creator record, as one made in IAM's web UI: no system
	// lists it or may manage it through the API (ForgetCreator makes one).
	WebUI bool
}

// mgmtScope is one system's part of a grade manager's authorization scope.
type mgmtScope struct {
	System    string          `json:"system"`
	Actions   []string        `json:"actions"`
	Resources []mgmtScopeType `json:"resources"`
}

// mgmtSubject is a subject scope: a user, a department (with the departments under it), or
// everyone ("*", "*").
type mgmtSubject struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// mgmtScopeType is a resource type of a scope with the paths its groups may be granted.
type mgmtScopeType struct {
	System string   `json:"system"`
	Type   string   `json:"type"`
	Paths  [][]Node `json:"paths"`
}

// mgmtGroup is a user group created through the management API. GradeManager is its owning grade
// manager, 0 for the system manager of System ("-" in the create route).
type mgmtGroup struct {
	ID           int64
	System       string
	GradeManager int64
	Name         string
	Description  string
	Readonly     bool
	// Sync marks the sync group of a grade manager created or updated with sync_perm: the SaaS's
	// group attribute source_from_role, which the v1 group list answers.
	Sync bool
	// SourceType is the SaaS's group attribute source_type: "openapi" for a group the management
	// API created with create_attributes (the default) and for the sync group of a grade-manager
	// create; "" for the sync group an update builds, which the SaaS marks source_from_role only.
	SourceType string
	Created    time.Time
	Members    map[memberKey]*member
	// Templates are the subject templates bound to the group, by template id (see
	// mgmt_templates.go); they are members too, listed apart from the users and departments.
	Templates map[int64]*templateBinding
}

type memberKey struct{ Type, ID string }

// member is a group membership; Seq orders the relations (newest first in the list).
type member struct {
	Type      string
	ID        string
	ExpiredAt int64
	CreatedAt int64
	Seq       int64
}

// mgmtState is the whole management state; a call works on it and a failed call restores a clone.
type mgmtState struct {
	gms       map[int64]*gradeManager
	groups    map[int64]*mgmtGroup
	templates map[int64]*subjectTemplate
	nextGM    int64
	nextGroup int64
	nextRel   int64
	// nextTemplate is the subject templates' own id sequence, as the SaaS's table has one.
	nextTemplate int64
}

func newMgmtState(groupFloor int64) *mgmtState {
	return &mgmtState{gms: map[int64]*gradeManager{}, groups: map[int64]*mgmtGroup{}, templates: map[int64]*subjectTemplate{},
		nextGroup: groupFloor}
}

func (ms *mgmtState) clone() *mgmtState {
	c := *ms
	c.gms = make(map[int64]*gradeManager, len(ms.gms))
	for id, gm := range ms.gms {
		g := *gm
		g.Members = slices.Clone(gm.Members)
		c.gms[id] = &g
	}
	c.groups = make(map[int64]*mgmtGroup, len(ms.groups))
	for id, g := range ms.groups {
		n := *g
		n.Members = make(map[memberKey]*member, len(g.Members))
		for k, m := range g.Members {
			mm := *m
			n.Members[k] = &mm
		}
		n.Templates = make(map[int64]*templateBinding, len(g.Templates))
		for tid, b := range g.Templates {
			bb := *b
			n.Templates[tid] = &bb
		}
		c.groups[id] = &n
	}
	c.templates = make(map[int64]*subjectTemplate, len(ms.templates))
	for id, t := range ms.templates {
		c.templates[id] = t.clone()
	}
	return &c
}

// purge carries out the grade-manager deletes whose time has come: the grade manager, its groups and
// their members go, and so do its subject templates (the SaaS's RoleDeleteHelper). It reports
// whether anything went.
func (ms *mgmtState) purge(now time.Time) bool {
	changed := false
	for id, gm := range ms.gms {
		if !gm.DeleteAt.IsZero() && !now.Before(gm.DeleteAt) {
			delete(ms.gms, id)
			for gid, g := range ms.groups {
				if g.GradeManager == id {
					ms.deleteGroup(gid)
				}
			}
			for tid, t := range ms.templates {
				if t.GradeManager == id {
					ms.deleteTemplate(tid)
				}
			}
			changed = true
		}
	}
	return changed
}

// createdBy counts the grade managers system created through the API.
func (ms *mgmtState) createdBy(system string) int {
	n := 0
	for _, gm := range ms.gms {
		if gm.System == system && !gm.WebUI {
			n++
		}
	}
	return n
}

// groupsOf lists the groups owned by a grade manager (0 with system: the system manager's).
func (ms *mgmtState) groupsOf(system string, gm int64) []*mgmtGroup {
	var out []*mgmtGroup
	for _, g := range ms.groups {
		if g.GradeManager == gm && (gm != 0 || g.System == system) {
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID }) // ordering ["-id"]
	return out
}

// nameTaken reports whether another group of the same owner has the name (compared as the
// database's case-insensitive collation does).
func (ms *mgmtState) nameTaken(system string, gm int64, name string, except int64) bool {
	for _, g := range ms.groupsOf(system, gm) {
		if g.ID != except && strings.EqualFold(g.Name, name) {
			return true
		}
	}
	return false
}

func (ms *mgmtState) newGroup(system string, gm int64, name, description string, readonly bool, now time.Time) *mgmtGroup {
	ms.nextGroup++
	g := &mgmtGroup{ID: ms.nextGroup, System: system, GradeManager: gm, Name: name, Description: description,
		Readonly: readonly, Created: now, Members: map[memberKey]*member{}, Templates: map[int64]*templateBinding{}}
	ms.groups[g.ID] = g
	return g
}

// upsert adds a member or raises an existing member's expiry (never lowers it).
func (ms *mgmtState) upsert(g *mgmtGroup, typ, id string, expiredAt int64, now time.Time) {
	k := memberKey{typ, id}
	if m := g.Members[k]; m != nil {
		m.ExpiredAt = max(m.ExpiredAt, expiredAt)
		return
	}
	ms.nextRel++
	g.Members[k] = &member{Type: typ, ID: id, ExpiredAt: expiredAt, CreatedAt: now.Unix(), Seq: ms.nextRel}
}

// counts are the group's user and department counts, expired members included.
func (g *mgmtGroup) counts() (users, departments int) {
	for k := range g.Members {
		switch k.Type {
		case "user":
			users++
		case "department":
			departments++
		}
	}
	return users, departments
}

// sortedMembers lists the members newest relation first.
func (g *mgmtGroup) sortedMembers() []*member {
	ms := slices.Collect(maps.Values(g.Members))
	sort.Slice(ms, func(i, j int) bool { return ms[i].Seq > ms[j].Seq })
	return ms
}

// syncGroup is the grade manager's sync group, nil when it has none.
func (ms *mgmtState) syncGroup(gm int64) *mgmtGroup {
	for _, g := range ms.groups {
		if g.GradeManager == gm && g.Sync {
			return g
		}
	}
	return nil
}

// syncGradeManager applies sync_perm after a create or update: without it the sync group is
// deleted (with the subject template mirroring it); with it the group is created (named group_name or "<name> administrator group") or renamed when
// group_name is given, and its members are made exactly the grade manager's members that are
// users the model knows (departments removed, present users' expiries kept).
func (ms *mgmtState) syncGradeManager(gm *gradeManager, knownUser func(string) bool, now time.Time) {
	g := ms.syncGroup(gm.ID)
	if !gm.SyncPerm {
		if g != nil {
			ms.deleteGroup(g.ID)
		}
		return
	}
	switch {
	case g == nil:
		name := gm.GroupName
		if name == "" {
			// The SaaS's "-管理员组", translated into English as it answers the management API.
			name = gm.Name + " administrator group"
		}
		// As the SaaS's create_sync_perm_group: the grade manager's description, not read-only.
		g = ms.newGroup(gm.System, gm.ID, name, gm.Description, false, now)
		g.Sync = true
	case gm.GroupName != "":
		g.Name = gm.GroupName
	}
	want := map[string]bool{}
	for _, u := range gm.Members {
		if knownUser(u) {
			want[u] = true
		}
	}
	// As the SaaS's _update_sync_perm_group_member: every member that is not one of the grade
	// manager's users goes (departments too); users missing are added, permanent; users present
	// keep their expiry. It changes the group's members below the SaaS's add_members and
	// remove_members, so a subject template mirroring the sync group does not follow.
	for k := range g.Members {
		if k.Type != "user" || !want[k.ID] {
			delete(g.Members, k)
		}
	}
	for _, u := range gm.Members {
		if want[u] && g.Members[memberKey{"user", u}] == nil {
			ms.upsert(g, "user", u, permanentExpiredAt, now)
		}
	}
}
