package authz

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/bkiam/terraform-provider-bkiam/internal/applyrun"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/ledger"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
)

// creatorGrantRunner sends planned creator grants and path revokes one by one,
// recording after each what the creator holds, like grantRunner.
type creatorGrantRunner struct {
	client  *bkiam.Client
	target  grantplan.CreatorTarget
	creator string
	held    grantplan.CreatorHoldings
	// expected is the actions attribute; nil when unset.
	expected []string
	// configured are the actions of the type's creator configuration in
	// the system's model, which bound what is recorded when expected is
	// nil: IAM's answer lists every policy the creator holds in the
	// system. nil when the model is not read.
	configured []string
	// granted is the set of actions recorded as granted, revoked from
	// every path that is revoked.
	granted  map[string]bool
	policies map[string]int64
	// unlimited are the actions IAM's answers report as held on every
	// instance (statistics.instance_count 0 on a real policy): what a
	// creator configuration's actions related to no resource type become.
	unlimited map[string]bool
	// shared orders the calls with those of other resources of the
	// command (internal/sharedgrants); nil lets them through.
	shared *sharedgrants.Handle
	// limits batch the registrations that restore a recreated policy.
	limits grantplan.Limits
	// lost is set when a registration was answered with a new policy id
	// for a recorded action: that policy is gone (revoked whole outside
	// Terraform), and with it the created paths not just registered. run
	// registers them all again. Not after a revoke of this run's, which may
	// have emptied the policy itself (revoked).
	lost, revoked bool

	// The apply the runner serves.
	resource CreatorGrant
	data     *conns.Data
	// current and next are the state's and the plan's (nil on create and
	// destroy); result is next, or on a destroy what the run starts from.
	current, next, result *creatorView
	// want are the planned instances (nil on a destroy).
	want    map[string]grantplan.CreatorInstance
	private protocol.PrivateState
}

// The creator grant's part of applyrun.Run.

func (r *creatorGrantRunner) Claims() (ledger.Claims, bool) {
	if r.next == nil {
		return ledger.Claims{}, false
	}
	return r.resource.Claims(r.next.model), true
}

// Taken: a held path another resource revoked is in doubt, so that the
// run registers it again.
func (r *creatorGrantRunner) Taken(_ string, paths map[string]bool) {
	for path, h := range r.held {
		if paths[path] {
			h.Doubt = true
			r.held[path] = h
		}
	}
}

func (r *creatorGrantRunner) Load(context.Context, *protocol.Diagnostics) (*CreatorGrantModel, protocol.PrivateState, bool) {
	return nil, nil, false
}

func (r *creatorGrantRunner) Plan() ([]grantplan.CreatorCall, error) {
	return grantplan.PlanCreator(r.target, r.held, r.want, r.limits)
}

func (r *creatorGrantRunner) Gone(context.Context, error) bool { return false }

func (r *creatorGrantRunner) After(_ context.Context, ok bool, diags *protocol.Diagnostics) bool {
	r.data.InvalidateScans(r.target.System, bkiam.Subject{Type: bkiam.SubjectUser, ID: r.creator}, slices.Concat(r.actions(), r.result.granted))
	if len(r.unlimited) > 0 {
		diags.AddWarning("Unlimited creator policies",
			fmt.Sprintf("IAM reports %s holding %s on every instance (unlimited policies). A system's creator configuration "+
				"grants its actions related to no resource type this way. Destroying this resource revokes the creator's "+
				"paths and cannot undo these: revoke them in IAM if they are not wanted.",
				r.creator, strings.Join(slices.Sorted(maps.Keys(r.unlimited)), ", ")))
	}
	return ok
}

// Handed records as held, in doubt, the planned paths not held that
// other resources' revokes left. A creator's paths are the same for every
// action, so the action does not matter.
func (r *creatorGrantRunner) Handed(_ string, paths map[string]bool) {
	for _, in := range r.next.instances {
		path := in.Path(r.next.target.System, r.next.target.Type)
		if _, ok := r.held[path]; !ok && paths[path] {
			r.held[path] = grantplan.CreatorHolding{Instance: in, Doubt: true}
		}
	}
}

func (r *creatorGrantRunner) Empty() bool { return len(r.held) == 0 }

// Reclaim: the claim names IAM's actions once the run ended, not the
// plan's (AnyAction when actions is unset), after a success too.
func (r *creatorGrantRunner) Reclaim(bool) (ledger.Claims, bool) {
	return creatorClaims(r.target, r.creator, r.actions(), r.held), true
}

