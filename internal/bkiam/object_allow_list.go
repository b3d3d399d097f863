package bkiam

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// IAM's SaaS from its July 2026 release (bk-iam-saas #3143) adds the management object
// allow-list (ManagementObjectAPIAllowListConfig): rows (app_code, object_type role, group or
// template, object_id, api or "*") that let an app call one management API on one grade manager
// ("role") or group though no system it is a client of created it, or the web UI did. An app
// refused an object with the ownership 403 (ErrNotOwned) can ask IAM's administrators for the
// row ObjectAllowEntryOf names; a site before that release has no such list.

// ObjectAllowEntry is a row of the management object allow-list.
type ObjectAllowEntry struct {
	AppCode    string
	ObjectType string // "role" (a grade manager) or "group"
	ObjectID   int64
	// API is the management API's allow-list name, "*" when the call is none this client names.
	API string
}

func (e ObjectAllowEntry) String() string {
	return fmt.Sprintf("app_code %s, object_type %s, object_id %d, api %s", e.AppCode, e.ObjectType, e.ObjectID, e.API)
}

// managedObject is the grade manager ("role") or group a management call's path names.
type managedObject struct {
	typ string
	id  int64
}

// objectInPath finds the object of a management path: …/grade_managers/{id}/… or …/groups/{id}/….
var objectInPath = regexp.MustCompile(`/(grade_managers|groups)/(\d+)/`)

// managedObjectOf is the object path names; none for a route on no one object.
func managedObjectOf(path string) managedObject {
	m := objectInPath.FindStringSubmatch(path)
	if m == nil {
		return managedObject{}
	}
	id, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil {
		return managedObject{}
	}
	if m[1] == "grade_managers" {
		return managedObject{typ: "role", id: id}
	}
	return managedObject{typ: "group", id: id}
}

// refusedApp finds the app in the ownership 403: "… can not (be) operated by app_code[A], …".
var refusedApp = regexp.MustCompile(`can not (?:be )?operated by app_code\[([^\]]*)\]`)

// managementAPIs are the allow-list names of this client's management calls that name one object
// in their path, by the calls' operation names.
var managementAPIs = map[string]string{
	"grade manager get":    "v2_grade_manager_detail",
	"grade manager update": "v2_grade_manager_update",
	"grade manager delete": "v2_grade_manager_delete",
	"group create":         "v2_group_batch_create",
	"group list":           "v2_group_list",
	"group update":         "v2_group_update",
	"group delete":         "v2_group_delete",
	"member list":          "v2_group_member_list",
	"member count":         "v2_group_member_list",
	"member add":           "v2_group_member_add",
	"member expiry update": "v2_group_member_expired_at_update",
	"member delete":        "v2_group_member_delete",
	"group policy grant":   "group_policy_grant",
	"group policy revoke":  "group_policy_revoke",
	"group policy list":    "group_policy_list",
}

// ObjectAllowEntryOf is the row of the management object allow-list that would let the app past
// an ownership 403 (ErrNotOwned) from a release that has the list: the app the message names, the
// object the refused call's path names (its group, for a group whose grade manager the message
// names), the call's API. ok is false for any other error.
func ObjectAllowEntryOf(err error) (ObjectAllowEntry, bool) {
	var e *Error
	if !errors.Is(err, ErrNotOwned) || !errors.As(err, &e) || e.object.typ == "" {
		return ObjectAllowEntry{}, false
	}
	m := refusedApp.FindStringSubmatch(e.Message)
	if m == nil {
		return ObjectAllowEntry{}, false
	}
	op, _, _ := strings.Cut(e.Operation, ", page ") // a list's page: "member list, page 2"
	api, ok := managementAPIs[op]
	if !ok {
		api = "*"
	}
	return ObjectAllowEntry{AppCode: m[1], ObjectType: e.object.typ, ObjectID: e.object.id, API: api}, true
}
