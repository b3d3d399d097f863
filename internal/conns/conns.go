package conns

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/heldpolicy"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
)

// Data is what the provider's Configure makes for the resources: the client
// and what the resources of one provider process share.
type Data struct {
	Client *bkiam.Client
	// Instances sends batch_instance calls, merging those of concurrent
	// resources (batch_window).
	Instances InstanceCaller
	// GrantBatchSize and revokeBatchSize bound the instances (or paths) of
	// one resource entry in one grant or revoke call.
	GrantBatchSize  int
	RevokeBatchSize int
	// Scans shares the policy-list scans of detect_drift; nil when it is
	// off.
	Scans *bkiam.ScanCache
	// PolicyScans are the scans Policies reads where IAM's answer about a
	// subject cannot tell: Scans when detect_drift is on, scans of their
	// own otherwise; nil through ESB. Every write of this process
	// invalidates them (InvalidateScans), whatever detect_drift is.
	PolicyScans *bkiam.ScanCache
	// Book is the process's ledger of shared grants (internal/sharedgrants).
	Book *sharedgrants.Book
	// Models reads each system's model once per provider configuration
	// (bkiam_system, and the plan-time checks when checkModel is on).
	Models     *bkiam.ModelCache
	CheckModel bool
	// GroupPolicies reads each group's permissions once per process, for
	// the refreshes of bkiam_group_permission.
	GroupPolicies *GroupPolicyCache
	// AllowSharedGrants lets two resources of the command grant one path
	// (allow_shared_grants; internal/sharedgrants).
	AllowSharedGrants bool
	// ExpiryConflictsFail fails a plan whose user grant conflicts with the
	// one expiry IAM keeps per user and action, which it otherwise warns
	// of (expiry_conflicts = "error"; authz/expiry.go).
	ExpiryConflictsFail bool
	// MaxMemberExpiry is the site's cap on how long a group membership may
	// last from the call that sets it (max_member_expiry; 0: none), which
	// the plans of the membership resources check (rolling.Cap).
	MaxMemberExpiry time.Duration
	// Policies reads what one subject holds (internal/heldpolicy): IAM's
	// answer about the subject, the policy lists where that cannot tell.
	// nil through ESB, which has no reads.
	Policies heldpolicy.Source
	// Expiry is the plan-time view of IAM the expiry check reads, one
	// per process (authz/expiry.go); nil when the check is off
	// (expiry_conflicts = "off", or through ESB).
	Expiry *heldpolicy.Reader
	// PlannedScopes holds the grade managers' scopes and the groups'
	// grade managers this process planned, for the plan-time scope check of
	// bkiam_group_permission (planned_scopes.go).
	PlannedScopes *PlannedScopes
	// Groups tells whether IAM knows a group, once per process, for the
	// access checks of a group.
	Groups *GroupCheck
	// UserGroups reads each user's groups once per process, for the
	// access data sources' check that IAM knows the user.
	UserGroups *UserGroupCache
}

// Writing tells the expiry check's view of IAM that this process is about
// to write to subject's actions (nil: every action): an action it has not
// read yet is left to the plan, which read it before anything was written.
func (d *Data) Writing(system string, subject bkiam.Subject, actions []string) {
	if d != nil {
		d.Expiry.Writing(system, subject, actions)
	}
}

// InvalidateScans records that this process has just written to
// subject's actions, in the policy-list scans detect_drift reads and in
// those Policies reads (what bkiam_expiring answers from), whatever
// detect_drift is: a later read of the subject in the same process sees
// the write, and the scans still answer every other subject. The expiry
// check's view keeps what it read (Writing).
func (d *Data) InvalidateScans(system string, subject bkiam.Subject, actions []string) {
	caches := []*bkiam.ScanCache{d.Scans}
	if d.PolicyScans != d.Scans {
		caches = append(caches, d.PolicyScans)
	}
	for _, scans := range caches {
		if scans == nil {
			continue
		}
		for _, a := range actions {
			scans.Invalidate(system, a, subject)
		}
	}
}

// AskAlone tells the backend's policy queries which of system's actions to
// ask one by one (bkiam.AskAlone): from the system's model when check_model
// is on, nil otherwise (the batch is tried first, and a refused one asked
// again action by action).
func (d *Data) AskAlone(ctx context.Context, system string) bkiam.AskAlone {
	if !d.CheckModel {
		return nil
	}
	return d.Models.AskAlone(ctx, system)
}

