package provider

import (
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

var creatorProto = protoResource[creatorGrantModel]{
	def: creatorGrant{},
	proposed: func(config creatorGrantModel, prior *creatorGrantModel) creatorGrantModel {
		if prior == nil {
			config.ID, config.GrantedActions = unknownValue[string](), unknownValue[[]stringValue]()
			config.Policies = unknownValue[map[string]value[int64]]()
		} else {
			config.ID, config.GrantedActions, config.Policies = prior.ID, prior.GrantedActions, prior.Policies
		}
		return config
	},
}

// jobActions are the creator actions of a bk_job job, sorted.
var jobActions = []string{"delete", "edit", "list", "view"}

// jobsOf registers alice as the creator of the bk_job jobs ids, each
// named "<id> app", expecting jobActions: a configuration.
func jobsOf(ids ...string) *creatorGrantModel {
	instances := map[string]value[creatorInstanceModel]{}
	for _, id := range ids {
		instances[id] = known(creatorInstanceModel{Name: knownString(id + " app")})
	}
	return &creatorGrantModel{
		System: knownString("bk_job"), Type: knownString("job"), Creator: knownString("alice"),
		Instances: known(instances), Actions: knownStrings(jobActions),
	}
}

// appsOf registers alice as the creator of the bk_sops mini apps ids
// under project, expecting both mini app actions: a configuration.
func appsOf(project string, ids ...string) *creatorGrantModel {
	instances := map[string]value[creatorInstanceModel]{}
	for _, id := range ids {
		instances[id] = known(creatorInstanceModel{Name: knownString("mini app " + id), Ancestors: known([]value[ancestorModel]{
			known(ancestorModel{System: knownString("bk_sops"), Type: knownString("project"), ID: knownString(project)}),
		})})
	}
	return &creatorGrantModel{
		System: knownString("bk_sops"), Type: knownString("mini_app"), Creator: knownString("alice"),
		Instances: known(instances), Actions: knownStrings([]string{"mini_app_edit", "mini_app_view"}),
	}
}

// shownInstances is what a creator grant's state shows: each instance
// as "id" or "ancestor/…/id", sorted; nil when unknown or null.
func shownInstances(m *creatorGrantModel) []string {
	instances := creatorInstancesOf(m.Instances)
	if instances == nil {
		return nil
	}
	var out []string
	for _, in := range instances {
		s := ""
		for _, a := range in.Ancestors {
			s += a.ID + "/"
		}
		out = append(out, s+in.ID)
	}
	slices.Sort(out)
	return out
}

// creatorPathsOf renders shown instances ("project1/app1") as sandbox paths.
func creatorPathsOf(system, typ string, shown ...string) []string {
	var out []string
	for _, s := range shown {
		path := "/"
		parts := splitSlash(s)
		for i, id := range parts {
			nodeType := typ
			if i < len(parts)-1 {
				nodeType = "project"
			}
			path += system + "," + nodeType + "," + id + "/"
		}
		out = append(out, path)
	}
	slices.Sort(out)
	return out
}

func splitSlash(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '/' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// creatorHeld is what the sandbox holds after registering shown: every
// action on every path.
func creatorHeld(system, typ string, actions []string, shown ...string) map[string][]string {
	out := map[string][]string{}
	for _, a := range actions {
		out[a] = creatorPathsOf(system, typ, shown...)
	}
	return out
}

func expectCreatorState(t *testing.T, env *protoEnv, state *creatorGrantModel, wantID string, wantActions []string, wantShown ...string) {
	t.Helper()
	if state == nil {
		t.Fatalf("state is null, want %v", wantShown)
	}
	if id, _ := state.ID.get(); id != wantID {
		t.Errorf("id is %q, want %q", id, wantID)
	}
	if got := shownInstances(state); !slices.Equal(got, wantShown) {
		t.Errorf("state shows instances %v, want %v", got, wantShown)
	}
	granted, _ := stringsOf(state.GrantedActions)
	slices.Sort(granted)
	if !slices.Equal(granted, wantActions) {
		t.Errorf("state records granted actions %v, want %v", granted, wantActions)
	}
	system, _ := state.System.get()
	ids := env.policyIDs(system, "user", "alice")
	if got := int64MapOf(state.Policies); !reflect.DeepEqual(got, ids) || !slices.Equal(slices.Sorted(maps.Keys(got)), wantActions) {
		t.Errorf("state records policies %v, the sandbox holds %v", got, ids)
	}
}

var _ = tftypes.NewAttributePath
