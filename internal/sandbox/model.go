package sandbox

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

//go:embed default_model.json
var defaultModelJSON []byte

// Model is the permission model the sandbox serves: what the real server learns from system
// registration (resource types, actions, creator config), from the user directory, from the PaaS app
// registry and from IAM's allow-list. The JSON format is documented in doc.go.
type Model struct {
	Systems []System `json:"systems"`
	Users   []string `json:"users"`
	Groups  []string `json:"groups"`
	// DirectoryUsers are users the organisation's user directory knows and IAM has not synced yet.
	// The authorization API syncs such a user on first use (IAM then knows them for good); the
	// management API's member add does not, and drops them silently, as it drops unknown users.
	DirectoryUsers []string `json:"directory_users,omitempty"`
	// Departments are the organisation's department ids (numeric), for group members.
	Departments []string `json:"departments,omitempty"`
	// DepartmentParents places departments in the organisation's tree (department → parent);
	// UserDepartments are the departments each user belongs to directly. A grade manager's subject
	// scope admits a user through any of them or their ancestors.
	DepartmentParents map[string]string   `json:"department_parents,omitempty"`
	UserDepartments   map[string][]string `json:"user_departments,omitempty"`
	Apps              []App               `json:"apps"`
	Tokens            map[string]string   `json:"tokens,omitempty"`
	Limits            Limits              `json:"limits"`
	// SuperManagers are the users holding IAM's super manager role, SystemManagers (system →
	// users) those holding a system's manager role. The backend's access checks allow them, and
	// admin, everything in the system without reading a policy; no other route reads these.
	SuperManagers  []string            `json:"super_managers,omitempty"`
	SystemManagers map[string][]string `json:"system_managers,omitempty"`
	// Quirks are the real server's bugs the sandbox reproduces, each of which can be turned off.
	Quirks Quirks `json:"quirks,omitempty"`
	// Gateway is the generation of the bk-iam gateway's resource list the sandbox plays: "" or
	// "2024" (before 2026: no admin resources; the backend's users/{id}/groups open to every app),
	// or "2026" (admin resources added; they and users/{id}/groups need a per-app grant, GatewayGrants).
	Gateway string `json:"gateway,omitempty"`
	// SaaS is the release of IAM's SaaS the sandbox plays: "" or "2025" (the SaaS as its source
	// was read, through July 2025), or "2026" (the release of July 2026: the management object
	// allow-list, App.ManagementObjects, and a cap on membership expiries; saas_release.go).
	SaaS string `json:"saas,omitempty"`

	systems     map[string]*System
	users       map[string]bool
	directory   map[string]bool
	groups      map[string]bool
	departments map[string]bool
	apps        map[string]*App
}

// System is one registered system.
type System struct {
	ID             string          `json:"id"`
	ResourceTypes  []ResourceType  `json:"resource_types"`
	Actions        []Action        `json:"actions"`
	CreatorActions []CreatorConfig `json:"creator_actions,omitempty"`
	AllowList      AllowList       `json:"allow_list"`
	// AllowAuthSystems are the other systems (or "*") whose actions this system may put in the
	// authorization scopes of the grade managers it creates: IAM's SystemAllowAuthSystem table. A
	// system may always use its own.
	AllowAuthSystems []string `json:"allow_auth_systems,omitempty"`
	// TemplatePolicies are policies that groups hold through permission templates: rows beside the
	// custom policy that batch_instance writes, listed by the read routes and never touched by a
	// grant or revoke. They are seeded on start and after a reset.
	TemplatePolicies []TemplatePolicy `json:"template_policies,omitempty"`

	types   map[string]*ResourceType
	actions map[string]*Action
}

// ResourceType is a resource type; Instances are the instance names the system's callback knows
// (used to resolve ancestor names on creator grants; an ancestor not listed is unknown). Parents
// are type references (see typeRef): "biz" of the same system, or "bk_cmdb:biz" of another.
type ResourceType struct {
	ID        string            `json:"id"`
	Name      string            `json:"name,omitempty"`
	NameEn    string            `json:"name_en,omitempty"`
	Parents   []string          `json:"parents,omitempty"`
	Instances map[string]string `json:"instances,omitempty"`

	// parents are Parents resolved at load.
	parents []typeRef
}