// Limits are the batch limits the planners split calls by.
func (d *Data) Limits() grantplan.Limits {
	return grantplan.Limits{Grant: d.GrantBatchSize, Revoke: d.RevokeBatchSize, Policy: MaxPolicyInstances}
}

// AllowsSharedGrants and LedgerBook are what the shared grants need of
// the provider's data (sharedgrants.Data); nil is the provider before it
// is configured.
func (d *Data) AllowsSharedGrants() bool { return d == nil || d.AllowSharedGrants }

// FailsExpiryConflicts is expiry_conflicts = "error" (sharedgrants.Data).
func (d *Data) FailsExpiryConflicts() bool { return d != nil && d.ExpiryConflictsFail }

func (d *Data) LedgerBook() *sharedgrants.Book {
	if d == nil {
		return nil
	}
	return d.Book
}

// InstanceCaller sends batch_instance calls: the client itself, or the
// provider's Coalescer, which merges the calls of concurrent resources.
type InstanceCaller interface {
	BatchInstance(ctx context.Context, req bkiam.BatchInstanceRequest) ([]bkiam.PolicyResult, error)
}

// GroupPolicyCache reads each group's permissions once per provider
// process for the refreshes of its resources; an apply forgets the
// group's.
type GroupPolicyCache struct {
	client  *bkiam.Client
	mu      sync.Mutex
	entries map[string]*groupPolicyEntry
	// Warned is set once the missing list permission has been reported.
	Warned atomic.Bool
}

type groupPolicyEntry struct {
	once     sync.Once
	policies []bkiam.GroupPolicy
	err      error
}

func NewGroupPolicyCache(c *bkiam.Client) *GroupPolicyCache {
	return &GroupPolicyCache{client: c, entries: map[string]*groupPolicyEntry{}}
}

func (c *GroupPolicyCache) Get(ctx context.Context, system string, group int64) ([]bkiam.GroupPolicy, error) {
	key := system + "/" + strconv.FormatInt(group, 10)
	c.mu.Lock()
	e := c.entries[key]
	if e == nil {
		e = &groupPolicyEntry{}
		c.entries[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.policies, e.err = c.client.GroupPolicies(ctx, system, group) })
	if e.err != nil && ctx.Err() != nil {
		c.Invalidate(system, strconv.FormatInt(group, 10)) // a cancelled read is not kept
	}
	return e.policies, e.err
}

func (c *GroupPolicyCache) Invalidate(system, group string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.entries, system+"/"+group)
	c.mu.Unlock()
}

// MaxPolicyInstances is IAM's limit of instances per (subject, action,
// resource type) after merging; one resource entry over it can never be
// granted.
const MaxPolicyInstances = 10000

// FromProviderData is the provider's data as a framework resource or data
// source receives it in Configure: nil before the provider is configured.
func FromProviderData(given any, typeName string, diags *diag.Diagnostics) *Data {
	if given == nil {
		return nil
	}
	data, ok := given.(*Data)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("%s got %T; this is a bug in the provider.", typeName, given))
		return nil
	}
	return data
}

// The plan-time scope check of bkiam_group_permission. IAM refuses at apply
// a group permission outside the authorization scope of the group's grade
// manager, and its API offers no way to check first: no route leads from a
// group to its grade manager, and a grade manager's read leaves the scope
// out. What this process plans is known, though: bkiam_grade_manager and
// bkiam_group record here, as they are planned, each grade manager's scope
// and each group's grade manager, and a group permission planned after them
// (its group_id refers to the group, which refers to the grade manager, so
// Terraform plans them first) is checked against the scope as the plan
// leaves it. Where the chain is not known (a literal group_id, a grade
// manager outside the configuration), the check is skipped and IAM's answer
// at apply names the fix. Only what a plan decided is recorded, never what
// a refresh read, so a scope widened by the same plan is the one checked.
type PlannedScopes struct {
	mu            sync.Mutex
	gradeManagers map[string]PlannedGradeManager // by grade manager id
	groups        map[string]string              // group id → grade manager id
}

type PlannedGradeManager struct {
	Name   string
	Scopes []bkiam.AuthorizationScope
}

