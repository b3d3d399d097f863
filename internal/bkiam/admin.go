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
)

// The reads of a subject's groups that an app may or may not be let through to, depending on the
// generation of the bk-iam gateway's resource list: the admin API's subject groups (the 2026
// generation only, behind a per-app grant and IAM's admin allow-list) and the backend's
// users/{id}/groups (any app on the generations before 2026, which the real IAM run here routes
// by; a per-app grant from 2026 on, which an ordinary app does not hold). A caller
// that can do with either tells a refusal (ErrRouteRefused) from any other failure, and the
// refusal's message says which gateway resource and which allow-list entry to ask for.

// ErrRouteRefused marks a read the gateway or IAM's admin allow-list refuses to the app: a
// resource the gateway does not have (404 API_NOT_FOUND), one it has not granted to the app (403
// APP_NO_PERMISSION), or an admin API the allow-list does not name for the app. The error's text
// names what to ask for; errors.As still finds the *Error.
var ErrRouteRefused = errors.New("bkiam: the gateway or IAM does not let the app call this route")

// Gateway resources and IAM admin allow-list entries the refusals name.
const (
	// GatewayAdminSubjectGroups is the 2026 gateway's resource of the admin subject groups.
	GatewayAdminSubjectGroups = "admin_list_subject_groups"
	// GatewayOpenUserGroups is the gateway's resource of the backend's users/{id}/groups.
	GatewayOpenUserGroups = "open_user_groups"
	// AdminSubjectJoinedGroupList is the admin allow-list entry of the admin subject groups.
	AdminSubjectJoinedGroupList = "subject_joined_group_list"
)

// adminSubjectGroupsPageSize is the page AdminSubjectGroups asks for: the view has no maximum
// (CustomPageNumberPagination without max_page_size), and one user's direct groups are rarely
// more.
var adminSubjectGroupsPageSize = 500

// AdminSubjectGroup is one of a subject's direct memberships, as the admin API lists it.
type AdminSubjectGroup struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// ExpiredAt is the membership's expiry (unix seconds; PermanentExpiry permanent). Expired
	// memberships are listed too.
	ExpiredAt int64 `json:"expired_at"`
}

// AdminSubjectGroups lists a subject's (subjectType "user" or "department") direct memberships,
// expired ones included, every page (GET /api/v1/open/admin/subjects/{type}/{id}/groups/, gateway
// resource GatewayAdminSubjectGroups, admin allow-list AdminSubjectJoinedGroupList). Groups
// reached through a department or a subject template are not listed. A subject IAM does not know
// is ErrUnknownSubject; a refusal by the gateway or the allow-list is ErrRouteRefused.
func (c *Client) AdminSubjectGroups(ctx context.Context, subjectType, subjectID string) ([]AdminSubjectGroup, error) {
	switch {
	case subjectType != SubjectUser && subjectType != "department":
		return nil, invalid("admin subject groups", "subject type %q, want user or department", subjectType)
	case strings.TrimSpace(subjectID) == "":
		return nil, invalid("admin subject groups", "subject id is empty")
	}
	path := "/api/v1/open/admin/subjects/" + url.PathEscape(subjectType) + "/" + url.PathEscape(subjectID) + "/groups/"
	out := []AdminSubjectGroup{}
	// The count is the backend's, the rows the SaaS's: it drops a relation whose group it no
	// longer has, so a page can be short of it; an empty page, or the pages the count announced,
	// end the read.
	for page := 1; ; page++ {
		q := url.Values{"page": {strconv.Itoa(page)}, "page_size": {strconv.Itoa(adminSubjectGroupsPageSize)}}
		var got struct {
			Count   *int                `json:"count"`
			Results []AdminSubjectGroup `json:"results"`
		}
		err := c.manage(ctx, "admin subject groups", http.MethodGet, path, q, nil, func(d []byte) error {
			if err := json.Unmarshal(d, &got); err != nil || got.Count == nil {
				return fmt.Errorf("data is not a count and a list of groups: %s", d)
			}
			for _, r := range got.Results {
				if r.ID <= 0 {
					return fmt.Errorf("a subject-groups row without a group id: %s", d)
				}
			}
			return nil
		})
		if err != nil {
			return nil, c.explainSubjectGroupsError(err, GatewayAdminSubjectGroups, AdminSubjectJoinedGroupList)
		}
		out = append(out, got.Results...)
		if len(got.Results) == 0 || page*adminSubjectGroupsPageSize >= *got.Count {
			return out, nil
		}
	}
}