// Action is a registered action with its related resource types (in order; several = a combined
// resource; none = an action without instances). RelatedTypes are type references as the model
// gives them (see typeRef): "host" of the action's own system, or "bk_cmdb:host" of another, as
// bk_job's actions relate to CMDB's business and host.
type Action struct {
	ID            string   `json:"id"`
	Name          string   `json:"name,omitempty"`
	NameEn        string   `json:"name_en,omitempty"`
	Hidden        bool     `json:"hidden,omitempty"`
	RelatedTypes  []string `json:"related_types"`
	IgnoreIAMPath bool     `json:"ignore_iam_path,omitempty"`
	// AuthType is the model's auth_type: "abac" (the default when empty), "rbac" or "all". A group's
	// single-type instance policy of an rbac or all action is stored as RBAC relations and listed
	// only with ?type=rbac.
	AuthType string `json:"auth_type,omitempty"`

	// system is the action's own system; related are RelatedTypes resolved at load, and typeIDs
	// their type ids, in the same order. Everything that compares a resource with the action
	// compares it with related (system and type); what is keyed by type alone (stored paths per
	// type, expression fields, the evaluation's resources) uses typeIDs, which the load keeps
	// distinct, as the backend's expressions drop the system ("biz.id").
	system  string
	related []typeRef
	typeIDs []string

	// chains holds, for each related type, the length of the chain of the one instance selection
	// the sandbox derives for it (Model.chain: its first parents, root first, and itself), the
	// selection the model query answers. The ignore_iam_path collapse applies only to paths of
	// that length, as the real server's to those of the first matching selection's chain.
	chains map[string]int
}

// typeRef names a resource type of a system of the model. In a model file it is written "type"
// (a type of the system the reference is made in) or "system:type" (a type of another system).
type typeRef struct {
	System string
	Type   string
}

func (r typeRef) String() string { return r.System + ":" + r.Type }

// relatesTo reports whether the action relates to the type of system.
func (a *Action) relatesTo(system, typ string) bool {
	return slices.Contains(a.related, typeRef{System: system, Type: typ})
}

// typeSystem is the system of the action's related type typ ("" when it relates to none of that id).
func (a *Action) typeSystem(typ string) string {
	for _, r := range a.related {
		if r.Type == typ {
			return r.System
		}
	}
	return ""
}

// chainLen is the instance-selection chain length used by the ignore_iam_path collapse for typ: the
// length of its instance selection's chain (Model.chain).
func (a *Action) chainLen(typ string) int {
	return a.chains[typ]
}

// TemplatePolicy is one group's policy held through a permission template (see
// System.TemplatePolicies). Paths are inspection strings ("/bk_cmdb,host,1/"); none means any
// instance. ExpiredAt 0 means permanent.
type TemplatePolicy struct {
	TemplateID int64  `json:"template_id"`
	Group      string `json:"group,omitempty"`
	// User, instead of Group, is a user the template was granted to, as an older IAM granted
	// templates to users too (the current web UI binds them to groups).
	User      string   `json:"user,omitempty"`
	Action    string   `json:"action"`
	Paths     []string `json:"paths,omitempty"`
	ExpiredAt int64    `json:"expired_at,omitempty"`
}

// rbac reports whether the action's group policies of one type are stored as RBAC relations.
func (a *Action) rbac() bool {
	return (a.AuthType == "rbac" || a.AuthType == "all") && len(a.related) == 1
}

// CreatorConfig is one node of the resource-creator-actions tree.
type CreatorConfig struct {
	ID               string          `json:"id"`
	Actions          []CreatorAction `json:"actions"`
	SubResourceTypes []CreatorConfig `json:"sub_resource_types,omitempty"`
}

// CreatorAction is an action granted to a creator; Required is read and ignored, like the server.
type CreatorAction struct {
	ID       string `json:"id"`
	Required bool   `json:"required"`
}

// AllowList is IAM's API allow-list for one system: the actions batch_instance/batch_path may grant,
// and the resource types batch_resource_creator_action may grant for. "*" allows all.
type AllowList struct {
	InstanceActions []string `json:"instance_actions"`
	CreatorTypes    []string `json:"creator_types"`
}

