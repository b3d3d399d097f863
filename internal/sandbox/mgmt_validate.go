package sandbox

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The management API's request bodies, checked as the SaaS's serializers check them: all field
// errors at once, DRF's messages, rendered as the JSON of the field errors followed, on the v2 open
// paths, by " (VALIDATE_ERROR)".

// validationErr renders field errors as a v2 management 1902412.
func validationErr(fe fieldErrors) *saasError {
	e := fe.err()
	e.message += " (VALIDATE_ERROR)"
	return e
}

// validationList is a 1902412 of a ValidationError the SaaS raises in a view with one message: the
// JSON list of it.
func validationList(msg string) *saasError {
	var b strings.Builder
	writeErr(&b, []string{msg})
	return mgmtError(codeValidation, b.String())
}

// validationText is a 1902412 raised by the SaaS's own code (not a serializer).
func validationText(text string) *saasError { return mgmtError(codeValidation, text) }

func badMgmtJSON() *saasError { return mgmtError(codeBadJSON, "Json格式错误") }

// charField checks a required string field: present, not blank unless allowed, within [least, most]
// characters (0: no bound).
func charField(fe *fieldErrors, v *string, blank bool, least, most int, path ...any) {
	switch n := len([]rune(strings.TrimSpace(deref(v)))); {
	case v == nil:
		fe.add("This field is required.", path...)
	case n == 0 && !blank:
		fe.add("This field may not be blank.", path...)
	case n > 0 && n < least:
		fe.add(fmt.Sprintf("Ensure this field has at least %d characters.", least), path...)
	case most > 0 && n > most:
		fe.add(fmt.Sprintf("Ensure this field has no more than %d characters.", most), path...)
	}
}

func deref(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}

type gmScopeBody struct {
	System  *string `json:"system"`
	Actions *[]struct {
		ID *string `json:"id"`
	} `json:"actions"`
	Resources *[]json.RawMessage `json:"resources"`
}

type gmSubjectBody struct {
	Type *string `json:"type"`
	ID   *string `json:"id"`
}

// gradeManagerBody is the create and update body.
type gradeManagerBody struct {
	Name                *string          `json:"name"`
	Description         *string          `json:"description"`
	Members             *[]string        `json:"members"`
	AuthorizationScopes *[]gmScopeBody   `json:"authorization_scopes"`
	SubjectScopes       *[]gmSubjectBody `json:"subject_scopes"`
	SyncPerm            bool             `json:"sync_perm"`
	GroupName           *string          `json:"group_name"`
	SyncSubjectTemplate bool             `json:"sync_subject_template"`
}

type gradeManagerFields struct {
	Name, Description, GroupName string
	Members                      []string
	SyncPerm                     bool
	// SyncSubjectTemplate asks for a subject template mirroring the sync group (read on create).
	SyncSubjectTemplate bool
	Scopes              []mgmtScope
	SubjectScopes       []mgmtSubject
}

