package authz_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
)

var creatorProto = acctest.ProtoResource[authz.CreatorGrantModel]{
	Def: authz.CreatorGrant{},
	Proposed: func(config authz.CreatorGrantModel, prior *authz.CreatorGrantModel) authz.CreatorGrantModel {
		if prior == nil {
			config.ID, config.GrantedActions = protocol.Unknown[string](), protocol.Unknown[[]protocol.StringValue]()
			config.Policies = protocol.Unknown[map[string]protocol.Value[int64]]()
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
func jobsOf(ids ...string) *authz.CreatorGrantModel {
	instances := map[string]string{}
	for _, id := range ids {
		instances[id] = id + " app"
	}
	return &authz.CreatorGrantModel{
		System: protocol.Known("bk_job"), Type: protocol.Known("job"), Creator: protocol.Known("alice"),
		Instances: protocol.KnownStringMap(instances), Actions: protocol.KnownStrings(jobActions),
	}
}

// appsOf registers alice as the creator of the bk_sops mini apps ids
// under project, expecting both mini app actions: a configuration. Each
// instance is keyed by its path, /bk_sops,project,PROJECT/bk_sops,mini_app,ID/.
func appsOf(project string, ids ...string) *authz.CreatorGrantModel {
	instances := map[string]string{}
	for _, id := range ids {
		instances[appKey(project, id)] = "mini app " + id
	}
	return &authz.CreatorGrantModel{
		System: protocol.Known("bk_sops"), Type: protocol.Known("mini_app"), Creator: protocol.Known("alice"),
		Instances: protocol.KnownStringMap(instances), Actions: protocol.KnownStrings([]string{"mini_app_edit", "mini_app_view"}),
	}
}

// appKey is the instances key of the bk_sops mini app id under project.
func appKey(project, id string) string {
	return "/bk_sops,project," + project + "/bk_sops,mini_app," + id + "/"
}

// shownInstances is what a creator grant's state shows: each instance
// as "id" or "ancestor/…/id", sorted; nil when unknown or null.
func shownInstances(m *authz.CreatorGrantModel) []string {
	target := grantplan.CreatorTarget{System: must(m.System.Get()), Type: must(m.Type.Get())}
	instances := authz.CreatorInstancesOf(target, m.Instances)
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
		parts := strings.Split(s, "/")
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

// creatorHeld is what the sandbox holds after registering shown: every
// action on every path.
func creatorHeld(system, typ string, actions []string, shown ...string) map[string][]string {
	out := map[string][]string{}
	for _, a := range actions {
		out[a] = creatorPathsOf(system, typ, shown...)
	}
	return out
}

func expectCreatorState(t *testing.T, env *acctest.ProtoEnv, state *authz.CreatorGrantModel, wantID string, wantActions []string, wantShown ...string) {
	t.Helper()
	if state == nil {
		t.Fatalf("state is null, want %v", wantShown)
	}
	if id, _ := state.ID.Get(); id != wantID {
		t.Errorf("id is %q, want %q", id, wantID)
	}
	if got := shownInstances(state); !slices.Equal(got, wantShown) {
		t.Errorf("state shows instances %v, want %v", got, wantShown)
	}
	granted, _ := protocol.StringsOf(state.GrantedActions)
	slices.Sort(granted)
	if !slices.Equal(granted, wantActions) {
		t.Errorf("state records granted actions %v, want %v", granted, wantActions)
	}
	system, _ := state.System.Get()
	ids := env.PolicyIDs(system, "user", "alice")
	if got := protocol.Int64MapOf(state.Policies); !reflect.DeepEqual(got, ids) || !slices.Equal(slices.Sorted(maps.Keys(got)), wantActions) {
		t.Errorf("state records policies %v, the sandbox holds %v", got, ids)
	}
}

var appActions = []string{"mini_app_edit", "mini_app_view"}

// TestProtocolCreatorGrantCreate: the plan of a create leaves id, the
// granted actions and the policies to the apply, and writes nothing: it
// reads the policy list of each creator action once (the expiry check);
// the apply registers every instance in one call, and state records what
// IAM granted.
func TestProtocolCreatorGrantCreate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		config  *authz.CreatorGrantModel
		wantID  string
		actions []string
		shown   []string
		sent    string
	}{
		{"jobs", jobsOf("job1", "job2"), "bk_job/job/alice", jobActions, []string{"job1", "job2"}, "register: job1,job2"},
		{"mini apps under a project", appsOf("project1", "app1"), "bk_sops/mini_app/alice", appActions,
			[]string{"project1/app1"}, "register: project1/app1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := acctest.NewProtoEnv(t, nil)
			plan := creatorProto.Plan(t, env.Server, nil, nil, tc.config)
			acctest.ExpectDiags(t, plan.Diagnostics)
			planned := creatorProto.Model(t, plan.PlannedState)
			if !planned.ID.IsUnknown() || !planned.GrantedActions.IsUnknown() || !planned.Policies.IsUnknown() {
				t.Errorf("a create plans id %+v, granted_actions %+v, policies %+v, want all known after apply",
					planned.ID, planned.GrantedActions, planned.Policies)
			}
			if got := shownInstances(planned); !slices.Equal(got, tc.shown) {
				t.Errorf("the plan shows instances %v, want %v", got, tc.shown)
			}
			env.ExpectCalls(t, map[string]int{"policy_query_by_actions": 1, "policy_list": len(tc.actions)})

			resp := creatorProto.Apply(t, env.Server, nil, plan, tc.config)
			acctest.ExpectDiags(t, resp.Diagnostics)
			system, _ := tc.config.System.Get()
			typ, _ := tc.config.Type.Get()
			expectCreatorState(t, env, creatorProto.Model(t, resp.NewState), tc.wantID, tc.actions, tc.shown...)
			if keys := acctest.PrivateKeys(t, resp.Private); len(keys) > 0 {
				t.Errorf("after a complete create, private state holds %v", keys)
			}
			env.ExpectHeld(t, system, "user", "alice", creatorHeld(system, typ, tc.actions, tc.shown...))
			env.ExpectSent(t, tc.sent)
		})
	}
}

// TestProtocolCreatorGrantUpdateSendsTheDifference: an update registers
// only the new paths and revokes only the old ones; IAM then holds exactly
// the new instances, and the plan shows the granted actions in advance,
// and the policy ids when the update registers nothing (a registration may
// meet a policy revoked whole outside Terraform, recreated under a new id).
func TestProtocolCreatorGrantUpdateSendsTheDifference(t *testing.T) {
	renamed := jobsOf("job1", "job2")
	instances, _ := renamed.Instances.Get()
	instances["job1"] = protocol.Known("a new name")
	for _, tc := range []struct {
		name     string
		from, to *authz.CreatorGrantModel
		actions  []string
		shown    []string
		want     []string
	}{
		{"instances added and removed", jobsOf("job1", "job2"), jobsOf("job2", "job3"), jobActions, []string{"job2", "job3"},
			[]string{"register: job3", "revoke delete,edit,list,view: job1"}},
		{"an instance moved to another project", appsOf("project1", "app1", "app2"),
			func() *authz.CreatorGrantModel {
				m := appsOf("project1", "app1", "app2")
				all, _ := m.Instances.Get()
				delete(all, appKey("project1", "app2"))
				all[appKey("project2", "app2")] = protocol.Known("mini app app2")
				return m
			}(), appActions, []string{"project1/app1", "project2/app2"},
			[]string{"register: project2/app2", "revoke mini_app_edit,mini_app_view: project1/app2"}},
		{"a name changed alone", jobsOf("job1", "job2"), renamed, jobActions, []string{"job1", "job2"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := acctest.NewProtoEnv(t, nil)
			created := creatorProto.MustChange(t, env.Server, nil, nil, tc.from)
			before := env.PolicyIDs(must(tc.from.System.Get()), "user", "alice")
			env.ForgetSent()

			plan := creatorProto.Plan(t, env.Server, created.NewState, created.Private, tc.to)
			acctest.ExpectDiags(t, plan.Diagnostics)
			if len(plan.RequiresReplace) > 0 {
				t.Errorf("the update requires replacing %s", acctest.RenderPaths(plan.RequiresReplace))
			}
			planned := creatorProto.Model(t, plan.PlannedState)
			if granted, ok := protocol.StringsOf(planned.GrantedActions); !ok || !slices.Equal(slices.Sorted(slices.Values(granted)), tc.actions) {
				t.Errorf("the plan shows granted_actions %+v, want %v", planned.GrantedActions, tc.actions)
			}
			registers := slices.ContainsFunc(tc.want, func(c string) bool { return strings.HasPrefix(c, "register:") })
			policies, _ := planned.Policies.Get()
			for _, a := range tc.actions {
				id, ok := policies[a].Get()
				switch {
				case !registers && (!ok || id != before[a]):
					t.Errorf("the plan shows policy %+v for %s, want the id kept: %d", policies[a], a, before[a])
				case registers && !policies[a].IsUnknown():
					t.Errorf("the plan shows policy %+v for %s of an update that registers: want known after apply", policies[a], a)
				}
			}

			resp := creatorProto.Apply(t, env.Server, created.NewState, plan, tc.to)
			acctest.ExpectDiags(t, resp.Diagnostics)
			env.ExpectSent(t, tc.want...)
			system, typ := must(tc.to.System.Get()), must(tc.to.Type.Get())
			env.ExpectHeld(t, system, "user", "alice", creatorHeld(system, typ, tc.actions, tc.shown...))
			expectCreatorState(t, env, creatorProto.Model(t, resp.NewState), must(creatorProto.Model(t, created.NewState).ID.Get()), tc.actions, tc.shown...)
		})
	}
}

// must drops the ok of a value's get, for values known to be known.
func must[T any](v T, _ bool) T { return v }

// TestProtocolCreatorGrantRequiresReplace: a change of system, type,
// creator or expected actions replaces the grant; a change of instances
// is an update, and so is the same set of actions in another order.
func TestProtocolCreatorGrantRequiresReplace(t *testing.T) {
	server := acctest.ProtoServer(t)
	prior := jobsOf("job1")
	prior.ID, prior.GrantedActions = protocol.Known("bk_job/job/alice"), prior.Actions
	prior.Policies = authz.PoliciesValue(jobActions, map[string]int64{"delete": 1, "edit": 2, "list": 3, "view": 4})
	priorValue := creatorProto.Value(t, prior)
	for _, tc := range []struct {
		name   string
		change func(m *authz.CreatorGrantModel)
		want   []*tftypes.AttributePath
	}{
		{"system", func(m *authz.CreatorGrantModel) { m.System = protocol.Known("bk_sops") }, []*tftypes.AttributePath{protocol.Root("system")}},
		{"type", func(m *authz.CreatorGrantModel) { m.Type = protocol.Known("project") }, []*tftypes.AttributePath{protocol.Root("type")}},
		{"creator", func(m *authz.CreatorGrantModel) { m.Creator = protocol.Known("bob") }, []*tftypes.AttributePath{protocol.Root("creator")}},
		{"actions", func(m *authz.CreatorGrantModel) { m.Actions = protocol.KnownStrings([]string{"edit", "view"}) }, []*tftypes.AttributePath{protocol.Root("actions")}},
		{"actions unset", func(m *authz.CreatorGrantModel) { m.Actions = protocol.StringsValue{} }, []*tftypes.AttributePath{protocol.Root("actions")}},
		{"creator and actions", func(m *authz.CreatorGrantModel) {
			m.Creator = protocol.Known("bob")
			m.Actions = protocol.KnownStrings([]string{"view"})
		}, []*tftypes.AttributePath{protocol.Root("creator"), protocol.Root("actions")}},
		{"the same actions in another order", func(m *authz.CreatorGrantModel) {
			m.Actions = protocol.KnownStrings([]string{"view", "list", "edit", "delete"})
		}, nil},
		{"instances", func(m *authz.CreatorGrantModel) { m.Instances = jobsOf("job1", "job2").Instances }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := jobsOf("job1")
			tc.change(config)
			resp := creatorProto.Plan(t, server, priorValue, nil, config)
			acctest.ExpectDiags(t, resp.Diagnostics)
			if !acctest.PathsEqual(resp.RequiresReplace, tc.want) {
				t.Errorf("requires replacing %s, want %s", acctest.RenderPaths(resp.RequiresReplace), acctest.RenderPaths(tc.want))
			}
		})
	}
}