// App is a PaaS application: its secret, the systems it is a registered IAM client of ("*" = all),
// and whether ESB lets it name a user with bk_username (the skip-login whitelist).
type App struct {
	Code         string   `json:"code"`
	Secret       string   `json:"secret"`
	ClientOf     []string `json:"client_of"`
	ESBSkipLogin bool     `json:"esb_skip_login,omitempty"`
	// Management is IAM's management-API allow-list as it applies to the app's calls: system id
	// (or "*") → the management API names it may call ("v2_grade_manager_create", …, or "*").
	Management map[string][]string `json:"management,omitempty"`
	// Admin is IAM's admin-API allow-list for the app (AdminAPIAllowListConfig, keyed by app code,
	// no system): the admin API names it may call ("subject_permission_cleanup", …, or "*").
	Admin []string `json:"admin,omitempty"`
	// GatewayGrants are the bk-iam gateway resources granted to the app by name
	// ("admin_cleanup_users_permission", "open_user_groups", …, or "*"). Only a gateway of the 2026
	// generation asks for them (Model.Gateway).
	GatewayGrants []string `json:"gateway_grants,omitempty"`
	// ManagementObjects are the app's rows of the management object allow-list of the 2026 SaaS:
	// the management APIs it may call on one grade manager or group whatever system created it.
	ManagementObjects []ManagementObject `json:"management_objects,omitempty"`
}

// mayAdmin reports whether the admin allow-list lets the app call api.
func (a *App) mayAdmin(api string) bool {
	return slices.Contains(a.Admin, "*") || slices.Contains(a.Admin, api)
}

// granted reports whether the gateway grants the app the resource.
func (a *App) granted(resource string) bool {
	return slices.Contains(a.GatewayGrants, "*") || slices.Contains(a.GatewayGrants, resource)
}

// mayManage reports whether the management allow-list lets the app call api for system.
func (a *App) mayManage(system, api string) bool {
	for _, key := range []string{system, "*"} {
		for _, name := range a.Management[key] {
			if name == "*" || name == api {
				return true
			}
		}
	}
	return false
}

// Quirks are the real server's bugs the sandbox reproduces by default.
type Quirks struct {
	// GroupPolicyDeleteIgnoresActions: DELETE …/groups/{id}/actions/-/policies/ deletes every custom
	// policy of the group in the system, whatever actions it names (the SaaS evaluates its action
	// filter and throws the result away). Absent or true reproduces it; false deletes only the
	// actions named.
	GroupPolicyDeleteIgnoresActions *bool `json:"group_policy_delete_ignores_actions,omitempty"`
}

func (q Quirks) groupPolicyDeleteIgnoresActions() bool {
	return q.GroupPolicyDeleteIgnoresActions == nil || *q.GroupPolicyDeleteIgnoresActions
}

// Limits are the server settings that bound a call; zero means the real server's default.
type Limits struct {
	GrantInstances   int `json:"grant_instances"`
	RevokeInstances  int `json:"revoke_instances"`
	InstanceIDLength int `json:"instance_id_length"`
	PolicyInstances  int `json:"policy_instances"`
	// GradeManagerDeleteDelayMS is how long a grade-manager delete takes to be carried out (IAM
	// answers at once and deletes in a background task); 0 means 2000.
	GradeManagerDeleteDelayMS int `json:"grade_manager_delete_delay_ms,omitempty"`
	// CleanupDelayMS is how long a leaver cleanup of the admin API takes to be carried out (IAM
	// answers at once and cleans in a background task); 0 means 500.
	CleanupDelayMS int `json:"cleanup_delay_ms,omitempty"`
	// GroupMemberLimit is how many users and departments one group may hold (the SaaS setting
	// BKAPP_GROUP_MEMBER_LIMIT); 0 means 1000, the SaaS default.
	GroupMemberLimit int `json:"group_member_limit,omitempty"`
	// SubjectMaxGroups is how many groups with permissions in one system a user or department may
	// be a member of (the backend's subject_max_groups_limit); 0 means 100, its default.
	SubjectMaxGroups int `json:"subject_max_groups,omitempty"`
	// GradeManagersPerSystem is how many grade managers one system may create through the API (the
	// SaaS setting BKAPP_DEFAULT_GRADE_MANAGER_OF_SYSTEM_LIMIT); 0 means 500, its default.
	GradeManagersPerSystem int `json:"grade_managers_per_system,omitempty"`
	// MemberExpiryMaxDays is how far from now the 2026 SaaS lets a member add or expiry update
	// set a membership's expiry (permanent aside); 0 means 730, two years.
	MemberExpiryMaxDays int `json:"member_expiry_max_days,omitempty"`
}