func (r *creatorGrantRunner) Record(ok bool, diags *protocol.Diagnostics) (*CreatorGrantModel, protocol.PrivateState) {
	// On failure Terraform marks a created resource tainted; the next
	// apply revokes what was granted and registers everything again.
	granted := r.actions()
	m := r.result.model
	m.ID = protocol.Known(r.result.target.System + "/" + r.result.target.Type + "/" + r.creator)
	m.GrantedActions = protocol.KnownStrings(granted)
	m.Policies = policiesValue(granted, r.policies)
	if ok {
		writeCreatorHoldings(r.private, nil, diags)
		return &m, r.private
	}
	view, exact := r.held.View(r.target, r.want)
	if r.current == nil {
		// A create that stopped is tainted and destroyed with its public
		// state alone (see instanceGrant.partial): show every path it may
		// have registered.
		view, exact = r.held.UpperBound()
	}
	m.Instances = creatorInstancesValue(r.target, view)
	if exact {
		writeCreatorHoldings(r.private, nil, diags)
	} else {
		writeCreatorHoldings(r.private, r.held, diags)
	}
	return &m, r.private
}

// The creator grant's part of the loop over calls.

func (r *creatorGrantRunner) Describe(call grantplan.CreatorCall) (string, map[string]any) {
	return "sending planned IAM call", map[string]any{"operation": string(call.Operation), "instances": len(call.Instances)}
}

// Send sends everything, the ledger's waits too, with callCtx: a stop
// waits for a wait on another resource's revoke as for IAM's answer.
func (r *creatorGrantRunner) Send(_, callCtx context.Context, call grantplan.CreatorCall) error {
	// A creator grant writes every action of the type's creator
	// configuration, which the runner need not know.
	r.data.Writing(r.target.System, bkiam.Subject{Type: bkiam.SubjectUser, ID: r.creator}, nil)
	if call.Operation == grantplan.OperationGrant {
		return r.grant(callCtx, call)
	}
	err := r.revoke(callCtx, call)
	r.revoked = true
	return err
}

func (r *creatorGrantRunner) Failed(call grantplan.CreatorCall, err error, unknown bool) applyrun.Failure {
	doubt := unknown && call.Operation == grantplan.OperationGrant
	if doubt {
		r.held.ApplyUncertain(r.target, call)
	}
	return applyrun.Failure{What: r.what(call), Err: err, Doubt: doubt, RevokeInDoubt: unknown && call.Operation == grantplan.OperationRevoke}
}

// Again registers anew every held path when IAM answered with a new
// policy id (lost).
func (r *creatorGrantRunner) Again(ctx context.Context) ([]grantplan.CreatorCall, error) {
	if !r.lost {
		return nil, nil
	}
	want := make(map[string]grantplan.CreatorInstance, len(r.held))
	for _, h := range r.held {
		want[h.Instance.ID] = h.Instance
	}
	again, err := grantplan.PlanCreator(r.target, grantplan.CreatorHoldings{}, want, r.limits)
	if err != nil {
		return nil, err
	}
	tflog.Warn(ctx, "IAM answered a creator registration with a new policy id: a policy was revoked whole outside Terraform; registering the rest again")
	r.lost = false
	return again, nil
}

// what describes a call for its runError.
func (r *creatorGrantRunner) what(c grantplan.CreatorCall) string {
	if c.Operation == grantplan.OperationGrant {
		return fmt.Sprintf("registering %s as creator of %d %s/%s instances", r.creator, len(c.Instances), r.target.System, r.target.Type)
	}
	return fmt.Sprintf("revoking %s from %d %s/%s paths", strings.Join(r.actions(), ", "), len(c.Instances), r.target.System, r.target.Type)
}

func (r *creatorGrantRunner) grant(ctx context.Context, call grantplan.CreatorCall) error {
	scope := creatorScope(r.target, r.creator)
	paths := make([]string, len(call.Instances))
	for i, in := range call.Instances {
		paths[i] = in.Path(r.target.System, r.target.Type)
	}
	if err := r.shared.Grant(ctx, scope, paths); err != nil {
		return err
	}
	req := bkiam.CreatorActionRequest{System: r.target.System, Type: r.target.Type, Creator: r.creator}
	for _, in := range call.Instances {
		ci := bkiam.CreatorInstance{ID: in.ID, Name: in.Name}
		for _, a := range in.Ancestors {
			ci.Ancestors = append(ci.Ancestors, bkiam.Ancestor{System: a.System, Type: a.Type, ID: a.ID})
		}
		req.Instances = append(req.Instances, ci)
	}
	results, err := r.client.BatchResourceCreatorAction(ctx, req)
	if err != nil {
		return err
	}
	r.held.Apply(r.target, call)
	err = r.recordPolicies(results)
	// The claim names IAM's actions now, not AnyAction.
	r.shared.Claim(creatorClaims(r.target, r.creator, r.actions(), r.held))
	return err
}

