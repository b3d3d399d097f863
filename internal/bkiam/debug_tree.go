package bkiam

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The backend's debug tree (bk-iam pkg/logging/debug), as query_by_actions answers it beside its
// data with ?debug: a root whose sub_debugs hold one entry per action; each entry's
// context.action.ID names its action and context.subject.Attribute.Attribute.pk is the subject's
// key (absent for a subject IAM does not know, whose entry then stops); deep under it, the
// database's entry lists in context.effectPolicies the rows the policy query read, {PK,
// SubjectPK, ExpressionPK, ExpiredAt}. The entries between (the policy query's own, which lists
// the rows again as {ID, Expression, …}) and everything else are the backend's to change, so the
// reader looks for what it needs wherever it is under the action's entry, and refuses a tree that
// lacks it rather than guess.

// debugTree is what readDebugTree found.
type debugTree struct {
	known bool
	pk    int64
	rows  map[string][]DebugRow
}

// debugNode is one entry of the tree.
type debugNode struct {
	Context   map[string]json.RawMessage `json:"context"`
	SubDebugs []json.RawMessage          `json:"sub_debugs"`
}

// readDebugTree reads the rows of subject for each of actions from a query_by_actions tree: a root
// whose sub_debugs hold one entry per action.
func readDebugTree(raw []byte, subject Subject, actions []string) (*debugTree, error) {
	root, err := decodeNode(raw, "the debug tree")
	if err != nil {
		return nil, err
	}
	return readDebugEntries(root.SubDebugs, "debug.sub_debugs", subject, actions)
}

// readDebugEntry reads the rows of subject for action from the single-action query's tree, which
// is the action's entry itself.
func readDebugEntry(raw []byte, subject Subject, action string) (*debugTree, error) {
	return readDebugEntries([]json.RawMessage{raw}, "debug", subject, []string{action})
}

// readDebugEntries reads action entries (at names the list in errors): one for each of actions,
// all of the one subject.
func readDebugEntries(entries []json.RawMessage, at string, subject Subject, actions []string) (*debugTree, error) {
	out := &debugTree{rows: map[string][]DebugRow{}}
	seen := map[string]bool{}
	for i, rawEntry := range entries {
		at := at
		if len(entries) > 1 || at != "debug" {
			at = fmt.Sprintf("%s[%d]", at, i)
		}
		entry, err := decodeNode(rawEntry, at)
		if err != nil {
			return nil, err
		}
		action, err := entryAction(entry, at)
		if err != nil {
			return nil, err
		}
		switch {
		case !slices.Contains(actions, action):
			return nil, fmt.Errorf("%s: an entry for action %s, which was not asked for", at, action)
		case seen[action]:
			return nil, fmt.Errorf("%s: a second entry for action %s", at, action)
		}
		seen[action] = true
		pk, known, err := entrySubject(entry, at, subject)
		if err != nil {
			return nil, err
		}
		if i > 0 && (known != out.known || pk != out.pk) {
			return nil, fmt.Errorf("%s: the subject's key is %d (known %t), where the entry before says %d (known %t)", at, pk, known, out.pk, out.known)
		}
		out.known, out.pk = known, pk
		if !known {
			continue // the backend stops at the subject: nothing is held
		}
		rows, found, err := collectRows(entry, at, 0)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, fmt.Errorf("%s: no effectPolicies list of rows (with SubjectPK) under the entry of action %s", at, action)
		}
		if len(rows) > 0 {
			out.rows[action] = rows
		}
	}
	for _, a := range actions {
		if !seen[a] {
			return nil, fmt.Errorf("the debug tree has no entry for action %s", a)
		}
	}
	return out, nil
}

// maxDebugDepth bounds the walk: the backend's trees are four entries deep.
const maxDebugDepth = 32

func decodeNode(raw []byte, at string) (*debugNode, error) {
	var n *debugNode
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("%s is not a debug entry (%w)", at, err)
	}
	if n == nil {
		return nil, fmt.Errorf("%s is null", at)
	}
	return n, nil
}

// entryAction is an action entry's context.action.ID.
func entryAction(n *debugNode, at string) (string, error) {
	var action struct {
		ID string `json:"ID"`
	}
	raw, ok := n.Context["action"]
	if !ok {
		return "", fmt.Errorf("%s: no context.action", at)
	}
	if err := json.Unmarshal(raw, &action); err != nil || action.ID == "" {
		return "", fmt.Errorf("%s: context.action has no ID", at)
	}
	return action.ID, nil
}

