package acctest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// CrossSystemProfile is the bk_job-shaped pair of systems TestAccSite_CrossSystem
// registers through IAM's model API, as every BlueKing app registers its model at deploy
// (bk_job's do_migrate: query, then POST what is missing and PUT what exists): Remote, a
// CMDB-shaped system with a resource type biz and its instance selection business, and
// System, whose action Action relates to Remote's biz (as bk_job's access_business relates
// to bk_cmdb's biz). IAM lets only an app of the same id register a system, so each system's
// app code is its id. The site must let System's app grant every action of it
// (authorization_instance "*" on the SaaS's allow-list) and know User, who holds nothing of
// Action. The two apps' secrets come from BKIAM_ACC_CROSS_SYSTEM_SECRET and
// BKIAM_ACC_CROSS_REMOTE_SECRET (or app_secret in the profile, for a throwaway site).
type CrossSystemProfile struct {
	System    string `json:"system"`
	AppSecret string `json:"app_secret,omitempty"`
	Action    string `json:"action"`
	Remote    struct {
		System    string `json:"system"`
		AppSecret string `json:"app_secret,omitempty"`
	} `json:"remote"`
	// ProviderHost is the resource provider both systems register (IAM asks it for names).
	ProviderHost string `json:"provider_host"`
	// Instances are two business ids of Remote: the first is granted, the second not.
	Instances []string `json:"instances"`
	User      string   `json:"user"`
}

// SandboxCrossSystem is the profile on the sandbox's BlueKing model (BlueKingSandbox): bk_job's
// access_business on bk_cmdb's biz, which the model already holds.
func SandboxCrossSystem() *CrossSystemProfile {
	p := &CrossSystemProfile{System: "bk_job", Action: "access_business", Instances: []string{"1", "2"}, User: "dave"}
	p.Remote.System = "bk_cmdb"
	return p
}

// modelCall is one call of IAM's model API through the gateway, as app (with secret); the
// answer's code must be 0.
func modelCall(t *testing.T, gateway, app, secret, method, path string, body any) json.RawMessage {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(gateway, "/")+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	auth, _ := json.Marshal(map[string]string{"bk_app_code": app, "bk_app_secret": secret})
	req.Header.Set("X-Bkapi-Authorization", string(auth))
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil || env.Code != 0 {
		t.Fatalf("IAM's model API refused %s %s as %s: HTTP %d %s", method, path, app, resp.StatusCode, raw)
	}
	return env.Data
}

// RegisterCrossSystem registers p's two systems on the real site at gateway through IAM's model
// API, creating what is missing and updating what exists, as bk_job's do_migrate does.
func RegisterCrossSystem(t *testing.T, gateway string, p *CrossSystemProfile) {
	t.Helper()
	p.AppSecret = cmp.Or(p.AppSecret, os.Getenv("BKIAM_ACC_CROSS_SYSTEM_SECRET"))
	p.Remote.AppSecret = cmp.Or(p.Remote.AppSecret, os.Getenv("BKIAM_ACC_CROSS_REMOTE_SECRET"))
	if p.AppSecret == "" || p.Remote.AppSecret == "" {
		t.Fatal("cross_system: set BKIAM_ACC_CROSS_SYSTEM_SECRET and BKIAM_ACC_CROSS_REMOTE_SECRET, the secrets of the apps " +
			p.System + " and " + p.Remote.System)
	}
	provider := map[string]any{"host": p.ProviderHost, "auth": "basic", "healthz": "/healthz/"}
	remote := p.Remote.System
	type part struct {
		key, route string
		items      []map[string]any
	}
	register := func(system, secret string, spec map[string]any, parts []part) {
		query := func() map[string][]struct {
			ID string `json:"id"`
		} {
			var got map[string][]struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(modelCall(t, gateway, system, secret, http.MethodGet, "/api/v1/model/systems/"+system+"/query", nil), &got)
			return got
		}
		if !systemKnown(gateway, system, secret) {
			modelCall(t, gateway, system, secret, http.MethodPost, "/api/v1/model/systems", spec)
		} else {
			// An update leaves the clients as the site has them (another app may be one).
			update := map[string]any{}
			for k, v := range spec {
				if k != "id" && k != "clients" {
					update[k] = v
				}
			}
			modelCall(t, gateway, system, secret, http.MethodPut, "/api/v1/model/systems/"+system, update)
		}
		have := query()
		for _, pt := range parts {
			for _, item := range pt.items {
				id := item["id"].(string)
				if slices.ContainsFunc(have[pt.key], func(x struct {
					ID string `json:"id"`
				}) bool {
					return x.ID == id
				}) {
					put := item
					if pt.key != "actions" { // do_migrate drops the id from these bodies
						put = map[string]any{}
						for k, v := range item {
							if k != "id" {
								put[k] = v
							}
						}
					}
					modelCall(t, gateway, system, secret, http.MethodPut, "/api/v1/model/systems/"+system+"/"+pt.route+"/"+id, put)
					continue
				}
				modelCall(t, gateway, system, secret, http.MethodPost, "/api/v1/model/systems/"+system+"/"+pt.route, []map[string]any{item})
			}
		}
	}
	register(remote, p.Remote.AppSecret,
		map[string]any{"id": remote, "name": remote + " (CMDB-shaped)", "name_en": remote, "clients": remote + "," + p.System, "provider_config": provider},
		[]part{
			{"resource_types", "resource-types", []map[string]any{{"id": "biz", "name": "业务", "name_en": "Business", "parents": []any{},
				"provider_config": map[string]any{"path": "/api/v1/iam/resources/"}, "version": 1}}},
			{"instance_selections", "instance-selections", []map[string]any{{"id": "business", "name": "业务列表", "name_en": "Business",
				"resource_type_chain": []map[string]string{{"system_id": remote, "id": "biz"}}}}},
		})
	register(p.System, p.AppSecret,
		map[string]any{"id": p.System, "name": p.System + " (bk_job-shaped)", "name_en": p.System, "clients": p.System, "provider_config": provider},
		[]part{{"actions", "actions", []map[string]any{{"id": p.Action, "name": p.Action + " 业务访问", "name_en": "Access business (" + p.Action + ")",
			"type": "view", "related_actions": []any{}, "version": 1,
			"related_resource_types": []map[string]any{{"system_id": remote, "id": "biz", "selection_mode": "instance",
				"related_instance_selections": []map[string]string{{"system_id": remote, "id": "business"}}}}}}}})
}

// systemKnown is whether IAM's model API knows system (its query answers code 0).
func systemKnown(gateway, system, secret string) bool {
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(gateway, "/")+"/api/v1/model/systems/"+system+"/query", nil)
	if err != nil {
		return false
	}
	auth, _ := json.Marshal(map[string]string{"bk_app_code": system, "bk_app_secret": secret})
	req.Header.Set("X-Bkapi-Authorization", string(auth))
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var env struct {
		Code int `json:"code"`
	}
	return json.NewDecoder(resp.Body).Decode(&env) == nil && env.Code == 0
}

// CrossSystemProvider is the provider block for the job-shaped system's app on the real site at
// gateway, with expiry_conflicts set.
func CrossSystemProvider(gateway string, p *CrossSystemProfile) string {
	return fmt.Sprintf("\nprovider \"bkiam\" {\n  apigw_url        = %q\n  app_code         = %q\n  app_secret       = %q\n  expiry_conflicts = \"error\"\n}\n",
		gateway, p.System, p.AppSecret)
}
