package sandbox_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// blueKingModel loads the embedded BlueKing model, failing the test with the validation error.
func blueKingModel(t testing.TB) *sandbox.Model {
	t.Helper()
	m, err := sandbox.BlueKingModel()
	if err != nil {
		t.Fatalf("BlueKingModel: %v", err)
	}
	return m
}

// qualifiedType splits a related type or parent of system into (system, type): "bk_cmdb:biz" is
// bk_cmdb's biz, a plain "script" is one of system's own.
func qualifiedType(system, ref string) (string, string) {
	if sys, typ, ok := strings.Cut(ref, ":"); ok {
		return sys, typ
	}
	return system, ref
}

func modelSystem(t testing.TB, m *sandbox.Model, id string) *sandbox.System {
	t.Helper()
	for i := range m.Systems {
		if m.Systems[i].ID == id {
			return &m.Systems[i]
		}
	}
	t.Fatalf("no system %q in the model", id)
	return nil
}

// The BlueKing model keeps the real systems' cross-system shape: bk_job's actions and resource
// types name bk_cmdb's biz and host, in the real order, and bk_sops names nothing of bk_cmdb (its
// registered model does not; a project maps to a business only inside bk_sops).
func TestBlueKingModelCrossSystemShape(t *testing.T) {
	m := blueKingModel(t)
	related := []struct {
		system, action string
		want           []string
	}{
		{"bk_job", "access_business", []string{"bk_cmdb:biz"}},
		{"bk_job", "create_script", []string{"bk_cmdb:biz"}},
		{"bk_job", "view_script", []string{"script"}},
		{"bk_job", "execute_script", []string{"script", "bk_cmdb:host"}},
		{"bk_job", "quick_execute_script", []string{"bk_cmdb:host"}},
		{"bk_job", "launch_job_plan", []string{"job_plan", "bk_cmdb:host"}},
		{"bk_job", "create_whitelist", []string{}},
		{"bk_cmdb", "find_business_resource", []string{"biz"}},
		{"bk_cmdb", "edit_biz_host", []string{"host"}},
		{"bk_cmdb", "view_project", []string{}},
		{"bk_sops", "common_flow_create_task", []string{"common_flow", "project"}},
	}
	for _, c := range related {
		t.Run(c.system+"/"+c.action, func(t *testing.T) {
			for _, a := range modelSystem(t, m, c.system).Actions {
				if a.ID == c.action {
					if !reflect.DeepEqual(a.RelatedTypes, c.want) {
						t.Fatalf("related_types = %q, want %q", a.RelatedTypes, c.want)
					}
					return
				}
			}
			t.Fatalf("no action %q", c.action)
		})
	}
	parents := []struct {
		system, typ string
		want        []string
	}{
		{"bk_job", "script", []string{"bk_cmdb:biz", "bk_cmdb:business_set"}},
		{"bk_job", "job_template", []string{"bk_cmdb:biz", "bk_cmdb:business_set"}},
		{"bk_job", "job_plan", []string{"job_template"}},
		{"bk_cmdb", "host", []string{"biz"}},
		{"bk_cmdb", "module", []string{"set"}},
		{"bk_sops", "flow", []string{"project"}},
	}
	for _, c := range parents {
		t.Run(c.system+"/"+c.typ, func(t *testing.T) {
			for _, rt := range modelSystem(t, m, c.system).ResourceTypes {
				if rt.ID == c.typ {
					if !reflect.DeepEqual(rt.Parents, c.want) {
						t.Fatalf("parents = %q, want %q", rt.Parents, c.want)
					}
					return
				}
			}
			t.Fatalf("no resource type %q", c.typ)
		})
	}
	for _, rt := range modelSystem(t, m, "bk_sops").ResourceTypes {
		for _, p := range rt.Parents {
			if strings.Contains(p, ":") {
				t.Errorf("bk_sops %s has parent %q: the real bk_sops model names no other system", rt.ID, p)
			}
		}
	}
	for _, a := range modelSystem(t, m, "bk_sops").Actions {
		for _, rt := range a.RelatedTypes {
			if strings.Contains(rt, ":") {
				t.Errorf("bk_sops %s relates to %q: the real bk_sops model names no other system", a.ID, rt)
			}
		}
	}
}