// decodeGradeManager checks a grade manager's body: its fields, then the scopes' actions against
// the model ("x action not exists"). The scopes' resources are checked for presence only.
func decodeGradeManager(raw []byte, m *Model) (gradeManagerFields, *saasError) {
	var b gradeManagerBody
	if json.Unmarshal(raw, &b) != nil {
		return gradeManagerFields{}, badMgmtJSON()
	}
	var fe fieldErrors
	charField(&fe, b.Name, false, 0, 512, "name")
	charField(&fe, b.Description, true, 0, 0, "description")
	if b.Members == nil {
		fe.add("This field is required.", "members")
	} else {
		if len(*b.Members) > maxGradeManagerMembers {
			fe.add(fmt.Sprintf("Ensure this field has no more than %d elements.", maxGradeManagerMembers), "members")
		}
		for i, u := range *b.Members {
			charField(&fe, &u, false, 0, 64, "members", i)
		}
	}
	switch {
	case b.AuthorizationScopes == nil:
		fe.add("This field is required.", "authorization_scopes")
	case len(*b.AuthorizationScopes) == 0:
		fe.add("This list may not be empty.", "authorization_scopes")
	}
	if b.AuthorizationScopes != nil {
		for i, sc := range *b.AuthorizationScopes {
			charField(&fe, sc.System, false, 0, 32, "authorization_scopes", i, "system")
			switch {
			case sc.Actions == nil:
				fe.add("This field is required.", "authorization_scopes", i, "actions")
			case len(*sc.Actions) == 0:
				fe.add("This list may not be empty.", "authorization_scopes", i, "actions")
			}
			if sc.Actions != nil {
				for j, a := range *sc.Actions {
					charField(&fe, a.ID, false, 0, 0, "authorization_scopes", i, "actions", j, "id")
				}
			}
			if sc.Resources == nil {
				fe.add("This field is required.", "authorization_scopes", i, "resources")
			}
		}
	}
	switch {
	case b.SubjectScopes == nil:
		fe.add("This field is required.", "subject_scopes")
	case len(*b.SubjectScopes) == 0:
		fe.add("This list may not be empty.", "subject_scopes")
	}
	if b.SubjectScopes != nil {
		for i, sc := range *b.SubjectScopes {
			switch t := deref(sc.Type); {
			case sc.Type == nil:
				fe.add("This field is required.", "subject_scopes", i, "type")
			case t != "user" && t != "department" && t != "*":
				fe.add(fmt.Sprintf("\"%s\" is not a valid choice.", t), "subject_scopes", i, "type")
			}
			charField(&fe, sc.ID, false, 0, 0, "subject_scopes", i, "id")
		}
	}
	if b.GroupName != nil {
		charField(&fe, b.GroupName, true, 0, 512, "group_name")
	}
	if !fe.empty() {
		return gradeManagerFields{}, validationErr(fe)
	}
	for _, sc := range *b.AuthorizationScopes {
		sys := m.systems[strings.TrimSpace(*sc.System)]
		if sys == nil {
			return gradeManagerFields{}, mgmtError(codeInvalidArgs, fmt.Sprintf("system[%s] not exists", *sc.System))
		}
		for _, a := range *sc.Actions {
			if sys.actions[strings.TrimSpace(*a.ID)] == nil {
				return gradeManagerFields{}, mgmtError(codeValidation, fmt.Sprintf("%s action not exists", strings.TrimSpace(*a.ID)))
			}
		}
	}
	members := make([]string, 0, len(*b.Members))
	for _, u := range *b.Members {
		members = append(members, strings.TrimSpace(u))
	}
	scopes := make([]mgmtScope, 0, len(*b.AuthorizationScopes))
	for _, sc := range *b.AuthorizationScopes {
		scope := mgmtScope{System: strings.TrimSpace(*sc.System), Resources: []mgmtScopeType{}}
		for _, a := range *sc.Actions {
			scope.Actions = append(scope.Actions, strings.TrimSpace(*a.ID))
		}
		for _, raw := range *sc.Resources {
			// Checked for presence only, as the SaaS's serializer leaves them to the scope check.
			var r mgmtScopeType
			if json.Unmarshal(raw, &r) == nil {
				scope.Resources = append(scope.Resources, r)
			}
		}
		scopes = append(scopes, scope)
	}
	subjects := make([]mgmtSubject, 0, len(*b.SubjectScopes))
	for _, sc := range *b.SubjectScopes {
		subjects = append(subjects, mgmtSubject{Type: strings.TrimSpace(*sc.Type), ID: strings.TrimSpace(*sc.ID)})
	}
	return gradeManagerFields{Name: strings.TrimSpace(*b.Name), Description: strings.TrimSpace(*b.Description), Members: members,
		SyncPerm: b.SyncPerm, GroupName: strings.TrimSpace(deref(b.GroupName)), SyncSubjectTemplate: b.SyncSubjectTemplate,
		Scopes: scopes, SubjectScopes: subjects}, nil
}

type groupSpecFields struct {
	Name, Description string
	Readonly          bool
	// SourceType is the attribute the group is created with: "openapi", unless the batch's
	// create_attributes is false (a key of the body, for every group of the batch).
	SourceType string
}

