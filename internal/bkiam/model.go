package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
)

// The model of a system: what it registered in IAM (its actions with their related resource types,
// its resource types, its instance selections and its resource-creator-actions tree). The IAM
// backend serves it through the API gateway (resource system_query) with the backend envelope
// {code, message, data} and HTTP 200 for errors too; ESB has no such route.

// ErrModelNeedsGateway is returned, before any I/O, by SystemModel on a client configured for ESB.
var ErrModelNeedsGateway = errors.New("bkiam: reading a system's model needs the API gateway: ESB has no model API; set apigw_url")

// modelFields are the parts of the model a SystemModel read asks for.
const modelFields = "actions,resource_types,instance_selections,resource_creator_actions"

// SystemModel is what a system registered in IAM.
type SystemModel struct {
	System        string
	Actions       []ModelAction
	ResourceTypes []ModelResourceType
	// CreatorConfig is the resource-creator-actions tree: one node per resource type whose creator
	// IAM grants actions to, with the node's sub resource types below it.
	CreatorConfig []CreatorNode
}

// ModelAction is a registered action.
type ModelAction struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	NameEn string `json:"name_en"`
	// AuthType is "abac", "rbac", "all" or "" (abac).
	AuthType string `json:"auth_type"`
	Type     string `json:"type"`
	Hidden   bool   `json:"hidden"`
	// RelatedResourceTypes are in the order a grant's resources must follow; none for an action
	// granted without instances, several for a combined resource.
	RelatedResourceTypes []RelatedResourceType `json:"related_resource_types"`
}

// RBAC reports whether IAM stores a group's single-type instance grants of the action as RBAC
// relations, listed only in the RBAC policy list.
func (a ModelAction) RBAC() bool {
	return (a.AuthType == "rbac" || a.AuthType == "all") && len(a.RelatedResourceTypes) == 1
}

// RelatedResourceType is one resource type an action relates to.
type RelatedResourceType struct {
	System             string              `json:"system_id"`
	ID                 string              `json:"id"`
	SelectionMode      string              `json:"selection_mode"`
	InstanceSelections []InstanceSelection `json:"instance_selections"`
}

// InstanceSelection is a reference to an instance selection of a related resource type.
type InstanceSelection struct {
	System        string `json:"system_id"`
	ID            string `json:"id"`
	IgnoreIAMPath bool   `json:"ignore_iam_path"`
}

// ModelResourceType is a registered resource type.
type ModelResourceType struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	NameEn  string    `json:"name_en"`
	Parents []TypeRef `json:"parents"`
}

// TypeRef names a resource type of a system.
type TypeRef struct {
	System string `json:"system_id"`
	ID     string `json:"id"`
}

// CreatorNode is one node of the resource-creator-actions tree.
type CreatorNode struct {
	ID               string          `json:"id"`
	Actions          []CreatorAction `json:"actions"`
	SubResourceTypes []CreatorNode   `json:"sub_resource_types"`
}

// CreatorAction is an action IAM grants the creator of an instance of the node's type.
type CreatorAction struct {
	ID       string `json:"id"`
	Required bool   `json:"required"`
}

// Action returns the action with the id, or nil.
func (m *SystemModel) Action(id string) *ModelAction {
	for i := range m.Actions {
		if m.Actions[i].ID == id {
			return &m.Actions[i]
		}
	}
	return nil
}

// ResourceType returns the resource type with the id, or nil.
func (m *SystemModel) ResourceType(id string) *ModelResourceType {
	for i := range m.ResourceTypes {
		if m.ResourceTypes[i].ID == id {
			return &m.ResourceTypes[i]
		}
	}
	return nil
}

// CreatorNode returns the creator config node of a resource type, at any depth, or nil.
func (m *SystemModel) CreatorNode(typ string) *CreatorNode {
	var find func([]CreatorNode) *CreatorNode
	find = func(nodes []CreatorNode) *CreatorNode {
		for i := range nodes {
			if nodes[i].ID == typ {
				return &nodes[i]
			}
			if n := find(nodes[i].SubResourceTypes); n != nil {
				return n
			}
		}
		return nil
	}
	return find(m.CreatorConfig)
}

// modelPath is the route path (relative to the gateway base) of a system's model.
func modelPath(system string) string {
	return "/api/v1/model/systems/" + url.PathEscape(system) + "/query"
}

