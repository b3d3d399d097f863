package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// The names FillMessySite gives, as IAM keeps them.
const (
	MessyGradeManager = "site ops"
	// MessySyncGroup is the grade manager's sync group, under the name
	// IAM gives it through the management API, "<grade manager>
	// administrator group".
	MessySyncGroup = MessyGradeManager + " administrator group"
	MessyOps       = "ops team"
	MessyDB        = "db,cache"
	MessyEmpty     = "运维值班组"
)

// MessySite is what FillMessySite made: the ids IAM gave, and the
// expiries (unix seconds) of what it made to expire in 5 days (Soon) and
// in 30 (Later).
type MessySite struct {
	GradeManager, SyncGroup, Ops, DB, Empty int64
	Soon, Later                             int64
}

// FillMessySite makes, through IAM's APIs only (management API and
// authorization API, as the web UI and a team's scripts over the years
// would), a site as untidy as a real one:
//
//   - the grade manager "site ops" of bk_cmdb (members alice and bob),
//     with sync_perm and IAM's default sync group "site ops administrator group",
//     whose scope for view_host, edit_host and delete_host is
//     { id = "*" } (granted to the sync group verbatim: the literal id
//     "*") and every host of business 1, and create_biz (no resource
//     type);
//   - its groups "ops team" and "db,cache" (made in one call) and
//     "运维值班组" (another call), which stays empty;
//   - ops team's members, added in three calls: alice and department 2
//     for good, carol until Soon, bob until Later; db,cache's: bob for
//     good, department 3 until Soon;
//   - ops team's view_host on host 7, then on host 8 (IAM merges them),
//     and on host 10 through the authorization API (group subject), its
//     edit_host on host 9 under business 1 (a path), and create_biz;
//     db,cache's delete_host on host 11 and view_host on the literal "*"
//     (the scope's instance copied as it reads);
//   - users' grants through the authorization API: alice view_host on
//     hosts 1 and 2, then 3, then 2 revoked; bob view_host on host 4
//     until Soon; carol delete_host on hosts 5 and 6; dave view_host on
//     the id "/srv" (IAM takes any id; the provider reads a key that
//     begins with "/" as a path, and refuses it. A user cannot be granted
//     the lone id "*": IAM fails the grant).
//
// AddMessyTemplateRows adds the permission-template rows, which only the
// sandbox's control route can make. It needs the sandbox's default model.
func FillMessySite(ctx context.Context, c *bkiam.Client) (MessySite, error) {
	var site MessySite
	const sys = "bk_cmdb"
	host := func(id string) bkiam.PathNode {
		return bkiam.PathNode{System: sys, Type: "host", ID: id, Name: "host" + id}
	}
	biz1 := bkiam.PathNode{System: sys, Type: "biz", ID: "1", Name: "biz1"}
	hostAny := bkiam.PathNode{System: sys, Type: "host", ID: "*"}
	gm, err := c.CreateGradeManager(ctx, sys, bkiam.GradeManagerSpec{Name: MessyGradeManager, Description: "the ops team's own",
		Members: []string{"alice", "bob"}, SyncPerm: true,
		AuthorizationScopes: []bkiam.AuthorizationScope{
			{System: sys, Actions: []bkiam.Action{{ID: "view_host"}, {ID: "edit_host"}, {ID: "delete_host"}},
				Resources: []bkiam.PathResource{{System: sys, Type: "host", Paths: [][]bkiam.PathNode{{hostAny}, {biz1, hostAny}}}}},
			{System: sys, Actions: []bkiam.Action{{ID: "create_biz"}}, Resources: []bkiam.PathResource{}},
		},
		SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}}})
	if err != nil {
		return site, fmt.Errorf("creating the grade manager: %w", err)
	}
	site.GradeManager = gm
	sync, err := c.GroupByName(ctx, sys, gm, MessySyncGroup)
	if err != nil {
		return site, fmt.Errorf("finding the sync group %q: %w", MessySyncGroup, err)
	} else if sync == nil {
		return site, fmt.Errorf("grade manager %d has no sync group %q", gm, MessySyncGroup)
	}
	site.SyncGroup = sync.ID
	groups, err := c.CreateGroups(ctx, sys, fmt.Sprint(gm), []bkiam.GroupSpec{{Name: MessyOps, Description: "on call, 24/7"}, {Name: MessyDB}})
	if err != nil {
		return site, fmt.Errorf("creating the groups: %w", err)
	}
	site.Ops, site.DB = groups[0], groups[1]
	if groups, err = c.CreateGroups(ctx, sys, fmt.Sprint(gm), []bkiam.GroupSpec{{Name: MessyEmpty, Description: "值班"}}); err != nil {
		return site, fmt.Errorf("creating the empty group: %w", err)
	}
	site.Empty = groups[0]

	now := time.Now()
	site.Soon, site.Later = now.Add(5*24*time.Hour).Unix(), now.Add(30*24*time.Hour).Unix()
	user := func(id string) bkiam.MemberRef { return bkiam.MemberRef{Type: "user", ID: id} }
	department := func(id string) bkiam.MemberRef { return bkiam.MemberRef{Type: "department", ID: id} }
	for _, add := range []struct {
		group   int64
		members []bkiam.MemberRef
		expiry  int64
	}{
		{site.Ops, []bkiam.MemberRef{user("alice"), department("2")}, bkiam.PermanentExpiry},
		{site.Ops, []bkiam.MemberRef{user("carol")}, site.Soon},
		{site.Ops, []bkiam.MemberRef{user("bob")}, site.Later},
		{site.DB, []bkiam.MemberRef{user("bob")}, bkiam.PermanentExpiry},
		{site.DB, []bkiam.MemberRef{department("3")}, site.Soon},
	} {
		if err := c.AddMembers(ctx, sys, add.group, add.members, add.expiry); err != nil {
			return site, fmt.Errorf("adding members to group %d: %w", add.group, err)
		}
	}

	hosts := func(paths ...[]bkiam.PathNode) []bkiam.PathResource {
		return []bkiam.PathResource{{System: sys, Type: "host", Paths: paths}}
	}
	for _, g := range []struct {
		group     int64
		action    string
		resources []bkiam.PathResource
	}{
		{site.Ops, "view_host", hosts([]bkiam.PathNode{host("7")})},
		{site.Ops, "view_host", hosts([]bkiam.PathNode{host("8")})},
		{site.Ops, "edit_host", hosts([]bkiam.PathNode{biz1, host("9")})},
		{site.Ops, "create_biz", nil},
		{site.DB, "delete_host", hosts([]bkiam.PathNode{host("11")})},
		{site.DB, "view_host", hosts([]bkiam.PathNode{hostAny})},
	} {
		if err := c.GrantGroupPolicies(ctx, sys, g.group, bkiam.GroupPolicyRequest{Actions: []bkiam.Action{{ID: g.action}},
			Resources: g.resources}); err != nil {
			return site, fmt.Errorf("granting group %d %s: %w", g.group, g.action, err)
		}
	}

	for _, g := range []struct {
		operate bkiam.Operation
		subject bkiam.Subject
		action  string
		ids     []string
		expiry  int64
	}{
		{bkiam.OperationGrant, bkiam.Subject{Type: "user", ID: "alice"}, "view_host", []string{"1", "2"}, bkiam.PermanentExpiry},
		{bkiam.OperationGrant, bkiam.Subject{Type: "user", ID: "alice"}, "view_host", []string{"3"}, bkiam.PermanentExpiry},
		{bkiam.OperationRevoke, bkiam.Subject{Type: "user", ID: "alice"}, "view_host", []string{"2"}, 0},
		{bkiam.OperationGrant, bkiam.Subject{Type: "user", ID: "bob"}, "view_host", []string{"4"}, site.Soon},
		{bkiam.OperationGrant, bkiam.Subject{Type: "user", ID: "carol"}, "delete_host", []string{"5", "6"}, bkiam.PermanentExpiry},
		{bkiam.OperationGrant, bkiam.Subject{Type: "user", ID: "dave"}, "view_host", []string{"/srv"}, bkiam.PermanentExpiry},
		{bkiam.OperationGrant, bkiam.Subject{Type: "group", ID: fmt.Sprint(site.Ops)}, "view_host", []string{"10"}, bkiam.PermanentExpiry},
	} {
		var instances []bkiam.Instance
		for _, id := range g.ids {
			instances = append(instances, bkiam.Instance{ID: id, Name: "host" + id})
		}
		if _, err := c.BatchInstance(ctx, bkiam.BatchInstanceRequest{System: sys, Operate: g.operate, Subject: g.subject,
			Actions: []bkiam.Action{{ID: g.action}}, Resources: []bkiam.InstanceResource{{System: sys, Type: "host", Instances: instances}},
			ExpiredAt: g.expiry}); err != nil {
			return site, fmt.Errorf("%s %s to %s %s: %w", g.operate, g.action, g.subject.Type, g.subject.ID, err)
		}
	}
	return site, nil
}