// decodeGroups checks a batch create's body: 1 to 10 groups, names of 2 to 512 characters, no
// name twice in the batch. It also answers sync_subject_template, which applies to every group of
// the batch (a key of the body, not of a group), and puts create_attributes (absent: true) in each
// group's SourceType.
func decodeGroups(raw []byte) ([]groupSpecFields, bool, *saasError) {
	var b struct {
		Groups *[]struct {
			Name        *string `json:"name"`
			Description *string `json:"description"`
			Readonly    bool    `json:"readonly"`
		} `json:"groups"`
		CreateAttributes    *bool `json:"create_attributes"`
		SyncSubjectTemplate bool  `json:"sync_subject_template"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return nil, false, badMgmtJSON()
	}
	var fe fieldErrors
	switch {
	case b.Groups == nil:
		fe.add("This field is required.", "groups")
	case len(*b.Groups) == 0:
		fe.add("This list may not be empty.", "groups")
	case len(*b.Groups) > maxGroupsPerCreate:
		fe.add(fmt.Sprintf("Ensure this field has no more than %d elements.", maxGroupsPerCreate), "groups")
	}
	sourceType := "openapi"
	if b.CreateAttributes != nil && !*b.CreateAttributes {
		sourceType = ""
	}
	var out []groupSpecFields
	if b.Groups != nil && len(*b.Groups) <= maxGroupsPerCreate {
		for i, g := range *b.Groups {
			charField(&fe, g.Name, false, 2, 512, "groups", i, "name")
			charField(&fe, g.Description, true, 0, 0, "groups", i, "description")
			out = append(out, groupSpecFields{Name: strings.TrimSpace(deref(g.Name)), Description: strings.TrimSpace(deref(g.Description)),
				Readonly: g.Readonly, SourceType: sourceType})
		}
	}
	if !fe.empty() {
		return nil, false, validationErr(fe)
	}
	seen := map[string]bool{}
	for _, g := range out {
		if seen[g.Name] {
			fe.add(fmt.Sprintf("用户组名称%s不能重复", g.Name), "groups")
			return nil, false, validationErr(fe)
		}
		seen[g.Name] = true
	}
	return out, b.SyncSubjectTemplate, nil
}

// decodeGroupUpdate checks a group update's body: both fields optional, a name of 2 to 128
// characters. An empty field keeps the old value (the caller's part).
func decodeGroupUpdate(raw []byte) (string, string, *saasError) {
	var b struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return "", "", badMgmtJSON()
	}
	var fe fieldErrors
	if b.Name != nil {
		charField(&fe, b.Name, false, 2, 128, "name")
	}
	if !fe.empty() {
		return "", "", validationErr(fe)
	}
	return strings.TrimSpace(deref(b.Name)), strings.TrimSpace(deref(b.Description)), nil
}

// decodeMembers checks a member add or expiry update body: members [{type, id}] (template only on
// add), expired_at after now and at most 4102444800 (and, on the 2026 SaaS, within m's cap).
func decodeMembers(raw []byte, now time.Time, add bool, m *Model) ([]memberKey, int64, *saasError) {
	var b struct {
		Members *[]struct {
			Type *string `json:"type"`
			ID   *string `json:"id"`
		} `json:"members"`
		ExpiredAt *int64 `json:"expired_at"`
	}
	if json.Unmarshal(raw, &b) != nil {
		return nil, 0, badMgmtJSON()
	}
	var fe fieldErrors
	switch {
	case b.Members == nil:
		fe.add("This field is required.", "members")
	case len(*b.Members) == 0:
		fe.add("This list may not be empty.", "members")
	}
	var out []memberKey
	if b.Members != nil {
		for i, m := range *b.Members {
			switch t := deref(m.Type); {
			case m.Type == nil:
				fe.add("This field is required.", "members", i, "type")
			case t != "user" && t != "department" && (t != "template" || !add):
				fe.add(fmt.Sprintf("\"%s\" is not a valid choice.", t), "members", i, "type")
			}
			charField(&fe, m.ID, false, 0, 0, "members", i, "id")
			out = append(out, memberKey{Type: deref(m.Type), ID: strings.TrimSpace(deref(m.ID))})
		}
	}
	switch {
	case b.ExpiredAt == nil:
		fe.add("This field is required.", "expired_at")
	case *b.ExpiredAt > permanentExpiredAt:
		fe.add(fmt.Sprintf("Ensure this value is less than or equal to %d.", permanentExpiredAt), "expired_at")
	case *b.ExpiredAt <= now.Unix():
		fe.add("expired_at must more then now", "expired_at")
	default:
		m.checkExpiryCap(&fe, *b.ExpiredAt, now)
	}
	if !fe.empty() {
		return nil, 0, validationErr(fe)
	}
	return out, *b.ExpiredAt, nil
}
