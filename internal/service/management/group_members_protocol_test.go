package management_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/management"
)

var membersResource = acctest.ProtoResource[management.GroupMembersModel]{
	Def: management.GroupMembers{},
	Proposed: func(config management.GroupMembersModel, prior *management.GroupMembersModel) management.GroupMembersModel {
		// The computed attributes: unknown on create, else the prior's.
		config.ID = protocol.Unknown[string]()
		if prior != nil {
			config.ID, config.ExpiresAt = prior.ID, prior.ExpiresAt
		}
		return config
	},
}

// membersModel is a bkiam_group_members of group in bk_cmdb with users
// (id → expiry, "" for permanent).
func membersModel(group int64, users map[string]string) management.GroupMembersModel {
	m := management.GroupMembersModel{System: protocol.Known("bk_cmdb"), GroupID: protocol.Known(fmt.Sprint(group))}
	elems := map[string]string{}
	for id, exp := range users {
		if exp == "" {
			exp = management.PermanentMember
		}
		elems[id] = exp
	}
	m.Users = protocol.KnownStringMap(elems)
	return m
}

// TestProtocolGroupMembers: the plan says when an expiry is lowered (and
// only then), a change of group is a replacement, and a refresh of an
// unchanged group changes nothing.
func TestProtocolGroupMembers(t *testing.T) {
	env := acctest.NewProtoEnv(t, nil)
	group := newGroup(t, acctest.OutsideClient(t, env.Sandbox), "dev")
	soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	later := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)

	config := membersModel(group, map[string]string{"alice": later, "bob": ""})
	created := membersResource.MustChange(t, env.Server, nil, nil, &config)
	if got := membersResource.Model(t, created.NewState).ID; got != protocol.Known(fmt.Sprintf("bk_cmdb/%d", group)) {
		t.Fatalf("id %v", got)
	}

	raised := membersModel(group, map[string]string{"alice": later, "bob": "", "carol": soon})
	acctest.ExpectDiags(t, membersResource.Plan(t, env.Server, created.NewState, nil, &raised).Diagnostics)

	lowered := membersModel(group, map[string]string{"alice": soon, "bob": ""})
	plan := membersResource.Plan(t, env.Server, created.NewState, nil, &lowered)
	acctest.ExpectDiags(t, plan.Diagnostics, acctest.ProtoWarning("removes 1 member (user alice) from the group and adds them again", nil))
	env.Calls.Reset()
	applied := membersResource.Apply(t, env.Server, created.NewState, plan, &lowered)
	acctest.ExpectDiags(t, applied.Diagnostics)
	env.ExpectCalls(t, map[string]int{"member:delete": 1, "member:add": 1, "member:list": 1})
	for _, m := range env.Sandbox.Members(group) {
		if want, _ := time.Parse(time.RFC3339, soon); m.ID == "alice" && m.ExpiredAt != want.Unix() {
			t.Errorf("alice expires at %d, want %d", m.ExpiredAt, want.Unix())
		}
	}

	moved := membersModel(group+1, map[string]string{"alice": soon, "bob": ""})
	if plan := membersResource.Plan(t, env.Server, applied.NewState, nil, &moved); !acctest.PathsEqual(plan.RequiresReplace, []*tftypes.AttributePath{protocol.Root("group_id")}) {
		t.Errorf("a new group_id plans %s, want a replacement on group_id", acctest.RenderPaths(plan.RequiresReplace))
	}

	env.Calls.Reset()
	read := membersResource.Read(t, env.Server, applied.NewState, nil)
	acctest.ExpectDiags(t, read.Diagnostics)
	if read.NewState != applied.NewState {
		t.Error("a refresh of an unchanged group re-encoded the state")
	}
	env.ExpectCalls(t, map[string]int{"member:list": 1})
}

// TestProtocolGroupMembersAtScale: a group of 10 000 members is created
// in ten adds, then counted in one call to check that IAM kept them all;
// the plan of it unchanged reads and sends nothing (the no-op answer comes
// before any decoding); a change of 1% of its members sends one add and
// one delete, then counts the group again. An add IAM drops a member of
// (the unknown user ghost) falls short of the count, and the group is then
// read whole to name it.
func TestProtocolGroupMembersAtScale(t *testing.T) {
	env := acctest.NewProtoEnvWith(t, nil, sandbox.WithModel(acctest.ModelWithUsers(t, 10100, 10100)))
	group := newGroup(t, acctest.OutsideClient(t, env.Sandbox), "big")
	users := func(from, to int) map[string]string {
		out := map[string]string{}
		for i := from; i < to; i++ {
			out[fmt.Sprintf("u%05d", i)] = ""
		}
		return out
	}
	config := membersModel(group, users(0, 10000))
	env.Calls.Reset()
	created := membersResource.MustChange(t, env.Server, nil, nil, &config)
	if n := len(env.Sandbox.Members(group)); n != 10000 {
		t.Fatalf("the group holds %d members", n)
	}
	// The empty group's read (one page), ten adds, the count (one page of one row).
	env.ExpectCalls(t, map[string]int{"member:list": 2, "member:add": 10})

	plan := membersResource.Plan(t, env.Server, created.NewState, nil, &config)
	acctest.ExpectDiags(t, plan.Diagnostics)
	planned, _ := plan.PlannedState.Unmarshal(acctest.ObjectTypeOf(membersResource.TypeName()))
	state, _ := created.NewState.Unmarshal(acctest.ObjectTypeOf(membersResource.TypeName()))
	if !planned.Equal(state) {
		t.Error("the plan of an unchanged group is not its state")
	}
	env.ExpectCalls(t, map[string]int{})

	changed := membersModel(group, users(100, 10100))
	changedState := membersResource.MustChange(t, env.Server, created.NewState, nil, &changed).NewState
	env.ExpectCalls(t, map[string]int{"member:add": 1, "member:delete": 1, "member:list": 1})
	held := map[string]bool{}
	for _, m := range env.Sandbox.Members(group) {
		held[m.ID] = true
	}
	if len(held) != 10000 || held["u00099"] || !held["u10099"] {
		t.Errorf("after the change the group holds %d members (u00099 %v, u10099 %v)", len(held), held["u00099"], held["u10099"])
	}

	withGhost := users(100, 10100)
	withGhost["ghost"] = ""
	ghost := membersModel(group, withGhost)
	env.Calls.Reset()
	plan = membersResource.Plan(t, env.Server, changedState, nil, &ghost)
	applied := membersResource.Apply(t, env.Server, changedState, plan, &ghost)
	acctest.ExpectDiags(t, applied.Diagnostics, acctest.ProtoError("did not add 1 member (user ghost) to group", nil))
	// One add, the count, then the whole group (20 pages of 500).
	env.ExpectCalls(t, map[string]int{"member:add": 1, "member:list": 21})
}
