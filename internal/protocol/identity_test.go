package protocol

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func toyIdentity(t *testing.T, r Resource[*toyData], name string) *tfprotov6.ResourceIdentityData {
	t.Helper()
	s := r.(served[toyModel, *toyData]) //nolint:forcetypeassert // the toy is served
	v := tftypes.NewValue(s.identityType(), map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, name)})
	dv, err := tfprotov6.NewDynamicValue(s.identityType(), v)
	if err != nil {
		t.Fatal(err)
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: &dv}
}

func identityName(t *testing.T, r Resource[*toyData], data *tfprotov6.ResourceIdentityData) string {
	t.Helper()
	if data == nil || data.IdentityData == nil {
		return "<null>"
	}
	s := r.(served[toyModel, *toyData]) //nolint:forcetypeassert // the toy is served
	v, err := data.IdentityData.Unmarshal(s.identityType())
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.decodeIdentity(v)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := id["name"].(StringValue)
	if name, ok := x.Get(); ok {
		return name
	}
	if x.IsUnknown() {
		return "<unknown>"
	}
	return "<null>"
}

// TestIdentityAsTheFrameworkDoes: the seam returns an identity from
// every plan, apply, read and import, fills in one Terraform does not
// hold yet, and refuses to change one that is not mutable, as the
// framework does for its own resources.
func TestIdentityAsTheFrameworkDoes(t *testing.T) {
	ctx := context.Background()
	router, r, calls := serveToy(false, &toyData{})
	a := &toyModel{ID: Known("toy-1"), Name: Known("a")}

	// A create whose identity is not known yet plans none (Terraform 1.16
	// cannot save a plan with an unknown identity).
	plan, err := router.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: "demo_toy",
		PriorState: toyValue(t, r, nil), ProposedNewState: toyValue(t, r, &toyModel{ID: Unknown[string](), Name: Unknown[string]()})})
	if err != nil || len(plan.Diagnostics) > 0 {
		t.Fatalf("plan: %v %v", err, plan.Diagnostics)
	}
	if got := identityName(t, r, plan.PlannedIdentity); got != "<null>" {
		t.Errorf("a create with an unknown name planned the identity %s, want none", got)
	}
	// One whose identity is known plans it.
	plan, err = router.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: "demo_toy",
		PriorState: toyValue(t, r, nil), ProposedNewState: toyValue(t, r, &toyModel{ID: Unknown[string](), Name: Known("a")})})
	if err != nil || len(plan.Diagnostics) > 0 {
		t.Fatalf("plan: %v %v", err, plan.Diagnostics)
	}
	if got := identityName(t, r, plan.PlannedIdentity); got != "a" {
		t.Errorf("a create of a planned the identity %s, want a", got)
	}

	// The apply returns the new object's identity.
	applied, err := router.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: "demo_toy",
		PriorState: toyValue(t, r, nil), PlannedState: toyValue(t, r, a)})
	if err != nil || len(applied.Diagnostics) > 0 {
		t.Fatalf("apply: %v %v", err, applied.Diagnostics)
	}
	if got := identityName(t, r, applied.NewIdentity); got != "a" {
		t.Errorf("the apply returned the identity %s, want a", got)
	}

	// A read of state Terraform holds no identity for fills it in, even
	// for a resource whose read changes nothing.
	read, err := router.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: "demo_toy", CurrentState: toyValue(t, r, a)})
	if err != nil || len(read.Diagnostics) > 0 {
		t.Fatalf("read: %v %v", err, read.Diagnostics)
	}
	if got := identityName(t, r, read.NewIdentity); got != "a" {
		t.Errorf("a read without an identity returned %s, want a", got)
	}
	// So does a plan that changes nothing.
	plan, err = router.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: "demo_toy",
		PriorState: toyValue(t, r, a), ProposedNewState: toyValue(t, r, a)})
	if err != nil || len(plan.Diagnostics) > 0 {
		t.Fatalf("plan: %v %v", err, plan.Diagnostics)
	}
	if got := identityName(t, r, plan.PlannedIdentity); got != "a" {
		t.Errorf("an unchanged plan without an identity planned %s, want a", got)
	}

	// An update that would change an identity that is not mutable is refused.
	plan, err = router.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: "demo_toy",
		PriorState: toyValue(t, r, a), PriorIdentity: toyIdentity(t, r, "a"),
		ProposedNewState: toyValue(t, r, &toyModel{ID: Known("toy-1"), Name: Known("b")})})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Diagnostics) != 1 || plan.Diagnostics[0].Summary != "Unexpected Identity Change" {
		t.Errorf("an update changing the identity planned %v, want Unexpected Identity Change", plan.Diagnostics)
	}
	// So is a read that returns another identity than the one held.
	refreshing := Serve[toyModel, *toyData]("demo", toy{calls: calls, refreshes: true}, nil)
	read, err = NewRouter[*toyData](nil, func() *toyData { return &toyData{} }, []Resource[*toyData]{refreshing}).ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: "demo_toy", CurrentState: toyValue(t, r, a),
		CurrentIdentity: toyIdentity(t, r, "z")})
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Diagnostics) != 1 || read.Diagnostics[0].Summary != "Unexpected Identity Change" {
		t.Errorf("a read changing the identity gave %v, want Unexpected Identity Change", read.Diagnostics)
	}

	// Import by identity goes through the import ID, returns the identity
	// given, and the read that completes it may settle it.
	imported, err := router.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: "demo_toy",
		Identity: toyIdentity(t, r, "z")})
	if err != nil || len(imported.Diagnostics) > 0 || len(imported.ImportedResources) != 1 {
		t.Fatalf("import: %v %v", err, imported)
	}
	if got := (*calls)[len(*calls)-1]; got != "import z" {
		t.Errorf("import by identity called %q last, want the import ID built from it", got)
	}
	if got := identityName(t, r, imported.ImportedResources[0].Identity); got != "z" {
		t.Errorf("import returned the identity %s, want z", got)
	}
	read, err = router.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: "demo_toy", CurrentState: toyValue(t, r, a),
		CurrentIdentity: toyIdentity(t, r, "z"), Private: imported.ImportedResources[0].Private})
	if err != nil || len(read.Diagnostics) > 0 {
		t.Fatalf("the read after an import: %v %v", err, read.Diagnostics)
	}
	if got := identityName(t, r, read.NewIdentity); got != "a" {
		t.Errorf("the read after an import returned %s, want the identity of what it read", got)
	}
	if strings.Contains(string(read.Private), PrivateImportedKey) {
		t.Errorf("the read after an import kept the import's mark: %s", read.Private)
	}

	// A destroy keeps the identity held; its apply returns none.
	plan, err = router.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: "demo_toy",
		PriorState: toyValue(t, r, a), PriorIdentity: toyIdentity(t, r, "a"), ProposedNewState: toyValue(t, r, nil)})
	if err != nil || len(plan.Diagnostics) > 0 {
		t.Fatalf("destroy plan: %v %v", err, plan.Diagnostics)
	}
	if got := identityName(t, r, plan.PlannedIdentity); got != "a" {
		t.Errorf("a destroy planned the identity %s, want the one held", got)
	}
	applied, err = router.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: "demo_toy",
		PriorState: toyValue(t, r, a), PlannedState: toyValue(t, r, nil)})
	if err != nil || len(applied.Diagnostics) > 0 {
		t.Fatalf("destroy: %v %v", err, applied.Diagnostics)
	}
	if applied.NewIdentity != nil {
		t.Errorf("a destroy returned the identity %v, want none", applied.NewIdentity)
	}
}
