package protocol

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Stored state outlives the provider version that wrote it, so both of a
// protocol resource's records carry a version:
//
//   - The schema's Version is the version of the public state. Terraform
//     sends state written at an older version to UpgradeResourceState
//     before any other call; a resource whose schema says Version N
//     implements stateUpgrader with a step from each version below N
//     (TestProtocolSchemasUseNothingIgnored refuses a version without its
//     steps). State written at a version above N, by a newer provider, is
//     refused, not guessed at.
//   - The private state carries privateVersionKey (private_state.go);
//     readPrivateState refuses a newer one and upgrades an older one.

// StateUpgrader is implemented by a resource whose schema version is above
// 0: stateUpgrades()[v] turns a state written at schema version v, as its
// JSON attributes, into one of version v+1.
type StateUpgrader interface {
	StateUpgrades() map[int64]func(attributes map[string]any) (map[string]any, error)
}

// SchemaVersion is the version of the public state a resource writes.
func (s served[M, D]) SchemaVersion() int64 { return s.version() }

// upgradeState answers UpgradeResourceState: the state Terraform stored,
// written at req.Version, in the schema of this version. Terraform always
// calls it before reading a stored state, at the current version too:
// that is where JSON becomes a value of the schema's type.
func (s served[M, D]) upgradeState(_ context.Context, req *tfprotov6.UpgradeResourceStateRequest) *tfprotov6.UpgradeResourceStateResponse {
	resp := &tfprotov6.UpgradeResourceStateResponse{}
	var diags Diagnostics
	defer func() { resp.Diagnostics = diags }()
	if req.RawState == nil {
		return resp
	}
	if len(req.RawState.JSON) == 0 {
		// Only the SDK's flatmap state has no JSON, which this provider has
		// never written.
		diags.AddError("Cannot read the stored state",
			fmt.Sprintf("The state of this %s is not JSON (it is in the legacy flatmap form), which no version of this "+
				"provider wrote. Remove it from state (terraform state rm) and import it again.", s.TypeName()))
		return resp
	}
	upgraded, err := s.upgradeJSON(req.Version, req.RawState.JSON)
	if err != nil {
		diags.AddError("Cannot upgrade the stored state", fmt.Sprintf("The state of this %s: %v.", s.TypeName(), err))
		return resp
	}
	dv, misfit, err := decodeUpgraded(upgraded, s.typ())
	switch {
	case misfit != nil:
		diags.AddError("Cannot read the stored state",
			fmt.Sprintf("The state of this %s does not fit the resource's schema at version %d: %v. This is a bug in the "+
				"provider: report it with the state's attributes (they hold no secret).", s.TypeName(), s.SchemaVersion(), misfit))
	case err != nil:
		diags.AddError("Cannot encode the resource's state", err.Error()+". This is a bug in the provider.")
	default:
		resp.UpgradedState = &dv
	}
	return resp
}

// decodeUpgraded reads upgraded JSON attributes as a value of typ: misfit
// when they do not fit it, err when the value cannot be encoded.
// Attributes a later schema dropped are ignored rather than refused: the
// upgrade steps rename and convert, and a removed attribute needs no step
// of its own.
func decodeUpgraded(upgraded []byte, typ tftypes.Object) (dv tfprotov6.DynamicValue, misfit, err error) {
	value, misfit := (&tfprotov6.RawState{JSON: upgraded}).UnmarshalWithOpts(typ, tfprotov6.UnmarshalOpts{
		ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true},
	})
	if misfit != nil {
		return dv, misfit, nil
	}
	dv, err = tfprotov6.NewDynamicValue(typ, value)
	return dv, nil, err
}

// upgradeJSON runs the upgrade steps from version to the schema's version
// over a state's JSON attributes.
func (s served[M, D]) upgradeJSON(version int64, raw []byte) ([]byte, error) {
	return upgradeSteps(version, s.SchemaVersion(), s.stateSteps(), raw, "schema")
}

func (s served[M, D]) stateSteps() map[int64]func(map[string]any) (map[string]any, error) {
	if u, ok := s.def.(StateUpgrader); ok {
		return u.StateUpgrades()
	}
	return nil
}

// UpgradeProblems lists what is wrong with a resource's upgrade steps, of
// its state and of its identity: a version below the schema's without a
// step (what it wrote could not be read), or a step from the schema's
// version or above (never run).
func (s served[M, D]) UpgradeProblems() []string {
	return append(stepProblems("schema", s.SchemaVersion(), s.stateSteps()),
		stepProblems("identity schema", s.IdentityVersion(), s.identitySteps())...)
}

func stepProblems(what string, current int64, steps map[int64]func(map[string]any) (map[string]any, error)) []string {
	var problems []string
	for v := int64(0); v < current; v++ {
		if steps[v] == nil {
			problems = append(problems, fmt.Sprintf("%s version %d has no upgrade step from version %d", what, current, v))
		}
	}
	for v := range steps {
		if v < 0 || v >= current {
			problems = append(problems, fmt.Sprintf("an upgrade step from version %d, which %s version %d never runs", v, what, current))
		}
	}
	return problems
}
