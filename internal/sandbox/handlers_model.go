package sandbox

import (
	"net/http"
	"regexp"
	"strings"
)

// The backend's model query (gateway resource system_query): what a system registered, for the
// provider's plan-time checks and its bkiam_system data source. Backend envelope, HTTP 200 for
// errors too, like the read routes.

var reModel = regexp.MustCompile(`^/api/v1/model/systems/([^/]+)/query/?$`)

// modelFields are the parts of the model the query can return; others are ignored.
var modelFields = map[string]bool{"actions": true, "resource_types": true, "instance_selections": true, "resource_creator_actions": true}

// serveModel serves the model query; false when the path is not it.
func (s *Server) serveModel(c *call) bool {
	m := reModel.FindStringSubmatch(c.r.URL.Path)
	if m == nil || c.r.Method != http.MethodGet {
		return false
	}
	failed := true
	defer func() { s.stats.record("model_query", 0, failed) }()
	if !s.sleepLatency(c.r) {
		return true
	}
	if f := s.faults.takeModel(); f != nil {
		s.writeFault(c, &injected{fail: f})
		return true
	}
	app, ok := s.gatewayAuth(c)
	if !ok {
		return true
	}
	sys, code, msg := s.backendSystem(app, m[1])
	if code != 0 {
		c.writeJSON(http.StatusOK, backendBody{Code: code, Message: msg, Data: map[string]any{}})
		return true
	}
	fields := c.r.URL.Query().Get("fields")
	if fields == "" {
		fields = "actions,resource_types,instance_selections,resource_creator_actions"
	}
	data := map[string]any{}
	for _, f := range strings.Split(fields, ",") {
		if modelFields[f] {
			data[f] = s.model.modelPart(sys, f)
		}
	}
	failed = false
	c.writeJSON(http.StatusOK, backendBody{Code: 0, Message: "ok", Data: data})
	return true
}

type modelTypeRef struct {
	System string `json:"system_id"`
	ID     string `json:"id"`
}

type modelSelectionRef struct {
	System        string `json:"system_id"`
	ID            string `json:"id"`
	IgnoreIAMPath bool   `json:"ignore_iam_path"`
}

type modelRelatedType struct {
	System             string              `json:"system_id"`
	ID                 string              `json:"id"`
	NameAlias          string              `json:"name_alias"`
	NameAliasEn        string              `json:"name_alias_en"`
	SelectionMode      string              `json:"selection_mode"`
	InstanceSelections []modelSelectionRef `json:"instance_selections"`
}

type modelAction struct {
	ID                   string             `json:"id"`
	Name                 string             `json:"name"`
	NameEn               string             `json:"name_en"`
	Description          string             `json:"description"`
	DescriptionEn        string             `json:"description_en"`
	AuthType             string             `json:"auth_type"`
	Type                 string             `json:"type"`
	Hidden               bool               `json:"hidden"`
	Version              int                `json:"version"`
	RelatedResourceTypes []modelRelatedType `json:"related_resource_types"`
	RelatedActions       []string           `json:"related_actions"`
}

type modelResourceType struct {
	ID            string         `json:"id"`
	Name          string         `json:"name"`
	NameEn        string         `json:"name_en"`
	Description   string         `json:"description"`
	DescriptionEn string         `json:"description_en"`
	Parents       []modelTypeRef `json:"parents"`
	Version       int            `json:"version"`
}

type modelSelection struct {
	ID                string         `json:"id"`
	Name              string         `json:"name"`
	NameEn            string         `json:"name_en"`
	IsDynamic         bool           `json:"is_dynamic"`
	ResourceTypeChain []modelTypeRef `json:"resource_type_chain"`
}

// selectionID names the one instance selection the sandbox derives for each resource type: the
// chain of its parents down to it. It is the type's system's: an action related to another
// system's type refers to that system's selection, as bk_job's access_business refers to CMDB's.
func selectionID(typ string) string { return typ + "_list" }

// chain is the resource type chain of t's instance selection: its first parents, root first, each
// of its own system (bk_job's script under bk_cmdb's biz).
func (m *Model) chain(t typeRef) []modelTypeRef {
	var out []modelTypeRef
	seen := map[typeRef]bool{}
	for cur, ok := t, true; ok && !seen[cur]; {
		seen[cur] = true
		out = append([]modelTypeRef{{System: cur.System, ID: cur.Type}}, out...)
		rt := m.resourceType(cur)
		ok = rt != nil && len(rt.parents) > 0
		if ok {
			cur = rt.parents[0]
		}
	}
	return out
}

// resourceType looks a type up by its reference; nil when the model has none.
func (m *Model) resourceType(t typeRef) *ResourceType {
	if sys := m.systems[t.System]; sys != nil {
		return sys.types[t.Type]
	}
	return nil
}

// modelPart renders one field of the model query of system s from the sandbox model. Related
// types and parents carry their own system, which for another system's type is not s's.
func (m *Model) modelPart(s *System, field string) any {
	switch field {
	case "actions":
		out := make([]modelAction, 0, len(s.Actions))
		for _, a := range s.Actions {
			ma := modelAction{ID: a.ID, Name: orID(a.Name, a.ID), NameEn: orID(a.NameEn, a.ID), AuthType: a.AuthType,
				Hidden: a.Hidden, Version: 1, RelatedResourceTypes: []modelRelatedType{}, RelatedActions: []string{}}
			for _, t := range a.related {
				ma.RelatedResourceTypes = append(ma.RelatedResourceTypes, modelRelatedType{System: t.System, ID: t.Type, SelectionMode: "instance",
					InstanceSelections: []modelSelectionRef{{System: t.System, ID: selectionID(t.Type), IgnoreIAMPath: a.IgnoreIAMPath}}})
			}
			out = append(out, ma)
		}
		return out
	case "resource_types":
		out := make([]modelResourceType, 0, len(s.ResourceTypes))
		for _, t := range s.ResourceTypes {
			mt := modelResourceType{ID: t.ID, Name: orID(t.Name, t.ID), NameEn: orID(t.NameEn, t.ID), Parents: []modelTypeRef{}, Version: 1}
			for _, p := range t.parents {
				mt.Parents = append(mt.Parents, modelTypeRef{System: p.System, ID: p.Type})
			}
			out = append(out, mt)
		}
		return out
	case "instance_selections":
		out := make([]modelSelection, 0, len(s.ResourceTypes))
		for _, t := range s.ResourceTypes {
			out = append(out, modelSelection{ID: selectionID(t.ID), Name: orID(t.Name, t.ID), NameEn: orID(t.NameEn, t.ID),
				ResourceTypeChain: m.chain(typeRef{System: s.ID, Type: t.ID})})
		}
		return out
	default: // resource_creator_actions
		if len(s.CreatorActions) == 0 {
			return map[string]any{} // what the backend answers for a system without a creator config
		}
		return map[string]any{"mode": "", "config": s.CreatorActions}
	}
}

func orID(name, id string) string {
	if name == "" {
		return id
	}
	return name
}
