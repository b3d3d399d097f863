package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The management API v2 (see the package doc, "The management API"): grade managers, their user
// groups and the groups' members, for the app's own system. Gateway only; every route ends in a
// slash; the SaaS envelope {result, code, message, data} with the error code's own HTTP status,
// except errors of IAM's backend, which come as code 1902000 in HTTP 200.

// ErrManagementNeedsGateway is returned, before any I/O, by the management calls of a client
// configured for ESB.
var ErrManagementNeedsGateway = errors.New("bkiam: the management API needs the API gateway; set apigw_url")

var (
	// ErrConflict is IAM's 1902409: a grade manager or group of that name exists already.
	ErrConflict = errors.New("bkiam: conflict")
	// ErrNotOwned is the 403 IAM answers for a grade manager or group the system did not create
	// through the API — which includes one that no longer exists (IAM checks ownership first, and
	// a deleted object has no owner). A caller that created the object reads it as gone.
	ErrNotOwned = errors.New("bkiam: not created by this system through the API, or gone")
)

// Management limits of the real server (defaults of its settings).
const (
	// MaxGroupsPerCreate is the most groups one batch create takes.
	MaxGroupsPerCreate = 10
	// MaxMembersPerCall is the most members IAM's backend takes in one add or delete.
	MaxMembersPerCall = 1000
	// ManagementPageSize is the page size of the list scans; the server sets no maximum.
	ManagementPageSize = 500
)

// SubjectScope is one entry of a grade manager's subject scope: who its groups may hold.
// Type is "user", "department" or "*" (with ID "*").
type SubjectScope struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// AuthorizationScope is one system's part of what a grade manager may grant.
type AuthorizationScope struct {
	System    string         `json:"system"`
	Actions   []Action       `json:"actions"`
	Resources []PathResource `json:"resources"`
}

// GradeManagerSpec is the body of a grade manager's create, and of its update, which is a full
// replace: an update without SyncPerm deletes the grade manager's sync group.
type GradeManagerSpec struct {
	Name                string               `json:"name"`
	Description         string               `json:"description"`
	Members             []string             `json:"members"`
	AuthorizationScopes []AuthorizationScope `json:"authorization_scopes"`
	SubjectScopes       []SubjectScope       `json:"subject_scopes"`
	SyncPerm            bool                 `json:"sync_perm"`
	GroupName           string               `json:"group_name"`
}

// GradeManager is what IAM reads back of a grade manager: not its scopes nor its sync group's
// name, which no v2 route returns.
type GradeManager struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Members     []string `json:"members"`
	SyncPerm    bool     `json:"sync_perm"`
}

// GroupSpec is one group of a batch create.
type GroupSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Readonly    bool   `json:"readonly,omitempty"`
}

// Group is a row of a grade manager's group list.
type Group struct {
	ID              int64  `json:"id"`
	Name            string `json:"name"`
	Description     string `json:"description"`
	UserCount       int    `json:"user_count"`
	DepartmentCount int    `json:"department_count"`
	Readonly        bool   `json:"readonly"`
}

// MemberRef names a group member: Type "user" or "department".
type MemberRef struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// Member is a row of a group's member list; ExpiredAt is unix seconds (PermanentExpiry for
// permanent). Expired members are listed too.
type Member struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	ExpiredAt int64  `json:"expired_at"`
}

// SystemManager is the group-create id of the system manager's role: groups created under it
// belong to the system itself. They cannot be listed through v2.
const SystemManager = "-"

// managementPath is a route path under the system's management prefix.
func managementPath(system string, parts ...string) string {
	var b strings.Builder
	b.WriteString("/api/v2/open/management/systems/")
	b.WriteString(url.PathEscape(system))
	b.WriteByte('/')
	for _, p := range parts {
		b.WriteString(url.PathEscape(p))
		b.WriteByte('/')
	}
	return b.String()
}

