package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// stateFile is the on-disk form of the store (--state). Version guards against reading a file written
// by an incompatible sandbox.
type stateFile struct {
	Version       int           `json:"version"`
	NextPolicyID  int64         `json:"next_policy_id"`
	NextBackendID int64         `json:"next_backend_id"`
	Policies      []statePolicy `json:"policies"`
	// Management is the management API's state (mgmt_persist.go); absent in older files.
	Management *stateMgmt `json:"management,omitempty"`
	// SyncedUsers are the directory users the authorization API synced into IAM.
	SyncedUsers []string `json:"synced_users,omitempty"`
}

type statePolicy struct {
	PolicyID  int64                 `json:"policy_id"`
	BackendID int64                 `json:"backend_id"`
	System    string                `json:"system"`
	Subject   Subject               `json:"subject"`
	Action    string                `json:"action"`
	Template  int64                 `json:"template_id,omitempty"`
	ExpiredAt int64                 `json:"expired_at"`
	Any       bool                  `json:"any"`
	Combined  bool                  `json:"combined,omitempty"`
	Collapsed bool                  `json:"collapsed,omitempty"`
	Paths     [][]Node              `json:"paths,omitempty"`
	Groups    []map[string][][]Node `json:"groups,omitempty"`
	// Expression is a row's attribute condition (AddExpressionPolicy); absent in older files.
	Expression map[string]any `json:"expression,omitempty"`
}

const stateVersion = 1

func (st *store) snapshotLocked() stateFile {
	sf := stateFile{Version: stateVersion, NextPolicyID: st.nextID, NextBackendID: st.nextBackendID, Policies: []statePolicy{},
		Management: st.mgmt.snapshot(), SyncedUsers: slices.Sorted(maps.Keys(st.synced))}
	for _, p := range st.sortedPoliciesLocked() {
		sp := statePolicy{PolicyID: p.ID, BackendID: p.BackendID, System: p.Key.System,
			Subject: Subject{Type: p.Key.SubjectType, ID: p.Key.SubjectID}, Action: p.Key.Action, Template: p.Key.TemplateID,
			ExpiredAt: p.ExpiredAt, Any: p.Any, Combined: p.Combined, Collapsed: p.Collapsed, Expression: p.Cond}
		for _, k := range sortedKeys(p.Paths) {
			sp.Paths = append(sp.Paths, p.Paths[k])
		}
		for _, g := range p.Groups {
			m := map[string][][]Node{}
			for typ, ps := range g {
				m[typ] = [][]Node{}
				for _, k := range sortedKeys(ps) {
					m[typ] = append(m[typ], ps[k])
				}
			}
			sp.Groups = append(sp.Groups, m)
		}
		sf.Policies = append(sf.Policies, sp)
	}
	return sf
}

