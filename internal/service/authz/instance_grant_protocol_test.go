package authz_test

import (
	"bytes"
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// shownGrant is what a bkiam_instance_grant state shows: its actions and
// the ids of its single resource entry, sorted; nil when unknown or null.
func shownGrant(m *authz.InstanceGrantModel) (actions, ids []string) {
	actions, _ = protocol.StringsOf(m.Actions)
	slices.Sort(actions)
	if entries, ok := m.Resources.Get(); ok && len(entries) == 1 {
		entry, _ := entries[0].Get()
		if instances, ok := protocol.StringMapOf(entry.Instances); ok {
			ids = slices.Sorted(maps.Keys(instances))
		}
	}
	return actions, ids
}

func expectShown(t *testing.T, what string, m *authz.InstanceGrantModel, wantActions, wantIDs []string) {
	t.Helper()
	if m == nil {
		t.Fatalf("%s is null, want %v on hosts %v", what, wantActions, wantIDs)
	}
	if actions, ids := shownGrant(m); !slices.Equal(actions, wantActions) || !slices.Equal(ids, wantIDs) {
		t.Errorf("%s shows %v on hosts %v, want %v on hosts %v", what, actions, ids, wantActions, wantIDs)
	}
}

// TestProtocolInstanceGrantCreate: the plan of a create leaves id and
// policies to the apply and writes nothing: a user's asks IAM once what
// the user holds, for the expiry check, and reads the list of each action
// the user holds nothing of (a policy that expired within the day is
// listed, and a grant revives it); a group's policies never expire: it
// reads nothing. The apply grants exactly the configuration in one call,
// and state records IAM's policy ids.
func TestProtocolInstanceGrantCreate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		config    *authz.InstanceGrantModel
		subject   bkiam.Subject
		wantID    string
		planCalls map[string]int
	}{
		{"user", acctest.HostsOf([]string{"edit_host", "view_host"}, "1", "2"), bkiam.Subject{Type: "user", ID: "alice"}, "bk_cmdb/user/alice",
			map[string]int{"policy_query_by_actions": 1, "policy_list": 2}},
		{"group", func() *authz.InstanceGrantModel {
			m := acctest.HostsOf([]string{"view_host"}, "7")
			m.Subject = protocol.Known(authz.SubjectModel{Type: protocol.Known("group"), ID: protocol.Known("1")})
			return m
		}(), bkiam.Subject{Type: "group", ID: "1"}, "bk_cmdb/group/1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := acctest.NewProtoEnv(t, nil)
			plan := acctest.InstanceProto.Plan(t, env.Server, nil, nil, tc.config)
			if tc.subject.Type == "group" {
				// IAM widens the group's grade manager's scope.
				acctest.ExpectDiags(t, plan.Diagnostics, acctest.GroupScopeWarning)
			} else {
				acctest.ExpectDiags(t, plan.Diagnostics)
			}
			planned := acctest.InstanceProto.Model(t, plan.PlannedState)
			if !planned.ID.IsUnknown() || !planned.Policies.IsUnknown() {
				t.Errorf("a create plans id %+v and policies %+v, want both known after apply", planned.ID, planned.Policies)
			}
			actions, _ := protocol.StringsOf(tc.config.Actions)
			_, ids := shownGrant(tc.config)
			expectShown(t, "the plan", planned, actions, ids)
			if len(plan.RequiresReplace) > 0 {
				t.Errorf("a create requires replacing %s", acctest.RenderPaths(plan.RequiresReplace))
			}
			env.ExpectCalls(t, tc.planCalls)

			resp := acctest.InstanceProto.Apply(t, env.Server, nil, plan, tc.config)
			acctest.ExpectDiags(t, resp.Diagnostics)
			state := acctest.InstanceProto.Model(t, resp.NewState)
			if id, _ := state.ID.Get(); id != tc.wantID {
				t.Errorf("id is %q, want %q", id, tc.wantID)
			}
			expectShown(t, "state", state, actions, ids)
			if got, want := protocol.Int64MapOf(state.Policies), env.PolicyIDs("bk_cmdb", tc.subject.Type, tc.subject.ID); !reflect.DeepEqual(got, want) || len(got) != len(actions) {
				t.Errorf("state records policies %v, the sandbox holds %v", got, want)
			}
			if keys := acctest.PrivateKeys(t, resp.Private); len(keys) > 0 {
				t.Errorf("after a complete create, private state holds %v", keys)
			}
			want := map[string][]string{}
			for _, a := range actions {
				want[a] = sandboxtest.HostPaths(ids...)
			}
			env.ExpectHeld(t, "bk_cmdb", tc.subject.Type, tc.subject.ID, want)
			env.ExpectCalls(t, map[string]int{"batch_instance:grant": 1})
		})
	}
}

