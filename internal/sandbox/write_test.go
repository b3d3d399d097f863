package sandbox_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// The tests in this file follow the package doc of internal/bkiam, "Where the real server differs
// from a first reading", section "Writing": each test names the behaviour it pins.

// Ids are trimmed: system, type, instance, path node, subject and action ids lose surrounding white
// space (DRF CharField's default); names are declared with trim_whitespace=False and kept, so a name
// of only spaces is not blank. An id sent as " 1" is stored as "1". Choices (operate, subject.type)
// are not trimmed.
func TestIdsAreTrimmed(t *testing.T) {
	cases := []struct {
		name, ep, body string
		filter         sandbox.PolicyFilter
		path           string
	}{
		{"instance id, name of spaces", "batch_instance",
			`{"system":"bk_cmdb","operate":"grant","subject":{"type":"user","id":"alice"},"actions":[{"id":"edit_host"}],"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":" 1","name":"  "}]}]}`,
			sandbox.PolicyFilter{SubjectID: "alice", Action: "edit_host"}, "/bk_cmdb,host,1/"},
		{"system, type, action and subject ids", "batch_instance",
			`{"system":" bk_cmdb\t","operate":"grant","subject":{"type":"user","id":" alice "},"actions":[{"id":" edit_host"}],"resources":[{"system":"bk_cmdb ","type":" host","instances":[{"id":"2 ","name":"h"}]}]}`,
			sandbox.PolicyFilter{System: "bk_cmdb", SubjectID: "alice", Action: "edit_host"}, "/bk_cmdb,host,2/"},
		{"group subject id", "batch_instance",
			`{"system":"bk_cmdb","operate":"grant","subject":{"type":"group","id":" 1 "},"actions":[{"id":"edit_host"}],"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":"3","name":"h"}]}]}`,
			sandbox.PolicyFilter{SubjectType: "group", SubjectID: "1"}, "/bk_cmdb,host,3/"},
		{"path node ids", "batch_path",
			`{"system":"bk_sops","operate":"grant","subject":{"type":"user","id":"alice"},"actions":[{"id":"mini_app_edit"}],"resources":[{"system":"bk_sops","type":"mini_app","paths":[[{"system":" bk_sops","type":"project ","id":" project1","name":" P "},{"system":"bk_sops","type":"mini_app","id":"m1 ","name":"m"}]]}]}`,
			sandbox.PolicyFilter{SubjectID: "alice", Action: "mini_app_edit"}, "/bk_sops,project,project1/bk_sops,mini_app,m1/"},
		{"creator, type and ancestor ids", "batch_resource_creator_action",
			`{"system":"bk_sops ","type":" mini_app","creator":" alice","instances":[{"id":" m2","name":"m","ancestors":[{"system":"bk_sops","type":"project","id":"project1 "}]}]}`,
			sandbox.PolicyFilter{SubjectID: "alice", Action: "mini_app_edit"}, "/bk_sops,project,project1/bk_sops,mini_app,m2/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				s := newServer(t)
				wantOK(t, send(t, s, tr, tc.ep, tc.body))
				if got := policies(t, s, tc.filter); !strings.Contains(got, `"paths":["`+tc.path+`"]`) {
					t.Fatalf("want the trimmed path %s, got %s", tc.path, got)
				}
			})
		})
	}
	// Choices are compared as sent, and "" is not a valid choice; a blank name is still blank.
	s := newServer(t)
	wantSaaSError(t, gw, send(t, s, gw, "batch_instance",
		`{"system":"bk_cmdb","operate":" grant","subject":{"type":"","id":"alice"},"actions":[{"id":"edit_host"}],"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":"1","name":""}]}]}`),
		200, 1902412, `{"operate": ["\" grant\" is not a valid choice."], "subject": {"type": ["\"\" is not a valid choice."]}, "resources": [{"instances": [{"name": ["This field may not be blank."]}]}]}`)
	wantPolicies(t, s, all, noPolicies)
}