// restoreLocked replaces the store's content with a loaded state, checking it for consistency.
func (st *store) restoreLocked(sf stateFile) error {
	if sf.Version != stateVersion {
		return fmt.Errorf("unsupported state version %d (want %d)", sf.Version, stateVersion)
	}
	policies := map[policyKey]*policy{}
	maxID, maxB := int64(0), int64(0)
	for i, sp := range sf.Policies {
		k := policyKey{System: sp.System, SubjectType: sp.Subject.Type, SubjectID: sp.Subject.ID, Action: sp.Action, TemplateID: sp.Template}
		var cond expr
		if sp.Expression != nil {
			var err error
			if cond, err = conditionNode(sp.Expression, fmt.Sprintf("policies[%d].expression", i), nil); err != nil {
				return err
			}
			k.ExprRow = sp.PolicyID // a row of its own, named by its policy_id
		}
		if sp.PolicyID <= 0 || sp.BackendID <= 0 || k.System == "" || k.SubjectType == "" || k.SubjectID == "" || k.Action == "" {
			return fmt.Errorf("policies[%d]: incomplete policy", i)
		}
		// A template row is a group's, or a user's as an older IAM granted templates to users.
		if sp.Template < 0 || sp.Template > 0 && k.SubjectType != "group" && k.SubjectType != "user" {
			return fmt.Errorf("policies[%d]: template_id %d on a %s policy", i, sp.Template, k.SubjectType)
		}
		if policies[k] != nil {
			return fmt.Errorf("policies[%d]: duplicate policy for %s %s/%s %s (template %d)", i, k.System, k.SubjectType, k.SubjectID, k.Action, k.TemplateID)
		}
		p := &policy{ID: sp.PolicyID, BackendID: sp.BackendID, Key: k, ExpiredAt: sp.ExpiredAt, Any: sp.Any,
			Combined: sp.Combined, Collapsed: sp.Collapsed, Paths: map[string][]Node{}, Cond: cond}
		for _, path := range sp.Paths {
			p.Paths[pathKey(path)] = path
		}
		for _, m := range sp.Groups {
			g := group{}
			for typ, paths := range m {
				g[typ] = map[string][]Node{}
				for _, path := range paths {
					g[typ][pathKey(path)] = path
				}
			}
			p.Groups = append(p.Groups, g)
		}
		policies[k] = p
		maxID, maxB = max(maxID, p.ID), max(maxB, p.BackendID)
	}
	if sf.NextPolicyID <= maxID || sf.NextBackendID <= maxB {
		return fmt.Errorf("id sequences (%d, %d) are behind the stored ids (%d, %d)", sf.NextPolicyID, sf.NextBackendID, maxID, maxB)
	}
	ms, err := restoreMgmt(sf.Management, st.groupFloor)
	if err != nil {
		return err
	}
	st.policies, st.nextID, st.nextBackendID, st.mgmt = policies, sf.NextPolicyID, sf.NextBackendID, ms
	st.synced = map[string]bool{}
	for _, u := range sf.SyncedUsers {
		st.synced[u] = true
	}
	return nil
}

// loadState reads a state file into the store. A file that does not exist means an empty store, and
// the empty state is written at once so that an unusable location fails at startup rather than on the
// first grant; any other read or parse failure is an error, never an empty store.
func (st *store) loadState(path string) error {
	removeStaleTemps(path)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		st.mu.Lock()
		defer st.mu.Unlock()
		if err := st.saveLocked(path); err != nil {
			return fmt.Errorf("create state %s: %w", path, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read state %s: %w", path, err)
	}
	var sf stateFile
	if err := json.Unmarshal(data, &sf); err != nil {
		return fmt.Errorf("state %s is corrupt: %w", path, err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.restoreLocked(sf); err != nil {
		return fmt.Errorf("state %s is corrupt: %w", path, err)
	}
	return nil
}

// saveLocked writes the store atomically: a temp file in the same directory, fsynced, renamed over
// the target, then the directory fsynced, so a crash leaves either the old or the new file whole.
func (st *store) saveLocked(path string) error {
	data, err := json.Marshal(st.snapshotLocked()) // compact: it is rewritten on every change
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	return writeFileAtomic(path, append(data, '\n'))
}

// removeStaleTemps deletes the temp files that saves interrupted by a crash (kill -9, power loss) left
// next to the state file. They are never read, but each such crash would leave one more, as large as
// the state. Only names of writeFileAtomic's own pattern are touched, so a sandbox must not share its
// state file with another running sandbox (which would be wrong anyway: each rewrites the whole file).
// Best effort: a leftover is harmless.
func removeStaleTemps(path string) {
	dir, prefix := filepath.Dir(path), "."+filepath.Base(path)+".tmp-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if ok && rest != "" && strings.Trim(rest, "0123456789") == "" && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temp state file: %w", err)
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write temp state file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fsync temp state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close temp state file: %w", err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("rename state file: %w", err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // make the rename durable; not all filesystems support it
		_ = d.Close()
	}
	return nil
}