// TestProtocolInstanceGrantUpdateSendsTheDifference: an update sends
// only what changed, and IAM then holds exactly the new grant; the plan
// shows the policy ids of the actions the update does not grant to, and
// "known after apply" for those it grants to (a policy revoked whole
// outside Terraform comes back under a new id).
func TestProtocolInstanceGrantUpdateSendsTheDifference(t *testing.T) {
	both := []string{"edit_host", "view_host"}
	view := []string{"view_host"}
	renamed := acctest.HostsOf(view, "1", "2")
	renamed.Resources = authz.ResourcesValue([]grantplan.Resource{{System: "bk_cmdb", Type: "host", Instances: map[string]string{"1": "new name", "2": "host2"}}})
	for _, tc := range []struct {
		name     string
		from, to *authz.InstanceGrantModel
		want     []string // the calls sent
		kept     []string // the actions whose policy ids the plan shows; the others' are unknown
	}{
		{"instances added and removed", acctest.HostsOf(view, "1", "2", "3"), acctest.HostsOf(view, "2", "3", "4", "5"), []string{"grant view_host: 4,5", "revoke view_host: 1"}, nil},
		{"an action added", acctest.HostsOf(view, "1", "2"), acctest.HostsOf(both, "1", "2"), []string{"grant edit_host: 1,2"}, view},
		{"an action removed and an instance swapped", acctest.HostsOf(both, "1", "2"), acctest.HostsOf(view, "2", "3"), []string{"grant view_host: 3", "revoke edit_host: 1,2", "revoke view_host: 1"}, nil},
		{"instances removed alone", acctest.HostsOf(view, "1", "2", "3"), acctest.HostsOf(view, "1"), []string{"revoke view_host: 2,3"}, view},
		{"a name changed alone", acctest.HostsOf(view, "1", "2"), renamed, nil, view},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := acctest.NewProtoEnv(t, nil)
			created := acctest.InstanceProto.MustChange(t, env.Server, nil, nil, tc.from)
			before := env.PolicyIDs("bk_cmdb", "user", "alice")
			env.ExpectSent(t, "grant "+joinActions(tc.from)+": "+joinIDs(tc.from))

			plan := acctest.InstanceProto.Plan(t, env.Server, created.NewState, created.Private, tc.to)
			acctest.ExpectDiags(t, plan.Diagnostics)
			planned := acctest.InstanceProto.Model(t, plan.PlannedState)
			plannedPolicies, _ := planned.Policies.Get()
			actions, _ := shownGrant(tc.to)
			for _, a := range actions {
				id, ok := plannedPolicies[a].Get()
				switch kept := slices.Contains(tc.kept, a); {
				case kept && (!ok || id != before[a]):
					t.Errorf("the plan shows policy %+v for %s, want its id %d kept", plannedPolicies[a], a, before[a])
				case !kept && !plannedPolicies[a].IsUnknown():
					t.Errorf("the plan shows policy %+v for %s, which the update grants to: want known after apply", plannedPolicies[a], a)
				}
			}
			if len(plan.RequiresReplace) > 0 {
				t.Errorf("the update requires replacing %s", acctest.RenderPaths(plan.RequiresReplace))
			}

			resp := acctest.InstanceProto.Apply(t, env.Server, created.NewState, plan, tc.to)
			acctest.ExpectDiags(t, resp.Diagnostics)
			env.ExpectSent(t, tc.want...)
			actions, ids := shownGrant(tc.to)
			want := map[string][]string{}
			for _, a := range actions {
				want[a] = sandboxtest.HostPaths(ids...)
			}
			env.ExpectHeld(t, "bk_cmdb", "user", "alice", want)
			state := acctest.InstanceProto.Model(t, resp.NewState)
			expectShown(t, "state", state, actions, ids)
			if got, want := protocol.Int64MapOf(state.Policies), env.PolicyIDs("bk_cmdb", "user", "alice"); !reflect.DeepEqual(got, want) {
				t.Errorf("state records policies %v, the sandbox holds %v", got, want)
			}
		})
	}
}

func joinActions(m *authz.InstanceGrantModel) string {
	actions, _ := shownGrant(m)
	return strings.Join(actions, ",")
}

func joinIDs(m *authz.InstanceGrantModel) string {
	_, ids := shownGrant(m)
	return strings.Join(ids, ",")
}