// recordPolicies keeps the actions IAM reports. Its answer lists every policy the
// creator holds in the system, related to this type or not (a known
// server bug): with expected actions, exactly those are recorded and a
// missing one is an error; without, those of the type's creator
// configuration (configured), or all of them when the model was not read
// (state written before the plan required the model), which revoke then
// sorts out.
func (r *creatorGrantRunner) recordPolicies(results []bkiam.PolicyResult) error {
	reported := map[string]int64{}
	for _, res := range results {
		reported[res.Action.ID] = res.PolicyID
		if old, ok := r.policies[res.Action.ID]; ok && old > 0 && res.PolicyID > 0 && res.PolicyID != old && !r.revoked {
			r.lost = true
		}
		if res.PolicyID > 0 && res.Statistics.InstanceCount == 0 {
			if r.unlimited == nil {
				r.unlimited = map[string]bool{}
			}
			r.unlimited[res.Action.ID] = true
		}
	}
	if r.expected == nil {
		for a, id := range reported {
			if r.configured != nil && !slices.Contains(r.configured, a) {
				continue // another of the creator's policies in the system
			}
			r.granted[a] = true
			r.policies[a] = id
		}
		return nil
	}
	var missing []string
	for _, a := range r.expected {
		id, ok := reported[a]
		if !ok {
			missing = append(missing, a)
			continue
		}
		r.granted[a] = true
		r.policies[a] = id
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("IAM registered the creator but did not grant %s: the creator actions that system %s configured for "+
			"type %s do not include them. Remove them from actions, or leave actions unset to record what IAM grants",
			strings.Join(missing, ", "), r.target.System, r.target.Type)
	}
	return nil
}

// revoke undoes the creator grant of the call's paths with a batch_path
// revoke of every recorded action.
func (r *creatorGrantRunner) revoke(ctx context.Context, call grantplan.CreatorCall) error {
	actions := r.actions()
	if len(actions) == 0 {
		r.held.Apply(r.target, call)
		return nil // nothing recorded, nothing to revoke
	}
	// Only what no other resource of the command keeps, grouping the
	// actions that keep the same paths.
	byPath := make(map[string]grantplan.CreatorInstance, len(call.Instances))
	paths := make([]string, len(call.Instances))
	for i, in := range call.Instances {
		paths[i] = in.Path(r.target.System, r.target.Type)
		byPath[paths[i]] = in
	}
	send, done, err := r.shared.Revoke(ctx, creatorScope(r.target, r.creator), actions, paths)
	defer done()
	if err != nil {
		return err
	}
	for _, g := range sharedgrants.GroupRevokes(actions, send) {
		instances := make([]grantplan.CreatorInstance, len(g.Paths))
		for i, p := range g.Paths {
			instances[i] = byPath[p]
		}
		if err := r.revokeActions(ctx, g.Actions, instances); err != nil {
			return err
		}
	}
	r.held.Apply(r.target, call)
	return nil
}

// revokeActions revokes actions from the paths of instances.
func (r *creatorGrantRunner) revokeActions(ctx context.Context, actions []string, instances []grantplan.CreatorInstance) error {
	err := r.pathRevoke(ctx, actions, instances)
	if err != nil && r.expected == nil && errors.Is(err, bkiam.ErrResourceMismatch) && len(actions) > 1 {
		// Some recorded actions came from IAM's list of unrelated
		// policies: revoke action by action and drop those IAM says do
		// not relate to this type.
		err = nil
		for _, a := range actions {
			e := r.pathRevoke(ctx, []string{a}, instances)
			switch {
			case errors.Is(e, bkiam.ErrResourceMismatch):
				delete(r.granted, a)
				delete(r.policies, a)
			case e != nil:
				return e
			}
		}
	} else if errors.Is(err, bkiam.ErrResourceMismatch) && r.expected == nil {
		delete(r.granted, actions[0])
		delete(r.policies, actions[0])
		err = nil
	}
	return err
}

func (r *creatorGrantRunner) pathRevoke(ctx context.Context, actions []string, instances []grantplan.CreatorInstance) error {
	res := bkiam.PathResource{System: r.target.System, Type: r.target.Type}
	for _, in := range instances {
		var path []bkiam.PathNode
		for _, a := range in.Ancestors {
			// IAM wants a name on every node and never compares it; the
			// ancestors' names are IAM's own, so the id stands in.
			path = append(path, bkiam.PathNode{System: a.System, Type: a.Type, ID: a.ID, Name: a.ID})
		}
		path = append(path, bkiam.PathNode{System: r.target.System, Type: r.target.Type, ID: in.ID, Name: in.Name})
		res.Paths = append(res.Paths, path)
	}
	req := bkiam.BatchPathRequest{
		System: r.target.System, Operate: bkiam.OperationRevoke,
		Subject:   bkiam.Subject{Type: bkiam.SubjectUser, ID: r.creator},
		Resources: []bkiam.PathResource{res},
	}
	for _, a := range actions {
		req.Actions = append(req.Actions, bkiam.Action{ID: a})
	}
	_, err := r.client.BatchPath(ctx, req)
	return err
}

func (r *creatorGrantRunner) actions() []string {
	return slices.Sorted(maps.Keys(r.granted))
}