// Every related type and parent names a resource type of a system in the model, and every creator
// action relates to its node's type or to none, so that a creator grant of each kept type works.
// The type id "project" is both bk_cmdb's and bk_sops', as in the real models.
func TestBlueKingModelReferencesResolve(t *testing.T) {
	m := blueKingModel(t)
	types := map[[2]string]bool{}
	for _, s := range m.Systems {
		for _, rt := range s.ResourceTypes {
			types[[2]string{s.ID, rt.ID}] = true
		}
	}
	for _, s := range m.Systems {
		for _, rt := range s.ResourceTypes {
			for _, p := range rt.Parents {
				if sys, typ := qualifiedType(s.ID, p); !types[[2]string{sys, typ}] {
					t.Errorf("%s resource type %s: parent %q is no resource type of the model", s.ID, rt.ID, p)
				}
			}
		}
		actions := map[string]sandbox.Action{}
		for _, a := range s.Actions {
			actions[a.ID] = a
			for _, ref := range a.RelatedTypes {
				if sys, typ := qualifiedType(s.ID, ref); !types[[2]string{sys, typ}] {
					t.Errorf("%s action %s: related type %q is no resource type of the model", s.ID, a.ID, ref)
				}
			}
		}
		var walk func([]sandbox.CreatorConfig)
		walk = func(nodes []sandbox.CreatorConfig) {
			for _, n := range nodes {
				for _, ca := range n.Actions {
					a, ok := actions[ca.ID]
					if !ok || len(a.RelatedTypes) > 1 || len(a.RelatedTypes) == 1 && a.RelatedTypes[0] != n.ID {
						t.Errorf("%s creator node %s: action %s relates to %q, not to the node's type or none", s.ID, n.ID, ca.ID, a.RelatedTypes)
					}
				}
				walk(n.SubResourceTypes)
			}
		}
		walk(s.CreatorActions)
	}
	if !types[[2]string{"bk_cmdb", "project"}] || !types[[2]string{"bk_sops", "project"}] {
		t.Errorf("want the resource type project in both bk_cmdb and bk_sops")
	}
}