// Unknown action: 1902412 "x action not exists" (VALIDATE_ERROR), but only after the app allow-list
// check, which answers 1902403 first unless the app's allow-list is "*". Resources that do not match
// the action: 1902417 with the server's name ACTION_VALIDATE_ERROR.
func TestUnknownActionOrder(t *testing.T) {
	m := loadModel(t, `{"systems":[
		{"id":"open","resource_types":[{"id":"host"}],"actions":[{"id":"view","related_types":["host"]}],"allow_list":{"instance_actions":["*"],"creator_types":[]}},
		{"id":"listed","resource_types":[{"id":"host"}],"actions":[{"id":"view","related_types":["host"]}],"allow_list":{"instance_actions":["view"],"creator_types":[]}}],
		"users":["alice"],"apps":[{"code":"bkiam-sandbox","secret":"sandbox-secret","client_of":["*"],"esb_skip_login":true}]}`)
	body := func(system, action, typ string) string {
		return `{"system":"` + system + `","operate":"grant","subject":{"type":"user","id":"alice"},"actions":[{"id":"` + action +
			`"}],"resources":[{"system":"` + system + `","type":"` + typ + `","instances":[{"id":"1","name":"h"}]}]}`
	}
	cases := []struct {
		name, body string
		status     int
		code       int
		msg        string
	}{
		{"allow-list * then unknown action", body("open", "fly", "host"), 200, 1902412, "Parameter verification failed: fly action not exists (VALIDATE_ERROR)"},
		{"allow-list without the action answers first", body("listed", "fly", "host"), 403, 1902403,
			"authorization_instance api don't support the [fly] of system[listed] (FORBIDDEN)"},
		{"mismatch", body("open", "view", "user"), 200, 1902417,
			"Action check error: action `view` related resource types `user` wrong (ACTION_VALIDATE_ERROR)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				s := newServer(t, withModel(m))
				wantSaaSError(t, tr, send(t, s, tr, "batch_instance", tc.body), tc.status, tc.code, tc.msg)
				wantPolicies(t, s, all, noPolicies)
			})
		})
	}
}

// Expiry on re-grant: an existing policy's expiry changes only when the request's expired_at is
// greater; 0 or no expired_at changes nothing (the 365-day default is for new user policies only).
// Group policies never expire (4102444800), whatever expired_at says.
func TestExpiryOnRegrant(t *testing.T) {
	const later, muchLater = 1800000000, 1900000000
	cases := []struct {
		name      string
		subjType  string
		first     string // extra body text of the first grant
		second    string // and of the re-grant, a month later
		want      int64
		wantFirst int64
	}{
		{"no expired_at keeps the existing expiry", "user", "", "", yearLater, yearLater},
		{"0 keeps the existing expiry", "user", `,"expired_at":1800000000`, `,"expired_at":0`, later, later},
		{"a smaller expired_at keeps it", "user", `,"expired_at":1900000000`, `,"expired_at":1800000000`, muchLater, muchLater},
		{"a greater expired_at raises it", "user", `,"expired_at":1800000000`, `,"expired_at":1900000000`, muchLater, later},
		{"a greater expired_at raises the default", "user", "", `,"expired_at":1900000000`, muchLater, yearLater},
		{"group policies never expire", "group", `,"expired_at":1800000000`, `,"expired_at":1900000000`, 4102444800, 4102444800},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			now := fixedNow
			s := newServer(t, sandbox.WithNow(func() time.Time { return now }))
			id := "alice"
			if tc.subjType == "group" {
				id = "1"
			}
			f := sandbox.PolicyFilter{SubjectID: id}
			wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", tc.subjType, id, []string{"edit_host"}, "host", []string{"1"}, tc.first)))
			wantPolicies(t, s, f, `{"policies":[`+policyJSON(1, tc.subjType, id, "edit_host", tc.wantFirst, false, "/bk_cmdb,host,1/")+`]}`)
			now = now.Add(30 * 24 * time.Hour)
			wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", tc.subjType, id, []string{"edit_host"}, "host", []string{"2"}, tc.second)))
			wantPolicies(t, s, f, `{"policies":[`+policyJSON(1, tc.subjType, id, "edit_host", tc.want, false, "/bk_cmdb,host,1/", "/bk_cmdb,host,2/")+`]}`)
		})
	}
}

