package protocol

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A moved block whose from and to are of different types (Terraform 1.8+,
// OpenTofu 1.10+) asks the target's provider for MoveResourceState: the
// source's stored state, at the version it was written, to be made the
// target's. Terraform may ask an unconfigured provider, and the move
// changes nothing outside state, so a Move is a pure conversion. The
// router serves the moves it is given (ServeMoves) and refuses any other
// move into one of its resources by name, listing the ones it takes; the
// framework's view of these resources would refuse them without saying
// which are supported.

// Move is a move between two resource types the router serves: From's
// state, upgraded to its current schema, made To's.
type Move struct {
	// From and To are the full type names, e.g. bkiam_instance_grant.
	From, To string
	// What says which of From's states move, for the error that refuses
	// another move into To: e.g. "a grant to a group".
	What    string
	convert func(source tftypes.Value, target tftypes.Object, diags *Diagnostics) (tftypes.Value, bool)
}

// NewMove is a move from the type from, whose state decode reads, to the
// type to, whose state encode writes; convert turns one model into the
// other, or says in diags why this state cannot move.
func NewMove[S, T any](from, to, what string, decode func(tftypes.Value) (S, error), encode func(tftypes.Object, T) tftypes.Value,
	convert func(S, *Diagnostics) (T, bool)) Move {
	return Move{From: from, To: to, What: what, convert: func(source tftypes.Value, target tftypes.Object, diags *Diagnostics) (tftypes.Value, bool) {
		s, err := decode(source)
		if err != nil {
			diags.AddError("Cannot move the state", fmt.Sprintf("The state of the %s does not fit its model: %v. This is a bug in the provider.", from, err))
			return tftypes.Value{}, false
		}
		t, ok := convert(s, diags)
		if !ok || diags.HasError() {
			return tftypes.Value{}, false
		}
		return encode(target, t), true
	}}
}

// ServeMoves makes the router answer MoveResourceState with moves, whose
// types must be among its resources.
func (s *Router[D]) ServeMoves(moves []Move) *Router[D] {
	s.moves = append(s.moves, moves...)
	return s
}

func (s *Router[D]) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	target, ok := s.resources[req.TargetTypeName]
	if !ok {
		return s.ProviderServer.MoveResourceState(ctx, req)
	}
	resp := &tfprotov6.MoveResourceStateResponse{}
	var diags Diagnostics
	defer func() { resp.Diagnostics = diags }()
	move, ok := s.move(req)
	source, served := s.resources[req.SourceTypeName]
	if !ok || !served {
		diags.AddError("Unsupported move", s.unsupportedMove(req))
		return resp, nil
	}
	upgraded := source.upgradeState(ctx, &tfprotov6.UpgradeResourceStateRequest{TypeName: req.SourceTypeName,
		Version: req.SourceSchemaVersion, RawState: req.SourceState})
	diags = append(diags, upgraded.Diagnostics...)
	if diags.HasError() {
		return resp, nil
	}
	if upgraded.UpgradedState == nil {
		diags.AddError("Cannot move the state", fmt.Sprintf("Terraform sent the move of a %s without its state. This is a bug in "+
			"Terraform or the provider.", req.SourceTypeName))
		return resp, nil
	}
	value, err := upgraded.UpgradedState.Unmarshal(source.ObjectType())
	if err != nil {
		diags.AddError("Cannot move the state", fmt.Sprintf("The upgraded state of the %s does not fit its schema: %v. This is a bug "+
			"in the provider.", req.SourceTypeName, err))
		return resp, nil
	}
	moved, ok := move.convert(value, target.ObjectType(), &diags)
	if !ok {
		return resp, nil
	}
	// The private state moves as it is: the types a Move joins keep it in
	// one format.
	state, identity := target.movedIn(moved, &diags)
	if !diags.HasError() {
		resp.TargetState, resp.TargetIdentity, resp.TargetPrivate = state, identity, req.SourcePrivate
	}
	return resp, nil
}

// move is the move the request asks for: one of the moves served, or,
// between two addresses of this provider (a source changed in
// required_providers, a registry mirror, Terraform to OpenTofu), the
// state of the same type as it is. The source's provider must be this
// one: its address ends in the provider's type name (OpenTofu before
// 1.12.4 sent that name alone).
func (s *Router[D]) move(req *tfprotov6.MoveResourceStateRequest) (Move, bool) {
	provider, _, _ := strings.Cut(req.TargetTypeName, "_")
	if path.Base(req.SourceProviderAddress) != provider {
		return Move{}, false
	}
	if req.SourceTypeName == req.TargetTypeName {
		return Move{From: req.SourceTypeName, To: req.TargetTypeName,
			convert: func(source tftypes.Value, _ tftypes.Object, _ *Diagnostics) (tftypes.Value, bool) {
				return source, true
			}}, true
	}
	i := slices.IndexFunc(s.moves, func(m Move) bool { return m.From == req.SourceTypeName && m.To == req.TargetTypeName })
	if i < 0 {
		return Move{}, false
	}
	return s.moves[i], true
}

// unsupportedMove says which moves into the request's target are served.
func (s *Router[D]) unsupportedMove(req *tfprotov6.MoveResourceStateRequest) string {
	var takes []string
	for _, m := range s.moves {
		if m.To == req.TargetTypeName {
			takes = append(takes, fmt.Sprintf("from %s (%s)", m.From, m.What))
		}
	}
	from := req.SourceTypeName
	if req.SourceProviderAddress != "" {
		from += " of " + req.SourceProviderAddress
	}
	supported := "It takes no moved block from another resource type."
	if len(takes) > 0 {
		supported = "It takes a moved block only " + strings.Join(takes, ", or ") + "."
	}
	return fmt.Sprintf("A %s cannot take the state of a %s. %s To manage the object as a %s anyway, remove the other resource "+
		"from state without destroying it (a removed block with destroy = false, or terraform state rm) and import it.",
		req.TargetTypeName, from, supported, req.TargetTypeName)
}

// movedIn is a moved state as the resource keeps it: the state, checked
// against the model, and the identity it names.
func (s served[M, D]) movedIn(v tftypes.Value, diags *Diagnostics) (*tfprotov6.DynamicValue, *tfprotov6.ResourceIdentityData) {
	m, ok := s.decodeValue(v, "moved state", diags)
	if !ok || m == nil {
		if ok {
			diags.AddError("Cannot move the state", "The move made a null "+s.TypeName()+". This is a bug in the provider.")
		}
		return nil, nil
	}
	return s.marshal(m, diags), s.identityData(s.encodeIdentity(*m), diags)
}
