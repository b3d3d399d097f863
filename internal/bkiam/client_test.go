package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"testing"
)

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestSuccessBothTransports(t *testing.T) {
	tests := []struct {
		name     string
		cfg      func(string) Config
		path     string
		wantAuth bool // X-Bkapi-Authorization header (gateway) vs. body credentials (ESB)
	}{
		{"gateway", gatewayConfig, "/api/bk-iam/prod/api/v1/open/authorization/batch_instance/", true},
		{"esb", esbConfig, "/api/c/compapi/v2/iam/authorization/batch_instance/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, reply(200, okBody))
			c := mustClient(t, tt.cfg(fs.URL))
			got, err := c.BatchInstance(context.Background(), grantReq())
			if err != nil {
				t.Fatalf("BatchInstance: %v", err)
			}
			if len(got) != 1 || got[0].Action.ID != "edit_host" || got[0].PolicyID != 12 || got[0].Statistics.InstanceCount != 2 {
				t.Fatalf("results = %+v", got)
			}
			reqs := fs.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.Path != tt.path {
				t.Errorf("got %s %s, want POST %s", r.Method, r.Path, tt.path)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if ua := r.Header.Get("User-Agent"); ua != "terraform-provider-bkiam/test" {
				t.Errorf("User-Agent = %q", ua)
			}
			if id := r.Header.Get("X-Request-Id"); !hex32.MatchString(id) {
				t.Errorf("X-Request-Id = %q, want 32 hex", id)
			}
			if tt.wantAuth {
				var auth map[string]string
				if err := json.Unmarshal([]byte(r.Header.Get("X-Bkapi-Authorization")), &auth); err != nil {
					t.Fatalf("X-Bkapi-Authorization is not JSON: %v", err)
				}
				if auth["bk_app_code"] != testAppCode || auth["bk_app_secret"] != testAppSecret || len(auth) != 2 {
					t.Errorf("X-Bkapi-Authorization = %v", auth)
				}
				if got := r.Header.Get("X-Bk-Tenant-Id"); got != "tenant-a" {
					t.Errorf("X-Bk-Tenant-Id = %q", got)
				}
				if _, ok := r.Body["bk_app_secret"]; ok {
					t.Errorf("gateway body carries credentials: %s", r.Raw)
				}
			} else {
				if r.Header.Get("X-Bkapi-Authorization") != "" {
					t.Errorf("ESB request has X-Bkapi-Authorization")
				}
				if r.Header.Get("X-Bk-Tenant-Id") != "" {
					t.Errorf("tenant header sent though not configured")
				}
				for k, want := range map[string]string{"bk_app_code": testAppCode, "bk_app_secret": testAppSecret,
					"bk_username": testUser, "bk_token": testBKToken} {
					if r.Body[k] != want {
						t.Errorf("body %s = %v, want %q", k, r.Body[k], want)
					}
				}
			}
			// The API arguments.
			if r.Body["system"] != "bk_cmdb" || r.Body["operate"] != "grant" || r.Body["asynchronous"] != false ||
				r.Body["expired_at"] != float64(PermanentExpiry) {
				t.Errorf("body = %s", r.Raw)
			}
			if s := r.Body["subject"].(map[string]any); s["type"] != "user" || s["id"] != "bob" {
				t.Errorf("subject = %v", s)
			}
			res := r.Body["resources"].([]any)[0].(map[string]any)
			if res["type"] != "host" || len(res["instances"].([]any)) != 2 {
				t.Errorf("resources = %v", r.Body["resources"])
			}
		})
	}
}

