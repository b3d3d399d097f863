package bkiam

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// mgmtOK is a management answer: the SaaS envelope around data.
func mgmtOK(data string) http.HandlerFunc {
	return reply(200, `{"data":`+data+`,"result":true,"code":0,"message":"OK"}`)
}

// queries records the query string of each request (the fake server keeps paths only).
type queries struct {
	mu sync.Mutex
	qs []url.Values
}

func (q *queries) wrap(hs ...http.HandlerFunc) []http.HandlerFunc {
	out := make([]http.HandlerFunc, len(hs))
	for i, h := range hs {
		out[i] = func(w http.ResponseWriter, r *http.Request) {
			q.mu.Lock()
			q.qs = append(q.qs, r.URL.Query())
			q.mu.Unlock()
			h(w, r)
		}
	}
	return out
}

func TestManagementCalls(t *testing.T) {
	ctx := context.Background()
	spec := GradeManagerSpec{Name: "ops", Description: "", Members: []string{"alice"},
		AuthorizationScopes: []AuthorizationScope{{System: "bk_cmdb", Actions: []Action{{ID: "view_host"}}, Resources: []PathResource{}}},
		SubjectScopes:       []SubjectScope{{Type: "*", ID: "*"}}}

	fs := newFakeServer(t, mgmtOK(`{"id":7}`), mgmtOK(`{}`),
		mgmtOK(`{"id":7,"name":"ops","description":"","creator":"bk__anonymous_user","members":["alice"],"sync_perm":false}`),
		mgmtOK(`[31,32]`), mgmtOK(`{}`))
	c := mustClient(t, gatewayConfig(fs.URL))
	id, err := c.CreateGradeManager(ctx, "bk_cmdb", spec)
	if err != nil || id != 7 {
		t.Fatalf("CreateGradeManager = %d, %v", id, err)
	}
	if err := c.UpdateGradeManager(ctx, "bk_cmdb", 7, spec); err != nil {
		t.Fatal(err)
	}
	gm, err := c.GradeManager(ctx, "bk_cmdb", 7)
	if err != nil || gm.Name != "ops" || len(gm.Members) != 1 || gm.SyncPerm {
		t.Fatalf("GradeManager = %+v, %v", gm, err)
	}
	ids, err := c.CreateGroups(ctx, "bk_cmdb", SystemManager, []GroupSpec{{Name: "a", Description: "x"}, {Name: "b"}})
	if err != nil || len(ids) != 2 || ids[0] != 31 {
		t.Fatalf("CreateGroups = %v, %v", ids, err)
	}
	if err := c.DeleteGradeManager(ctx, "bk_cmdb", 7); err != nil {
		t.Fatal(err)
	}
	reqs := fs.requests()
	want := []string{
		"POST /api/v2/open/management/systems/bk_cmdb/grade_managers/",
		"PUT /api/v2/open/management/systems/bk_cmdb/grade_managers/7/",
		"GET /api/v2/open/management/systems/bk_cmdb/grade_managers/7/",
		"POST /api/v2/open/management/systems/bk_cmdb/grade_managers/-/groups/",
		"DELETE /api/v2/open/management/systems/bk_cmdb/grade_managers/7/",
	}
	for i, w := range want {
		if got := reqs[i].Method + " " + reqs[i].Path; !strings.HasSuffix(got, strings.TrimPrefix(w, reqs[i].Method+" ")) || reqs[i].Method != strings.Fields(w)[0] {
			t.Errorf("request %d is %s, want %s", i, got, w)
		}
	}
	// An update is a full replace that deletes the sync group when sync_perm is left out: the
	// client always sends it, false included.
	if v, ok := reqs[1].Body["sync_perm"]; !ok || v != false {
		t.Errorf("the update body lacks sync_perm: %s", reqs[1].Raw)
	}
	if _, ok := reqs[0].Body["group_name"]; !ok {
		t.Errorf("the create body lacks group_name: %s", reqs[0].Raw)
	}
	if g, ok := reqs[3].Body["groups"].([]any); !ok || len(g) != 2 {
		t.Errorf("the group create body: %s", reqs[3].Raw)
	}
}

