package sandbox

import (
	"fmt"
	"slices"
	"time"
)

// The SaaS's release of July 2026 (bk-iam-saas #3143, "add object-level API allowlist and
// extend renewal expiration to two years") changed two things the management API answers,
// which the model's "saas": "2026" plays:
//
//   - The management object allow-list (ManagementObjectAPIAllowListConfig, migration 0015 or
//     0017 "add_management_object_api_allow_list_config"): rows (app_code, object_type
//     role/group/template, object_id, api or "*") that let an app call one management API on
//     one object "without being a client of the system the object belongs to" (the model's
//     docstring). The permission code that reads it could not be read; the sandbox checks it
//     where the SaaS checks ownership (after the path system's client and allow-list checks,
//     which still apply), and an entry lets the app past the ownership checks of that object,
//     its creator's included. An entry for a grade manager ("role") covers the routes on the
//     grade manager, one for a group the routes on the group; an object that is gone answers
//     as before.
//   - A cap on membership expiries: a member add or expiry update whose expired_at is more than
//     limits.member_expiry_max_days (730 by default: "two years") after now is refused, 400
//     1902412, except the permanent 4102444800 (#3019 of January 2026 lets members be renewed to
//     permanent). The cap's code, length and wording could not be read: the refusal is the
//     serializers' shape ({"expired_at": [...]} (VALIDATE_ERROR)) with the sandbox's words.
const (
	saas2025 = "2025"
	saas2026 = "2026"
)

// The object types of the object allow-list, as its model names them.
const (
	objectRole     = "role"
	objectGroup    = "group"
	objectTemplate = "template"
)

// defaultMemberExpiryMaxDays is the 2026 release's cap: two years.
const defaultMemberExpiryMaxDays = 730

// ManagementObject is one row of the management object allow-list for an app: the management
// API (or "*") it may call on one grade manager ("role"), group or subject template.
type ManagementObject struct {
	ObjectType string `json:"object_type"`
	ObjectID   int64  `json:"object_id"`
	API        string `json:"api"`
}

// newerSaaS reports whether the sandbox plays the SaaS of July 2026.
func (m *Model) newerSaaS() bool { return m.SaaS == saas2026 }

// memberExpiryCap is the longest a membership may last from now, in seconds; 0 for no cap.
func (m *Model) memberExpiryCap() int64 {
	if !m.newerSaaS() {
		return 0
	}
	days := m.Limits.MemberExpiryMaxDays
	if days == 0 {
		days = defaultMemberExpiryMaxDays
	}
	return int64(days) * 24 * 3600
}

// validateSaaS checks the release and what only the 2026 release reads.
func (m *Model) validateSaaS() error {
	switch m.SaaS {
	case "", saas2025, saas2026:
	default:
		return fmt.Errorf("saas: %q is not a SaaS release; use %q or %q", m.SaaS, saas2025, saas2026)
	}
	if m.Limits.MemberExpiryMaxDays < 0 {
		return fmt.Errorf("limits.member_expiry_max_days: must not be negative, got %d", m.Limits.MemberExpiryMaxDays)
	}
	if m.Limits.MemberExpiryMaxDays != 0 && !m.newerSaaS() {
		return fmt.Errorf("limits.member_expiry_max_days: only the %q SaaS caps member expiries; set \"saas\": %q", saas2026, saas2026)
	}
	for i, a := range m.Apps {
		for j, o := range a.ManagementObjects {
			at := fmt.Sprintf("apps[%d].management_objects[%d]", i, j)
			switch {
			case !m.newerSaaS():
				return fmt.Errorf("%s: only the %q SaaS has the object allow-list; set \"saas\": %q", at, saas2026, saas2026)
			case !slices.Contains([]string{objectRole, objectGroup, objectTemplate}, o.ObjectType):
				return fmt.Errorf("%s.object_type: %q is none of %q, %q, %q", at, o.ObjectType, objectRole, objectGroup, objectTemplate)
			case o.ObjectID <= 0:
				return fmt.Errorf("%s.object_id: must be a positive id, got %d", at, o.ObjectID)
			case o.API == "":
				return fmt.Errorf("%s.api: required (an allow-list name or \"*\")", at)
			}
		}
	}
	return nil
}

// mayManageObject reports whether the object allow-list lets the app call api on the object.
func (a *App) mayManageObject(objectType string, id int64, api string) bool {
	for _, o := range a.ManagementObjects {
		if o.ObjectType == objectType && o.ObjectID == id && (o.API == "*" || o.API == api) {
			return true
		}
	}
	return false
}

// objectAllowed reports whether the 2026 object allow-list lets the call's app past the ownership
// checks of the object.
func (mc *mgmtCall) objectAllowed(objectType string, id int64) bool {
	return mc.s.model.newerSaaS() && mc.app.mayManageObject(objectType, id, mc.rt.api)
}

// checkExpiryCap refuses, on the 2026 SaaS, a membership expiry more than the cap after now.
func (m *Model) checkExpiryCap(fe *fieldErrors, expiredAt int64, now time.Time) {
	limit := m.memberExpiryCap()
	if limit == 0 || expiredAt == permanentExpiredAt || expiredAt <= now.Unix()+limit {
		return
	}
	fe.add(fmt.Sprintf("expired_at must be at most %d days from now, or permanent", limit/(24*3600)), "expired_at")
}