func idString(id int64) string { return strconv.FormatInt(id, 10) }

// manage sends one management call with the client's retries and hands a successful answer's
// data to decode (nil when the caller needs no data).
func (c *Client) manage(ctx context.Context, op, method, path string, q url.Values, payload any, decode func([]byte) error) error {
	if c.cfg.transport != TransportGateway {
		return ErrManagementNeedsGateway
	}
	var wire, loggable []byte
	if payload != nil {
		var err error
		if wire, loggable, err = c.encodeBody(payload); err != nil {
			return err
		}
	}
	ctx = c.logContext(ctx)
	u := c.cfg.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	st := &callState{op: op, url: u, start: time.Now(), loggable: loggable}
	resp, raw, e := c.roundTrip(ctx, st, method, wire)
	if e != nil {
		return e
	}
	defer resp.Body.Close() // the replayable copy left by peekBody; closing it is a no-op
	e = c.interpretInto(op, resp, raw, func(d []byte) error {
		if decode == nil {
			return nil
		}
		return decode(d)
	})
	if e != nil {
		e.Attempts = st.attempts
		e.object = managedObjectOf(path)
		st.logResult(ctx, c, 0, e)
		return e
	}
	st.logResult(ctx, c, 0, nil)
	return nil
}

// wire is the spec as IAM takes it: every list present, empty rather than null (IAM requires
// authorization_scopes[].resources even when an action relates to no type).
func (s GradeManagerSpec) wire() GradeManagerSpec {
	if s.Members == nil {
		s.Members = []string{}
	}
	scopes := make([]AuthorizationScope, len(s.AuthorizationScopes))
	for i, sc := range s.AuthorizationScopes {
		if sc.Actions == nil {
			sc.Actions = []Action{}
		}
		if sc.Resources == nil {
			sc.Resources = []PathResource{}
		}
		scopes[i] = sc
	}
	s.AuthorizationScopes = scopes
	if s.SubjectScopes == nil {
		s.SubjectScopes = []SubjectScope{}
	}
	return s
}

// CreateGradeManager creates a grade manager of the system and returns its id.
func (c *Client) CreateGradeManager(ctx context.Context, system string, spec GradeManagerSpec) (int64, error) {
	spec = spec.wire()
	var out struct {
		ID int64 `json:"id"`
	}
	err := c.manage(ctx, "grade manager create", http.MethodPost, managementPath(system, "grade_managers"), nil, spec, func(d []byte) error {
		if err := json.Unmarshal(d, &out); err != nil || out.ID <= 0 {
			return fmt.Errorf("data is not a created grade manager's id: %s", d)
		}
		return nil
	})
	return out.ID, err
}