func TestManagementPagesAndMembers(t *testing.T) {
	ctx := context.Background()
	rows := func(from, n int) string {
		var parts []string
		for i := from; i < from+n; i++ {
			parts = append(parts, fmt.Sprintf(`{"type":"user","id":"u%d","name":"U%d","expired_at":4102444800,"created_at":1}`, i, i))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	var q queries
	fs := newFakeServer(t, q.wrap(
		mgmtOK(`{"count":501,"results":`+rows(0, 500)+`}`),
		mgmtOK(`{"count":501,"results":`+rows(500, 1)+`}`),
		mgmtOK(`{"count":1,"results":[{"id":5,"name":"devs","description":"d","user_count":1,"department_count":0,"readonly":false}]}`),
		mgmtOK(`{}`), mgmtOK(`{}`))...)
	c := mustClient(t, gatewayConfig(fs.URL))
	members, err := c.GroupMembers(ctx, "bk_cmdb", 5)
	if err != nil || len(members) != 501 || members[500].ID != "u500" || members[0].ExpiredAt != PermanentExpiry {
		t.Fatalf("GroupMembers = %d members, %v", len(members), err)
	}
	groups, err := c.ListGroups(ctx, "bk_cmdb", 7, GroupFilter{Name: "dev"})
	if err != nil || len(groups) != 1 || groups[0].Name != "devs" {
		t.Fatalf("ListGroups = %+v, %v", groups, err)
	}
	if err := c.AddMembers(ctx, "bk_cmdb", 5, []MemberRef{{Type: "user", ID: "alice"}}, PermanentExpiry); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteMembers(ctx, "bk_cmdb", 5, "user", []string{"bob", "carol"}); err != nil {
		t.Fatal(err)
	}
	qs := q.qs
	if qs[0].Get("page") != "1" || qs[1].Get("page") != "2" || qs[0].Get("page_size") != "500" {
		t.Errorf("member pages: %v", qs[:2])
	}
	if qs[2].Get("name") != "dev" || qs[2].Get("inherit") != "false" {
		t.Errorf("group list query: %v", qs[2])
	}
	if qs[4].Get("type") != "user" || qs[4].Get("ids") != "bob,carol" {
		t.Errorf("member delete query: %v", qs[4])
	}
	reqs := fs.requests()
	if reqs[3].Body["expired_at"] != float64(PermanentExpiry) || reqs[4].Method != http.MethodDelete {
		t.Errorf("member add/delete: %s; %s", reqs[3].Raw, reqs[4].Method)
	}
}

func TestManagementErrors(t *testing.T) {
	ctx := context.Background()
	forbid := func(msg string) http.HandlerFunc {
		return reply(403, `{"result":false,"code":1902403,"message":"没有访问权限: `+msg+` (FORBIDDEN)","data":null}`)
	}
	for _, tc := range []struct {
		name     string
		h        http.HandlerFunc
		is, not  []error
		code     int
		attempts int
	}{
		{"a grade manager not created by the system, or gone",
			forbid("role[9] can not be operated by app_code[my-app], since role is not created by system[bk_cmdb])"),
			[]error{ErrNotOwned, ErrForbidden}, nil, 1902403, 1},
		{"a group not created by the system, or gone",
			forbid("group[9] can not operated by app_code[my-app], since related role of group is not created by system[bk_cmdb])"),
			[]error{ErrNotOwned, ErrForbidden}, nil, 1902403, 1},
		{"the management allow-list",
			forbid("system[bk_cmdb] is not allowed to call management api[v2_grade_manager_detail], please contact the developer to add a whitelist"),
			[]error{ErrForbidden}, []error{ErrNotOwned}, 1902403, 1},
		{"a name taken",
			reply(409, `{"result":false,"code":1902409,"message":"与已有资源冲突(重名等): 名称 [ops] 已存在，请修改为其他名称 (CONFLICT_ERROR)","data":null}`),
			[]error{ErrConflict}, []error{ErrForbidden}, 1902409, 1},
		// IAM's backend errors come as 1902000 in HTTP 200: an error, never a success. A failed
		// backend call is retried as for the authorization calls; the backend's definite refusal
		// (a 19014xx code, or a lookup that found nothing) fails at once.
		{"the backend unreachable in HTTP 200",
			reply(200, `{"result":false,"code":1902000,"message":"请求第三方API错误: request iam fail! Request=[http_post /api/v1/web/groups/members request_id=abc]error=timeout (REMOTE_REQUEST_ERROR)","data":null}`),
			[]error{ErrTransient}, []error{ErrConflict, ErrForbidden}, 1902000, 3},
		{"the backend's quota refusal in HTTP 200",
			reply(200, `{"result":false,"code":1902000,"message":"请求第三方API错误: request iam error! Request=[http_post /api/v1/web/groups/members request_id=abc] Response[code=1901409, message=conflict:[Handler:checkSubjectGroupsQuota] subject {user alice} can only have 100 groups in system bk_cmdb.[current 100] => quota error] (REMOTE_REQUEST_ERROR)","data":null}`),
			nil, []error{ErrTransient, ErrConflict, ErrForbidden}, 1902000, 1},
		{"the backend's rate limit in HTTP 200",
			reply(200, `{"result":false,"code":1902000,"message":"请求第三方API错误: request iam error! Request=[http_post /api/v1/web/groups/members request_id=abc] Response[code=1901429, message=too many requests] (REMOTE_REQUEST_ERROR)","data":null}`),
			[]error{ErrTransient}, nil, 1902000, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFakeServer(t, tc.h)
			_, err := mustClient(t, gatewayConfig(fs.URL)).GradeManager(ctx, "bk_cmdb", 9)
			var e *Error
			if !errors.As(err, &e) || e.Code != tc.code {
				t.Fatalf("err = %v, want code %d", err, tc.code)
			}
			for _, is := range tc.is {
				if !errors.Is(err, is) {
					t.Errorf("not %v: %v", is, err)
				}
			}
			for _, not := range tc.not {
				if errors.Is(err, not) {
					t.Errorf("is %v: %v", not, err)
				}
			}
			if n := len(fs.requests()); n != tc.attempts {
				t.Errorf("%d requests, want %d", n, tc.attempts)
			}
		})
	}

	c := mustClient(t, esbConfig("http://127.0.0.1:1"))
	if _, err := c.GradeManager(ctx, "bk_cmdb", 1); !errors.Is(err, ErrManagementNeedsGateway) {
		t.Errorf("ESB: %v", err)
	}
	g := mustClient(t, gatewayConfig("http://127.0.0.1:1"))
	tooMany := make([]MemberRef, MaxMembersPerCall+1)
	for i := range tooMany {
		tooMany[i] = MemberRef{Type: "user", ID: fmt.Sprint(i)}
	}
	if err := g.AddMembers(ctx, "bk_cmdb", 1, tooMany, PermanentExpiry); !errors.Is(err, ErrValidation) {
		t.Errorf("1001 members: %v", err)
	}
	if _, err := g.CreateGroups(ctx, "bk_cmdb", "1", make([]GroupSpec, MaxGroupsPerCreate+1)); !errors.Is(err, ErrValidation) {
		t.Errorf("11 groups: %v", err)
	}
	if err := g.DeleteMembers(ctx, "bk_cmdb", 1, "user", []string{"a,b"}); !errors.Is(err, ErrValidation) {
		t.Errorf("a comma in an id: %v", err)
	}
}

// TestGroupByName: IAM's name filter matches substrings, case-insensitively; the exact name wins.
func TestGroupByName(t *testing.T) {
	list := mgmtOK(`{"count":3,"results":[{"id":9,"name":"ops-admins"},{"id":8,"name":"OPS"},{"id":7,"name":"ops"}]}`)
	fs := newFakeServer(t, list)
	c := mustClient(t, gatewayConfig(fs.URL))
	g, err := c.GroupByName(context.Background(), "bk_cmdb", 3, "ops")
	if err != nil || g == nil || g.ID != 7 {
		t.Fatalf("GroupByName(ops) = %+v, %v", g, err)
	}
	if g, err := c.GroupByName(context.Background(), "bk_cmdb", 3, "op"); err != nil || g != nil {
		t.Fatalf("GroupByName(op) = %+v, %v; want none", g, err)
	}
}

// TestManagementPagePastTheEnd: the group list answers a page number past
// its end with 404 1902404 (the package doc, "The management API"); a list
// that shrank under the read ends there, while a 404 on the first page is
// an error.
func TestManagementPagePastTheEnd(t *testing.T) {
	ctx := context.Background()
	var rows []string
	for i := 0; i < 500; i++ {
		rows = append(rows, fmt.Sprintf(`{"id":%d,"name":"g%d","description":"","user_count":0,"department_count":0,"readonly":false}`, i+1, i))
	}
	notFound := reply(404, `{"data":null,"result":false,"code":1902404,"message":"数据不存在"}`)
	fs := newFakeServer(t, mgmtOK(`{"count":501,"results":[`+strings.Join(rows, ",")+`]}`), notFound, notFound)
	c := mustClient(t, gatewayConfig(fs.URL))
	groups, err := c.ListGroups(ctx, "bk_cmdb", 7, GroupFilter{})
	if err != nil || len(groups) != 500 {
		t.Fatalf("a list that shrank: %d groups, %v", len(groups), err)
	}
	if _, err := c.ListGroups(ctx, "bk_cmdb", 7, GroupFilter{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a 404 on the first page: %v", err)
	}
}

// TestSyncGroupIDs: the v1 group list's source_from_role marks the sync groups (the package doc,
// "The management API"), read page after page from the v1 route; a row without attributes (an
// older SaaS) is ErrNoGroupAttributes, not "no sync group".
func TestSyncGroupIDs(t *testing.T) {
	ctx := context.Background()
	row := func(id int, fromRole bool) string {
		return fmt.Sprintf(`{"id":%d,"name":"g%d","description":"","attributes":{"source_type":"openapi","source_from_role":%v}}`, id, id, fromRole)
	}
	var first []string
	for i := 0; i < ManagementPageSize; i++ {
		first = append(first, row(1000-i, false))
	}
	fs := newFakeServer(t, mgmtOK(`{"count":502,"results":[`+strings.Join(first, ",")+`]}`), mgmtOK(`{"count":502,"results":[`+row(7, true)+`,`+row(3, false)+`]}`))
	c := mustClient(t, gatewayConfig(fs.URL))
	ids, err := c.SyncGroupIDs(ctx, 42)
	if err != nil || len(ids) != 1 || !ids[7] {
		t.Fatalf("SyncGroupIDs = %v, %v; want group 7 alone", ids, err)
	}
	if reqs := fs.requests(); len(reqs) != 2 || !strings.HasSuffix(reqs[1].Path, "/api/v1/open/management/grade_managers/42/groups/") {
		t.Fatalf("requests %+v, want two pages of the v1 group list of grade manager 42", reqs)
	}
	none := newFakeServer(t, mgmtOK(`{"count":1,"results":[{"id":7,"name":"g7","description":""}]}`))
	if ids, err := mustClient(t, gatewayConfig(none.URL)).SyncGroupIDs(ctx, 42); !errors.Is(err, ErrNoGroupAttributes) || ids != nil {
		t.Fatalf("a row without attributes: %v, %v; want ErrNoGroupAttributes", ids, err)
	}
}