// TestProtocolCreatorGrantUnknownValues: a configuration whose values are
// unknown at any depth validates without a diagnostic, and plans without
// one and without a call to IAM, keeping every unknown value.
func TestProtocolCreatorGrantUnknownValues(t *testing.T) {
	unknownString := protocol.Unknown[string]()
	for _, tc := range []struct {
		name   string
		change func(m *authz.CreatorGrantModel)
	}{
		{"system", func(m *authz.CreatorGrantModel) { m.System = unknownString }},
		{"creator", func(m *authz.CreatorGrantModel) { m.Creator = unknownString }},
		{"type", func(m *authz.CreatorGrantModel) { m.Type = unknownString }},
		{"instances", func(m *authz.CreatorGrantModel) { m.Instances = protocol.Unknown[map[string]protocol.StringValue]() }},
		{"a name under a path key", func(m *authz.CreatorGrantModel) {
			m.Instances = protocol.Known(map[string]protocol.StringValue{appKey("project1", "app1"): unknownString})
		}},
		{"a name under an id key", func(m *authz.CreatorGrantModel) {
			m.Instances = protocol.Known(map[string]protocol.StringValue{"app1": unknownString})
		}},
		{"actions", func(m *authz.CreatorGrantModel) { m.Actions = protocol.Unknown[[]protocol.StringValue]() }},
		{"an action", func(m *authz.CreatorGrantModel) {
			m.Actions = protocol.Known([]protocol.StringValue{protocol.Known("mini_app_view"), unknownString})
		}},
		{"timeouts", func(m *authz.CreatorGrantModel) { m.Timeouts = protocol.Unknown[protocol.TimeoutsModel]() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := acctest.NewProtoEnv(t, nil)
			config := appsOf("project1", "app1")
			tc.change(config)
			acctest.ExpectDiags(t, creatorProto.Validate(t, env.Server, *config))

			create := creatorProto.Plan(t, env.Server, nil, nil, config)
			acctest.ExpectDiags(t, create.Diagnostics)
			expectCreatorConfigPlanned(t, creatorProto.Model(t, create.PlannedState), config)

			created := creatorProto.MustChange(t, env.Server, nil, nil, appsOf("project1", "app1"))
			env.Calls.Reset()
			update := creatorProto.Plan(t, env.Server, created.NewState, created.Private, config)
			acctest.ExpectDiags(t, update.Diagnostics)
			env.ExpectCalls(t, nil)
			expectCreatorConfigPlanned(t, creatorProto.Model(t, update.PlannedState), config)
		})
	}
}