// TestProtocolNoOpShortcut: a plan whose prior and proposed states are
// the same bytes answers the proposed state itself and the private state
// as it was, with the ledger's holder id added (it is decoded only for the
// ledger, see shared.go); and a
// refresh of a creator grant without detect_drift answers
// the state Terraform sent, not a re-encoding of it.
func TestProtocolNoOpShortcut(t *testing.T) {
	var diags protocol.Diagnostics
	held := protocol.PrivateState{}
	authz.WriteHoldings(held, grantplan.Holdings{"view_host": {
		Resources: []grantplan.Resource{{System: "bk_cmdb", Type: "host", Instances: acctest.HostNames("1")}}, ExpiresAt: bkiam.PermanentExpiry,
	}}, &diags)
	holdings := held.Bytes(&diags)
	paths := protocol.PrivateState{}
	authz.WriteCreatorHoldings(paths, grantplan.CreatorHeld(grantplan.CreatorTarget{System: "bk_job", Type: "job"},
		map[string]grantplan.CreatorInstance{"job1": {ID: "job1", Name: "job1 app"}}), &diags)
	creatorPaths := paths.Bytes(&diags)
	if len(diags) > 0 {
		t.Fatal(testutil.RenderDiags(diags))
	}
	undecodable := func() *tfprotov6.DynamicValue { return &tfprotov6.DynamicValue{MsgPack: []byte{0xc1}} }
	instanceState := func() *tfprotov6.DynamicValue {
		m := acctest.HostsOf([]string{"view_host"}, "1", "2")
		m.ID, m.Policies = protocol.Known("bk_cmdb/user/alice"), authz.PoliciesValue([]string{"view_host"}, map[string]int64{"view_host": 3})
		return acctest.InstanceProto.Value(t, m)
	}
	creatorState := func() *tfprotov6.DynamicValue {
		m := jobsOf("job1")
		m.ID, m.GrantedActions = protocol.Known("bk_job/job/alice"), m.Actions
		m.Policies = authz.PoliciesValue(jobActions, map[string]int64{"delete": 1, "edit": 2, "list": 3, "view": 4})
		return creatorProto.Value(t, m)
	}
	server := acctest.ProtoServer(t)
	for _, tc := range []struct {
		name     string
		typeName string
		state    func() *tfprotov6.DynamicValue
		private  []byte
	}{
		{"instance grant", "bkiam_instance_grant", instanceState, nil},
		{"instance grant with holdings in private state", "bkiam_instance_grant", instanceState, holdings},
		{"creator grant", "bkiam_creator_grant", creatorState, nil},
		{"creator grant with paths in private state", "bkiam_creator_grant", creatorState, creatorPaths},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acctest.NewCommand(server)
			// Separate but byte-identical values, as Terraform sends them.
			prior, proposed := tc.state(), tc.state()
			resp, err := server.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
				TypeName: tc.typeName, PriorState: prior, ProposedNewState: proposed, Config: proposed, PriorPrivate: tc.private,
			})
			if err != nil {
				t.Fatal(err)
			}
			acctest.ExpectDiags(t, resp.Diagnostics)
			if resp.PlannedState != proposed {
				t.Errorf("the plan is not the proposed state as sent")
			}
			// The private state as it was, but for the ledger's holder id,
			// which a replacement Terraform forces (-replace) hands on to
			// the new object's plan (sharedgrants).
			planned, was := protocol.ReadPrivateState(resp.PlannedPrivate, &diags), protocol.ReadPrivateState(tc.private, &diags)
			if _, named := planned["ledger_holder"]; !named {
				t.Errorf("the plan's private state %q does not name the ledger's holder", resp.PlannedPrivate)
			}
			delete(planned, "ledger_holder")
			if !reflect.DeepEqual(planned, was) {
				t.Errorf("the plan's private state is %q, want %q as it was, and the holder's id", resp.PlannedPrivate, tc.private)
			}
			if len(resp.RequiresReplace) > 0 {
				t.Errorf("a no-op requires replacing %s", acctest.RenderPaths(resp.RequiresReplace))
			}
		})
	}
	// Refresh of a creator grant: configured without detect_drift, and
	// not configured at all (terraform validate, import).
	configured := acctest.NewProtoEnv(t, nil)
	for _, tc := range []struct {
		name    string
		server  tfprotov6.ProviderServer
		state   func() *tfprotov6.DynamicValue
		private []byte
	}{
		{"creator grant refreshed without detect_drift", configured.Server, creatorState, creatorPaths},
		// With its identity held, as after the first refresh of this version.
		{"creator grant refreshed not decoded", configured.Server, undecodable, nil},
		{"creator grant refreshed before configuration", server, creatorState, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := tc.state()
			sent := bytes.Clone(state.MsgPack)
			identity := creatorIdentity(t, "bk_job", "job", "alice")
			resp, err := tc.server.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{
				TypeName: creatorProto.TypeName(), CurrentState: state, Private: tc.private, CurrentIdentity: identity})
			if err != nil {
				t.Fatal(err)
			}
			acctest.ExpectDiags(t, resp.Diagnostics)
			if resp.NewState != state || !bytes.Equal(resp.NewState.MsgPack, sent) {
				t.Errorf("the refresh answered another state than it was sent")
			}
			if !bytes.Equal(resp.Private, tc.private) {
				t.Errorf("the refresh answered private state %q, want %q as it was", resp.Private, tc.private)
			}
		})
	}
	configured.ExpectCalls(t, nil)
}