// Revoke with instances: [] removes nothing from the policy of an action with related types (an
// instance policy, an any policy, a combined one): the call answers OK and lists the policy with its
// current statistics. Only the policy of an action without a resource type is deleted whole by it.
func TestRevokeEmptyInstances(t *testing.T) {
	cases := []struct {
		name, grant, revoke string
		action              string
		count               int
		kept                bool
	}{
		{"instance policy", hostGrant("alice", "1", "2"), hostRevoke("alice"), "edit_host", 2, true},
		{"any policy", hostGrant("alice"), hostRevoke("alice"), "edit_host", 0, true},
		{"combined policy", combinedBody("grant", "alice", []string{"1"}, []string{"7"}), combinedBody("revoke", "alice", []string{}, []string{}), "edit_biz_host", 2, true},
		{"combined, one type empty", combinedBody("grant", "alice", []string{"1"}, []string{"7"}), combinedBody("revoke", "alice", []string{"1"}, []string{}), "edit_biz_host", 2, true},
		{"action without a resource type", instBody("grant", "user", "alice", []string{"create_biz"}, "", nil, ""),
			instBody("revoke", "user", "alice", []string{"create_biz"}, "", nil, ""), "create_biz", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				s := newServer(t)
				wantOK(t, send(t, s, tr, "batch_instance", tc.grant))
				before := policies(t, s, all)
				r := send(t, s, tr, "batch_instance", tc.revoke)
				wantOK(t, r)
				e, ok := findEntry(r.entries(t), tc.action)
				if !ok || e.PolicyID != 1 || e.count() != tc.count {
					t.Fatalf("want %s listed with policy 1 and %d instances, got %s", tc.action, tc.count, r.raw)
				}
				if after := policies(t, s, all); tc.kept && after != before {
					t.Fatalf("revoke with [] changed the store:\n%s\n%s", before, after)
				} else if !tc.kept && after != noPolicies {
					t.Fatalf("want the policy deleted, got %s", after)
				}
			})
		})
	}
}

