package authz

import (
	"maps"
	"slices"

	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// What the grants keep in private state (private_state.go): a pending
// import, and the exact holdings after a run that stopped midway.

// privateImportKey is the private-state key of an import by actions and
// resource type: import records what to read, and the read that follows
// the import completes it and removes the key.
const privateImportKey = "import"

// importRequest is what an import asked to read: the actions, and their
// resource types. One type is System and Type; the types of a combined
// resource, in order, are Combined; actions related to no resource type
// have neither.
type importRequest struct {
	Actions  []string     `json:"actions"`
	System   string       `json:"system,omitempty"`
	Type     string       `json:"type,omitempty"`
	Combined []importType `json:"combined,omitempty"`
}

// importType is a resource type of a combined import.
type importType struct {
	System string `json:"system"`
	Type   string `json:"type"`
}

// newImportRequest is the request to read actions on types (in order).
func newImportRequest(actions []string, types []grantplan.Resource) importRequest {
	req := importRequest{Actions: actions}
	switch len(types) {
	case 0:
	case 1:
		req.System, req.Type = types[0].System, types[0].Type
	default:
		for _, t := range types {
			req.Combined = append(req.Combined, importType{System: t.System, Type: t.Type})
		}
	}
	return req
}

// types are the resource types to read, in order, without instances.
func (r importRequest) types() []grantplan.Resource {
	if r.System != "" || r.Type != "" {
		return []grantplan.Resource{{System: r.System, Type: r.Type}}
	}
	var out []grantplan.Resource
	for _, t := range r.Combined {
		out = append(out, grantplan.Resource{System: t.System, Type: t.Type})
	}
	return out
}

// readImportRequest returns the pending import kept in private state, or
// nil when there is none.
func readImportRequest(private protocol.PrivateState, diags *protocol.Diagnostics) *importRequest {
	var req importRequest
	if !private.Get(privateImportKey, &req, diags) {
		return nil
	}
	return &req
}

// privateHoldingsKey is the private-state key under which a resource keeps
// what it holds when its public state cannot say it exactly: after a run
// that failed midway, actions can hold different instances, which one
// grant cannot describe. Private state travels with the resource's state
// but is never shown to users; it is absent whenever the public state is
// exact.
const privateHoldingsKey = "holdings"

// heldResource is the JSON form of one entry of a holding.
type heldResource struct {
	System    string            `json:"system"`
	Type      string            `json:"type"`
	Instances map[string]string `json:"instances"`
}

type heldAction struct {
	Resources []heldResource `json:"resources"`
	ExpiresAt int64          `json:"expires_at"`
	Partial   bool           `json:"partial,omitempty"`
}

// ReadHoldings returns the holdings kept in private state, or nil when
// there are none (the public state is exact).
func ReadHoldings(private protocol.PrivateState, diags *protocol.Diagnostics) grantplan.Holdings {
	var stored map[string]heldAction
	if !private.Get(privateHoldingsKey, &stored, diags) {
		return nil
	}
	h := grantplan.Holdings{}
	for action, a := range stored {
		held := grantplan.Holding{ExpiresAt: a.ExpiresAt, Partial: a.Partial}
		for _, r := range a.Resources {
			held.Resources = append(held.Resources, grantplan.Resource{System: r.System, Type: r.Type, Instances: r.Instances})
		}
		h[action] = held
	}
	return h
}

// writeHoldings keeps h in private state, or removes the key when h is nil.
func writeHoldings(private protocol.PrivateState, h grantplan.Holdings, diags *protocol.Diagnostics) {
	if h == nil {
		private.Set(privateHoldingsKey, nil, diags)
		return
	}
	stored := make(map[string]heldAction, len(h))
	for action, held := range h {
		a := heldAction{ExpiresAt: held.ExpiresAt, Partial: held.Partial, Resources: []heldResource{}}
		for _, r := range held.Resources {
			a.Resources = append(a.Resources, heldResource{System: r.System, Type: r.Type, Instances: r.Instances})
		}
		stored[action] = a
	}
	private.Set(privateHoldingsKey, stored, diags)
}

// RecordHoldings keeps held in private state unless view, the grant the
// public state shows, says exactly the same.
func RecordHoldings(private protocol.PrivateState, held grantplan.Holdings, view grantplan.Grant, diags *protocol.Diagnostics) {
	if grantplan.Held(&view).Equal(held) {
		held = nil
	}
	writeHoldings(private, held, diags)
}

// privateCreatorKey is the private-state key of a creator grant's exact
// holdings, kept only while its public state cannot describe them.
const privateCreatorKey = "creator_paths"

type heldNode struct {
	System string `json:"system"`
	Type   string `json:"type"`
	ID     string `json:"id"`
}

type heldPath struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Ancestors []heldNode `json:"ancestors,omitempty"`
	Doubt     bool       `json:"doubt,omitempty"`
}

func readCreatorHoldings(private protocol.PrivateState, t grantplan.CreatorTarget, diags *protocol.Diagnostics) grantplan.CreatorHoldings {
	var stored []heldPath
	if !private.Get(privateCreatorKey, &stored, diags) {
		return nil
	}
	h := grantplan.CreatorHoldings{}
	for _, p := range stored {
		in := grantplan.CreatorInstance{ID: p.ID, Name: p.Name}
		for _, a := range p.Ancestors {
			in.Ancestors = append(in.Ancestors, grantplan.Node{System: a.System, Type: a.Type, ID: a.ID})
		}
		h[in.Path(t.System, t.Type)] = grantplan.CreatorHolding{Instance: in, Doubt: p.Doubt}
	}
	return h
}

func writeCreatorHoldings(private protocol.PrivateState, h grantplan.CreatorHoldings, diags *protocol.Diagnostics) {
	if h == nil {
		private.Set(privateCreatorKey, nil, diags)
		return
	}
	// Sorted by path, so that the same holdings always write the same bytes.
	stored := make([]heldPath, 0, len(h))
	for _, path := range slices.Sorted(maps.Keys(h)) {
		held := h[path]
		p := heldPath{ID: held.Instance.ID, Name: held.Instance.Name, Doubt: held.Doubt}
		for _, a := range held.Instance.Ancestors {
			p.Ancestors = append(p.Ancestors, heldNode{System: a.System, Type: a.Type, ID: a.ID})
		}
		stored = append(stored, p)
	}
	private.Set(privateCreatorKey, stored, diags)
}