// creatorIdentity is a creator grant's identity as Terraform holds it.
func creatorIdentity(t *testing.T, system, typ, creator string) *tfprotov6.ResourceIdentityData {
	t.Helper()
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"system": tftypes.String, "type": tftypes.String, "creator": tftypes.String}}
	dv, err := tfprotov6.NewDynamicValue(obj, tftypes.NewValue(obj, map[string]tftypes.Value{"system": tftypes.NewValue(tftypes.String, system),
		"type": tftypes.NewValue(tftypes.String, typ), "creator": tftypes.NewValue(tftypes.String, creator)}))
	if err != nil {
		t.Fatal(err)
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: &dv}
}

// TestProtocolInstanceGrantRequiresReplace: a change of system or subject
// replaces the grant (it is another policy in IAM); a change of actions or
// instances is an update.
func TestProtocolInstanceGrantRequiresReplace(t *testing.T) {
	server := acctest.ProtoServer(t)
	prior := acctest.HostsOf([]string{"view_host"}, "1")
	prior.ID, prior.Policies = protocol.Known("bk_cmdb/user/alice"), authz.PoliciesValue([]string{"view_host"}, map[string]int64{"view_host": 5})
	priorValue := acctest.InstanceProto.Value(t, prior)
	for _, tc := range []struct {
		name   string
		change func(m *authz.InstanceGrantModel)
		want   []*tftypes.AttributePath
	}{
		{"system", func(m *authz.InstanceGrantModel) { m.System = protocol.Known("bk_job") }, []*tftypes.AttributePath{protocol.Root("system")}},
		{"subject id", func(m *authz.InstanceGrantModel) {
			m.Subject = protocol.Known(authz.SubjectModel{Type: protocol.Known("user"), ID: protocol.Known("bob")})
		}, []*tftypes.AttributePath{protocol.Root("subject")}},
		{"subject type", func(m *authz.InstanceGrantModel) {
			m.Subject = protocol.Known(authz.SubjectModel{Type: protocol.Known("group"), ID: protocol.Known("1")})
		}, []*tftypes.AttributePath{protocol.Root("subject")}},
		{"system and subject", func(m *authz.InstanceGrantModel) {
			m.System = protocol.Known("bk_job")
			m.Subject = protocol.Known(authz.SubjectModel{Type: protocol.Known("user"), ID: protocol.Known("bob")})
		}, []*tftypes.AttributePath{protocol.Root("system"), protocol.Root("subject")}},
		{"actions", func(m *authz.InstanceGrantModel) {
			m.Actions = protocol.KnownStrings([]string{"edit_host", "view_host"})
		}, nil},
		{"instances", func(m *authz.InstanceGrantModel) { *m = *acctest.HostsOf([]string{"view_host"}, "1", "2") }, nil},
		{"expires_at", func(m *authz.InstanceGrantModel) { m.ExpiresAt = protocol.Known("2099-01-01T00:00:00Z") }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := acctest.HostsOf([]string{"view_host"}, "1")
			tc.change(config)
			resp := acctest.InstanceProto.Plan(t, server, priorValue, nil, config)
			acctest.ExpectDiags(t, resp.Diagnostics)
			if !acctest.PathsEqual(resp.RequiresReplace, tc.want) {
				t.Errorf("requires replacing %s, want %s", acctest.RenderPaths(resp.RequiresReplace), acctest.RenderPaths(tc.want))
			}
		})
	}
}