// gradeManagersPerSystem is how many grade managers one system may create through the API.
func (m *Model) gradeManagersPerSystem() int {
	if m.Limits.GradeManagersPerSystem > 0 {
		return m.Limits.GradeManagersPerSystem
	}
	return 500
}

// subjectMaxGroups is how many groups with permissions in one system a subject may be in.
func (m *Model) subjectMaxGroups() int {
	if m.Limits.SubjectMaxGroups > 0 {
		return m.Limits.SubjectMaxGroups
	}
	return 100
}

// groupMemberLimit is how many users and departments one group may hold.
func (m *Model) groupMemberLimit() int {
	if m.Limits.GroupMemberLimit > 0 {
		return m.Limits.GroupMemberLimit
	}
	return defaultGroupMemberLimit
}

// maxGroupID is the highest group id of the model (0 without groups).
func (m *Model) maxGroupID() int64 {
	var n int64
	for g := range m.groups {
		v, _ := strconv.ParseInt(g, 10, 64)
		n = max(n, v)
	}
	return n
}

// gradeManagerDeleteDelay is how long IAM takes to carry out a grade-manager delete.
func (m *Model) gradeManagerDeleteDelay() time.Duration {
	if m.Limits.GradeManagerDeleteDelayMS > 0 {
		return time.Duration(m.Limits.GradeManagerDeleteDelayMS) * time.Millisecond
	}
	return defaultGradeManagerDeleteDelay
}

// The real server's defaults (BKAPP_AUTHORIZATION_INSTANCE_LIMIT etc.).
const (
	defaultGrantLimit  = 200
	defaultRevokeLimit = 1000
	defaultIDLength    = 36
	defaultPolicyLimit = 10000
	// defaultGroupMemberLimit is the SaaS's group_member_limit.
	defaultGroupMemberLimit = 1000
	permanentExpiredAt      = 4102444800
	defaultUserExpirySec    = 365 * 24 * 3600
	// expiredPolicyKeepSec is how long the real IAM keeps a user's expired custom policy before its
	// daily housekeeping deletes it (the SaaS's MAX_EXPIRED_POLICY_DELETE_TIME, one year).
	expiredPolicyKeepSec = 365 * 24 * 3600
)

// DefaultModel returns a fresh copy of the embedded default model described in the contract.
func DefaultModel() *Model {
	m, err := LoadModel(defaultModelJSON)
	if err != nil {
		panic("sandbox: embedded default model is invalid: " + err.Error())
	}
	return m
}

// LoadModelFile reads and validates a model file.
func LoadModelFile(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read model: %w", err)
	}
	m, err := LoadModel(data)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	return m, nil
}

