package protocol

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The seam on its own: a toy resource with an id and a name, served with
// and without an observer, through a Router with no framework behind it.

type toyModel struct {
	ID   StringValue `tf:"id"`
	Name StringValue `tf:"name"`
}

type toyData struct{}

type ctxKey struct{}

// toy records, in calls, what the seam asked of it and of its observer.
type toy struct {
	calls *[]string
	// refreshes is what Refreshes answers.
	refreshes bool
}

func (toy) Name() string { return "toy" }

func (toy) Schema(context.Context) schema.Schema {
	return schema.Schema{Attributes: map[string]schema.Attribute{
		"id":   schema.StringAttribute{Computed: true},
		"name": schema.StringAttribute{Required: true},
	}}
}

func (toy) Decode(v tftypes.Value) (toyModel, error) {
	var d Decoder
	a := AsAttributes(&d, v)
	return toyModel{ID: DecodeString(&d, a["id"]), Name: DecodeString(&d, a["name"])}, d.Err
}

func (toy) Encode(typ tftypes.Object, m toyModel) tftypes.Value {
	return NewAttrs(typ).String("id", m.ID).String("name", m.Name).Object()
}

func (toy) ImportState(context.Context, string, *Diagnostics) (toyModel, PrivateState) {
	return toyModel{}, nil
}

func (toy) Validate(context.Context, toyModel, *Diagnostics) {}

func (t toy) Plan(_ context.Context, req PlanRequest[toyModel], _ *Diagnostics) PlanResponse[toyModel] {
	*t.calls = append(*t.calls, "plan")
	planned := req.Proposed
	planned.ID = Known("toy-1")
	return PlanResponse[toyModel]{Planned: planned}
}

func (toy) CheckModel(context.Context, *toyData, toyModel, *Diagnostics) {}

func (t toy) Apply(ctx context.Context, _ *toyData, req ApplyRequest[toyModel], _ *Diagnostics) (*toyModel, PrivateState) {
	call := "apply"
	if v, _ := ctx.Value(ctxKey{}).(string); v != "" {
		call += " in " + v
	}
	*t.calls = append(*t.calls, call)
	return req.Planned, req.Private
}

func (t toy) Refreshes(*toyData) bool { return t.refreshes }

func (toy) Read(context.Context, *toyData, ReadRequest[toyModel], *Diagnostics) (*toyModel, PrivateState, bool) {
	return nil, nil, false
}

// The toy's identity is its name, which its plan lets change in place:
// the seam must refuse that, as the framework does.
func (toy) IdentitySchema(context.Context) identityschema.Schema {
	return identityschema.Schema{Attributes: map[string]identityschema.Attribute{
		"name": identityschema.StringAttribute{RequiredForImport: true},
	}}
}

func (toy) IdentityOf(m toyModel) Identity { return Identity{"name": m.Name} }

func (t toy) ImportID(id Identity, _ *Diagnostics) string {
	*t.calls = append(*t.calls, "import "+id.Str("name"))
	return "toy-" + id.Str("name")
}

func (toy) MutableIdentity() bool { return false }

type toyObserver struct{ calls *[]string }

func (toyObserver) Observing(context.Context) bool { return true }

func (o toyObserver) Plan(_ context.Context, _ *toyData, n *PlanNote[toyModel], _ *Diagnostics) *toyModel {
	*o.calls = append(*o.calls, "observe plan of "+n.TypeName)
	return n.Planned
}

func (o toyObserver) Apply(ctx context.Context, _ *toyData, n ApplyNote[toyModel], _ *Diagnostics) context.Context {
	*o.calls = append(*o.calls, "observe apply of "+n.TypeName)
	return context.WithValue(ctx, ctxKey{}, "the observer's context")
}

func toyValue(t *testing.T, r Resource[*toyData], m *toyModel) *tfprotov6.DynamicValue {
	t.Helper()
	v := tftypes.NewValue(r.ObjectType(), nil)
	if m != nil {
		v = toy{}.Encode(r.ObjectType(), *m)
	}
	dv, err := tfprotov6.NewDynamicValue(r.ObjectType(), v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

func serveToy(observed bool, data *toyData) (*Router[*toyData], Resource[*toyData], *[]string) {
	calls := &[]string{}
	var obs Observer[toyModel, *toyData]
	if observed {
		obs = toyObserver{calls}
	}
	r := Serve[toyModel, *toyData]("demo", toy{calls: calls}, obs)
	return NewRouter[*toyData](nil, func() *toyData { return data }, []Resource[*toyData]{r}), r, calls
}

// TestServeAnswersWithoutTheResource: what needs no resource code is
// answered by the seam alone: a plan that changes nothing goes back as
// Terraform sent it, never decoded, and a destroy reaches only the
// observer.
func TestServeAnswersWithoutTheResource(t *testing.T) {
	ctx := context.Background()
	state := &toyModel{ID: Known("toy-1"), Name: Known("a")}

	router, r, calls := serveToy(false, &toyData{})
	prior := toyValue(t, r, state)
	resp, err := router.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: "demo_toy", PriorState: prior, ProposedNewState: toyValue(t, r, state)})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("plan: %v %v", err, resp.Diagnostics)
	}
	if len(*calls) != 0 || !slices.Equal(resp.PlannedState.MsgPack, prior.MsgPack) {
		t.Errorf("an unchanged plan reached %v, planned %v: want it back untouched", *calls, resp.PlannedState)
	}

	router, r, calls = serveToy(true, &toyData{})
	resp, err = router.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: "demo_toy", PriorState: toyValue(t, r, state), ProposedNewState: toyValue(t, r, nil)})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("destroy plan: %v %v", err, resp.Diagnostics)
	}
	if want := []string{"observe plan of demo_toy"}; !slices.Equal(*calls, want) {
		t.Errorf("a destroy plan made the calls %v, want %v", *calls, want)
	}
}

