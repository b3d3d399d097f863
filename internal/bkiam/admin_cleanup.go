package bkiam

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The leaver cleanup of IAM's admin API: DELETE /api/v1/open/admin/cleanup/users/permission/ with
// a JSON array of {"type": "user", "id", "before_at"?}. IAM answers {} at once and cleans each user
// in a background task: the user's custom and temporary policies in every system, its direct group
// memberships, its subject-template memberships and its super, system and grade-manager roles (those
// created after before_at kept; policies always go). Memberships of its departments stay. No route
// reports the task's end: what the user still holds tells it. before_at exists from IAM 1.10 on; an
// older SaaS ignores the field and cleans everything. A call for a user whose cleanup is still
// running is dropped silently.
//
// Two keys guard the route: the bk-iam gateway carries it (resource CleanupGatewayResource) only
// from its 2026 generation, and there asks a grant of the resource to the app; IAM then asks that
// the app be on its admin API allow-list (CleanupAllowListEntry). The errors say which is missing.

const (
	cleanupPath = "/api/v1/open/admin/cleanup/users/permission/"
	// CleanupGatewayResource is the bk-iam gateway resource of the cleanup route.
	CleanupGatewayResource = "admin_cleanup_users_permission"
	// CleanupAllowListEntry is the cleanup's entry in IAM's admin API allow-list.
	CleanupAllowListEntry = "subject_permission_cleanup"
)

// ErrAdminNeedsGateway is returned, before any I/O, by the admin calls of a client configured for
// ESB, which carries none of them.
var ErrAdminNeedsGateway = errors.New("bkiam: IAM's admin API is served through the API gateway only; set apigw_url")

// CleanupUser is one user to clean up. Before, when not zero, keeps the memberships and roles the
// user was given after it (IAM 1.10 and later; an older IAM ignores it).
type CleanupUser struct {
	ID     string
	Before time.Time
}

type wireCleanupUser struct {
	Type     string `json:"type"`
	ID       string `json:"id"`
	BeforeAt int64  `json:"before_at,omitempty"`
}

// CleanupUsers asks IAM to clean the users up, and returns once IAM has queued it: the cleanup
// itself runs later. A refusal by the gateway or by IAM's admin allow-list says what to ask for.
func (c *Client) CleanupUsers(ctx context.Context, users []CleanupUser) error {
	if len(users) == 0 {
		return invalid("user cleanup", "no user given")
	}
	body := make([]wireCleanupUser, len(users))
	for i, u := range users {
		if strings.TrimSpace(u.ID) == "" {
			return invalid("user cleanup", "user %d has an empty id", i)
		}
		body[i] = wireCleanupUser{Type: "user", ID: u.ID}
		if !u.Before.IsZero() {
			body[i].BeforeAt = u.Before.Unix()
		}
	}
	return c.cleanup(ctx, "user cleanup", body)
}

// ProbeCleanup reports whether the app may call the cleanup route, without cleaning anything: it
// sends an empty list, which IAM refuses with 1902416 after the gateway and the allow-list let it
// through (the view checks that a user is given before it writes anything). nil means carried and
// allowed; otherwise the error names what to ask for.
func (c *Client) ProbeCleanup(ctx context.Context) error {
	err := c.cleanup(ctx, "user cleanup probe", []wireCleanupUser{})
	var e *Error
	switch {
	case err == nil:
		// An IAM that took an empty list cleaned nothing either; it is not the SaaS read here.
		return nil
	case errors.As(err, &e) && e.Layer == LayerIAM && e.Code == 1902416:
		return nil
	}
	return err
}

func (c *Client) cleanup(ctx context.Context, op string, body []wireCleanupUser) error {
	if c.cfg.transport != TransportGateway {
		return ErrAdminNeedsGateway
	}
	err := c.manage(ctx, op, http.MethodDelete, cleanupPath, nil, body, nil)
	var e *Error
	if errors.As(err, &e) {
		c.explainAdminError(e, CleanupGatewayResource, CleanupAllowListEntry)
	}
	return err
}

// explainAdminError adds to an admin route's refusal what to ask for, and of whom: the gateway's
// 404 (this generation of the bk-iam gateway has no such resource), its 403 APP_NO_PERMISSION (the
// app holds no grant of the resource), and IAM's 403 for an app off the admin API allow-list.
func (c *Client) explainAdminError(e *Error, resource, entry string) {
	if e.kind != kindCode {
		return
	}
	var advice string
	switch {
	case e.Layer == LayerGateway && (e.Code == 1640401 || e.HTTPStatus == http.StatusNotFound):
		advice = fmt.Sprintf("; this site's API gateway does not carry the bk-iam resource %s (gateways before the 2026 "+
			"generation of bk-iam's resources have no admin routes): ask the gateway's managers to publish bk-iam's newer "+
			"resource list, then to grant the app %s the resource %s, and IAM's managers to add %s to the admin API "+
			"allow-list for %s", resource, c.cfg.AppCode, resource, c.cfg.AppCode, entry)
	case e.Layer == LayerGateway && (e.Code == 1640301 || e.HTTPStatus == http.StatusForbidden):
		advice = fmt.Sprintf("; the app %s holds no grant of the bk-iam gateway resource %s: ask the gateway's managers "+
			"to grant it (bk-iam gateway, resource permissions), and IAM's managers to add %s to the admin API allow-list "+
			"for %s if it is not on it", c.cfg.AppCode, resource, c.cfg.AppCode, entry)
	case e.Layer == LayerIAM && e.Code == 1902403 && strings.Contains(e.Message, "do not be allowed to call api"):
		advice = fmt.Sprintf("; ask IAM's managers to add the app %s to the admin API allow-list for %s (IAM's "+
			"administration, API allow-list, super-manager APIs)", c.cfg.AppCode, entry)
	default:
		return
	}
	e.Message = c.cleanMessage(e.Message + advice)
}