// expectCreatorConfigPlanned fails unless the plan keeps every configured
// value as configured, unknown ones included.
func expectCreatorConfigPlanned(t *testing.T, planned, config *authz.CreatorGrantModel) {
	t.Helper()
	typ := acctest.ObjectTypeOf("bkiam_creator_grant")
	got := *planned
	got.ID, got.GrantedActions, got.Policies = config.ID, config.GrantedActions, config.Policies
	a, b := (authz.CreatorGrant{}).Encode(typ, got), (authz.CreatorGrant{}).Encode(typ, *config)
	if !a.Equal(b) {
		t.Errorf("the plan changes the configuration:\n%v\nwant\n%v", a, b)
	}
}

// TestProtocolCreatorGrantImport: an import adopts SYSTEM/TYPE/CREATOR
// holding nothing known; any other ID is refused.
func TestProtocolCreatorGrantImport(t *testing.T) {
	server := acctest.ProtoServer(t)
	resp := creatorProto.ImportState(t, server, "bk_sops/mini_app/alice")
	acctest.ExpectDiags(t, resp.Diagnostics)
	if len(resp.ImportedResources) != 1 || resp.ImportedResources[0].TypeName != "bkiam_creator_grant" {
		t.Fatalf("imported %+v, want one bkiam_creator_grant", resp.ImportedResources)
	}
	want := &authz.CreatorGrantModel{ID: protocol.Known("bk_sops/mini_app/alice"), System: protocol.Known("bk_sops"),
		Type: protocol.Known("mini_app"), Creator: protocol.Known("alice")}
	if got := creatorProto.Model(t, resp.ImportedResources[0].State); !reflect.DeepEqual(got, want) {
		t.Errorf("the import gives %+v, want %+v (instances, actions and policies null)", got, want)
	}
	if keys := acctest.PrivateKeys(t, resp.ImportedResources[0].Private); len(keys) > 0 {
		t.Errorf("the import keeps private state %v", keys)
	}
	for _, id := range []string{"bk_sops/mini_app", "bk_sops/mini_app/alice/x", "bk_sops/ /alice"} {
		resp := creatorProto.ImportState(t, server, id)
		acctest.ExpectDiags(t, resp.Diagnostics, acctest.ProtoError("Invalid import ID", nil))
		if len(resp.ImportedResources) > 0 {
			t.Errorf("import of %q imported %+v", id, resp.ImportedResources)
		}
	}
}

