package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

const modelApps = `"apps":[{"code":"a","secret":"s","client_of":["*"]}]`

func TestModelValidationNamesTheField(t *testing.T) {
	sys0 := `{"id":"s0","resource_types":[{"id":"host"}],"actions":[{"id":"a","related_types":["host"]}],"allow_list":{"instance_actions":[],"creator_types":[]}}`
	cases := []struct{ name, js, want string }{
		{"unknown related type", `{"systems":[` + sys0 + `,{"id":"s1","resource_types":[{"id":"host"}],"actions":[{"id":"a","related_types":["host"]},{"id":"b","related_types":[]},{"id":"c","related_types":["hots"]}],"allow_list":{"instance_actions":[],"creator_types":[]}}],` + modelApps + `}`,
			`systems[1].actions[2].related_types[0]: unknown resource type "hots"`},
		{"no systems", `{"systems":[],` + modelApps + `}`, "systems: at least one system is required"},
		{"duplicate system", `{"systems":[` + sys0 + `,` + sys0 + `]}`, `systems[1].id: duplicate system "s0"`},
		{"blank action", `{"systems":[{"id":"s","resource_types":[],"actions":[{"id":""}],"allow_list":{"instance_actions":[],"creator_types":[]}}]}`, "systems[0].actions[0].id: required"},
		{"creator action unknown", `{"systems":[{"id":"s","resource_types":[{"id":"t"}],"actions":[],"creator_actions":[{"id":"t","actions":[{"id":"x","required":false}]}],"allow_list":{"instance_actions":[],"creator_types":[]}}]}`,
			`systems[0].creator_actions[0].actions[0].id: unknown action "x"`},
		{"creator sub type unknown", `{"systems":[{"id":"s","resource_types":[{"id":"t"}],"actions":[],"creator_actions":[{"id":"t","actions":[],"sub_resource_types":[{"id":"u","actions":[]}]}],"allow_list":{"instance_actions":[],"creator_types":[]}}]}`,
			`systems[0].creator_actions[0].sub_resource_types[0].id: unknown resource type "u"`},
		{"creator action twice", `{"systems":[{"id":"s","resource_types":[{"id":"t"}],"actions":[{"id":"a","related_types":["t"]}],"creator_actions":[{"id":"t","actions":[{"id":"a","required":false},{"id":"a","required":true}]}],"allow_list":{"instance_actions":[],"creator_types":[]}}]}`,
			`systems[0].creator_actions[0].actions[1].id: duplicate action "a"`},
		{"allow-list action", `{"systems":[{"id":"s","resource_types":[],"actions":[],"allow_list":{"instance_actions":["nope"],"creator_types":[]}}]}`,
			`systems[0].allow_list.instance_actions[0]: unknown action "nope"`},
		{"app client of unknown system", `{"systems":[` + sys0 + `],"apps":[{"code":"a","secret":"s","client_of":["s9"]}]}`, `apps[0].client_of[0]: unknown system "s9"`},
		{"app without secret", `{"systems":[` + sys0 + `],"apps":[{"code":"a","client_of":[]}]}`, `apps[0].secret: required`},
		{"group not numeric", `{"systems":[` + sys0 + `],"groups":["1","devs"]}`, `groups[1]: group id "devs" is not numeric`},
		{"token of unknown user", `{"systems":[` + sys0 + `],"users":["alice"],"tokens":{"t1":"bob"}}`, `tokens["t1"]: unknown user "bob"`},
		{"super manager unknown", `{"systems":[` + sys0 + `],"users":["alice"],"super_managers":["bob"]}`, `super_managers[0]: unknown user "bob"`},
		{"system managers of an unknown system", `{"systems":[` + sys0 + `],"users":["alice"],"system_managers":{"s9":["alice"]}}`, `system_managers["s9"]: unknown system`},
		{"system manager unknown", `{"systems":[` + sys0 + `],"users":["alice"],"system_managers":{"s0":["alice","bob"]}}`, `system_managers["s0"][1]: unknown user "bob"`},
		{"negative limit", `{"systems":[` + sys0 + `],"limits":{"grant_instances":-1}}`, `limits.grant_instances: must not be negative, got -1`},
		{"unknown field", `{"systems":[` + sys0 + `],"userz":[]}`, `parse model: json: unknown field "userz"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sandbox.LoadModel([]byte(tc.js))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "m.json")
	_ = os.WriteFile(path, []byte(`{"systems":[]}`), 0o600)
	if _, err := sandbox.LoadModelFile(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "systems") {
		t.Fatalf("LoadModelFile error should name the file and field: %v", err)
	}
}

func TestDefaultModelIsTheContractsModel(t *testing.T) {
	m := sandbox.DefaultModel()
	if got := strings.Join(m.Users, ","); got != "admin,alice,bob,carol,dave" {
		t.Errorf("users %s", got)
	}
	if got := strings.Join(m.Groups, ","); got != "1,2,3" {
		t.Errorf("groups %s", got)
	}
	if m.Tokens["token-alice"] != "alice" || len(m.Apps) != 2 || m.Apps[0].Code != "bkiam-sandbox" || m.Apps[0].Secret != "sandbox-secret" ||
		!m.Apps[0].ESBSkipLogin || m.Apps[1].Code != "outsider" || m.Apps[1].Secret != "outsider-secret" || len(m.Apps[1].ClientOf) != 0 {
		t.Errorf("apps/tokens %+v %+v", m.Apps, m.Tokens)
	}
	if m.Limits != (sandbox.Limits{GrantInstances: 200, RevokeInstances: 1000, InstanceIDLength: 36, PolicyInstances: 10000}) {
		t.Errorf("limits %+v", m.Limits)
	}
	want := map[string]string{
		"bk_cmdb": "view_host[host] edit_host[host] delete_host[host] view_biz[biz] edit_biz[biz] edit_biz_host[biz host] create_biz[] manage_host[host]rbac",
		"bk_job":  "view[job] edit[job] delete[job] list[job]",
		"bk_sops": "project_view[project] project_edit[project] mini_app_view[mini_app]! mini_app_edit[mini_app]",
	}
	for _, s := range m.Systems {
		var parts []string
		for _, a := range s.Actions {
			p := a.ID + "[" + strings.Join(a.RelatedTypes, " ") + "]"
			if a.IgnoreIAMPath {
				p += "!"
			}
			p += a.AuthType
			parts = append(parts, p)
		}
		if got := strings.Join(parts, " "); got != want[s.ID] {
			t.Errorf("%s actions: %s", s.ID, got)
		}
	}
}
