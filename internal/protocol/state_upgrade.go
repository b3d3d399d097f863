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
	// Attributes a later schema dropped are ignored rather than refused:
	// the upgrade steps rename and convert, and a removed attribute needs
	// no step of its own.
	value, err := (&tfprotov6.RawState{JSON: upgraded}).UnmarshalWithOpts(s.typ(), tfprotov6.UnmarshalOpts{
		ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true},
	})
	if err != nil {
		diags.AddError("Cannot read the stored state",
			fmt.Sprintf("The state of this %s does not fit the resource's schema at version %d: %v. This is a bug in the "+
				"provider: report it with the state's attributes (they hold no secret).", s.TypeName(), s.SchemaVersion(), err))
		return resp
	}
	dv, err := tfprotov6.NewDynamicValue(s.typ(), value)
	if err != nil {
		diags.AddError("Cannot encode the resource's state", err.Error()+". This is a bug in the provider.")
		return resp
	}
	resp.UpgradedState = &dv
	return resp
}

// upgradeJSON runs the upgrade steps from version to the schema's version
// over a state's JSON attributes.
func (s served[M, D]) upgradeJSON(version int64, raw []byte) ([]byte, error) {
	var steps map[int64]func(map[string]any) (map[string]any, error)
	if u, ok := s.def.(StateUpgrader); ok {
		steps = u.StateUpgrades()
	}
	return upgradeSteps(version, s.SchemaVersion(), steps, raw, "schema")
}

// UpgradeProblems lists what is wrong with a resource's upgrade steps: a
// version below the schema's without a step (its state could not be
// read), or a step from the schema's version or above (never run).
func (s served[M, D]) UpgradeProblems() []string {
	var steps map[int64]func(map[string]any) (map[string]any, error)
	if u, ok := s.def.(StateUpgrader); ok {
		steps = u.StateUpgrades()
	}
	current := s.SchemaVersion()
	var problems []string
	for v := int64(0); v < current; v++ {
		if steps[v] == nil {
			problems = append(problems, fmt.Sprintf("schema version %d has no upgrade step from version %d", current, v))
		}
	}
	for v := range steps {
		if v < 0 || v >= current {
			problems = append(problems, fmt.Sprintf("an upgrade step from version %d, which schema version %d never runs", v, current))
		}
	}
	identity, idSteps := s.IdentityVersion(), s.identitySteps()
	for v := int64(0); v < identity; v++ {
		if idSteps[v] == nil {
			problems = append(problems, fmt.Sprintf("identity schema version %d has no upgrade step from version %d", identity, v))
		}
	}
	for v := range idSteps {
		if v < 0 || v >= identity {
			problems = append(problems, fmt.Sprintf("an identity upgrade step from version %d, which identity schema version %d never runs", v, identity))
		}
	}
	return problems
}