// TestProtocolCreatorGrantPartialFailure: when a call of an apply fails,
// the apply reports it and state records what IAM holds, in private state
// when one instance per id cannot show it (a move halfway); the next
// apply sends only the rest and leaves IAM holding exactly the
// configuration.
func TestProtocolCreatorGrantPartialFailure(t *testing.T) {
	target := func(m *authz.CreatorGrantModel) grantplan.CreatorTarget {
		return grantplan.CreatorTarget{System: must(m.System.Get()), Type: must(m.Type.Get())}
	}
	for _, tc := range []struct {
		name     string
		settings map[string]any
		from, to *authz.CreatorGrantModel
		wantErr  string
		// What the failed apply leaves: the instances IAM holds (every
		// action on each), those state shows, and the paths kept in
		// private state (nil: none, the state is exact).
		held, shown, paths []string
		wantFinish         []string
	}{
		{
			name: "create, the second of three registrations fails", settings: map[string]any{"grant_batch_size": 1},
			to: jobsOf("job1", "job2", "job3"), wantErr: "Call 2 of 3 failed",
			held: []string{"job1"}, shown: []string{"job1"},
			wantFinish: []string{"register: job2", "register: job3"},
		},
		{
			name: "update, a move whose revoke of the old path fails",
			from: appsOf("project1", "app1"), to: appsOf("project2", "app1"), wantErr: "Call 2 of 2 failed",
			held: []string{"project1/app1", "project2/app1"}, shown: []string{"project1/app1"},
			paths:      []string{"project1/app1", "project2/app1"},
			wantFinish: []string{"revoke mini_app_edit,mini_app_view: project1/app1"},
		},
		{
			name: "update, the second of three revokes fails", settings: map[string]any{"revoke_batch_size": 1},
			from: jobsOf("job1", "job2", "job3", "job4"), to: jobsOf("job1"), wantErr: "Call 2 of 3 failed",
			held: []string{"job1", "job3", "job4"}, shown: []string{"job1", "job3", "job4"},
			wantFinish: []string{"revoke delete,edit,list,view: job3", "revoke delete,edit,list,view: job4"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := acctest.NewProtoEnv(t, tc.settings)
			system, typ := target(tc.to).System, target(tc.to).Type
			actions := must(protocol.StringsOf(tc.to.Actions))
			wantID := system + "/" + typ + "/alice"
			var prior *tfprotov6.DynamicValue
			var priorPrivate []byte
			if tc.from != nil {
				created := creatorProto.MustChange(t, env.Server, nil, nil, tc.from)
				prior, priorPrivate = created.NewState, created.Private
			}
			env.ForgetSent()

			env.FailCall(t, 2)
			failed := creatorProto.Change(t, env.Server, prior, priorPrivate, tc.to)
			acctest.ExpectDiags(t, failed.Diagnostics, acctest.ProtoError(tc.wantErr, nil))
			env.ExpectHeld(t, system, "user", "alice", creatorHeld(system, typ, actions, tc.held...))
			expectCreatorState(t, env, creatorProto.Model(t, failed.NewState), wantID, actions, tc.shown...)
			var diags protocol.Diagnostics
			held := authz.ReadCreatorHoldings(acctest.PrivateOf(t, failed.Private), target(tc.to), &diags)
			if got := creatorPaths(held); !slices.Equal(got, tc.paths) {
				t.Errorf("private state holds paths %v, want %v", got, tc.paths)
			}

			env.ClearFaults(t)
			env.ForgetSent()
			done := creatorProto.MustChange(t, env.Server, failed.NewState, failed.Private, tc.to)
			env.ExpectSent(t, tc.wantFinish...)
			shown := shownInstances(tc.to)
			env.ExpectHeld(t, system, "user", "alice", creatorHeld(system, typ, actions, shown...))
			expectCreatorState(t, env, creatorProto.Model(t, done.NewState), wantID, actions, shown...)
			if keys := acctest.PrivateKeys(t, done.Private); len(keys) > 0 {
				t.Errorf("after the next apply, private state holds %v", keys)
			}
		})
	}
}

