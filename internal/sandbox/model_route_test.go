package sandbox_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// The model query (GET /api/v1/model/systems/{system}/query), served from the sandbox's model in
// the backend's shape; its errors are the backend's (package doc of internal/bkiam, "The model").
func TestModelQuery(t *testing.T) {
	s := newServer(t)
	r := getRead(t, s, "/api/v1/model/systems/bk_sops/query?fields=actions,resource_types,instance_selections,resource_creator_actions", goodAuth)
	var got struct {
		Code int `json:"code"`
		Data struct {
			Actions []struct {
				ID                   string
				AuthType             string `json:"auth_type"`
				Hidden               bool
				RelatedResourceTypes []struct {
					SystemID           string `json:"system_id"`
					ID                 string
					InstanceSelections []struct {
						ID            string
						IgnoreIAMPath bool `json:"ignore_iam_path"`
					} `json:"instance_selections"`
				} `json:"related_resource_types"`
			}
			ResourceTypes []struct {
				ID      string
				Parents []struct {
					SystemID string `json:"system_id"`
					ID       string
				}
			} `json:"resource_types"`
			InstanceSelections []struct {
				ID                string
				ResourceTypeChain []struct{ ID string } `json:"resource_type_chain"`
			} `json:"instance_selections"`
			ResourceCreatorActions struct {
				Config []struct {
					ID               string
					SubResourceTypes []struct{ ID string } `json:"sub_resource_types"`
				}
			} `json:"resource_creator_actions"`
		}
	}
	if err := json.Unmarshal([]byte(r.raw), &got); err != nil || got.Code != 0 || r.status != 200 {
		t.Fatalf("%d %v %s", r.status, err, r.raw)
	}
	d := got.Data
	if len(d.Actions) != 4 || d.Actions[2].ID != "mini_app_view" || len(d.Actions[2].RelatedResourceTypes) != 1 ||
		d.Actions[2].RelatedResourceTypes[0].SystemID != "bk_sops" || d.Actions[2].RelatedResourceTypes[0].ID != "mini_app" ||
		!d.Actions[2].RelatedResourceTypes[0].InstanceSelections[0].IgnoreIAMPath {
		t.Errorf("actions: %+v", d.Actions)
	}
	if len(d.ResourceTypes) != 2 || d.ResourceTypes[1].ID != "mini_app" || len(d.ResourceTypes[1].Parents) != 1 || d.ResourceTypes[1].Parents[0].ID != "project" {
		t.Errorf("resource types: %+v", d.ResourceTypes)
	}
	if len(d.InstanceSelections) != 2 || len(d.InstanceSelections[1].ResourceTypeChain) != 2 || d.InstanceSelections[1].ResourceTypeChain[0].ID != "project" {
		t.Errorf("instance selections: %+v", d.InstanceSelections)
	}
	if c := d.ResourceCreatorActions.Config; len(c) != 1 || c[0].ID != "project" || len(c[0].SubResourceTypes) != 1 || c[0].SubResourceTypes[0].ID != "mini_app" {
		t.Errorf("creator config: %+v", c)
	}

	// auth_type as the model sets it.
	r = getRead(t, s, "/api/v1/model/systems/bk_cmdb/query?fields=actions", goodAuth)
	if !strings.Contains(r.raw, `"id":"manage_host","name":"manage_host","name_en":"manage_host","description":"","description_en":"","auth_type":"rbac"`) {
		t.Errorf("manage_host: %s", r.raw)
	}
	var keys struct{ Data map[string]json.RawMessage }
	if _ = json.Unmarshal([]byte(r.raw), &keys); len(keys.Data) != 1 || keys.Data["actions"] == nil {
		t.Errorf("fields not asked for were answered: %s", r.raw)
	}

	outsider := `{"bk_app_code":"outsider","bk_app_secret":"outsider-secret"}`
	for _, tc := range []struct {
		path, auth string
		code       int
		msg        string
	}{
		{"/api/v1/model/systems/bk_nope/query", goodAuth, 1901404, "not found:system(bk_nope) not exists"},
		{"/api/v1/model/systems/bk_cmdb/query", outsider, 1901401, "unauthorized:app(outsider) is not allowed to call system (bk_cmdb) api"},
	} {
		r := getRead(t, s, tc.path, tc.auth)
		if r.status != 200 || r.code() != tc.code || r.message() != tc.msg {
			t.Errorf("%s: %d %s", tc.path, r.status, r.raw)
		}
	}
	if n := s.Stats().Requests["model_query"]; n != 4 {
		t.Errorf("model_query counted %d, want 4", n)
	}

	// model_fail fails model queries only; the other faults never touch them.
	if err := s.SetFaults(sandbox.Faults{ModelFail: &sandbox.FailFault{Count: 1, Status: 503, Code: 1902500},
		Fail: &sandbox.FailFault{Count: 5, Status: 500, Code: 1902500}}); err != nil {
		t.Fatal(err)
	}
	if r := getRead(t, s, "/api/v1/model/systems/bk_cmdb/query", goodAuth); r.status != 503 {
		t.Fatalf("model_fail: %d %s", r.status, r.raw)
	}
	if r := getRead(t, s, "/api/v1/model/systems/bk_cmdb/query", goodAuth); r.status != 200 || r.code() != 0 {
		t.Fatalf("after the model fault, with a fail fault armed: %d %s", r.status, r.raw)
	}
}