// entrySubject is an action entry's subject key: context.subject.Attribute.Attribute.pk, which a
// subject IAM does not know lacks. The subject must be the one asked for.
func entrySubject(n *debugNode, at string, want Subject) (int64, bool, error) {
	var subj struct {
		Type      string `json:"Type"`
		ID        string `json:"ID"`
		Attribute *struct {
			Attribute map[string]json.RawMessage `json:"Attribute"`
		} `json:"Attribute"`
	}
	raw, ok := n.Context["subject"]
	if !ok {
		return 0, false, fmt.Errorf("%s: no context.subject", at)
	}
	if err := json.Unmarshal(raw, &subj); err != nil {
		return 0, false, fmt.Errorf("%s: context.subject is not a subject (%w)", at, err)
	}
	switch {
	case subj.Type != want.Type || !strings.EqualFold(subj.ID, want.ID):
		// IAM compares subject ids without case (its tables are utf8_general_ci).
		return 0, false, fmt.Errorf("%s: context.subject is %s %s, not the %s %s asked for", at, subj.Type, subj.ID, want.Type, want.ID)
	case subj.Attribute == nil || subj.Attribute.Attribute == nil:
		return 0, false, fmt.Errorf("%s: no context.subject.Attribute.Attribute", at)
	}
	rawPK, ok := subj.Attribute.Attribute["pk"]
	if !ok {
		return 0, false, nil
	}
	pk, err := positiveInt(rawPK)
	if err != nil {
		return 0, false, fmt.Errorf("%s: context.subject.Attribute.Attribute.pk: %w", at, err)
	}
	return pk, true, nil
}

// collectRows walks n's sub entries and collects the rows of every context.effectPolicies whose
// elements carry a SubjectPK (the database's list; an empty list counts as one); found says
// whether there was such a list. A row listed twice is kept once.
func collectRows(n *debugNode, at string, depth int) (rows []DebugRow, found bool, err error) {
	if depth > maxDebugDepth {
		return nil, false, fmt.Errorf("%s: deeper than %d entries", at, maxDebugDepth)
	}
	for i, rawSub := range n.SubDebugs {
		subAt := fmt.Sprintf("%s.sub_debugs[%d]", at, i)
		sub, err := decodeNode(rawSub, subAt)
		if err != nil {
			return nil, false, err
		}
		if list, ok := sub.Context["effectPolicies"]; ok {
			got, isRows, err := effectRows(list, subAt+".context.effectPolicies")
			if err != nil {
				return nil, false, err
			}
			if isRows {
				found = true
				rows = appendRows(rows, got)
			}
		}
		deeper, deeperFound, err := collectRows(sub, subAt, depth+1)
		if err != nil {
			return nil, false, err
		}
		found = found || deeperFound
		rows = appendRows(rows, deeper)
	}
	return rows, found, nil
}

// effectRows reads an effectPolicies list: isRows when it is the database's list, every element
// with a SubjectPK (an empty list too); a list of the policy query's own form (no SubjectPK) is
// not, and one that mixes both is malformed.
func effectRows(raw json.RawMessage, at string) (rows []DebugRow, isRows bool, err error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, false, nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, false, fmt.Errorf("%s is not a list of objects (%w)", at, err)
	}
	with := 0
	for _, item := range items {
		if _, ok := item["SubjectPK"]; ok {
			with++
		}
	}
	switch {
	case with == 0 && len(items) > 0:
		return nil, false, nil
	case with < len(items):
		return nil, false, fmt.Errorf("%s: some rows have a SubjectPK and some do not", at)
	}
	rows = []DebugRow{}
	for i, item := range items {
		var r DebugRow
		for _, f := range []struct {
			key      string
			dst      *int64
			positive bool
		}{{"PK", &r.ID, true}, {"SubjectPK", &r.SubjectPK, true}, {"ExpiredAt", &r.ExpiredAt, false}} {
			v, ok := item[f.key]
			if !ok {
				return nil, false, fmt.Errorf("%s[%d]: no %s", at, i, f.key)
			}
			n, err := anyInt(v)
			if err == nil && f.positive && n <= 0 {
				err = fmt.Errorf("%d is not positive", n)
			}
			if err != nil {
				return nil, false, fmt.Errorf("%s[%d].%s: %w", at, i, f.key, err)
			}
			*f.dst = n
		}
		rows = append(rows, r)
	}
	return rows, true, nil
}

// appendRows appends the rows of more not yet in rows (by id).
func appendRows(rows, more []DebugRow) []DebugRow {
	for _, r := range more {
		if !slices.ContainsFunc(rows, func(x DebugRow) bool { return x.ID == r.ID }) {
			rows = append(rows, r)
		}
	}
	return rows
}

func positiveInt(raw json.RawMessage) (int64, error) {
	n, err := anyInt(raw)
	if err == nil && n <= 0 {
		err = fmt.Errorf("%d is not positive", n)
	}
	return n, err
}

// anyInt reads a JSON integer exactly (no float rounding); a string of digits is not one.
func anyInt(raw json.RawMessage) (int64, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '-' && (t[0] < '0' || t[0] > '9') {
		return 0, errors.New("not a number")
	}
	var num json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&num); err != nil {
		return 0, errors.New("not a number")
	}
	n, err := num.Int64()
	if err != nil {
		return 0, fmt.Errorf("%s is not an integer", num)
	}
	return n, nil
}