// TestProtocolInstanceGrantUnknownValues: a configuration whose values
// are unknown at any depth (known only after another resource's apply)
// validates without a diagnostic, and plans without a call to IAM,
// keeping every unknown value as it is. Where a path the grant claims is
// unknown, the plan warns that shared grants are checked at apply
// (TestProtocolSharedUnknownAtPlan); an instance's name or the expiry
// names no path, and plans without a diagnostic.
func TestProtocolInstanceGrantUnknownValues(t *testing.T) {
	entry := func(change func(r *authz.ResourceModel)) protocol.Value[[]protocol.Value[authz.ResourceModel]] {
		r := authz.ResourceModel{System: protocol.Known("bk_cmdb"), Type: protocol.Known("host"), Instances: protocol.KnownStringMap(acctest.HostNames("1", "2"))}
		change(&r)
		return protocol.Known([]protocol.Value[authz.ResourceModel]{protocol.Known(r)})
	}
	unknownString := protocol.Unknown[string]()
	for _, tc := range []struct {
		name   string
		change func(m *authz.InstanceGrantModel)
		// grant: the grant itself is unknown, so that an update cannot
		// show the policy ids it keeps.
		grant bool
		// pending: a path is unknown; scopeUnknown: the subject too.
		pending, scopeUnknown bool
	}{
		{"system", func(m *authz.InstanceGrantModel) { m.System = unknownString }, false, true, true},
		{"subject", func(m *authz.InstanceGrantModel) { m.Subject = protocol.Unknown[authz.SubjectModel]() }, false, true, true},
		{"subject type", func(m *authz.InstanceGrantModel) {
			m.Subject = protocol.Known(authz.SubjectModel{Type: unknownString, ID: protocol.Known("1")})
		}, false, true, true},
		{"subject id of a group", func(m *authz.InstanceGrantModel) {
			m.Subject = protocol.Known(authz.SubjectModel{Type: protocol.Known("group"), ID: unknownString})
		}, false, true, true},
		{"actions", func(m *authz.InstanceGrantModel) { m.Actions = protocol.Unknown[[]protocol.StringValue]() }, true, true, false},
		{"an action", func(m *authz.InstanceGrantModel) {
			m.Actions = protocol.Known([]protocol.StringValue{protocol.Known("view_host"), unknownString})
		}, true, true, false},
		{"resources", func(m *authz.InstanceGrantModel) {
			m.Resources = protocol.Unknown[[]protocol.Value[authz.ResourceModel]]()
		}, true, true, false},
		{"a resource entry", func(m *authz.InstanceGrantModel) {
			m.Resources = protocol.Known([]protocol.Value[authz.ResourceModel]{protocol.Unknown[authz.ResourceModel]()})
		}, true, true, false},
		{"a resource entry's type", func(m *authz.InstanceGrantModel) {
			m.Resources = entry(func(r *authz.ResourceModel) { r.Type = unknownString })
		}, true, true, false},
		{"instances", func(m *authz.InstanceGrantModel) {
			m.Resources = entry(func(r *authz.ResourceModel) { r.Instances = protocol.Unknown[map[string]protocol.StringValue]() })
		}, true, true, false},
		{"an instance name", func(m *authz.InstanceGrantModel) {
			m.Resources = entry(func(r *authz.ResourceModel) {
				r.Instances = protocol.Known(map[string]protocol.StringValue{"1": protocol.Known("host1"), "2": unknownString})
			})
		}, true, false, false},
		{"expires_at", func(m *authz.InstanceGrantModel) { m.ExpiresAt = unknownString }, true, false, false},
		{"timeouts", func(m *authz.InstanceGrantModel) { m.Timeouts = protocol.Unknown[protocol.TimeoutsModel]() }, false, false, false},
		{"a timeout", func(m *authz.InstanceGrantModel) {
			m.Timeouts = protocol.Known(protocol.TimeoutsModel{Create: unknownString})
		}, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := acctest.NewProtoEnv(t, nil)
			config := acctest.HostsOf([]string{"view_host"}, "1", "2")
			tc.change(config)
			acctest.ExpectDiags(t, acctest.InstanceProto.Validate(t, env.Server, *config))

			var want []acctest.ProtoDiag
			switch {
			case tc.scopeUnknown:
				want = append(want, acctest.ProtoWarning("Shared grants checked at apply: Neither what this resource grants nor its subject", nil))
			case tc.pending:
				want = append(want, acctest.ProtoWarning("Shared grants checked at apply: What this resource grants is not known", nil))
			}
			// A create plans without a call...
			create := acctest.InstanceProto.Plan(t, env.Server, nil, nil, config)
			acctest.ExpectDiags(t, create.Diagnostics, want...)
			planned := acctest.InstanceProto.Model(t, create.PlannedState)
			if !planned.ID.IsUnknown() || !planned.Policies.IsUnknown() {
				t.Errorf("a create plans id %+v and policies %+v, want both known after apply", planned.ID, planned.Policies)
			}
			expectConfigPlanned(t, planned, config)

			// ...and so does an update of a grant IAM holds.
			created := acctest.InstanceProto.MustChange(t, env.Server, nil, nil, acctest.HostsOf([]string{"view_host"}, "1"))
			env.Calls.Reset()
			update := acctest.InstanceProto.Plan(t, env.Server, created.NewState, created.Private, config)
			acctest.ExpectDiags(t, update.Diagnostics, want...)
			env.ExpectCalls(t, nil)
			planned = acctest.InstanceProto.Model(t, update.PlannedState)
			expectConfigPlanned(t, planned, config)
			if tc.grant && !planned.Policies.IsUnknown() {
				t.Errorf("an update to an unknown grant plans policies %+v, want known after apply", planned.Policies)
			}
		})
	}
}

// expectConfigPlanned fails unless the plan keeps every configured value
// as configured, unknown ones included: Terraform refuses a plan that
// does not.
func expectConfigPlanned(t *testing.T, planned, config *authz.InstanceGrantModel) {
	t.Helper()
	typ := acctest.ObjectTypeOf("bkiam_instance_grant")
	got := *planned
	got.ID, got.Policies = config.ID, config.Policies
	a, b := (authz.InstanceGrant{}).Encode(typ, got), (authz.InstanceGrant{}).Encode(typ, *config)
	if !a.Equal(b) {
		t.Errorf("the plan changes the configuration:\n%v\nwant\n%v", a, b)
	}
}