// GradeManager reads a grade manager back. One the system did not create, or that is gone, is
// ErrNotOwned.
func (c *Client) GradeManager(ctx context.Context, system string, id int64) (*GradeManager, error) {
	var out GradeManager
	err := c.manage(ctx, "grade manager get", http.MethodGet, managementPath(system, "grade_managers", idString(id)), nil, nil, func(d []byte) error {
		if err := json.Unmarshal(d, &out); err != nil || out.ID != id {
			return fmt.Errorf("data is not grade manager %d: %s", id, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateGradeManager replaces a grade manager whole (see GradeManagerSpec).
func (c *Client) UpdateGradeManager(ctx context.Context, system string, id int64, spec GradeManagerSpec) error {
	return c.manage(ctx, "grade manager update", http.MethodPut, managementPath(system, "grade_managers", idString(id)), nil, spec.wire(), nil)
}

// DeleteGradeManager asks IAM to delete a grade manager with its groups. IAM answers at once and
// deletes later: the grade manager reads as ErrNotOwned once it is gone.
func (c *Client) DeleteGradeManager(ctx context.Context, system string, id int64) error {
	return c.manage(ctx, "grade manager delete", http.MethodDelete, managementPath(system, "grade_managers", idString(id)), nil, nil, nil)
}

// CreateGroups creates up to MaxGroupsPerCreate groups under a grade manager (SystemManager for
// the system's own) and returns their ids in the order given.
func (c *Client) CreateGroups(ctx context.Context, system, gradeManager string, groups []GroupSpec) ([]int64, error) {
	if len(groups) == 0 || len(groups) > MaxGroupsPerCreate {
		return nil, invalid("group create", "%d groups, want 1 to %d", len(groups), MaxGroupsPerCreate)
	}
	body := struct {
		Groups []GroupSpec `json:"groups"`
	}{groups}
	var ids []int64
	err := c.manage(ctx, "group create", http.MethodPost, managementPath(system, "grade_managers", gradeManager, "groups"), nil, body, func(d []byte) error {
		if err := json.Unmarshal(d, &ids); err != nil || len(ids) != len(groups) {
			return fmt.Errorf("data is not the ids of %d created groups: %s", len(groups), d)
		}
		return nil
	})
	return ids, err
}

// GroupFilter narrows ListGroups: ID exactly; Name and Description as IAM filters them, a
// case-insensitive substring (callers that want one name match it again); Action to the groups
// holding a policy of that action in the path's system (IAM's action_id, custom and template
// policies alike).
type GroupFilter struct {
	ID          int64
	Name        string
	Description string
	Action      string
}

// ListGroups reads every group of a grade manager matching f, its own only (not its subset
// managers'), newest first, in pages.
func (c *Client) ListGroups(ctx context.Context, system string, gradeManager int64, f GroupFilter) ([]Group, error) {
	var all []Group
	err := c.EachGroup(ctx, system, gradeManager, f, func(g Group) bool {
		all = append(all, g)
		return true
	})
	return all, err
}

// EachGroup hands each group of a grade manager matching f to yield, page by page, until
// yield returns false: what a listing of thousands of groups streams without holding them.
func (c *Client) EachGroup(ctx context.Context, system string, gradeManager int64, f GroupFilter, yield func(Group) bool) error {
	q := url.Values{}
	q.Set("inherit", "false")
	if f.ID != 0 {
		q.Set("id", idString(f.ID))
	}
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	if f.Description != "" {
		q.Set("description", f.Description)
	}
	if f.Action != "" {
		q.Set("action_id", f.Action)
	}
	return c.pages(ctx, "group list", managementPath(system, "grade_managers", idString(gradeManager), "groups"), q, func(d json.RawMessage) error {
		var g Group
		if err := json.Unmarshal(d, &g); err != nil || g.ID <= 0 {
			return fmt.Errorf("a group list row that is not a group: %s", d)
		}
		if !yield(g) {
			return errStopPaging
		}
		return nil
	})
}

// errStopPaging ends a paged read early, without an error: the caller has what it wants.
var errStopPaging = errors.New("bkiam: stop paging")

// UpdateGroup renames a group or changes its description. IAM keeps a field sent empty: a
// description cannot be cleared.
func (c *Client) UpdateGroup(ctx context.Context, system string, id int64, name, description string) error {
	body := map[string]string{}
	if name != "" {
		body["name"] = name
	}
	if description != "" {
		body["description"] = description
	}
	return c.manage(ctx, "group update", http.MethodPut, managementPath(system, "groups", idString(id)), nil, body, nil)
}

// DeleteGroup deletes a group with its members and policies.
func (c *Client) DeleteGroup(ctx context.Context, system string, id int64) error {
	return c.manage(ctx, "group delete", http.MethodDelete, managementPath(system, "groups", idString(id)), nil, nil, nil)
}

// GroupMembers reads every member of a group, expired ones included.
func (c *Client) GroupMembers(ctx context.Context, system string, group int64) ([]Member, error) {
	var all []Member
	err := c.pages(ctx, "member list", managementPath(system, "groups", idString(group), "members"), url.Values{}, func(d json.RawMessage) error {
		var m Member
		if err := json.Unmarshal(d, &m); err != nil || m.Type == "" || m.ID == "" {
			return fmt.Errorf("a member list row that is not a member: %s", d)
		}
		all = append(all, m)
		return nil
	})
	return all, err
}

// GroupMemberCount reads how many members (users and departments, expired ones included) a
// group has: one call, the member list's count over a page of one row.
func (c *Client) GroupMemberCount(ctx context.Context, system string, group int64) (int, error) {
	q := url.Values{"page": {"1"}, "page_size": {"1"}}
	var count int
	err := c.manage(ctx, "member count", http.MethodGet, managementPath(system, "groups", idString(group), "members"), q, nil, func(d []byte) error {
		var w struct {
			Count *int `json:"count"`
		}
		if err := json.Unmarshal(d, &w); err != nil || w.Count == nil {
			return fmt.Errorf("data is not a paged list: %s", d)
		}
		count = *w.Count
		return nil
	})
	return count, err
}

// AddMembers adds up to MaxMembersPerCall members with one expiry. IAM raises the expiry of a
// member already in the group, never lowers it, and silently drops admin and unknown users.
func (c *Client) AddMembers(ctx context.Context, system string, group int64, members []MemberRef, expiredAt int64) error {
	return c.sendMembers(ctx, "member add", http.MethodPost, managementPath(system, "groups", idString(group), "members"), members, expiredAt)
}

// RaiseMemberExpiry raises the expiry of up to MaxMembersPerCall members of the group to
// expiredAt (PUT groups/{id}/members/-/expired_at/, allow-list name
// v2_group_member_expired_at_update). IAM ignores members not in the group and never lowers an
// expiry; unlike an add, it does not count the group's members against the member limit, so it is
// how a whole group is renewed.
func (c *Client) RaiseMemberExpiry(ctx context.Context, system string, group int64, members []MemberRef, expiredAt int64) error {
	return c.sendMembers(ctx, "member expiry update", http.MethodPut,
		managementPath(system, "groups", idString(group), "members", "-", "expired_at"), members, expiredAt)
}

// sendMembers sends the body the member add and the expiry update share: members with one expiry.
func (c *Client) sendMembers(ctx context.Context, op, method, path string, members []MemberRef, expiredAt int64) error {
	if err := checkMemberBatch(op, members); err != nil {
		return err
	}
	body := struct {
		Members   []MemberRef `json:"members"`
		ExpiredAt int64       `json:"expired_at"`
	}{members, expiredAt}
	return c.manage(ctx, op, method, path, nil, body, nil)
}

// DeleteMembers removes up to MaxMembersPerCall members of one type ("user" or "department").
func (c *Client) DeleteMembers(ctx context.Context, system string, group int64, typ string, ids []string) error {
	if len(ids) == 0 || len(ids) > MaxMembersPerCall {
		return invalid("member delete", "%d members, want 1 to %d", len(ids), MaxMembersPerCall)
	}
	for _, id := range ids {
		if id == "" || strings.Contains(id, ",") {
			return invalid("member delete", "member id %q is empty or holds a comma", id)
		}
	}
	q := url.Values{}
	q.Set("type", typ)
	q.Set("ids", strings.Join(ids, ","))
	return c.manage(ctx, "member delete", http.MethodDelete, managementPath(system, "groups", idString(group), "members"), q, nil, nil)
}

func checkMemberBatch(op string, members []MemberRef) error {
	if len(members) == 0 || len(members) > MaxMembersPerCall {
		return invalid(op, "%d members, want 1 to %d", len(members), MaxMembersPerCall)
	}
	for _, m := range members {
		if m.Type != "user" && m.Type != "department" {
			return invalid(op, "member type %q, want user or department", m.Type)
		}
	}
	return nil
}

// pages reads a paged v2 list ({count, results}) to its end, handing each row to row.
func (c *Client) pages(ctx context.Context, op, path string, q url.Values, row func(json.RawMessage) error) error {
	q.Set("page_size", strconv.Itoa(ManagementPageSize))
	for page := 1; ; page++ {
		q.Set("page", strconv.Itoa(page))
		var count, got int
		stopped := false
		err := c.manage(ctx, fmt.Sprintf("%s, page %d", op, page), http.MethodGet, path, q, nil, func(d []byte) error {
			var w struct {
				Count   *int              `json:"count"`
				Results []json.RawMessage `json:"results"`
			}
			if err := json.Unmarshal(d, &w); err != nil || w.Count == nil {
				return fmt.Errorf("data is not a paged list: %s", d)
			}
			count, got = *w.Count, len(w.Results)
			for _, r := range w.Results {
				if err := row(r); errors.Is(err, errStopPaging) {
					stopped = true
					return nil
				} else if err != nil {
					return err
				}
			}
			return nil
		})
		if stopped {
			return nil
		}
		if err != nil {
			if page > 1 && errors.Is(err, ErrNotFound) {
				// The list shrank under the read: the group and v1 grade-manager lists answer a
				// page number past their end with 404 1902404.
				return nil
			}
			return err
		}
		if page*ManagementPageSize >= count || got == 0 {
			return nil
		}
	}
}

// GradeManagerInfo is a row of the grade-manager list.
type GradeManagerInfo struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// GradeManagersNamed lists the grade managers the system created through the management API whose
// name is exactly name. No v2 route lists grade managers: this is the v1 list (GET
// /api/v1/open/management/grade_managers/?system=, allow-list name grade_manager_list), whose name
// filter is a case-insensitive substring, so its answer is filtered again. It is how a create whose
// answer was lost finds what IAM made.
func (c *Client) GradeManagersNamed(ctx context.Context, system, name string) ([]GradeManagerInfo, error) {
	all, err := c.listGradeManagers(ctx, system, name)
	out := all[:0]
	for _, gm := range all {
		if gm.Name == name {
			out = append(out, gm)
		}
	}
	return out, err
}

// GradeManagers lists every grade manager the system created through the management API (the v1
// list, as GradeManagersNamed). It is how a refresh confirms that one is gone.
func (c *Client) GradeManagers(ctx context.Context, system string) ([]GradeManagerInfo, error) {
	return c.listGradeManagers(ctx, system, "")
}

func (c *Client) listGradeManagers(ctx context.Context, system, name string) ([]GradeManagerInfo, error) {
	var out []GradeManagerInfo
	err := c.EachGradeManager(ctx, system, name, func(gm GradeManagerInfo) bool {
		out = append(out, gm)
		return true
	})
	return out, err
}

// EachGradeManager hands each grade manager the system created through the management API
// whose name contains name (case-insensitively; "" for all) to yield, page by page, until
// yield returns false.
func (c *Client) EachGradeManager(ctx context.Context, system, name string, yield func(GradeManagerInfo) bool) error {
	q := url.Values{}
	q.Set("system", system)
	if name != "" {
		q.Set("name", name)
	}
	return c.pages(ctx, "grade manager list", "/api/v1/open/management/grade_managers/", q, func(d json.RawMessage) error {
		var gm GradeManagerInfo
		if err := json.Unmarshal(d, &gm); err != nil || gm.ID <= 0 {
			return fmt.Errorf("a grade manager list row that is not a grade manager: %s", d)
		}
		if !yield(gm) {
			return errStopPaging
		}
		return nil
	})
}

// GroupByName finds the grade manager's group named exactly name: IAM's name filter is a
// case-insensitive substring, so its answer is filtered again. Nil when there is none.
func (c *Client) GroupByName(ctx context.Context, system string, gradeManager int64, name string) (*Group, error) {
	groups, err := c.ListGroups(ctx, system, gradeManager, GroupFilter{Name: name})
	if err != nil {
		return nil, err
	}
	for i := range groups {
		if groups[i].Name == name {
			return &groups[i], nil
		}
	}
	return nil, nil
}

// ErrNoGroupAttributes is SyncGroupIDs' answer when a row of IAM's v1 group list has no
// attributes (a SaaS older than the list's attributes): the marks cannot be read.
var ErrNoGroupAttributes = errors.New("bkiam: IAM's v1 group list answers no group attributes")

// SyncGroupIDs are the ids of the groups IAM marks as a sync group (sync_perm) among the groups of
// a grade manager and of its subset managers. The SaaS gives the group it builds for sync_perm the
// product attribute source_from_role, and no other group: the attribute stays through a rename
// (the web UI's, or group_name's) and goes with the group when sync_perm is turned off. Of the
// management API only the v1 group list answers it (GET
// /api/v1/open/management/grade_managers/{id}/groups/, allow-list name group_list, checked for
// the system that created the grade manager; rows {id, name, description, attributes:
// {source_type, source_from_role}}, newest first, no filters).
func (c *Client) SyncGroupIDs(ctx context.Context, gradeManager int64) (map[int64]bool, error) {
	ids := map[int64]bool{}
	path := "/api/v1/open/management/grade_managers/" + idString(gradeManager) + "/groups/"
	err := c.pages(ctx, "v1 group list", path, url.Values{}, func(d json.RawMessage) error {
		var g struct {
			ID         int64 `json:"id"`
			Attributes *struct {
				SourceFromRole *bool `json:"source_from_role"`
			} `json:"attributes"`
		}
		if err := json.Unmarshal(d, &g); err != nil || g.ID <= 0 {
			return fmt.Errorf("a v1 group list row that is not a group: %s", d)
		}
		if g.Attributes == nil || g.Attributes.SourceFromRole == nil {
			return ErrNoGroupAttributes
		}
		if *g.Attributes.SourceFromRole {
			ids[g.ID] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// GroupPolicyRequest is a grant or revoke of a group's custom permissions: actions that share one
// list of resource types, each type with the instance paths. System is the actions' system (the
// path's when empty).
type GroupPolicyRequest struct {
	System    string         `json:"system,omitempty"`
	Actions   []Action       `json:"actions"`
	Resources []PathResource `json:"resources"`
}

// checkGroupPolicy refuses, before any I/O, a request IAM would read as more than it says: a
// resource type without paths means every instance of it.
func checkGroupPolicy(op string, req GroupPolicyRequest) error {
	if len(req.Actions) == 0 {
		return invalid(op, "no actions")
	}
	for _, r := range req.Resources {
		if len(r.Paths) == 0 {
			return invalid(op, "resource type %s/%s without paths (IAM would read every instance)", r.System, r.Type)
		}
		for _, p := range r.Paths {
			if len(p) == 0 {
				return invalid(op, "an empty path of resource type %s/%s", r.System, r.Type)
			}
		}
	}
	return nil
}

// GrantGroupPolicies merges a grant into the group's custom permissions (permanent, as every group
// policy is). IAM refuses, with 400 1902412, what the owning grade manager's authorization scope
// does not cover.
func (c *Client) GrantGroupPolicies(ctx context.Context, system string, group int64, req GroupPolicyRequest) error {
	if err := checkGroupPolicy("group policy grant", req); err != nil {
		return err
	}
	req.Resources = nonNilResources(req.Resources)
	return c.manage(ctx, "group policy grant", http.MethodPost, managementPath(system, "groups", idString(group), "policies"), nil, req, nil)
}

// RevokeGroupPolicies subtracts paths from the group's custom permissions; a policy left empty is
// deleted. (Never DELETE …/actions/-/policies/: IAM deletes every custom policy of the group in
// the system through it, whatever actions it names.)
func (c *Client) RevokeGroupPolicies(ctx context.Context, system string, group int64, req GroupPolicyRequest) error {
	if err := checkGroupPolicy("group policy revoke", req); err != nil {
		return err
	}
	req.Resources = nonNilResources(req.Resources)
	return c.manage(ctx, "group policy revoke", http.MethodDelete, managementPath(system, "groups", idString(group), "policies"), nil, req, nil)
}

// nonNilResources is rs, or an empty list: IAM's grant and revoke take "resources": [] for an
// action related to no resource type, and refuse null with 400 1902412 ("This field may not be
// null.").
func nonNilResources(rs []PathResource) []PathResource {
	if rs == nil {
		return []PathResource{}
	}
	return rs
}

// GroupPolicy is a group's custom policy as IAM lists it, reduced to what it means.
type GroupPolicy struct {
	Action   string
	PolicyID int64
	// ResourceGroups are the policy's resource groups (one per granted combination for an action
	// related to several types), each the related types in order; none for an action related to no
	// type.
	ResourceGroups [][]TypedPaths
}

// TypedPaths is one resource type of a resource group and its instance paths; Any (no paths)
// means every instance of the type. Attributes is set when a condition also (or only) holds
// instances by their attributes (the web UI's 属性 conditions), which Paths leave out.
type TypedPaths struct {
	System     string
	Type       string
	Paths      [][]PathNode
	Any        bool
	Attributes bool
}

// GroupPolicies lists the group's custom policies in the system (not paged). IAM answers them in a
// normalised shape with ids generated on every grant; compare them by action, type and path.
// The route's allow-list entry (group_policy_list) can in practice only be granted as "*".
func (c *Client) GroupPolicies(ctx context.Context, system string, group int64) ([]GroupPolicy, error) {
	var out []GroupPolicy
	err := c.manage(ctx, "group policy list", http.MethodGet, managementPath(system, "groups", idString(group), "policies"), nil, nil, func(d []byte) error {
		var rows []struct {
			ID             string `json:"id"`
			PolicyID       int64  `json:"policy_id"`
			ResourceGroups []struct {
				RelatedResourceTypes []struct {
					SystemID  string `json:"system_id"`
					Type      string `json:"type"`
					Condition []struct {
						Attributes []json.RawMessage `json:"attributes"`
						Instances  []struct {
							Path [][]struct {
								SystemID string `json:"system_id"`
								Type     string `json:"type"`
								ID       string `json:"id"`
								Name     string `json:"name"`
							} `json:"path"`
						} `json:"instances"`
					} `json:"condition"`
				} `json:"related_resource_types"`
			} `json:"resource_groups"`
		}
		if err := json.Unmarshal(d, &rows); err != nil {
			return fmt.Errorf("data is not a list of group policies: %w", err)
		}
		for _, r := range rows {
			if r.ID == "" {
				return fmt.Errorf("a group policy without an action: %s", d)
			}
			p := GroupPolicy{Action: r.ID, PolicyID: r.PolicyID}
			for _, rg := range r.ResourceGroups {
				var group []TypedPaths
				for _, rt := range rg.RelatedResourceTypes {
					tp := TypedPaths{System: rt.SystemID, Type: rt.Type, Any: len(rt.Condition) == 0}
					for _, cond := range rt.Condition {
						tp.Attributes = tp.Attributes || len(cond.Attributes) > 0
						for _, in := range cond.Instances {
							for _, path := range in.Path {
								nodes := make([]PathNode, len(path))
								for i, n := range path {
									nodes[i] = PathNode{System: n.SystemID, Type: n.Type, ID: n.ID, Name: n.Name}
								}
								tp.Paths = append(tp.Paths, nodes)
							}
						}
					}
					group = append(group, tp)
				}
				if len(group) > 0 {
					p.ResourceGroups = append(p.ResourceGroups, group)
				}
			}
			out = append(out, p)
		}
		return nil
	})
	return out, err
}