// UserGroup is a group of the backend's users/{id}/groups: an unexpired membership, without its
// expiry.
type UserGroup struct {
	ID   int64
	Name string
}

// UserGroupList lists the groups a user is in, unexpired (GET /api/v1/open/users/{id}/groups,
// gateway resource GatewayOpenUserGroups): with inherit, the direct ones and those of the user's
// departments and their ancestors; without it, the direct ones alone. Subject-template
// memberships are not listed. A user IAM does not know is ErrUnknownSubject; a refusal by the
// gateway is ErrRouteRefused.
func (c *Client) UserGroupList(ctx context.Context, user string, inherit bool) ([]UserGroup, error) {
	if c.cfg.transport != TransportGateway {
		return nil, ErrReadNeedsGateway
	}
	if strings.TrimSpace(user) == "" {
		return nil, invalid("user groups", "user is empty")
	}
	path := "/api/v1/open/users/" + url.PathEscape(user) + "/groups"
	var q url.Values
	if inherit {
		q = url.Values{"inherit": {"true"}}
	}
	out := []UserGroup{}
	e := c.get(ctx, "user groups GET "+path, path, q, func(d []byte) (int, error) {
		var rows []struct {
			ID   json.RawMessage `json:"id"`
			Name string          `json:"name"`
		}
		if err := json.Unmarshal(d, &rows); err != nil {
			return 0, err
		}
		for _, r := range rows {
			id, err := strconv.ParseInt(strings.Trim(string(r.ID), `"`), 10, 64)
			if err != nil || id <= 0 {
				return 0, fmt.Errorf("a group id that is not a positive integer: %s", r.ID)
			}
			out = append(out, UserGroup{ID: id, Name: r.Name})
		}
		return len(rows), nil
	})
	if e != nil {
		if e.kind == kindCode && e.Code == 1901404 {
			return nil, fmt.Errorf("%w: %s", ErrUnknownSubject, e.Message)
		}
		return nil, c.explainSubjectGroupsError(e, GatewayOpenUserGroups, "")
	}
	return out, nil
}

// explainSubjectGroupsError turns the failures of a subject-groups read into what the caller acts
// on: an unknown subject (the backend's lookup failure the admin API passes on) into
// ErrUnknownSubject, and a refusal into ErrRouteRefused, its message naming the gateway resource
// and the admin allow-list entry (none for a backend route) to ask for.
func (c *Client) explainSubjectGroupsError(err error, resource, allowList string) error {
	var e *Error
	if !errors.As(err, &e) || e.kind != kindCode {
		return err
	}
	var advice string
	switch {
	case e.Code == 1902000 && strings.Contains(e.Message, "GetLocalSubjectPK") && strings.Contains(e.Message, "sql: no rows in result set"):
		return fmt.Errorf("%w: %w", ErrUnknownSubject, e)
	case e.Code == 1640401 || e.HTTPStatus == http.StatusNotFound:
		// Neither route answers 404 for anything it serves (an unknown subject is 1902000 or
		// 1901404 in HTTP 200): a 404 is the gateway's, whatever envelope it comes in (the
		// gateway in front of the real IAM run here answers code 40 RESOURCE_NOT_FOUND, without
		// its error header).
		advice = fmt.Sprintf("; the API gateway has no resource %s: the gateway's bk-iam resources are of a generation "+
			"before 2026, which does not carry it", resource)
	case e.Layer == LayerGateway && (e.Code == 1640301 || e.HTTPStatus == http.StatusForbidden):
		advice = fmt.Sprintf("; ask the API gateway's administrators to grant app %s the bk-iam gateway's resource %s "+
			"(on the 2026 gateway every app needs it granted)", c.cfg.AppCode, resource)
	case allowList != "" && e.Code == 1902403 && strings.Contains(e.Message, "do not be allowed to call api"):
		advice = fmt.Sprintf("; ask IAM's super manager to add %s for app %s to the admin API allow-list "+
			"(IAM's 管理后台 → API 白名单 → 超级管理类 API)", allowList, c.cfg.AppCode)
	default:
		return err
	}
	e.Message = c.cleanMessage(e.Message + advice)
	return fmt.Errorf("%w: %w", ErrRouteRefused, e)
}
