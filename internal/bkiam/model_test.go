package bkiam

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// modelBody is a model query answer shaped like the real backend's (fields the client does not
// read included).
const modelBody = `{"code":0,"message":"ok","data":{
  "actions":[
    {"id":"view_host","name":"查看主机","name_en":"View host","description":"","auth_type":"abac","type":"view","hidden":false,"version":1,
     "related_resource_types":[{"system_id":"bk_cmdb","id":"host","name_alias":"","name_alias_en":"","selection_mode":"instance",
       "instance_selections":[{"system_id":"bk_cmdb","id":"host_list","ignore_iam_path":false}]}],"related_actions":[]},
    {"id":"manage_host","name":"管理主机","name_en":"Manage host","auth_type":"rbac","hidden":true,
     "related_resource_types":[{"system_id":"bk_cmdb","id":"host","selection_mode":"instance","instance_selections":[]}]},
    {"id":"create_biz","name":"新建业务","name_en":"Create business","auth_type":"","related_resource_types":[]}
  ],
  "resource_types":[{"id":"biz","name":"业务","name_en":"Business","parents":[]},
    {"id":"host","name":"主机","name_en":"Host","parents":[{"system_id":"bk_cmdb","id":"biz"}],"provider_config":{"path":"/x"}}],
  "instance_selections":[{"id":"host_list","name":"主机列表","resource_type_chain":[{"system_id":"bk_cmdb","id":"host"}]}],
  "resource_creator_actions":{"mode":"","config":[{"id":"biz","actions":[{"id":"view_biz","required":false}],
    "sub_resource_types":[{"id":"host","actions":[{"id":"view_host","required":true}],"sub_resource_types":[]}]}]}
}}`

func TestSystemModel(t *testing.T) {
	fs := newFakeServer(t, reply(200, modelBody))
	c := mustClient(t, gatewayConfig(fs.URL))
	m, err := c.SystemModel(context.Background(), "bk_cmdb")
	if err != nil {
		t.Fatal(err)
	}
	reqs := fs.requests()
	if len(reqs) != 1 || reqs[0].Method != http.MethodGet || !strings.HasSuffix(reqs[0].Path, "/api/v1/model/systems/bk_cmdb/query") {
		t.Fatalf("requests %+v", reqs)
	}
	if a := m.Action("view_host"); a == nil || a.NameEn != "View host" || a.Name != "查看主机" || a.RBAC() ||
		len(a.RelatedResourceTypes) != 1 || !reflect.DeepEqual(a.RelatedResourceTypes[0], RelatedResourceType{System: "bk_cmdb", ID: "host", SelectionMode: "instance",
		InstanceSelections: []InstanceSelection{{System: "bk_cmdb", ID: "host_list"}}}) {
		t.Errorf("view_host = %+v", a)
	}
	if a := m.Action("manage_host"); a == nil || !a.RBAC() || !a.Hidden {
		t.Errorf("manage_host = %+v", a)
	}
	if a := m.Action("create_biz"); a == nil || a.RBAC() || len(a.RelatedResourceTypes) != 0 {
		t.Errorf("create_biz = %+v", a)
	}
	if m.Action("fly") != nil {
		t.Error("an unknown action was found")
	}
	if rt := m.ResourceType("host"); rt == nil || rt.NameEn != "Host" || len(rt.Parents) != 1 || rt.Parents[0] != (TypeRef{System: "bk_cmdb", ID: "biz"}) {
		t.Errorf("host = %+v", rt)
	}
	if n := m.CreatorNode("host"); n == nil || len(n.Actions) != 1 || n.Actions[0] != (CreatorAction{ID: "view_host", Required: true}) {
		t.Errorf("creator node host (a sub resource type) = %+v", n)
	}
	if m.CreatorNode("job") != nil {
		t.Error("a creator node for a type without one")
	}
}

func TestSystemModelErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   string
		wantIs error
		want   []string
	}{
		{"not a client", `{"code":1901401,"message":"unauthorized:app(my-app) is not allowed to call system (bk_cmdb) api","data":{}}`,
			ErrForbidden, []string{"model query GET /api/v1/model/systems/bk_cmdb/query", "code 1901401", "reading the system's model needs the app registered as a client"}},
		{"unknown system", `{"code":1901404,"message":"not found:system(bk_cmdb) not exists","data":{}}`,
			ErrNotFound, []string{"code 1901404", "system(bk_cmdb) not exists"}},
		{"no actions", `{"code":0,"message":"ok","data":{"resource_types":[]}}`, ErrUnexpectedResponse, []string{"a system model without actions"}},
		{"action without id", `{"code":0,"message":"ok","data":{"actions":[{"name":"x"}]}}`, ErrUnexpectedResponse, []string{"action 0 without an id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFakeServer(t, reply(200, tc.body))
			_, err := mustClient(t, gatewayConfig(fs.URL)).SystemModel(context.Background(), "bk_cmdb")
			if !errors.Is(err, tc.wantIs) {
				t.Fatalf("err = %v, want Is %v", err, tc.wantIs)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message lacks %q: %v", w, err)
				}
			}
		})
	}
	if _, err := mustClient(t, esbConfig("http://127.0.0.1:1")).SystemModel(context.Background(), "bk_cmdb"); !errors.Is(err, ErrModelNeedsGateway) {
		t.Errorf("ESB: %v", err)
	}
}