// creatorPaths renders creator holdings as "ancestor/…/id", sorted; nil
// for none.
func creatorPaths(h grantplan.CreatorHoldings) []string {
	var out []string
	for _, held := range h {
		s := ""
		for _, a := range held.Instance.Ancestors {
			s += a.ID + "/"
		}
		out = append(out, s+held.Instance.ID)
	}
	slices.Sort(out)
	return out
}

// TestProtocolCreatorGrantValidation: a mistake in the configuration is
// reported on the attribute that holds it, before any call.
func TestProtocolCreatorGrantValidation(t *testing.T) {
	instances := protocol.Root("instances")
	key := appKey("project1", "app1")
	// instancesAs replaces the configuration's instances.
	instancesAs := func(names map[string]string) func(m *authz.CreatorGrantModel) {
		return func(m *authz.CreatorGrantModel) { m.Instances = protocol.KnownStringMap(names) }
	}
	for _, tc := range []struct {
		name   string
		change func(m *authz.CreatorGrantModel)
		want   []acctest.ProtoDiag
	}{
		{"blank system", func(m *authz.CreatorGrantModel) {
			// A plain id: a path key would also be checked against the blank system.
			m.System, m.Instances = protocol.Known(""), protocol.KnownStringMap(map[string]string{"app1": "app"})
		}, []acctest.ProtoDiag{acctest.ProtoError("Blank value", protocol.Root("system"))}},
		{"blank creator", func(m *authz.CreatorGrantModel) { m.Creator = protocol.Known(" ") }, []acctest.ProtoDiag{acctest.ProtoError("Blank value", protocol.Root("creator"))}},
		{"blank ancestor id", instancesAs(map[string]string{"/bk_sops,project,/bk_sops,mini_app,app1/": "app"}),
			[]acctest.ProtoDiag{acctest.ProtoError("Invalid path", instances.WithElementKeyString("/bk_sops,project,/bk_sops,mini_app,app1/"))}},
		{"a path whose last node is of another type", instancesAs(map[string]string{"/bk_sops,project,project1/bk_sops,flow,app1/": "app"}),
			[]acctest.ProtoDiag{acctest.ProtoError("Invalid path", instances.WithElementKeyString("/bk_sops,project,project1/bk_sops,flow,app1/"))}},
		{"a one-node path", instancesAs(map[string]string{"/bk_sops,mini_app,app1/": "app"}),
			[]acctest.ProtoDiag{acctest.ProtoError("Invalid path", instances.WithElementKeyString("/bk_sops,mini_app,app1/"))}},
		{"a repeated ancestor", instancesAs(map[string]string{"/bk_sops,project,p1/bk_sops,project,p1/bk_sops,mini_app,app1/": "app"}),
			[]acctest.ProtoDiag{acctest.ProtoError("Repeated path node", instances.WithElementKeyString("/bk_sops,project,p1/bk_sops,project,p1/bk_sops,mini_app,app1/"))}},
		{"an instance given by its id and by its path", instancesAs(map[string]string{"app1": "app", key: "app"}),
			[]acctest.ProtoDiag{acctest.ProtoError("Instance given twice", instances.WithElementKeyString("app1"))}},
		{"a path ending in *", instancesAs(map[string]string{appKey("project1", "*"): "every app"}),
			[]acctest.ProtoDiag{acctest.ProtoError("Invalid path", instances.WithElementKeyString(appKey("project1", "*")))}},
		{"an ancestor id with white space", instancesAs(map[string]string{appKey("project1 ", "app1"): "app"}),
			[]acctest.ProtoDiag{acctest.ProtoError("Invalid path", instances.WithElementKeyString(appKey("project1 ", "app1")))}},
		{"an instance under two paths", instancesAs(map[string]string{key: "app", appKey("project2", "app1"): "app"}),
			[]acctest.ProtoDiag{acctest.ProtoError("Instance given twice", instances.WithElementKeyString(appKey("project2", "app1")))}},
		{"blank name", instancesAs(map[string]string{key: "\t"}), []acctest.ProtoDiag{acctest.ProtoError("Blank value", instances.WithElementKeyString(key))}},
		{"blank name under an id", instancesAs(map[string]string{"app1": ""}), []acctest.ProtoDiag{acctest.ProtoError("Blank value", instances.WithElementKeyString("app1"))}},
		{"admin", func(m *authz.CreatorGrantModel) { m.Creator = protocol.Known("Admin") }, []acctest.ProtoDiag{acctest.ProtoWarning("IAM ignores creator grants to admin", protocol.Root("creator"))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := appsOf("project1", "app1")
			tc.change(config)
			acctest.ExpectDiags(t, creatorProto.Validate(t, acctest.ProtoServer(t), *config), tc.want...)
		})
	}
}