// LoadModel parses and validates a JSON model. Unknown fields are rejected so that a typo in a model
// file is an error rather than a silently missing setting.
func LoadModel(data []byte) (*Model, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Model
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("parse model: %w", err)
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// validate checks the model and builds its lookup indexes; errors name the bad field.
func (m *Model) validate() error {
	if m.Limits.GrantInstances == 0 {
		m.Limits.GrantInstances = defaultGrantLimit
	}
	if m.Limits.RevokeInstances == 0 {
		m.Limits.RevokeInstances = defaultRevokeLimit
	}
	if m.Limits.InstanceIDLength == 0 {
		m.Limits.InstanceIDLength = defaultIDLength
	}
	if m.Limits.PolicyInstances == 0 {
		m.Limits.PolicyInstances = defaultPolicyLimit
	}
	for name, v := range map[string]int{"grant_instances": m.Limits.GrantInstances, "revoke_instances": m.Limits.RevokeInstances,
		"instance_id_length": m.Limits.InstanceIDLength, "policy_instances": m.Limits.PolicyInstances} {
		if v < 0 {
			return fmt.Errorf("limits.%s: must not be negative, got %d", name, v)
		}
	}
	if len(m.Systems) == 0 {
		return fmt.Errorf("systems: at least one system is required")
	}
	m.systems = map[string]*System{}
	for i := range m.Systems {
		s := &m.Systems[i]
		at := fmt.Sprintf("systems[%d]", i)
		if s.ID == "" {
			return fmt.Errorf("%s.id: required", at)
		}
		if m.systems[s.ID] != nil {
			return fmt.Errorf("%s.id: duplicate system %q", at, s.ID)
		}
		m.systems[s.ID] = s
		if err := s.indexTypes(at); err != nil {
			return err
		}
	}
	// The rest of each system once every system's types are known: parents and related types may
	// name another system's.
	for i := range m.Systems {
		if err := m.Systems[i].validate(fmt.Sprintf("systems[%d]", i), m); err != nil {
			return err
		}
	}
	// The ignore_iam_path collapse's chain lengths once every system's parents are resolved: an
	// action may relate to another system's type, whose chain is that system's.
	for i := range m.Systems {
		for j := range m.Systems[i].Actions {
			a := &m.Systems[i].Actions[j]
			a.chains = map[string]int{}
			for _, rt := range a.related {
				a.chains[rt.Type] = len(m.chain(rt))
			}
		}
	}
	for i, s := range m.Systems {
		for j, other := range s.AllowAuthSystems {
			if other != "*" && m.systems[other] == nil {
				return fmt.Errorf("systems[%d].allow_auth_systems[%d]: unknown system %q", i, j, other)
			}
		}
	}
	m.users = map[string]bool{}
	for i, u := range m.Users {
		if u == "" {
			return fmt.Errorf("users[%d]: blank user id", i)
		}
		m.users[u] = true
	}
	m.directory = map[string]bool{}
	for i, u := range m.DirectoryUsers {
		if u == "" || m.users[u] {
			return fmt.Errorf("directory_users[%d]: %q is blank or already one of users", i, u)
		}
		m.directory[u] = true
	}
	m.groups = map[string]bool{}
	for i, g := range m.Groups {
		if _, err := strconv.ParseUint(g, 10, 63); err != nil {
			return fmt.Errorf("groups[%d]: group id %q is not numeric", i, g)
		}
		m.groups[g] = true
	}
	m.departments = map[string]bool{}
	for i, d := range m.Departments {
		if _, err := strconv.ParseUint(d, 10, 63); err != nil {
			return fmt.Errorf("departments[%d]: department id %q is not numeric", i, d)
		}
		m.departments[d] = true
	}
	for d, parent := range m.DepartmentParents {
		if !m.departments[d] || !m.departments[parent] {
			return fmt.Errorf("department_parents[%q]: %q → %q names a department not in departments", d, d, parent)
		}
		seen := map[string]bool{d: true}
		for p, ok := parent, true; ok; p, ok = m.DepartmentParents[p] {
			if seen[p] {
				return fmt.Errorf("department_parents[%q]: the parents go round in a cycle", d)
			}
			seen[p] = true
		}
	}
	for u, ds := range m.UserDepartments {
		if !m.users[u] {
			return fmt.Errorf("user_departments[%q]: unknown user", u)
		}
		for i, d := range ds {
			if !m.departments[d] {
				return fmt.Errorf("user_departments[%q][%d]: unknown department %q", u, i, d)
			}
		}
	}
	if err := m.validateManagers(); err != nil {
		return err
	}
	switch m.Gateway {
	case "", gateway2024, gateway2026:
	default:
		return fmt.Errorf("gateway: %q is not a gateway generation; use %q or %q", m.Gateway, gateway2024, gateway2026)
	}
	if err := m.validateSaaS(); err != nil {
		return err
	}
	m.apps = map[string]*App{}
	for i := range m.Apps {
		a := &m.Apps[i]
		at := fmt.Sprintf("apps[%d]", i)
		if a.Code == "" {
			return fmt.Errorf("%s.code: required", at)
		}
		if a.Secret == "" {
			return fmt.Errorf("%s.secret: required", at)
		}
		if m.apps[a.Code] != nil {
			return fmt.Errorf("%s.code: duplicate app %q", at, a.Code)
		}
		m.apps[a.Code] = a
		for j, sys := range a.ClientOf {
			if sys != "*" && m.systems[sys] == nil {
				return fmt.Errorf("%s.client_of[%d]: unknown system %q", at, j, sys)
			}
		}
		for sys := range a.Management {
			if sys != "*" && m.systems[sys] == nil {
				return fmt.Errorf("%s.management[%q]: unknown system", at, sys)
			}
		}
	}
	for tok, user := range m.Tokens {
		if !m.users[user] {
			return fmt.Errorf("tokens[%q]: unknown user %q", tok, user)
		}
	}
	for i := range m.Systems {
		s := &m.Systems[i]
		for j, tp := range s.TemplatePolicies {
			if _, err := m.templatePolicy(s.ID, tp, nil); err != nil {
				return fmt.Errorf("systems[%d].template_policies[%d]: %w", i, j, err)
			}
		}
	}
	return nil
}

// validateManagers checks the manager roles: users the model knows, systems it has.
func (m *Model) validateManagers() error {
	for i, u := range m.SuperManagers {
		if !m.users[u] {
			return fmt.Errorf("super_managers[%d]: unknown user %q", i, u)
		}
	}
	for sys, users := range m.SystemManagers {
		if m.systems[sys] == nil {
			return fmt.Errorf("system_managers[%q]: unknown system", sys)
		}
		for i, u := range users {
			if !m.users[u] {
				return fmt.Errorf("system_managers[%q][%d]: unknown user %q", sys, i, u)
			}
		}
	}
	return nil
}

// manager reports whether the user holds a role that the backend's access checks allow
// everything in system: admin (any case, IAM's built-in super user), a super manager or one of
// the system's managers.
func (m *Model) manager(system, user string) bool {
	return strings.EqualFold(user, "admin") || slices.Contains(m.SuperManagers, user) || slices.Contains(m.SystemManagers[system], user)
}

// templatePolicy checks a template policy of system and builds it (without ids). The group is
// a model group, or one groupExists knows (nil: model groups only).
func (m *Model) templatePolicy(system string, tp TemplatePolicy, groupExists func(string) bool) (*policy, error) {
	sys := m.systems[system]
	if sys == nil {
		return nil, fmt.Errorf("system: unknown system %q", system)
	}
	if tp.TemplateID <= 0 {
		return nil, fmt.Errorf("template_id: must be a positive template id, got %d", tp.TemplateID)
	}
	subject := Subject{Type: "group", ID: tp.Group}
	switch {
	case (tp.Group == "") == (tp.User == ""):
		return nil, errors.New("group, user: give exactly one")
	case tp.User != "":
		if !m.users[tp.User] {
			return nil, fmt.Errorf("user: unknown user %q", tp.User)
		}
		subject = Subject{Type: "user", ID: tp.User}
	case !m.groups[tp.Group] && (groupExists == nil || !groupExists(tp.Group)):
		return nil, fmt.Errorf("group: unknown group %q", tp.Group)
	}
	a := sys.actions[tp.Action]
	if a == nil {
		return nil, fmt.Errorf("action: unknown action %q", tp.Action)
	}
	if len(a.related) > 1 {
		return nil, fmt.Errorf("action: template policies of combined-resource actions (%q) are not emulated", tp.Action)
	}
	if len(a.related) == 0 && len(tp.Paths) > 0 {
		return nil, fmt.Errorf("paths: action %q relates to no resource type and takes no paths", tp.Action)
	}
	if tp.ExpiredAt < 0 || tp.ExpiredAt > permanentExpiredAt {
		return nil, fmt.Errorf("expired_at: %d is outside 0..%d", tp.ExpiredAt, permanentExpiredAt)
	}
	p := &policy{
		Key:       policyKey{System: system, SubjectType: subject.Type, SubjectID: subject.ID, Action: tp.Action, TemplateID: tp.TemplateID},
		ExpiredAt: tp.ExpiredAt,
		Any:       len(tp.Paths) == 0,
		Paths:     map[string][]Node{},
	}
	if p.ExpiredAt == 0 {
		p.ExpiredAt = permanentExpiredAt
	}
	for k, raw := range tp.Paths {
		nodes, err := m.parsePath(raw)
		if err != nil {
			return nil, fmt.Errorf("paths[%d]: %w", k, err)
		}
		p.Paths[pathKey(nodes)] = nodes
	}
	return p, nil
}

// parsePath reads an inspection path string "/system,type,id/…/" whose types the model knows.
func (m *Model) parsePath(raw string) ([]Node, error) {
	inner := strings.TrimSuffix(strings.TrimPrefix(raw, "/"), "/")
	if len(raw) < 2 || raw[0] != '/' || raw[len(raw)-1] != '/' || inner == "" {
		return nil, fmt.Errorf("%q is not a path of the form /system,type,id/…/", raw)
	}
	var nodes []Node
	for _, part := range strings.Split(inner, "/") {
		f := strings.Split(part, ",")
		if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" {
			return nil, fmt.Errorf("%q: node %q is not system,type,id", raw, part)
		}
		if sys := m.systems[f[0]]; sys == nil || sys.types[f[1]] == nil {
			return nil, fmt.Errorf("%q: unknown resource type %s,%s", raw, f[0], f[1])
		}
		nodes = append(nodes, Node{System: f[0], Type: f[1], ID: f[2]})
	}
	return nodes, nil
}