// TestModelCacheReadsOnce: concurrent callers share one read; a failed read is kept; a read whose
// caller gave up is not.
func TestModelCacheReadsOnce(t *testing.T) {
	gate := make(chan struct{})
	fs := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-gate
		reply(200, modelBody)(w, r)
	})
	mc := NewModelCache(mustClient(t, gatewayConfig(fs.URL)))
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := mc.Get(context.Background(), "bk_cmdb")
			if err == nil && m.Action("view_host") == nil {
				err = errors.New("a model without view_host")
			}
			errs <- err
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(fs.requests()); n != 1 || mc.Reads() != 1 {
		t.Fatalf("%d requests, %d reads; want 1", n, mc.Reads())
	}

	failing := newFakeServer(t, reply(200, `{"code":1901404,"message":"not found:system(bk_x) not exists","data":{}}`))
	mc = NewModelCache(mustClient(t, gatewayConfig(failing.URL)))
	for range 3 {
		if _, err := mc.Get(context.Background(), "bk_x"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v", err)
		}
	}
	if n := len(failing.requests()); n != 1 {
		t.Fatalf("a failed read was repeated: %d requests", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	mc = NewModelCache(mustClient(t, gatewayConfig(fs.URL)))
	if _, err := mc.Get(ctx, "bk_cmdb"); err == nil {
		t.Fatal("a cancelled read succeeded")
	}
	if _, err := mc.Get(context.Background(), "bk_cmdb"); err != nil {
		t.Fatalf("the read after a cancelled one: %v", err)
	}
}

// TestSystemModelSandbox: the client reads the sandbox's model query as it reads the backend's.
func TestSystemModelSandbox(t *testing.T) {
	sb := sandboxtest.Start(t)
	c := sandboxClient(t, sb.URL)
	m, err := c.SystemModel(context.Background(), "bk_sops")
	if err != nil {
		t.Fatal(err)
	}
	if a := m.Action("mini_app_view"); a == nil || len(a.RelatedResourceTypes) != 1 || a.RelatedResourceTypes[0].ID != "mini_app" ||
		!a.RelatedResourceTypes[0].InstanceSelections[0].IgnoreIAMPath {
		t.Errorf("mini_app_view = %+v", a)
	}
	if n := m.CreatorNode("mini_app"); n == nil || len(n.Actions) != 2 {
		t.Errorf("creator node mini_app = %+v", n)
	}
	if rt := m.ResourceType("mini_app"); rt == nil || len(rt.Parents) != 1 || rt.Parents[0] != (TypeRef{System: "bk_sops", ID: "project"}) {
		t.Errorf("mini_app = %+v", rt)
	}
	cm, err := c.SystemModel(context.Background(), "bk_cmdb")
	if err != nil || cm.Action("manage_host") == nil || !cm.Action("manage_host").RBAC() || len(cm.CreatorConfig) != 1 {
		t.Fatalf("bk_cmdb: %+v %v", cm, err)
	}
	if _, err := c.SystemModel(context.Background(), "bk_nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown system: %v", err)
	}
	if n := sandboxStats(t, sb.URL)["model_query"]; n != 3 {
		t.Errorf("model_query = %d, want 3", n)
	}
}

// TestScanCacheUsesModels: with the systems' models, a group's lookup reads the RBAC list only for
// an action whose auth_type is rbac or all; without them, both lists.
func TestScanCacheUsesModels(t *testing.T) {
	sb := sandboxtest.Start(t)
	c := sandboxClient(t, sb.URL)
	group := Subject{Type: "group", ID: "1"}
	grantHosts(t, c, group, "manage_host", "4")
	grantHosts(t, c, group, "edit_host", "4")
	for _, tc := range []struct {
		name       string
		withModels bool
		action     string
		wantLists  int
	}{
		{"abac action, models", true, "edit_host", 1},
		{"rbac action, models", true, "manage_host", 2},
		{"abac action, no models", false, "edit_host", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := sandboxStats(t, sb.URL)["policy_list"]
			sc := NewScanCache(c, nil)
			if tc.withModels {
				sc.UseModels(NewModelCache(c))
			}
			rows, err := sc.Lookup(context.Background(), "bk_cmdb", tc.action, group)
			if err != nil || len(rows) != 1 {
				t.Fatalf("Lookup = %+v, %v; want the group's one row", rows, err)
			}
			if n := sandboxStats(t, sb.URL)["policy_list"] - before; n != tc.wantLists {
				t.Errorf("%d policy lists read, want %d", n, tc.wantLists)
			}
		})
	}
}