// SystemModel reads what a system registered in IAM: its actions, resource types and creator
// config. The app must be a client of the system (else 1901401); an unknown system is 1901404.
func (c *Client) SystemModel(ctx context.Context, system string) (*SystemModel, error) {
	if c.cfg.transport != TransportGateway {
		return nil, ErrModelNeedsGateway
	}
	if strings.TrimSpace(system) == "" {
		return nil, invalid("model query", "system is empty")
	}
	path := modelPath(system)
	q := url.Values{}
	q.Set("fields", modelFields)
	op := fmt.Sprintf("model query GET %s", path)
	var out *SystemModel
	e := c.get(ctx, op, path, q, func(d []byte) (int, error) {
		m, err := decodeSystemModel(d, system)
		if err != nil {
			return 0, err
		}
		out = m
		return len(m.Actions), nil
	})
	if e != nil {
		c.explainReadError(e, path, system, "reading the system's model")
		return nil, e
	}
	return out, nil
}

// decodeSystemModel decodes the model query's data. An action or resource type without an id
// is an error: checks against a model that cannot name what it holds would refuse valid grants.
func decodeSystemModel(d []byte, system string) (*SystemModel, error) {
	var w struct {
		Actions                []ModelAction       `json:"actions"`
		ResourceTypes          []ModelResourceType `json:"resource_types"`
		ResourceCreatorActions json.RawMessage     `json:"resource_creator_actions"`
	}
	if err := json.Unmarshal(d, &w); err != nil {
		return nil, fmt.Errorf("data is not a system model (%w)", err)
	}
	if w.Actions == nil {
		return nil, errors.New("a system model without actions")
	}
	m := &SystemModel{System: system, Actions: w.Actions, ResourceTypes: w.ResourceTypes}
	for i, a := range m.Actions {
		if a.ID == "" {
			return nil, fmt.Errorf("a system model with action %d without an id", i)
		}
	}
	for i, t := range m.ResourceTypes {
		if t.ID == "" {
			return nil, fmt.Errorf("a system model with resource type %d without an id", i)
		}
	}
	// The creator config is {} when the system registered none, else {"config": [...]}.
	if raw := strings.TrimSpace(string(w.ResourceCreatorActions)); raw != "" && raw != "null" {
		var rca struct {
			Config []CreatorNode `json:"config"`
		}
		if err := json.Unmarshal(w.ResourceCreatorActions, &rca); err != nil {
			return nil, fmt.Errorf("a system model whose resource_creator_actions is not a creator config (%w)", err)
		}
		m.CreatorConfig = rca.Config
	}
	return m, nil
}

// ModelCache reads each system's model at most once: the first caller reads it, concurrent callers
// wait for that read, later ones get its result. A failed read is kept too (it already spent its
// retries, and every resource of the system would fail the same way), except when the reader's
// context ended, which says nothing about IAM: the next caller reads again. Safe for concurrent use.
type ModelCache struct {
	client *Client
	mu     sync.Mutex
	reads  map[string]*modelRead
	count  int
}

type modelRead struct {
	done  chan struct{}
	model *SystemModel
	err   error
}

// NewModelCache returns an empty cache reading through c.
func NewModelCache(c *Client) *ModelCache {
	return &ModelCache{client: c, reads: map[string]*modelRead{}}
}

// Get returns the system's model, reading it on first use.
func (mc *ModelCache) Get(ctx context.Context, system string) (*SystemModel, error) {
	for {
		mc.mu.Lock()
		r := mc.reads[system]
		if r == nil {
			r = &modelRead{done: make(chan struct{})}
			mc.reads[system] = r
			mc.count++
			mc.mu.Unlock()
			r.model, r.err = mc.client.SystemModel(ctx, system)
			if r.err != nil && ctx.Err() != nil {
				mc.mu.Lock()
				delete(mc.reads, system) // cancelled, not failed: let the next caller read
				mc.mu.Unlock()
			}
			close(r.done)
			return r.model, r.err
		}
		mc.mu.Unlock()
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		mc.mu.Lock()
		dropped := mc.reads[system] != r
		mc.mu.Unlock()
		if dropped {
			continue // the reader's context ended, not this caller's: read again
		}
		return r.model, r.err
	}
}

// Reads returns how many model reads were started (for tests and logs).
func (mc *ModelCache) Reads() int {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	return mc.count
}

// AskAlone is the AskAlone of system's model (AloneIn): nil when mc is nil or the model cannot be
// read, and the queries then try the batch route first and fall back to asking alone.
func (mc *ModelCache) AskAlone(ctx context.Context, system string) AskAlone {
	if mc == nil {
		return nil
	}
	m, err := mc.Get(ctx, system)
	if err != nil {
		return nil
	}
	return AloneIn(m)
}