// batch_path checks only that the app is a client of the system, not the per-action allow-list of
// batch_instance. A path node's system is optional (absent or "" takes the request's system); its
// name must be present and may be "" only when the id is "*" (the node serializer's own check,
// reported as the node's non_field_errors).
func TestBatchPathNodes(t *testing.T) {
	m := loadModel(t, `{"systems":[{"id":"s","resource_types":[{"id":"p"},{"id":"c"}],"actions":[{"id":"view","related_types":["c"]}],"allow_list":{"instance_actions":[],"creator_types":[]}}],
		"users":["alice"],"apps":[{"code":"bkiam-sandbox","secret":"sandbox-secret","client_of":["s"],"esb_skip_login":true}]}`)
	body := func(op, path string) string {
		return `{"system":"s","operate":"` + op + `","subject":{"type":"user","id":"alice"},"actions":[{"id":"view"}],"resources":[{"system":"s","type":"c","paths":[` + path + `]}]}`
	}
	ok := []struct{ name, path, stored string }{
		{"allow-list not applied, system omitted", `[{"type":"p","id":"1","name":"P"},{"type":"c","id":"2","name":"C"}]`, "/s,p,1/s,c,2/"},
		{"blank system filled in", `[{"system":"","type":"p","id":"1","name":"P"},{"system":" ","type":"c","id":"*","name":""}]`, "/s,p,1/s,c,*/"},
		{"name of spaces kept", `[{"system":"s","type":"c","id":"3","name":"  "}]`, "/s,c,3/"},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				s := newServer(t, withModel(m))
				wantOK(t, send(t, s, tr, "batch_path", body("grant", tc.path)))
				if got := policies(t, s, all); !strings.Contains(got, `"paths":["`+tc.stored+`"]`) {
					t.Fatalf("want %s stored, got %s", tc.stored, got)
				}
				wantOK(t, send(t, s, tr, "batch_path", body("revoke", tc.path)))
				wantPolicies(t, s, all, noPolicies)
			})
		})
	}
	bad := []struct{ name, path, msg string }{
		{"name missing on *", `[{"type":"c","id":"*"}]`, `{"resources": [{"paths": [[{"name": ["This field is required."]}]]}]}`},
		{"name blank on an id", `[{"type":"p","id":"1","name":""},{"type":"c","id":"2","name":"C"}]`,
			"{\"resources\": [{\"paths\": [[{\"non_field_errors\": [\"name is required when id(1) is not `*`\"]}]]}]}"},
		{"name null", `[{"type":"c","id":"*","name":null}]`, `{"resources": [{"paths": [[{"name": ["This field may not be null."]}]]}]}`},
		{"system null", `[{"system":null,"type":"c","id":"2","name":"C"}]`, `{"resources": [{"paths": [[{"system": ["This field may not be null."]}]]}]}`},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, withModel(m))
			wantSaaSError(t, gw, send(t, s, gw, "batch_path", body("grant", tc.path)), 200, 1902412, tc.msg)
			wantPolicies(t, s, all, noPolicies)
		})
	}
	// The same call through batch_instance meets the allow-list.
	s := newServer(t, withModel(m))
	wantSaaSError(t, gw, send(t, s, gw, "batch_instance",
		`{"system":"s","operate":"grant","subject":{"type":"user","id":"alice"},"actions":[{"id":"view"}],"resources":[{"system":"s","type":"c","instances":[{"id":"2","name":"C"}]}]}`),
		403, 1902403, "authorization_instance api don't support the [view] of system[s] (FORBIDDEN)")
}

