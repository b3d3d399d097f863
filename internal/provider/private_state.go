package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
)

// privateHoldingsKey is the private-state key under which a resource keeps
// what it holds when its public state cannot say it exactly: after a run
// that failed midway, actions can hold different instances, which one
// grant cannot describe. Private state travels with the resource's state
// but is never shown to users; it is absent whenever the public state is
// exact.
const privateHoldingsKey = "holdings"

// privateState is the part of the framework's private state API that
// resources use, satisfied by the request and response fields of every
// CRUD call.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

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

// readHoldings returns the holdings kept in private state, or nil when
// there are none (the public state is exact).
func readHoldings(ctx context.Context, private privateGetter) (grantplan.Holdings, diag.Diagnostics) {
	if private == nil {
		return nil, nil
	}
	raw, diags := private.GetKey(ctx, privateHoldingsKey)
	if diags.HasError() || len(raw) == 0 {
		return nil, diags
	}
	var stored map[string]heldAction
	if err := json.Unmarshal(raw, &stored); err != nil {
		diags.AddError("Cannot read the resource's private state",
			fmt.Sprintf("The record of what this resource holds in IAM is corrupt (%v). Remove the resource from state "+
				"(terraform state rm) and import it again.", err))
		return nil, diags
	}
	h := grantplan.Holdings{}
	for action, a := range stored {
		held := grantplan.Holding{ExpiresAt: a.ExpiresAt, Partial: a.Partial}
		for _, r := range a.Resources {
			held.Resources = append(held.Resources, grantplan.Resource{System: r.System, Type: r.Type, Instances: r.Instances})
		}
		h[action] = held
	}
	return h, diags
}

// writeHoldings keeps h in private state, or removes the key when h is nil.
func writeHoldings(ctx context.Context, private privateSetter, h grantplan.Holdings) diag.Diagnostics {
	if h == nil {
		return private.SetKey(ctx, privateHoldingsKey, nil)
	}
	stored := make(map[string]heldAction, len(h))
	for action, held := range h {
		a := heldAction{ExpiresAt: held.ExpiresAt, Partial: held.Partial, Resources: []heldResource{}}
		for _, r := range held.Resources {
			a.Resources = append(a.Resources, heldResource{System: r.System, Type: r.Type, Instances: r.Instances})
		}
		stored[action] = a
	}
	raw, err := json.Marshal(stored)
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Cannot record what the resource holds", err.Error())
		return diags
	}
	return private.SetKey(ctx, privateHoldingsKey, raw)
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

func readCreatorHoldings(ctx context.Context, private privateGetter, t grantplan.CreatorTarget) (grantplan.CreatorHoldings, diag.Diagnostics) {
	if private == nil {
		return nil, nil
	}
	raw, diags := private.GetKey(ctx, privateCreatorKey)
	if diags.HasError() || len(raw) == 0 {
		return nil, diags
	}
	var stored []heldPath
	if err := json.Unmarshal(raw, &stored); err != nil {
		diags.AddError("Cannot read the resource's private state",
			fmt.Sprintf("The record of what this resource holds in IAM is corrupt (%v). Remove the resource from state "+
				"(terraform state rm) and import it again.", err))
		return nil, diags
	}
	h := grantplan.CreatorHoldings{}
	for _, p := range stored {
		in := grantplan.CreatorInstance{ID: p.ID, Name: p.Name}
		for _, a := range p.Ancestors {
			in.Ancestors = append(in.Ancestors, grantplan.Node{System: a.System, Type: a.Type, ID: a.ID})
		}
		h[in.Path(t.System, t.Type)] = grantplan.CreatorHolding{Instance: in, Doubt: p.Doubt}
	}
	return h, diags
}

func writeCreatorHoldings(ctx context.Context, private privateSetter, h grantplan.CreatorHoldings) diag.Diagnostics {
	if h == nil {
		return private.SetKey(ctx, privateCreatorKey, nil)
	}
	stored := make([]heldPath, 0, len(h))
	for _, held := range h {
		p := heldPath{ID: held.Instance.ID, Name: held.Instance.Name, Doubt: held.Doubt}
		for _, a := range held.Instance.Ancestors {
			p.Ancestors = append(p.Ancestors, heldNode{System: a.System, Type: a.Type, ID: a.ID})
		}
		stored = append(stored, p)
	}
	raw, err := json.Marshal(stored)
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Cannot record what the resource holds", err.Error())
		return diags
	}
	return private.SetKey(ctx, privateCreatorKey, raw)
}