func TestRequestShapes(t *testing.T) {
	fs := newFakeServer(t, reply(200, `{"result":true,"code":0,"message":"OK","data":[]}`))
	c := mustClient(t, gatewayConfig(fs.URL))
	ctx := context.Background()

	// No related resource type: resources must be [] (not null), expired_at omitted when 0.
	_, err := c.BatchInstance(ctx, BatchInstanceRequest{System: "s", Operate: OperationRevoke,
		Subject: Subject{Type: "group", ID: "7"}, Actions: []Action{{ID: "a"}}})
	if err != nil {
		t.Fatal(err)
	}
	// A path grant.
	_, err = c.BatchPath(ctx, BatchPathRequest{System: "bk_sops", Operate: OperationGrant,
		Subject: Subject{Type: "user", ID: "bob"}, Actions: []Action{{ID: "view"}},
		Resources: []PathResource{{System: "bk_sops", Type: "mini_app", Paths: [][]PathNode{{
			{System: "bk_sops", Type: "project", ID: "p1", Name: "P1"},
			{System: "bk_sops", Type: "mini_app", ID: "m1", Name: "M1"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	// A creator grant, one instance with and one without ancestors.
	_, err = c.BatchResourceCreatorAction(ctx, CreatorActionRequest{System: "bk_sops", Type: "mini_app", Creator: "bob",
		Instances: []CreatorInstance{
			{ID: "m1", Name: "M1", Ancestors: []Ancestor{{System: "bk_sops", Type: "project", ID: "p1"}}},
			{ID: "m2", Name: "M2"}}})
	if err != nil {
		t.Fatal(err)
	}

	reqs := fs.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := reqs[0].Raw; !regexp.MustCompile(`"resources":\[\]`).MatchString(got) || regexp.MustCompile(`expired_at`).MatchString(got) {
		t.Errorf("instance revoke body = %s", got)
	}
	if reqs[1].Path != "/api/bk-iam/prod/api/v1/open/authorization/batch_path/" {
		t.Errorf("path grant path = %s", reqs[1].Path)
	}
	path := reqs[1].Body["resources"].([]any)[0].(map[string]any)["paths"].([]any)[0].([]any)
	if len(path) != 2 || path[1].(map[string]any)["name"] != "M1" {
		t.Errorf("paths = %v", path)
	}
	if reqs[2].Path != "/api/bk-iam/prod/api/v1/open/authorization/batch_resource_creator_action/" {
		t.Errorf("creator path = %s", reqs[2].Path)
	}
	insts := reqs[2].Body["instances"].([]any)
	if _, ok := insts[1].(map[string]any)["ancestors"]; ok {
		t.Errorf("empty ancestors sent: %s", reqs[2].Raw)
	}
	if reqs[2].Body["creator"] != "bob" || reqs[2].Body["type"] != "mini_app" {
		t.Errorf("creator body = %s", reqs[2].Raw)
	}
	// Each call gets its own request id.
	if reqs[0].Header.Get("X-Request-Id") == reqs[1].Header.Get("X-Request-Id") {
		t.Errorf("request ids repeat across calls")
	}
}

func TestUnrelatedPoliciesReturned(t *testing.T) {
	body := `{"result":true,"code":0,"message":"OK","data":[
		{"action":{"id":"view_host"},"policy_id":3,"statistics":{"instance_count":9}},
		{"action":{"id":"edit_host"},"policy_id":12,"statistics":{"instance_count":2}},
		{"action":{"id":"delete_host"},"policy_id":5,"statistics":{"instance_count":1}}]}`
	fs := newFakeServer(t, reply(200, body))
	got, err := mustClient(t, gatewayConfig(fs.URL)).BatchInstance(context.Background(), grantReq())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Action.ID != "view_host" || got[1].PolicyID != 12 || got[2].Action.ID != "delete_host" {
		t.Fatalf("results = %+v", got)
	}
}

func TestNullDataIsEmpty(t *testing.T) {
	fs := newFakeServer(t, reply(200, `{"code":0,"message":"ok","data":null}`))
	got, err := mustClient(t, gatewayConfig(fs.URL)).BatchInstance(context.Background(), grantReq())
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want empty non-nil slice", got, err)
	}
}

func TestEmptyInstancesGuard(t *testing.T) {
	path := func(nodes ...PathNode) []PathNode { return nodes }
	node := PathNode{System: "s", Type: "t", ID: "1", Name: "n"}
	base := grantReq()
	tests := []struct {
		name string
		call func(*Client) error
	}{
		{"instance grant with empty instances", func(c *Client) error {
			r := base
			r.Resources = []InstanceResource{{System: "bk_cmdb", Type: "host"}}
			_, err := c.BatchInstance(context.Background(), r)
			return err
		}},
		{"instance grant, second entry empty", func(c *Client) error {
			r := base
			r.Resources = append(append([]InstanceResource(nil), base.Resources...), InstanceResource{System: "bk_cmdb", Type: "module", Instances: []Instance{}})
			_, err := c.BatchInstance(context.Background(), r)
			return err
		}},
		{"instance revoke with empty instances", func(c *Client) error {
			r := base
			r.Operate = OperationRevoke
			r.Resources = []InstanceResource{{System: "bk_cmdb", Type: "host"}}
			_, err := c.BatchInstance(context.Background(), r)
			return err
		}},
		{"path grant with no paths", func(c *Client) error {
			_, err := c.BatchPath(context.Background(), BatchPathRequest{System: "s", Operate: OperationGrant,
				Subject: Subject{Type: "user", ID: "u"}, Actions: []Action{{ID: "a"}},
				Resources: []PathResource{{System: "s", Type: "t"}}})
			return err
		}},
		{"path grant with an empty path", func(c *Client) error {
			_, err := c.BatchPath(context.Background(), BatchPathRequest{System: "s", Operate: OperationGrant,
				Subject: Subject{Type: "user", ID: "u"}, Actions: []Action{{ID: "a"}},
				Resources: []PathResource{{System: "s", Type: "t", Paths: [][]PathNode{path(node), path()}}}})
			return err
		}},
		{"creator grant with no instances", func(c *Client) error {
			_, err := c.BatchResourceCreatorAction(context.Background(), CreatorActionRequest{System: "s", Type: "t", Creator: "u"})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFakeServer(t, reply(200, okBody))
			err := tt.call(mustClient(t, gatewayConfig(fs.URL)))
			if !errors.Is(err, ErrEmptyInstances) {
				t.Fatalf("err = %v, want ErrEmptyInstances", err)
			}
			if n := len(fs.requests()); n != 0 {
				t.Fatalf("%d HTTP calls, want 0", n)
			}
		})
	}
}

func TestLocalValidation(t *testing.T) {
	fs := newFakeServer(t, reply(200, okBody))
	c := mustClient(t, gatewayConfig(fs.URL))
	bad := []BatchInstanceRequest{
		func() BatchInstanceRequest { r := grantReq(); r.Operate = "delete"; return r }(),
		func() BatchInstanceRequest { r := grantReq(); r.Actions = nil; return r }(),
		func() BatchInstanceRequest { r := grantReq(); r.Subject.ID = ""; return r }(),
		func() BatchInstanceRequest { r := grantReq(); r.ExpiredAt = PermanentExpiry + 1; return r }(),
	}
	for i, r := range bad {
		if _, err := c.BatchInstance(context.Background(), r); !errors.Is(err, ErrValidation) {
			t.Errorf("case %d: err = %v, want ErrValidation", i, err)
		}
	}
	if n := len(fs.requests()); n != 0 {
		t.Fatalf("%d HTTP calls, want 0", n)
	}
}

func TestTransport(t *testing.T) {
	if got := mustClient(t, gatewayConfig("https://x")).Transport(); got != TransportGateway {
		t.Errorf("gateway Transport() = %q", got)
	}
	if got := mustClient(t, esbConfig("https://x")).Transport(); got != TransportESB {
		t.Errorf("esb Transport() = %q", got)
	}
}

func TestGuardErrorText(t *testing.T) {
	r := grantReq()
	r.Resources[0].Instances = nil
	_, err := mustClient(t, gatewayConfig("https://x")).BatchInstance(context.Background(), r)
	want := `bkiam: invalid grant request: resource 0 (bk_cmdb/host) has no instances; IAM reads an empty list as "every instance", so it is never sent`
	if err == nil || err.Error() != want || errors.Is(err, ErrValidation) {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	r = grantReq()
	r.Resources[0].Instances = []Instance{{ID: " ", Name: "x"}}
	if _, err := mustClient(t, gatewayConfig("https://x")).BatchInstance(context.Background(), r); !errors.Is(err, ErrValidation) {
		t.Fatalf("blank instance id: err = %v", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	fs := newFakeServer(t, reply(503, "busy"), reply(200, okBody))
	c := mustClient(t, esbConfig(fs.URL))
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		go func() {
			_, err := c.BatchInstance(context.Background(), grantReq())
			errs <- err
		}()
	}
	for i := 0; i < 20; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