// Creator configuration actions that relate to no resource type are allowed: the creator gets them
// as unlimited (any) policies, which no batch_path revoke of the created paths can undo (the action
// takes no resources: 1902417). A creator action of another resource type (or of several) is
// loadable, and a creator grant for its node fails with 1902417, storing nothing.
func TestCreatorActionsWithoutOrOfOtherTypes(t *testing.T) {
	m := loadModel(t, `{"systems":[{"id":"s","resource_types":[{"id":"t"},{"id":"u"}],
		"actions":[{"id":"edit_t","related_types":["t"]},{"id":"create_any","related_types":[]},{"id":"edit_u","related_types":["u"]},{"id":"edit_tu","related_types":["t","u"]}],
		"creator_actions":[{"id":"t","actions":[{"id":"edit_t","required":false},{"id":"create_any","required":false}]},
		                   {"id":"u","actions":[{"id":"edit_u","required":false},{"id":"edit_t","required":false}]}],
		"allow_list":{"instance_actions":["*"],"creator_types":["*"]}}],
		"users":["alice"],"apps":[{"code":"bkiam-sandbox","secret":"sandbox-secret","client_of":["*"],"esb_skip_login":true}]}`)
	bad := loadModel(t, `{"systems":[{"id":"s","resource_types":[{"id":"t"},{"id":"u"}],
		"actions":[{"id":"edit_tu","related_types":["t","u"]}],
		"creator_actions":[{"id":"t","actions":[{"id":"edit_tu","required":false}]}],
		"allow_list":{"instance_actions":["*"],"creator_types":["*"]}}],
		"users":["alice"],"apps":[{"code":"bkiam-sandbox","secret":"sandbox-secret","client_of":["*"],"esb_skip_login":true}]}`)
	creator := func(typ string) string {
		return `{"system":"s","type":"` + typ + `","creator":"alice","instances":[{"id":"1","name":"one"}]}`
	}
	bothTransports(t, func(t *testing.T, tr string) {
		s := newServer(t, withModel(m))
		r := send(t, s, tr, "batch_resource_creator_action", creator("t"))
		wantOK(t, r)
		if e, ok := findEntry(r.entries(t), "create_any"); !ok || e.count() != 0 {
			t.Fatalf("want create_any listed with instance_count 0: %s", r.raw)
		}
		want := `{"policies":[` +
			`{"policy_id":1,"system":"s","subject":{"type":"user","id":"alice"},"action":"edit_t","expired_at":4102444800,"any":false,"paths":["/s,t,1/"]},` +
			`{"policy_id":2,"system":"s","subject":{"type":"user","id":"alice"},"action":"create_any","expired_at":4102444800,"any":true,"paths":[]}]}`
		wantPolicies(t, s, all, want)
		// The created path cannot be revoked from the any policy: the action takes no resources, and
		// batch_path says so before its action check (as the real SaaS answered for biz_create).
		wantSaaSError(t, tr, send(t, s, tr, "batch_path",
			`{"system":"s","operate":"revoke","subject":{"type":"user","id":"alice"},"actions":[{"id":"create_any"}],"resources":[{"system":"s","type":"t","paths":[[{"type":"t","id":"1","name":"one"}]]}]}`),
			200, 1902412, "Parameter verification failed: action(create_any) not support to grant instance (VALIDATE_ERROR)")
		wantPolicies(t, s, all, want)
		// Node u lists edit_t, an action of another type: the whole grant fails.
		wantSaaSError(t, tr, send(t, s, tr, "batch_resource_creator_action", creator("u")), 200, 1902417,
			"Action check error: action `edit_t` related resource types `u` wrong (ACTION_VALIDATE_ERROR)")
		wantPolicies(t, s, all, want)
		// So does an action of several types.
		s2 := newServer(t, withModel(bad))
		wantSaaSError(t, tr, send(t, s2, tr, "batch_resource_creator_action", creator("t")), 200, 1902417,
			"Action check error: action `edit_tu` related resource types wrong (ACTION_VALIDATE_ERROR)")
		wantPolicies(t, s2, all, noPolicies)
	})
}

