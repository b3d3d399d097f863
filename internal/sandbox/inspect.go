package sandbox

import (
	"encoding/json"
	"time"
)

// PolicyFilter selects policies for inspection; empty fields match everything.
type PolicyFilter struct {
	System      string
	SubjectType string
	SubjectID   string
	Action      string
}

// Subject is a policy's subject.
type Subject struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// PolicyView is one stored policy as GET /_sandbox/policies shows it. Paths is set (possibly empty)
// for an action related to at most one type; Groups for a combined resource, one object per group
// mapping each type to its sorted paths.
type PolicyView struct {
	PolicyID  int64   `json:"policy_id"`
	System    string  `json:"system"`
	Subject   Subject `json:"subject"`
	Action    string  `json:"action"`
	ExpiredAt int64   `json:"expired_at"`
	Any       bool    `json:"any"`
	// TemplateID is set on a row a group holds through a permission template; RBAC on a policy the
	// real server stores as RBAC relations (listed only with ?type=rbac).
	TemplateID int64                 `json:"template_id,omitempty"`
	RBAC       bool                  `json:"rbac,omitempty"`
	Paths      []string              `json:"paths,omitzero"`
	Groups     []map[string][]string `json:"groups,omitzero"`
	// Expression is set, instead of Paths, on a row granted with an attribute condition
	// (AddExpressionPolicy): its expression as given.
	Expression map[string]any `json:"expression,omitempty"`
}

// PolicyList is the body of GET /_sandbox/policies.
type PolicyList struct {
	Policies []PolicyView `json:"policies"`
}

func (f PolicyFilter) match(k policyKey) bool {
	return (f.System == "" || f.System == k.System) &&
		(f.SubjectType == "" || f.SubjectType == k.SubjectType) &&
		(f.SubjectID == "" || f.SubjectID == k.SubjectID) &&
		(f.Action == "" || f.Action == k.Action)
}

// view lists the policies matching f after the housekeeping due at now (purgeExpiredLocked).
func (st *store) view(f PolicyFilter, m *Model, now time.Time) PolicyList {
	st.mu.Lock()
	defer st.mu.Unlock()
	_ = st.purgeExpiredLocked(now) // a failed save keeps the state as it was; the view says so
	out := PolicyList{Policies: []PolicyView{}}
	for _, p := range st.sortedPoliciesLocked() {
		if f.match(p.Key) {
			v := p.view()
			if sys := m.systems[p.Key.System]; sys != nil {
				v.RBAC = p.rbac(sys.actions[p.Key.Action])
			}
			out.Policies = append(out.Policies, v)
		}
	}
	return out
}

func (p *policy) view() PolicyView {
	v := PolicyView{
		PolicyID:   p.ID,
		System:     p.Key.System,
		Subject:    Subject{Type: p.Key.SubjectType, ID: p.Key.SubjectID},
		Action:     p.Key.Action,
		ExpiredAt:  p.ExpiredAt,
		Any:        p.Any,
		TemplateID: p.Key.TemplateID,
	}
	if p.Cond != nil {
		// A copy of plain JSON values, as a caller decoding the route's answer gets them (the
		// stored one holds the evaluation's own types).
		_ = json.Unmarshal(marshalJSON(p.Cond), &v.Expression)
		return v
	}
	if !p.Combined {
		v.Paths = sortedKeys(p.Paths)
		return v
	}
	v.Groups = []map[string][]string{}
	for _, g := range p.Groups {
		m := map[string][]string{}
		for typ, ps := range g {
			m[typ] = sortedKeys(ps)
		}
		v.Groups = append(v.Groups, m)
	}
	return v
}
