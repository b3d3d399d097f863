package authz_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
)

// identityThroughTerraform is id as Terraform gives it back: encoded with
// the identity schema's type, as the seam returns it, and decoded as the
// seam reads an identity given to import (lists stay lists, [] stays []).
func identityThroughTerraform(t *testing.T, id protocol.Identity) protocol.Identity {
	t.Helper()
	ctx := context.Background()
	typ := authz.InstanceGrant{}.IdentitySchema(ctx).Type().TerraformType(ctx).(tftypes.Object) //nolint:forcetypeassert // an object
	v := protocol.EncodeIdentity(typ, id)
	var d protocol.Decoder
	a := protocol.AsAttributes(&d, v)
	out := protocol.Identity{}
	for name, at := range typ.AttributeTypes {
		if at.Is(tftypes.String) {
			out[name] = protocol.DecodeString(&d, a[name])
		} else {
			out[name] = protocol.DecodeStrings(&d, a[name])
		}
	}
	if d.Err != nil {
		t.Fatal(d.Err)
	}
	return out
}

func diagText(diags protocol.Diagnostics) string {
	var out []string
	for _, d := range diags {
		out = append(out, d.Summary+": "+d.Detail)
	}
	return strings.Join(out, "; ")
}

// grantShape is one grant the provider can hold: its subject, actions
// (nil: an import by the short ID, holding nothing known) and resource
// types (none, one, or several: a combined resource).
type grantShape struct {
	system, subjectType, subjectID string
	actions                        []string
	types                          []grantplan.Resource
}

func (s grantShape) model() authz.InstanceGrantModel {
	m := authz.InstanceGrantModel{
		ID:      protocol.Known(s.system + "/" + s.subjectType + "/" + s.subjectID),
		System:  protocol.Known(s.system),
		Subject: protocol.Known(authz.SubjectModel{Type: protocol.Known(s.subjectType), ID: protocol.Known(s.subjectID)}),
	}
	if s.actions == nil {
		return m
	}
	m.Actions = protocol.KnownStrings(s.actions)
	resources := make([]grantplan.Resource, len(s.types))
	for i, t := range s.types {
		resources[i] = grantplan.Resource{System: t.System, Type: t.Type, Instances: map[string]string{"1": "one", "2": "two"}}
	}
	m.Resources = authz.ResourcesValue(resources)
	return m
}

var (
	idAlphabet   = []rune("abcdefghijklmnopqrstuvwxyz0123456789_-")
	userAlphabet = []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@-")
)

func randomID(r *rand.Rand, alphabet []rune) string {
	out := make([]rune, 1+r.IntN(12))
	for i := range out {
		out[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(out)
}

func randomShape(r *rand.Rand) grantShape {
	s := grantShape{system: randomID(r, idAlphabet), subjectType: "user", subjectID: randomID(r, userAlphabet)}
	if r.IntN(2) == 0 {
		s.subjectType, s.subjectID = "group", fmt.Sprint(r.Uint64N(1<<40))
	}
	if r.IntN(8) == 0 {
		return s // imported by the short ID: no actions, no types
	}
	for range 1 + r.IntN(4) {
		if a := randomID(r, idAlphabet); !slices.Contains(s.actions, a) {
			s.actions = append(s.actions, a)
		}
	}
	for range r.IntN(4) { // 0: no type; 1; 2 and 3: combined
		system := s.system
		if r.IntN(3) == 0 {
			system = randomID(r, idAlphabet)
		}
		s.types = append(s.types, grantplan.Resource{System: system, Type: randomID(r, idAlphabet)})
	}
	return s
}

// TestInstanceGrantIdentityRoundTrip: every identity the provider writes
// of a grant is accepted back by `import { identity = {…} }` and asks the
// read that follows for what the grant holds: its system and subject, its
// actions and its resource types in order, whatever the shape (one type,
// none, a combined resource; one action or several; a user or a group),
// and a grant imported by the short ID gives the short import back.
func TestInstanceGrantIdentityRoundTrip(t *testing.T) {
	shapes := []grantShape{
		{system: "bk_cmdb", subjectType: "user", subjectID: "alice", actions: []string{"view_host"},
			types: []grantplan.Resource{{System: "bk_cmdb", Type: "host"}}},
		{system: "bk_cmdb", subjectType: "user", subjectID: "carol", actions: []string{"create_biz"}},
		{system: "bk_cmdb", subjectType: "user", subjectID: "bob", actions: []string{"edit_biz_host"},
			types: []grantplan.Resource{{System: "bk_cmdb", Type: "biz"}, {System: "bk_cmdb", Type: "host"}}},
		{system: "bk_cmdb", subjectType: "group", subjectID: "42", actions: []string{"view_host", "edit_host", "delete_host"},
			types: []grantplan.Resource{{System: "bk_cmdb", Type: "host"}}},
		{system: "bk_sops", subjectType: "group", subjectID: "7", actions: []string{"b", "a"},
			types: []grantplan.Resource{{System: "bk_cmdb", Type: "biz"}, {System: "bk_sops", Type: "flow"}, {System: "bk_cmdb", Type: "host"}}},
		{system: "bk_cmdb", subjectType: "group", subjectID: "3"},
	}
	r := rand.New(rand.NewPCG(40, 40))
	for range 2000 {
		shapes = append(shapes, randomShape(r))
	}
	ctx := context.Background()
	for _, s := range shapes {
		var diags protocol.Diagnostics
		id := identityThroughTerraform(t, authz.InstanceGrant{}.IdentityOf(s.model()))
		importID := authz.InstanceGrant{}.ImportID(id, &diags)
		imported, private := authz.InstanceGrant{}.ImportState(ctx, importID, &diags)
		if diags.HasError() {
			t.Fatalf("%+v: its identity (import ID %q) is refused: %s", s, importID, diagText(diags))
		}
		subject, _ := imported.Subject.Get()
		if imported.System != protocol.Known(s.system) || subject.Type != protocol.Known(s.subjectType) || subject.ID != protocol.Known(s.subjectID) {
			t.Fatalf("%+v: import ID %q imports system %v subject %v", s, importID, imported.System, subject)
		}
		pending := authz.ReadImportRequest(private, &diags)
		if s.actions == nil {
			if pending != nil {
				t.Fatalf("%+v: import ID %q asks to read %+v, want nothing (adopted holding nothing known)", s, importID, pending)
			}
			continue
		}
		if pending == nil {
			t.Fatalf("%+v: import ID %q asks to read nothing", s, importID)
		}
		wantActions := slices.Sorted(slices.Values(s.actions))
		if got := slices.Sorted(slices.Values(pending.Actions)); !slices.Equal(got, wantActions) {
			t.Fatalf("%+v: import ID %q reads actions %v, want %v", s, importID, got, wantActions)
		}
		if got := authz.ImportTypes(pending); !reflect.DeepEqual(got, s.types) {
			t.Fatalf("%+v: import ID %q reads resource types %+v, want %+v", s, importID, got, s.types)
		}
	}
}