// indexTypes checks the system's resource type ids and indexes them.
func (s *System) indexTypes(at string) error {
	s.types = map[string]*ResourceType{}
	for j := range s.ResourceTypes {
		t := &s.ResourceTypes[j]
		if t.ID == "" {
			return fmt.Errorf("%s.resource_types[%d].id: required", at, j)
		}
		if strings.Contains(t.ID, ":") {
			return fmt.Errorf("%s.resource_types[%d].id: %q holds a colon, which a type reference uses to name the system", at, j, t.ID)
		}
		if s.types[t.ID] != nil {
			return fmt.Errorf("%s.resource_types[%d].id: duplicate resource type %q", at, j, t.ID)
		}
		s.types[t.ID] = t
	}
	return nil
}

// resolveType reads a type reference made in system s: "type" is a type of s, "system:type" a
// type of that system of the model.
func (m *Model) resolveType(s *System, ref string) (typeRef, error) {
	sysID, typ, other := strings.Cut(ref, ":")
	if !other {
		if s.types[ref] == nil {
			return typeRef{}, fmt.Errorf("unknown resource type %q", ref)
		}
		return typeRef{System: s.ID, Type: ref}, nil
	}
	if sysID == "" || typ == "" {
		return typeRef{}, fmt.Errorf("%q is neither \"type\" nor \"system:type\"", ref)
	}
	sys := m.systems[sysID]
	if sys == nil {
		return typeRef{}, fmt.Errorf("%q names an unknown system %q", ref, sysID)
	}
	if sys.types[typ] == nil {
		return typeRef{}, fmt.Errorf("%q: system %q has no resource type %q", ref, sysID, typ)
	}
	return typeRef{System: sysID, Type: typ}, nil
}