// statistics is always present in each data entry: an admin echo counts the requested instances, a
// revoke that empties a policy reports the old count, any other entry the policy's current count.
func TestStatisticsAlwaysPresent(t *testing.T) {
	cases := []struct {
		name   string
		setup  []string // batch_instance bodies sent first
		ep     string
		body   string
		counts map[string]int
	}{
		{"admin echo, single type", nil, "batch_instance", instBody("grant", "user", "admin", []string{"edit_host", "view_host"}, "host", []string{"1", "2"}, ""),
			map[string]int{"edit_host": 2, "view_host": 2}},
		{"admin echo, combined", nil, "batch_instance", combinedBody("revoke", "admin", []string{"1", "2"}, []string{"7"}), map[string]int{"edit_biz_host": 3}},
		{"admin echo, no resource type", nil, "batch_instance", instBody("grant", "user", "admin", []string{"create_biz"}, "", nil, ""), map[string]int{"create_biz": 0}},
		{"admin echo, paths", nil, "batch_path", pathBody("grant", "admin", "mini_app_edit", "mini_app", "["+sopsNode("mini_app", "m1")+"]", "["+sopsNode("mini_app", "m2")+"]"),
			map[string]int{"mini_app_edit": 2}},
		{"admin echo, creator", nil, "batch_resource_creator_action", `{"system":"bk_job","type":"job","creator":"admin","instances":[{"id":"1","name":"a"},{"id":"2","name":"b"}]}`,
			map[string]int{"edit": 2, "list": 2, "delete": 2, "view": 2}},
		{"emptying revoke reports the old count", []string{hostGrant("alice", "1", "2")}, "batch_instance", hostRevoke("alice", "1", "2", "3"), map[string]int{"edit_host": 2}},
		{"partial revoke reports the new count", []string{hostGrant("alice", "1", "2")}, "batch_instance", hostRevoke("alice", "1"), map[string]int{"edit_host": 1}},
		{"revoke of an action without a type", []string{instBody("grant", "user", "alice", []string{"create_biz"}, "", nil, "")}, "batch_instance",
			instBody("revoke", "user", "alice", []string{"create_biz"}, "", nil, ""), map[string]int{"create_biz": 0}},
		{"grant lists every policy with statistics", []string{instBody("grant", "user", "alice", []string{"create_biz"}, "", nil, "")}, "batch_instance",
			hostGrant("alice", "1", "2", "3"), map[string]int{"create_biz": 0, "edit_host": 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			for _, b := range tc.setup {
				wantOK(t, send(t, s, gw, "batch_instance", b))
			}
			r := send(t, s, gw, tc.ep, tc.body)
			wantOK(t, r)
			es := r.entries(t)
			if len(es) != len(tc.counts) || strings.Count(r.raw, `"statistics":{"instance_count":`) != len(es) {
				t.Fatalf("want %d entries, each with statistics: %s", len(tc.counts), r.raw)
			}
			for action, n := range tc.counts {
				if e, ok := findEntry(es, action); !ok || e.count() != n {
					t.Errorf("%s: want instance_count %d: %s", action, n, r.raw)
				}
			}
		})
	}
}