// The model query answers another system's type with that system's id, as the real backend
// answers bk_job's model: access_business relates to bk_cmdb's biz, script has bk_cmdb parents and
// its instance selection chain starts at bk_cmdb's biz (bk_job's script_list_of_biz).
func TestBlueKingModelQueryNamesTheOtherSystem(t *testing.T) {
	s := newServer(t, withModel(blueKingModel(t)))
	r := getRead(t, s, "/api/v1/model/systems/bk_job/query?fields=actions,resource_types,instance_selections", goodAuth)
	type ref struct {
		SystemID string `json:"system_id"`
		ID       string `json:"id"`
	}
	var got struct {
		Code int `json:"code"`
		Data struct {
			Actions []struct {
				ID                   string `json:"id"`
				RelatedResourceTypes []ref  `json:"related_resource_types"`
			} `json:"actions"`
			ResourceTypes []struct {
				ID      string `json:"id"`
				Parents []ref  `json:"parents"`
			} `json:"resource_types"`
			InstanceSelections []struct {
				ResourceTypeChain []ref `json:"resource_type_chain"`
			} `json:"instance_selections"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(r.raw), &got); err != nil || got.Code != 0 || r.status != 200 {
		t.Fatalf("%d %v %s", r.status, err, r.raw)
	}
	relates := map[string][]ref{}
	for _, a := range got.Data.Actions {
		relates[a.ID] = a.RelatedResourceTypes
	}
	biz, host, script := ref{"bk_cmdb", "biz"}, ref{"bk_cmdb", "host"}, ref{"bk_job", "script"}
	for action, want := range map[string][]ref{
		"access_business": {biz},
		"execute_script":  {script, host},
	} {
		if !reflect.DeepEqual(relates[action], want) {
			t.Errorf("%s related_resource_types = %+v, want %+v", action, relates[action], want)
		}
	}
	var scriptParents []ref
	for _, rt := range got.Data.ResourceTypes {
		if rt.ID == "script" {
			scriptParents = rt.Parents
		}
	}
	if want := []ref{biz, {"bk_cmdb", "business_set"}}; !reflect.DeepEqual(scriptParents, want) {
		t.Errorf("script parents = %+v, want %+v", scriptParents, want)
	}
	var chains [][]ref
	for _, sel := range got.Data.InstanceSelections {
		chains = append(chains, sel.ResourceTypeChain)
		if reflect.DeepEqual(sel.ResourceTypeChain, []ref{biz, script}) {
			return
		}
	}
	t.Errorf("no instance selection with the chain bk_cmdb biz → bk_job script: %+v", chains)
}

// A creator grant names its ancestors in their own system: a bk_job script under bk_cmdb's
// business 2 is granted on the path biz → script, and an ancestor the bk_cmdb callback does not
// know fails as on the real server. bk_cmdb's project creator gets view_project, an action with no
// resource type in the real model, as an any policy.
func TestBlueKingCreatorGrantAcrossSystems(t *testing.T) {
	creator := func(system, typ, id, ancestors string) string {
		return `{"system":"` + system + `","type":"` + typ + `","creator":"alice","instances":[{"id":"` + id + `","name":"x","ancestors":[` + ancestors + `]}]}`
	}
	biz := func(id string) string { return `{"system":"bk_cmdb","type":"biz","id":"` + id + `"}` }
	cases := []struct {
		name, system, body string
		want               map[string]string // action → "any" or its paths, comma-joined
	}{
		{"script under a business", "bk_job", creator("bk_job", "script", "s1", biz("2")),
			map[string]string{"view_script": "/bk_cmdb,biz,2/bk_job,script,s1/", "manage_script": "/bk_cmdb,biz,2/bk_job,script,s1/"}},
		{"job plan under a business and a template", "bk_job",
			creator("bk_job", "job_plan", "p1", biz("3")+`,{"system":"bk_job","type":"job_template","id":"1001"}`),
			map[string]string{"view_job_plan": "/bk_cmdb,biz,3/bk_job,job_template,1001/bk_job,job_plan,p1/",
				"edit_job_plan":   "/bk_cmdb,biz,3/bk_job,job_template,1001/bk_job,job_plan,p1/",
				"delete_job_plan": "/bk_cmdb,biz,3/bk_job,job_template,1001/bk_job,job_plan,p1/",
				"sync_job_plan":   "/bk_cmdb,biz,3/bk_job,job_template,1001/bk_job,job_plan,p1/"}},
		{"cmdb project", "bk_cmdb", creator("bk_cmdb", "project", "p1", ""),
			map[string]string{"edit_project": "/bk_cmdb,project,p1/", "delete_project": "/bk_cmdb,project,p1/", "view_project": "any"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, withModel(blueKingModel(t)))
			wantOK(t, send(t, s, gw, "batch_resource_creator_action", c.body))
			got := map[string]string{}
			for _, p := range s.Policies(sandbox.PolicyFilter{System: c.system, SubjectID: "alice"}).Policies {
				if p.Any {
					got[p.Action] = "any"
				} else {
					got[p.Action] = strings.Join(p.Paths, ",")
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("alice's policies = %v, want %v", got, c.want)
			}
		})
	}
	s := newServer(t, withModel(blueKingModel(t)))
	wantSaaSError(t, gw, send(t, s, gw, "batch_resource_creator_action", creator("bk_job", "script", "s1", biz("9"))), 200, 1902416,
		"query instance name of system[bk_cmdb] resource type[biz] id[9] by callback failed: not found (INVALID_ARGS)")
	wantPolicies(t, s, all, noPolicies)
}