// TestObserverPrecedesApply: a create is planned by the resource and heard
// by the observer, and the apply runs in the context the observer gives.
func TestObserverPrecedesApply(t *testing.T) {
	ctx := context.Background()
	router, r, calls := serveToy(true, &toyData{})
	config := &toyModel{ID: Unknown[string](), Name: Known("a")}
	plan, err := router.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: "demo_toy", PriorState: toyValue(t, r, nil), ProposedNewState: toyValue(t, r, config)})
	if err != nil || len(plan.Diagnostics) > 0 {
		t.Fatalf("plan: %v %v", err, plan.Diagnostics)
	}
	applied, err := router.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{
		TypeName: "demo_toy", PriorState: toyValue(t, r, nil), PlannedState: plan.PlannedState})
	if err != nil || len(applied.Diagnostics) > 0 {
		t.Fatalf("apply: %v %v", err, applied.Diagnostics)
	}
	want := []string{"plan", "observe plan of demo_toy", "observe apply of demo_toy", "apply in the observer's context"}
	if !slices.Equal(*calls, want) {
		t.Errorf("calls %v, want %v", *calls, want)
	}
	v, err := applied.NewState.Unmarshal(r.ObjectType())
	if err != nil {
		t.Fatal(err)
	}
	if m, err := (toy{}).Decode(v); err != nil || m.ID.IsUnknown() {
		t.Errorf("new state %v (%v): want the planned id", m, err)
	}
}

// TestApplyBeforeConfigure: an apply with the zero provider data is a bug
// the seam reports, naming the provider, and state stays as it was.
func TestApplyBeforeConfigure(t *testing.T) {
	router, r, calls := serveToy(true, nil)
	prior := toyValue(t, r, nil)
	resp, err := router.ApplyResourceChange(context.Background(), &tfprotov6.ApplyResourceChangeRequest{
		TypeName: "demo_toy", PriorState: prior, PlannedState: toyValue(t, r, &toyModel{ID: Known("x"), Name: Known("a")})})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Diagnostics) != 1 || !strings.Contains(resp.Diagnostics[0].Detail, "The demo provider was not configured") {
		t.Fatalf("diagnostics %v, want the provider not configured", resp.Diagnostics)
	}
	if resp.NewState != prior || len(*calls) != 0 {
		t.Errorf("new state %v after calls %v: want the prior state, nothing called", resp.NewState, *calls)
	}
}

// renewingToy is a toy whose plan changes with time: due when its private
// state says so.
type renewingToy struct{ toy }

func (renewingToy) RenewDue(private PrivateState, _ time.Time) bool {
	return string(private["due"]) == "yes"
}

// TestRenewerIsPlannedWhenDue: an unchanged resource that implements
// Renewer reaches its Plan when RenewDue says so, and only then.
func TestRenewerIsPlannedWhenDue(t *testing.T) {
	ctx := context.Background()
	state := &toyModel{ID: Known("toy-1"), Name: Known("a")}
	for _, tc := range []struct {
		name    string
		private string
		want    []string
	}{
		{"due", `{"due":"eWVz"}`, []string{"plan"}},
		{"not due", `{"due":"bm8="}`, nil},
		{"no private state", ``, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := &[]string{}
			r := Serve[toyModel, *toyData]("demo", renewingToy{toy{calls: calls}}, nil)
			router := NewRouter[*toyData](nil, func() *toyData { return &toyData{} }, []Resource[*toyData]{r})
			resp, err := router.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: "demo_toy",
				PriorState: toyValue(t, r, state), ProposedNewState: toyValue(t, r, state), PriorPrivate: []byte(tc.private)})
			if err != nil || len(resp.Diagnostics) > 0 {
				t.Fatalf("plan: %v %v", err, resp.Diagnostics)
			}
			if !slices.Equal(*calls, tc.want) {
				t.Errorf("an unchanged plan made the calls %v, want %v", *calls, tc.want)
			}
		})
	}
}