func NewPlannedScopes() *PlannedScopes {
	return &PlannedScopes{gradeManagers: map[string]PlannedGradeManager{}, groups: map[string]string{}}
}

// SetGradeManager records a grade manager's planned scope; a nil scopes
// (not known, or destroyed) forgets it.
func (p *PlannedScopes) SetGradeManager(id, name string, scopes []bkiam.AuthorizationScope) {
	if p == nil || id == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if scopes == nil {
		delete(p.gradeManagers, id)
		return
	}
	p.gradeManagers[id] = PlannedGradeManager{Name: name, Scopes: scopes}
}

// SetGroup records a group's planned grade manager.
func (p *PlannedScopes) SetGroup(id, gradeManager string) {
	if p == nil || id == "" || gradeManager == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.groups[id] = gradeManager
}

// Of is the planned grade manager of a group, if this process planned both.
func (p *PlannedScopes) Of(group string) (id string, gm PlannedGradeManager, ok bool) {
	if p == nil {
		return "", PlannedGradeManager{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	id, ok = p.groups[group]
	if ok {
		gm, ok = p.gradeManagers[id]
	}
	return id, gm, ok
}

// UserGroupCache reads each user's groups once per provider process: the
// access data sources ask IAM's user-groups route whether it knows the
// user (bkiam.ErrUnknownSubject) before every check, and an audit reads
// one check per user and instance. A failed read is not kept: the next
// asks again. Safe for concurrent use; concurrent reads of one user wait
// for one call.
type UserGroupCache struct{ once readOnce[string, []string] }

func NewUserGroupCache(c *bkiam.Client) *UserGroupCache {
	return &UserGroupCache{once: newReadOnce(c.UserGroups)}
}

// Get returns the ids of the groups user belongs to (bkiam.Client.UserGroups),
// a slice of the caller's own.
func (c *UserGroupCache) Get(ctx context.Context, user string) ([]string, error) {
	groups, err := c.once.get(ctx, user)
	return slices.Clone(groups), err
}

// GroupCheck tells, once per provider process and group, whether IAM
// knows a user group: IAM answers an access check of a group it does not
// know (a typo, a deleted group) as one without permissions. The backend's
// policy query says it in its debug output (bkiam.SubjectRows.Known).
type GroupCheck struct{ once readOnce[groupKey, bool] }

type groupKey struct{ system, group, action string }

func NewGroupCheck(c *bkiam.Client, models *bkiam.ModelCache) *GroupCheck {
	return &GroupCheck{once: newReadOnce(func(ctx context.Context, k groupKey) (bool, error) {
		rows, err := c.QuerySubjectRows(ctx, k.system, bkiam.Subject{Type: bkiam.SubjectGroup, ID: k.group}, []string{k.action},
			models.AskAlone(ctx, k.system))
		if err != nil {
			return false, err
		}
		return rows.Known || rows.AsManager, nil
	})}
}

// Known reports whether IAM knows group, asking the policy query of one
// of the system's actions; bkiam.ErrNoDebug when IAM's answer cannot tell.
func (c *GroupCheck) Known(ctx context.Context, system, group, action string) (bool, error) {
	return c.once.get(ctx, groupKey{system, group, action})
}

// readOnce reads each key once per provider process: concurrent readers of
// a key wait for one read, and a failed read is not kept.
type readOnce[K comparable, V any] struct {
	read    func(context.Context, K) (V, error)
	mu      *sync.Mutex
	entries map[K]*onceEntry[V]
}

type onceEntry[V any] struct {
	done  chan struct{}
	value V
	err   error
}

func newReadOnce[K comparable, V any](read func(context.Context, K) (V, error)) readOnce[K, V] {
	return readOnce[K, V]{read: read, mu: new(sync.Mutex), entries: map[K]*onceEntry[V]{}}
}

func (o readOnce[K, V]) get(ctx context.Context, k K) (V, error) {
	o.mu.Lock()
	e := o.entries[k]
	if e == nil {
		e = &onceEntry[V]{done: make(chan struct{})}
		o.entries[k] = e
		o.mu.Unlock()
		e.value, e.err = o.read(ctx, k)
		if e.err != nil {
			o.mu.Lock()
			delete(o.entries, k)
			o.mu.Unlock()
		}
		close(e.done)
	} else {
		o.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			var zero V
			return zero, ctx.Err()
		}
	}
	return e.value, e.err
}