// TestProtocolInstanceGrantImport: an import by subject adopts it holding
// nothing known; one by actions and resource type asks the read that
// follows to fill in what IAM holds, which only detect_drift can; either
// way the read clears the request, and with detect_drift a matching
// configuration then plans no change.
func TestProtocolInstanceGrantImport(t *testing.T) {
	t.Run("by subject", func(t *testing.T) {
		for _, tc := range []struct{ id, subjectType, subjectID string }{
			{"bk_cmdb/user/alice", "user", "alice"},
			{"bk_cmdb/group/1", "group", "1"},
		} {
			resp := acctest.InstanceProto.ImportState(t, acctest.ProtoServer(t), tc.id)
			acctest.ExpectDiags(t, resp.Diagnostics)
			if len(resp.ImportedResources) != 1 || resp.ImportedResources[0].TypeName != "bkiam_instance_grant" {
				t.Fatalf("imported %+v, want one bkiam_instance_grant", resp.ImportedResources)
			}
			imported := resp.ImportedResources[0]
			want := &authz.InstanceGrantModel{ID: protocol.Known(tc.id), System: protocol.Known("bk_cmdb"),
				Subject: protocol.Known(authz.SubjectModel{Type: protocol.Known(tc.subjectType), ID: protocol.Known(tc.subjectID)})}
			if got := acctest.InstanceProto.Model(t, imported.State); !reflect.DeepEqual(got, want) {
				t.Errorf("import of %s gives %+v, want %+v (actions, resources and policies null)", tc.id, got, want)
			}
			if keys := acctest.PrivateKeys(t, imported.Private); len(keys) > 0 {
				t.Errorf("import of %s keeps private state %v", tc.id, keys)
			}
		}
	})

	const longID = "bk_cmdb/user/alice/view_host/bk_cmdb/host"
	importLong := func(t *testing.T, server tfprotov6.ProviderServer) *tfprotov6.ImportedResource {
		t.Helper()
		resp := acctest.InstanceProto.ImportState(t, server, longID)
		acctest.ExpectDiags(t, resp.Diagnostics)
		if len(resp.ImportedResources) != 1 {
			t.Fatalf("imported %d resources, want 1", len(resp.ImportedResources))
		}
		imported := resp.ImportedResources[0]
		var diags protocol.Diagnostics
		pending := authz.ReadImportRequest(acctest.PrivateOf(t, imported.Private), &diags)
		if want := (&authz.ImportRequest{Actions: []string{"view_host"}, System: "bk_cmdb", Type: "host"}); !reflect.DeepEqual(pending, want) || len(diags) > 0 {
			t.Fatalf("the import leaves pending %+v, want %+v %s", pending, want, testutil.RenderDiags(diags))
		}
		if _, ids := shownGrant(acctest.InstanceProto.Model(t, imported.State)); ids != nil {
			t.Errorf("the import shows instances %v before the read", ids)
		}
		return imported
	}

	t.Run("completed by the read with detect_drift", func(t *testing.T) {
		env := acctest.NewProtoEnv(t, map[string]any{"detect_drift": true})
		acctest.ChangeHostsOutside(t, env.Sandbox, bkiam.OperationGrant, "alice", []string{"view_host"}, []string{"1", "2"}, bkiam.PermanentExpiry)
		acctest.ChangeHostsOutside(t, env.Sandbox, bkiam.OperationGrant, "alice", []string{"edit_host"}, []string{"3"}, bkiam.PermanentExpiry)
		imported := importLong(t, env.Server)
		read := acctest.InstanceProto.Read(t, env.Server, imported.State, imported.Private)
		acctest.ExpectDiags(t, read.Diagnostics)
		state := acctest.InstanceProto.Model(t, read.NewState)
		expectShown(t, "the imported state", state, []string{"view_host"}, []string{"1", "2"})
		if state.ExpiresAt.IsKnown() {
			t.Errorf("a permanent grant is imported with expires_at %+v", state.ExpiresAt)
		}
		if keys := acctest.PrivateKeys(t, read.Private); slices.Contains(keys, authz.PrivateImportKey) {
			t.Errorf("the read leaves the import pending: private state %v", keys)
		}
		// IAM keeps no names: a configuration naming the hosts by id
		// plans no change.
		config := acctest.HostsOf([]string{"view_host"}, "1", "2")
		config.Resources = authz.ResourcesValue([]grantplan.Resource{{System: "bk_cmdb", Type: "host", Instances: map[string]string{"1": "1", "2": "2"}}})
		plan := acctest.InstanceProto.Plan(t, env.Server, read.NewState, read.Private, config)
		acctest.ExpectDiags(t, plan.Diagnostics)
		planned, err := plan.PlannedState.Unmarshal(acctest.ObjectTypeOf("bkiam_instance_grant"))
		if err != nil {
			t.Fatal(err)
		}
		afterRead, err := read.NewState.Unmarshal(acctest.ObjectTypeOf("bkiam_instance_grant"))
		if err != nil {
			t.Fatal(err)
		}
		if !planned.Equal(afterRead) {
			t.Errorf("after the import, the matching configuration plans a change:\n%+v", acctest.InstanceProto.Model(t, plan.PlannedState))
		}
	})

	t.Run("without detect_drift", func(t *testing.T) {
		env := acctest.NewProtoEnv(t, nil)
		acctest.ChangeHostsOutside(t, env.Sandbox, bkiam.OperationGrant, "alice", []string{"view_host"}, []string{"1", "2"}, bkiam.PermanentExpiry)
		env.Calls.Reset()
		imported := importLong(t, env.Server)
		read := acctest.InstanceProto.Read(t, env.Server, imported.State, imported.Private)
		acctest.ExpectDiags(t, read.Diagnostics, acctest.ProtoWarning("Import without detect_drift: ", nil))
		if got, want := acctest.InstanceProto.Model(t, read.NewState), acctest.InstanceProto.Model(t, imported.State); !reflect.DeepEqual(got, want) {
			t.Errorf("the read changed the imported state to %+v", got)
		}
		if keys := acctest.PrivateKeys(t, read.Private); len(keys) > 0 {
			t.Errorf("the read leaves private state %v, want the import cleared", keys)
		}
		env.ExpectCalls(t, nil)
	})
}