// The ignore_iam_path collapse applies to a user's path only when its length equals the chain length
// of the first matching instance selection with ignore_iam_path and the leaf is not "*"; groups are
// never collapsed; it happens on every grant that writes the policy, never on a revoke. The sandbox
// has no instance selections: the chain is the related type's chain in the creator config (ancestor
// types + itself), and any length when the creator config does not list the type.
func TestIgnoreIAMPathCollapse(t *testing.T) {
	m := loadModel(t, `{"systems":[{"id":"s","resource_types":[{"id":"a"},{"id":"b","parents":["a"]},{"id":"c","parents":["b","a"]}],
		"actions":[{"id":"edit_b","related_types":["b"]},{"id":"view_b","related_types":["b"],"ignore_iam_path":true},{"id":"view_c","related_types":["c"],"ignore_iam_path":true}],
		"creator_actions":[{"id":"a","actions":[],"sub_resource_types":[{"id":"b","actions":[{"id":"edit_b","required":false}]}]}],
		"allow_list":{"instance_actions":["*"],"creator_types":["*"]}}],
		"users":["alice"],"groups":["1"],"apps":[{"code":"bkiam-sandbox","secret":"sandbox-secret","client_of":["*"]}]}`)
	node := func(typ, id string) string { return `{"type":"` + typ + `","id":"` + id + `","name":"n"}` }
	path := func(nodes ...string) string { return "[" + strings.Join(nodes, ",") + "]" }
	body := func(op, subjType, subj, action, typ string, paths ...string) string {
		return `{"system":"s","operate":"` + op + `","subject":{"type":"` + subjType + `","id":"` + subj + `"},"actions":[{"id":"` + action +
			`"}],"resources":[{"system":"s","type":"` + typ + `","paths":[` + strings.Join(paths, ",") + `]}]}`
	}
	a1b1 := path(node("a", "a1"), node("b", "b1"))
	a1b2 := path(node("a", "a1"), node("b", "b2"))
	cases := []struct {
		name   string
		bodies []string
		action string
		want   string
	}{
		{"chain length: collapsed", []string{body("grant", "user", "alice", "view_b", "b", a1b1)}, "view_b",
			`{"field":"b.id","op":"eq","value":"b1"}`},
		{"longer than the chain: kept", []string{body("grant", "user", "alice", "view_b", "b", path(node("c", "c1"), node("a", "a1"), node("b", "b1")))}, "view_b",
			`{"op":"AND","content":[{"field":"b.id","op":"eq","value":"b1"},{"field":"b._bk_iam_path_","op":"starts_with","value":"/c,c1/a,a1/"}]}`},
		{"leaf *: kept", []string{body("grant", "user", "alice", "view_b", "b", path(node("a", "a1"), `{"type":"b","id":"*","name":""}`))}, "view_b",
			`{"field":"b._bk_iam_path_","op":"starts_with","value":"/a,a1/"}`},
		{"mixed lengths in one grant", []string{body("grant", "user", "alice", "view_b", "b", a1b1, path(node("c", "c1"), node("a", "a1"), node("b", "b2")))}, "view_b",
			`{"op":"OR","content":[{"field":"b.id","op":"eq","value":"b1"},{"op":"AND","content":[{"field":"b.id","op":"eq","value":"b2"},{"field":"b._bk_iam_path_","op":"starts_with","value":"/c,c1/a,a1/"}]}]}`},
		{"group: never collapsed", []string{body("grant", "group", "1", "view_b", "b", a1b1)}, "view_b",
			`{"op":"AND","content":[{"field":"b.id","op":"eq","value":"b1"},{"field":"b._bk_iam_path_","op":"starts_with","value":"/a,a1/"}]}`},
		{"action without ignore_iam_path", []string{body("grant", "user", "alice", "edit_b", "b", a1b1)}, "edit_b",
			`{"op":"AND","content":[{"field":"b.id","op":"eq","value":"b1"},{"field":"b._bk_iam_path_","op":"starts_with","value":"/a,a1/"}]}`},
		{"revoke writes full paths", []string{body("grant", "user", "alice", "view_b", "b", a1b1, a1b2), body("revoke", "user", "alice", "view_b", "b", a1b2)}, "view_b",
			`{"op":"AND","content":[{"field":"b.id","op":"eq","value":"b1"},{"field":"b._bk_iam_path_","op":"starts_with","value":"/a,a1/"}]}`},
		{"a later grant that writes collapses again", []string{body("grant", "user", "alice", "view_b", "b", a1b1, a1b2), body("revoke", "user", "alice", "view_b", "b", a1b2),
			body("grant", "user", "alice", "view_b", "b", a1b2)}, "view_b", `{"field":"b.id","op":"in","value":["b1","b2"]}`},
		// The chain is the type's first parents', whatever the creator config says (c is not in it).
		{"the first parents' chain", []string{body("grant", "user", "alice", "view_c", "c", path(node("a", "a1"), node("b", "b1"), node("c", "c1")))}, "view_c",
			`{"field":"c.id","op":"eq","value":"c1"}`},
		{"a second parent's shorter chain: kept", []string{body("grant", "user", "alice", "view_c", "c", path(node("a", "a1"), node("c", "c1")))}, "view_c",
			`{"op":"AND","content":[{"field":"c.id","op":"eq","value":"c1"},{"field":"c._bk_iam_path_","op":"starts_with","value":"/a,a1/"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, withModel(m))
			for _, b := range tc.bodies {
				wantOK(t, send(t, s, gw, "batch_path", b))
			}
			r := getRead(t, s, "/api/v1/systems/s/policies?action_id="+tc.action, goodAuth)
			var ld listData
			if err := json.Unmarshal([]byte(r.raw), &ld); err != nil || ld.Code != 0 || len(ld.Data.Results) != 1 {
				t.Fatalf("list: %v %s", err, r.raw)
			}
			if got := ld.Data.Results[0].Expr; !reflect.DeepEqual(got, mustJSON(tc.want)) {
				b, _ := json.Marshal(got)
				t.Fatalf("expression %s, want %s", b, tc.want)
			}
		})
	}
}
