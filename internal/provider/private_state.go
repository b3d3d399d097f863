package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

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

// readPrivate decodes the JSON kept under key, reporting whether there was any.
func readPrivate(ctx context.Context, private privateGetter, key string, into any) (bool, diag.Diagnostics) {
	if private == nil {
		return false, nil
	}
	raw, diags := private.GetKey(ctx, key)
	if diags.HasError() || len(raw) == 0 {
		return false, diags
	}
	if err := json.Unmarshal(raw, into); err != nil {
		diags.AddError("Cannot read the resource's private state",
			fmt.Sprintf("The record of what this resource holds in IAM is corrupt (%v). Remove the resource from state "+
				"(terraform state rm) and import it again.", err))
		return false, diags
	}
	return true, diags
}

// writePrivate keeps v as JSON under key, or removes the key when v is nil.
func writePrivate(ctx context.Context, private privateSetter, key string, v any) diag.Diagnostics {
	if v == nil {
		return private.SetKey(ctx, key, nil)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Cannot record what the resource holds", err.Error())
		return diags
	}
	return private.SetKey(ctx, key, raw)
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
	var stored map[string]heldAction
	found, diags := readPrivate(ctx, private, privateHoldingsKey, &stored)
	if !found {
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
		return writePrivate(ctx, private, privateHoldingsKey, nil)
	}
	stored := make(map[string]heldAction, len(h))
	for action, held := range h {
		a := heldAction{ExpiresAt: held.ExpiresAt, Partial: held.Partial, Resources: []heldResource{}}
		for _, r := range held.Resources {
			a.Resources = append(a.Resources, heldResource{System: r.System, Type: r.Type, Instances: r.Instances})
		}
		stored[action] = a
	}
	return writePrivate(ctx, private, privateHoldingsKey, stored)
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
	var stored []heldPath
	found, diags := readPrivate(ctx, private, privateCreatorKey, &stored)
	if !found {
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
		return writePrivate(ctx, private, privateCreatorKey, nil)
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
	return writePrivate(ctx, private, privateCreatorKey, stored)
}