// TestProtocolInstanceGrantPartialFailure: when a call of an apply fails,
// the apply reports it and state records what IAM holds, exactly (in
// private state when one grant cannot show it); the next apply sends only
// the rest and leaves IAM holding exactly the configuration.
func TestProtocolInstanceGrantPartialFailure(t *testing.T) {
	view := []string{"view_host"}
	both := []string{"edit_host", "view_host"}
	for _, tc := range []struct {
		name     string
		settings map[string]any
		from, to *authz.InstanceGrantModel // from nil: a create
		wantErr  string
		// What the failed apply leaves: IAM's holdings, the state shown,
		// and the holdings kept in private state (nil: none, the state is
		// exact).
		held       map[string][]string
		shown      []string
		shownIDs   []string
		holdings   map[string][]string
		wantFinish []string // the calls of the next apply
	}{
		{
			name: "create, the second of three grants fails", settings: map[string]any{"grant_batch_size": 1},
			to: acctest.HostsOf(view, "1", "2", "3"), wantErr: "Call 2 of 3 failed",
			held: map[string][]string{"view_host": sandboxtest.HostPaths("1")}, shown: view, shownIDs: []string{"1"},
			wantFinish: []string{"grant view_host: 2", "grant view_host: 3"},
		},
		{
			name: "update, a new action half granted", settings: map[string]any{"grant_batch_size": 1},
			from: acctest.HostsOf(view, "1", "2"), to: acctest.HostsOf(both, "1", "2", "3"), wantErr: "Call 2 of 4 failed",
			held:  map[string][]string{"edit_host": sandboxtest.HostPaths("1"), "view_host": sandboxtest.HostPaths("1", "2")},
			shown: both, shownIDs: []string{"1", "2"},
			holdings:   map[string][]string{"edit_host": {"1"}, "view_host": {"1", "2"}},
			wantFinish: []string{"grant edit_host: 2", "grant edit_host: 3", "grant view_host: 3"},
		},
		{
			name: "update, the second of three revokes fails", settings: map[string]any{"revoke_batch_size": 1},
			from: acctest.HostsOf(view, "1", "2", "3", "4"), to: acctest.HostsOf(view, "1"), wantErr: "Call 2 of 3 failed",
			held: map[string][]string{"view_host": sandboxtest.HostPaths("1", "3", "4")}, shown: view, shownIDs: []string{"1", "3", "4"},
			wantFinish: []string{"revoke view_host: 3", "revoke view_host: 4"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := acctest.NewProtoEnv(t, tc.settings)
			var prior *tfprotov6.DynamicValue
			var priorPrivate []byte
			if tc.from != nil {
				created := acctest.InstanceProto.MustChange(t, env.Server, nil, nil, tc.from)
				prior, priorPrivate = created.NewState, created.Private
			}
			env.ForgetSent() // the setup's calls

			env.FailCall(t, 2)
			failed := acctest.InstanceProto.Change(t, env.Server, prior, priorPrivate, tc.to)
			acctest.ExpectDiags(t, failed.Diagnostics, acctest.ProtoError(tc.wantErr, nil))
			env.ExpectHeld(t, "bk_cmdb", "user", "alice", tc.held)
			state := acctest.InstanceProto.Model(t, failed.NewState)
			expectShown(t, "state after the failure", state, tc.shown, tc.shownIDs)
			if got, want := protocol.Int64MapOf(state.Policies), env.PolicyIDs("bk_cmdb", "user", "alice"); !reflect.DeepEqual(got, want) {
				t.Errorf("state records policies %v, the sandbox holds %v", got, want)
			}
			var diags protocol.Diagnostics
			if got := holdingIDs(authz.ReadHoldings(acctest.PrivateOf(t, failed.Private), &diags)); !reflect.DeepEqual(got, tc.holdings) {
				t.Errorf("private state holds %v, want %v", got, tc.holdings)
			}

			// Terraform taints a failed create; an untaint (or the
			// replacement's create) then sends only the rest.
			env.ClearFaults(t)
			env.ForgetSent()
			done := acctest.InstanceProto.MustChange(t, env.Server, failed.NewState, failed.Private, tc.to)
			env.ExpectSent(t, tc.wantFinish...)
			actions, ids := shownGrant(tc.to)
			want := map[string][]string{}
			for _, a := range actions {
				want[a] = sandboxtest.HostPaths(ids...)
			}
			env.ExpectHeld(t, "bk_cmdb", "user", "alice", want)
			expectShown(t, "state after the next apply", acctest.InstanceProto.Model(t, done.NewState), actions, ids)
			if keys := acctest.PrivateKeys(t, done.Private); len(keys) > 0 {
				t.Errorf("after the next apply, private state holds %v", keys)
			}
		})
	}
}