// TestProtocolCreatorGrantDestroyDropsForeignActions: a creator grant's
// state written before the model's creator configuration bounded what is
// recorded may hold an action of another type, which IAM's answer listed
// (alice's view_host beside her biz creator grant). Its destroy revokes the
// type's actions and drops the foreign one, which batch_path refuses for
// the type (the real SaaS's 1902412 "action(view_host) not support to grant
// instance"), and alice keeps her other grant.
func TestProtocolCreatorGrantDestroyDropsForeignActions(t *testing.T) {
	env := acctest.NewProtoEnv(t, nil)
	grantOutsideTerraform(t, env.Sandbox, []string{"1", "2"})
	config := &authz.CreatorGrantModel{
		System: protocol.Known("bk_cmdb"), Type: protocol.Known("biz"), Creator: protocol.Known("alice"),
		Instances: protocol.KnownStringMap(map[string]string{"biz1": "biz one"}),
	}
	created := creatorProto.MustChange(t, env.Server, nil, nil, config)
	state := creatorProto.Model(t, created.NewState)
	if granted, _ := protocol.StringsOf(state.GrantedActions); !slices.Equal(slices.Sorted(slices.Values(granted)), []string{"edit_biz", "view_biz"}) {
		t.Fatalf("granted_actions %v, want the biz creator configuration's edit_biz, view_biz", granted)
	}
	// The state an older provider wrote: view_host recorded too.
	state.GrantedActions = protocol.KnownStrings([]string{"edit_biz", "view_biz", "view_host"})
	policies := protocol.Int64MapOf(state.Policies)
	policies["view_host"] = 1
	state.Policies = authz.PoliciesValue([]string{"edit_biz", "view_biz", "view_host"}, policies)
	resp := creatorProto.Change(t, env.Server, creatorProto.Value(t, state), created.Private, nil)
	acctest.ExpectDiags(t, resp.Diagnostics)
	env.ExpectHeld(t, "bk_cmdb", "user", "alice", map[string][]string{"view_host": sandboxtest.HostPaths("1", "2")})
}