// MessyTemplateRow is a row a group holds through a permission template,
// as the sandbox's POST /_sandbox/template_policies takes it.
type MessyTemplateRow struct {
	System     string   `json:"system"`
	TemplateID int64    `json:"template_id"`
	Group      string   `json:"group"`
	Action     string   `json:"action"`
	Paths      []string `json:"paths,omitempty"`
	ExpiredAt  int64    `json:"expired_at,omitempty"`
}

// MessyTemplateRows are the permission-template rows of the messy site:
// db,cache's delete_host on host 12 beside its custom host 11, the sync
// group's view_host on host 13 until Soon, and the model's group 1's
// view_host on host 14 (a group under no grade manager).
func MessyTemplateRows(site MessySite) []MessyTemplateRow {
	return []MessyTemplateRow{
		{System: "bk_cmdb", TemplateID: 7, Group: fmt.Sprint(site.DB), Action: "delete_host", Paths: []string{"/bk_cmdb,host,12/"}},
		{System: "bk_cmdb", TemplateID: 8, Group: fmt.Sprint(site.SyncGroup), Action: "view_host", Paths: []string{"/bk_cmdb,host,13/"},
			ExpiredAt: site.Soon},
		{System: "bk_cmdb", TemplateID: 9, Group: "1", Action: "view_host", Paths: []string{"/bk_cmdb,host,14/"}},
	}
}

// AddMessyTemplateRows gives the groups their MessyTemplateRows through
// the sandbox at sandboxURL (IAM's management API makes no template
// rows; the sandbox's control route stands for the web UI's templates).
// It adds every row it can and returns the refusals, one per row.
func AddMessyTemplateRows(ctx context.Context, sandboxURL string, site MessySite) []error {
	var errs []error
	for _, row := range MessyTemplateRows(site) {
		body, err := json.Marshal(row)
		if err != nil {
			return append(errs, err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(sandboxURL, "/")+"/_sandbox/template_policies",
			bytes.NewReader(body))
		if err != nil {
			return append(errs, err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			errs = append(errs, fmt.Errorf("template row %s: %w", body, err))
			continue
		}
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			errs = append(errs, fmt.Errorf("POST /_sandbox/template_policies %s: HTTP %d %s", body, resp.StatusCode, bytes.TrimSpace(answer)))
		}
	}
	return errs
}