// holdingIDs renders single-type holdings as action → instance ids; nil
// for no holdings.
func holdingIDs(h grantplan.Holdings) map[string][]string {
	if h == nil {
		return nil
	}
	out := map[string][]string{}
	for action, held := range h {
		for _, r := range held.Resources {
			out[action] = append(out[action], slices.Sorted(maps.Keys(r.Instances))...)
		}
	}
	return out
}

// TestProtocolInstanceGrantValidation: a mistake in the configuration is
// reported on the attribute that holds it, before any call.
func TestProtocolInstanceGrantValidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(m *authz.InstanceGrantModel)
		want   acctest.ProtoDiag
	}{
		{"blank system", func(m *authz.InstanceGrantModel) { m.System = protocol.Known(" ") }, acctest.ProtoError("Blank value", protocol.Root("system"))},
		{"unknown subject type", func(m *authz.InstanceGrantModel) {
			m.Subject = protocol.Known(authz.SubjectModel{Type: protocol.Known("robot"), ID: protocol.Known("r2")})
		}, acctest.ProtoError("Unknown subject type", protocol.Root("subject").WithAttributeName("type"))},
		{"blank instance name", func(m *authz.InstanceGrantModel) {
			m.Resources = authz.ResourcesValue([]grantplan.Resource{{System: "bk_cmdb", Type: "host", Instances: map[string]string{"1": "host1", "2": ""}}})
		}, acctest.ProtoError("Blank value", protocol.Root("resources").WithElementKeyInt(0).WithAttributeName("instances").WithElementKeyString("2"))},
		{"no actions", func(m *authz.InstanceGrantModel) { m.Actions = protocol.KnownStrings(nil) }, acctest.ProtoError("No actions", protocol.Root("actions"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := acctest.HostsOf([]string{"view_host"}, "1", "2")
			tc.change(config)
			acctest.ExpectDiags(t, acctest.InstanceProto.Validate(t, acctest.ProtoServer(t), *config), tc.want)
		})
	}
}

// TestProtocolImportedGrantRenamed: an imported grant (no policy ids, as
// IAM's list does not show them) whose configuration names its instances
// otherwise plans an update that sends nothing, and so plans no policy id
// it cannot return: Terraform refuses an apply whose policies lose an
// element the plan showed (found by TestAccQuery with the generated
// names changed).
func TestProtocolImportedGrantRenamed(t *testing.T) {
	env := acctest.NewProtoEnv(t, nil)
	imported := acctest.HostsOf([]string{"view_host"}, "1")
	imported.ID, imported.Policies = protocol.Known("bk_cmdb/user/alice"), authz.PoliciesValue(nil, nil)
	renamed := acctest.HostsOf([]string{"view_host"}, "1")
	renamed.Resources = authz.ResourcesValue([]grantplan.Resource{{System: "bk_cmdb", Type: "host", Instances: map[string]string{"1": "web 1"}}})
	plan := acctest.InstanceProto.Plan(t, env.Server, acctest.InstanceProto.Value(t, imported), nil, renamed)
	acctest.ExpectDiags(t, plan.Diagnostics)
	planned := acctest.InstanceProto.Model(t, plan.PlannedState)
	if ids, ok := planned.Policies.Get(); !ok || len(ids) != 0 {
		t.Fatalf("the rename of an imported grant planned policies %+v, want none (known)", planned.Policies)
	}
	apply := acctest.InstanceProto.Apply(t, env.Server, acctest.InstanceProto.Value(t, imported), plan, renamed)
	acctest.ExpectDiags(t, apply.Diagnostics)
	if got := acctest.InstanceProto.Model(t, apply.NewState).Policies; !reflect.DeepEqual(got, planned.Policies) {
		t.Errorf("the apply returned policies %v, planned %v", got, planned.Policies)
	}
	env.ExpectCalls(t, nil)
}