// validate checks the system's parents, actions, creator config and allow-list, resolving the type
// references (which may name another system's types: m's types are indexed already).
func (s *System) validate(at string, m *Model) error {
	for j := range s.ResourceTypes {
		t := &s.ResourceTypes[j]
		t.parents = nil
		for k, p := range t.Parents {
			ref, err := m.resolveType(s, p)
			if err == nil && ref == (typeRef{System: s.ID, Type: t.ID}) {
				err = fmt.Errorf("resource type %q is its own parent", p)
			}
			if err != nil {
				return fmt.Errorf("%s.resource_types[%d].parents[%d]: %w", at, j, k, err)
			}
			t.parents = append(t.parents, ref)
		}
	}
	s.actions = map[string]*Action{}
	for j := range s.Actions {
		a := &s.Actions[j]
		if a.ID == "" {
			return fmt.Errorf("%s.actions[%d].id: required", at, j)
		}
		if s.actions[a.ID] != nil {
			return fmt.Errorf("%s.actions[%d].id: duplicate action %q", at, j, a.ID)
		}
		s.actions[a.ID] = a
		switch a.AuthType {
		case "", "abac", "rbac", "all":
		default:
			return fmt.Errorf("%s.actions[%d].auth_type: %q is not one of abac, rbac, all", at, j, a.AuthType)
		}
		a.system, a.related, a.typeIDs = s.ID, nil, nil
		for k, rt := range a.RelatedTypes {
			ref, err := m.resolveType(s, rt)
			if err != nil {
				return fmt.Errorf("%s.actions[%d].related_types[%d]: %w", at, j, k, err)
			}
			if slices.Contains(a.related, ref) {
				return fmt.Errorf("%s.actions[%d].related_types[%d]: duplicate resource type %q", at, j, k, rt)
			}
			if other := a.typeSystem(ref.Type); other != "" {
				// The backend's expressions and its evaluation of resources name a related type by
				// its id alone ("host.id"): two related types of one id could not be told apart.
				return fmt.Errorf("%s.actions[%d].related_types[%d]: %q has the id of the related type %s:%s; "+
					"an action's related types need distinct ids", at, j, k, rt, other, ref.Type)
			}
			a.related = append(a.related, ref)
			a.typeIDs = append(a.typeIDs, ref.Type)
		}
	}
	seenType := map[string]bool{}
	if err := s.validateCreator(at+".creator_actions", s.CreatorActions, seenType); err != nil {
		return err
	}
	for j, a := range s.AllowList.InstanceActions {
		if a != "*" && s.actions[a] == nil {
			return fmt.Errorf("%s.allow_list.instance_actions[%d]: unknown action %q", at, j, a)
		}
	}
	for j, t := range s.AllowList.CreatorTypes {
		if t != "*" && s.types[t] == nil {
			return fmt.Errorf("%s.allow_list.creator_types[%d]: unknown resource type %q", at, j, t)
		}
	}
	return nil
}

