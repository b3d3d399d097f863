package protocol

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// An identity outlives the provider version that wrote it, as state does
// (state_upgrade.go): Terraform stores it with the identity schema's
// version and sends an older one to UpgradeResourceIdentity before it
// reads it. The router answers it for the protocol-level resources, so
// that a later change of an identity schema comes with its steps here, in
// the same JSON terms as the state's, instead of failing on every stored
// identity (the framework's view of these resources has no steps).

// IdentityUpgrader is implemented by a resource whose identity schema's
// version is above 0: IdentityUpgrades()[v] turns an identity written at
// version v, as its JSON attributes, into one of version v+1.
type IdentityUpgrader interface {
	IdentityUpgrades() map[int64]func(attributes map[string]any) (map[string]any, error)
}

// IdentityVersion is the version of the identity a resource writes.
func (s served[M, D]) IdentityVersion() int64 {
	return s.def.IdentitySchema(context.Background()).Version
}

func (s served[M, D]) identitySteps() map[int64]func(map[string]any) (map[string]any, error) {
	if u, ok := s.def.(IdentityUpgrader); ok {
		return u.IdentityUpgrades()
	}
	return nil
}

// upgradeIdentity answers UpgradeResourceIdentity: the identity Terraform
// stored, written at req.Version, in the identity schema of this version.
func (s served[M, D]) upgradeIdentity(_ context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) *tfprotov6.UpgradeResourceIdentityResponse {
	resp := &tfprotov6.UpgradeResourceIdentityResponse{}
	var diags Diagnostics
	defer func() { resp.Diagnostics = diags }()
	if req.RawIdentity == nil || len(req.RawIdentity.JSON) == 0 {
		diags.AddError("Cannot read the stored identity", fmt.Sprintf("Terraform sent the identity of this %s without its "+
			"JSON. This is a bug in Terraform or the provider.", s.TypeName()))
		return resp
	}
	upgraded, err := upgradeSteps(req.Version, s.IdentityVersion(), s.identitySteps(), req.RawIdentity.JSON, "identity schema")
	if err != nil {
		diags.AddError("Cannot upgrade the stored identity", fmt.Sprintf("The identity of this %s: %v.", s.TypeName(), err))
		return resp
	}
	dv, misfit, err := decodeUpgraded(upgraded, s.identityType())
	switch {
	case misfit != nil:
		diags.AddError("Cannot read the stored identity",
			fmt.Sprintf("The identity of this %s does not fit the resource's identity schema at version %d: %v. This is a bug "+
				"in the provider: report it with the identity's attributes (they hold no secret).", s.TypeName(), s.IdentityVersion(), misfit))
	case err != nil:
		diags.AddError("Cannot encode the resource's identity", err.Error()+". This is a bug in the provider.")
	default:
		resp.UpgradedIdentity = &tfprotov6.ResourceIdentityData{IdentityData: &dv}
	}
	return resp
}

// upgradeSteps runs steps from version to current over JSON attributes;
// what names the schema in errors.
func upgradeSteps(version, current int64, steps map[int64]func(map[string]any) (map[string]any, error), raw []byte, what string) ([]byte, error) {
	switch {
	case version > current:
		return nil, fmt.Errorf("it was written at %s version %d by a newer version of the provider, and this one "+
			"knows versions up to %d: use that newer version (or a later one) with this state", what, version, current)
	case version < 0:
		return nil, fmt.Errorf("its %s version %d is not a version", what, version)
	case version == current:
		return raw, nil
	}
	var attributes map[string]any
	if err := json.Unmarshal(raw, &attributes); err != nil {
		return nil, fmt.Errorf("its attributes are not a JSON object: %w", err)
	}
	for v := version; v < current; v++ {
		step := steps[v]
		if step == nil {
			return nil, fmt.Errorf("it was written at %s version %d, and this provider has no upgrade from that version "+
				"(a bug in the provider)", what, v)
		}
		next, err := step(attributes)
		if err != nil {
			return nil, fmt.Errorf("upgrading it from %s version %d: %w", what, v, err)
		}
		attributes = next
	}
	return json.Marshal(attributes)
}
