package sandbox

import (
	"slices"
	"strconv"
)

// The backend's primary keys of subjects and actions, which its debug output shows (debug.go). The
// real backend numbers subjects in one table as it syncs them, users, departments and groups alike,
// and actions as systems register them. The sandbox derives both from the model instead of keeping
// a counter: the same model gives the same numbers for the sandbox's lifetime and across its state
// file, and a read never has to write. Subjects: the model's users in order from 1, then its
// directory users, then its departments, then the groups at that offset plus their numeric id (the
// model's and the management API's share one id sequence, so no two groups share a key). Actions:
// every system's actions in model order from 1.

// subjectPKLocked is subj's key, and whether IAM knows subj: a user of the model or a directory
// user the authorization API synced, or a group that exists. Any other subject is one the backend's
// subject lookup does not find.
func (s *Server) subjectPKLocked(subj subject) (int64, bool) {
	m := s.model
	switch subj.Type {
	case "user":
		if i := slices.Index(m.Users, subj.ID); i >= 0 {
			return int64(i) + 1, true
		}
		if i := slices.Index(m.DirectoryUsers, subj.ID); i >= 0 && s.store.synced[subj.ID] {
			return int64(len(m.Users)+i) + 1, true
		}
	case "group":
		if !s.groupKnownLocked(subj.ID) {
			return 0, false
		}
		n, err := strconv.ParseInt(subj.ID, 10, 64)
		if err != nil {
			return 0, false
		}
		return int64(len(m.Users)+len(m.DirectoryUsers)+len(m.Departments)) + n, true
	}
	return 0, false
}

// departmentPK is the key of one of the model's departments (0 for none).
func (m *Model) departmentPK(id string) int64 {
	if i := slices.Index(m.Departments, id); i >= 0 {
		return int64(len(m.Users)+len(m.DirectoryUsers)+i) + 1
	}
	return 0
}

// groupKnownLocked is groupExists with the store's lock held.
func (s *Server) groupKnownLocked(id string) bool {
	if _, gone := s.deletedGroups.Load(id); gone {
		return false
	}
	if s.model.groups[id] {
		return true
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return false
	}
	_, ok := s.store.mgmt.groups[n]
	return ok
}

// actionPK is the key of an action of system (0 for none).
func (m *Model) actionPK(system, action string) int64 {
	var n int64
	for _, sys := range m.Systems {
		for _, a := range sys.Actions {
			n++
			if sys.ID == system && a.ID == action {
				return n
			}
		}
	}
	return 0
}