// validateCreator checks a creator config subtree: node types and actions must exist. As on the real
// server, an action may relate to no resource type (the creator gets it as an any policy) or to
// another type than the node's: that is loadable, and a creator grant for the node fails with 1902417.
func (s *System) validateCreator(at string, nodes []CreatorConfig, seen map[string]bool) error {
	for i, n := range nodes {
		p := fmt.Sprintf("%s[%d]", at, i)
		if s.types[n.ID] == nil {
			return fmt.Errorf("%s.id: unknown resource type %q", p, n.ID)
		}
		if seen[n.ID] {
			return fmt.Errorf("%s.id: resource type %q appears twice in the creator config", p, n.ID)
		}
		seen[n.ID] = true
		seenAction := map[string]bool{}
		for j, ca := range n.Actions {
			if seenAction[ca.ID] {
				return fmt.Errorf("%s.actions[%d].id: duplicate action %q", p, j, ca.ID)
			}
			seenAction[ca.ID] = true
			if s.actions[ca.ID] == nil {
				return fmt.Errorf("%s.actions[%d].id: unknown action %q", p, j, ca.ID)
			}
		}
		if err := s.validateCreator(p+".sub_resource_types", n.SubResourceTypes, seen); err != nil {
			return err
		}
	}
	return nil
}

// creatorNode finds the creator config for a type anywhere in the tree (sub resource types included).
func (s *System) creatorNode(typ string) *CreatorConfig {
	var walk func([]CreatorConfig) *CreatorConfig
	walk = func(nodes []CreatorConfig) *CreatorConfig {
		for i := range nodes {
			if nodes[i].ID == typ {
				return &nodes[i]
			}
			if n := walk(nodes[i].SubResourceTypes); n != nil {
				return n
			}
		}
		return nil
	}
	return walk(s.CreatorActions)
}

func (a *App) clientOf(system string) bool {
	for _, s := range a.ClientOf {
		if s == "*" || s == system {
			return true
		}
	}
	return false
}

func allowed(list []string, id string) bool {
	for _, v := range list {
		if v == "*" || v == id {
			return true
		}
	}
	return false
}

// mayAuthorize reports whether the system may put other's actions in its grade managers' scopes.
func (s *System) mayAuthorize(other string) bool {
	return other == s.ID || slices.Contains(s.AllowAuthSystems, "*") || slices.Contains(s.AllowAuthSystems, other)
}

// departmentLine is the department and its ancestors.
func (m *Model) departmentLine(d string) []string {
	line := []string{d}
	for p, ok := m.DepartmentParents[d]; ok; p, ok = m.DepartmentParents[p] {
		line = append(line, p)
	}
	return line
}

// userID is the model's spelling of the user id: IAM's subject table compares ids without regard
// to case (MySQL's utf8_general_ci), so a request naming "Alice" reaches the user alice, and what
// IAM then writes and answers is alice's. An id the model does not know is returned as given.
func (m *Model) userID(id string) string {
	if m.users[id] || m.directory[id] {
		return id
	}
	for _, u := range m.Users {
		if strings.EqualFold(u, id) {
			return u
		}
	}
	for _, u := range m.DirectoryUsers {
		if strings.EqualFold(u, id) {
			return u
		}
	}
	return id
}