// TestProtocolCreatorGrantUpgradeV0: a state of schema version 0, whose
// instances were objects of name and ancestors by id, upgrades to
// version 1's names by key: an instance under ancestors under its path,
// one without under its id, an imported state's null instances null. An
// instance under ancestors whose id the path notation cannot carry (a
// "," or "/") is refused, with what to do.
func TestProtocolCreatorGrantUpgradeV0(t *testing.T) {
	server := acctest.ProtoServer(t)
	upgrade := func(instances string) *tfprotov6.UpgradeResourceStateResponse {
		t.Helper()
		raw := `{"id":"bk_sops/mini_app/alice","system":"bk_sops","type":"mini_app","creator":"alice","instances":` + instances +
			`,"actions":["mini_app_edit","mini_app_view"],"granted_actions":["mini_app_edit","mini_app_view"],` +
			`"policies":{"mini_app_edit":1,"mini_app_view":2},"timeouts":null}`
		resp, err := server.UpgradeResourceState(t.Context(), &tfprotov6.UpgradeResourceStateRequest{
			TypeName: "bkiam_creator_grant", Version: 0, RawState: &tfprotov6.RawState{JSON: []byte(raw)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := upgrade(`{"app1":{"name":"mini app app1","ancestors":[{"system":"bk_sops","type":"project","id":"project1"}]},` +
		`"app2":{"name":"mini app app2","ancestors":null}}`)
	acctest.ExpectDiags(t, resp.Diagnostics)
	got := creatorProto.Model(t, resp.UpgradedState)
	want := map[string]string{appKey("project1", "app1"): "mini app app1", "app2": "mini app app2"}
	if names, ok := protocol.StringMapOf(got.Instances); !ok || !maps.Equal(names, want) {
		t.Errorf("the upgraded state's instances are %+v, want %v", got.Instances, want)
	}
	if ids := protocol.Int64MapOf(got.Policies); !maps.Equal(ids, map[string]int64{"mini_app_edit": 1, "mini_app_view": 2}) {
		t.Errorf("the upgraded state's policies are %v, want them kept", ids)
	}

	resp = upgrade(`null`)
	acctest.ExpectDiags(t, resp.Diagnostics)
	if got := creatorProto.Model(t, resp.UpgradedState); !got.Instances.IsNull() {
		t.Errorf("an imported state upgrades to instances %+v, want null", got.Instances)
	}

	resp = upgrade(`{"app,1":{"name":"n","ancestors":[{"system":"bk_sops","type":"project","id":"project1"}]}}`)
	acctest.ExpectDiags(t, resp.Diagnostics, acctest.ProtoError(`Cannot upgrade the stored state: The state of this bkiam_creator_grant: `+
		`upgrading it from schema version 0: the instance "app,1" under its ancestors cannot be written as a path`, nil))
}
