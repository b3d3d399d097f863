package sandbox_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

func ids(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func hostPaths(idList []string) string {
	parts := make([]string, len(idList))
	for i, id := range idList {
		parts[i] = `[{"system":"bk_cmdb","type":"host","id":"` + id + `","name":"h"}]`
	}
	return strings.Join(parts, ",")
}

func pathCall(op, subj string, idList []string) string {
	return `{"system":"bk_cmdb","operate":"` + op + `","subject":{"type":"user","id":"` + subj + `"},"actions":[{"id":"edit_host"}],` +
		`"resources":[{"system":"bk_cmdb","type":"host","paths":[` + hostPaths(idList) + `]}]}`
}

func creatorCall(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"id":"j%d","name":"j"}`, i)
	}
	return `{"system":"bk_job","type":"job","creator":"alice","instances":[` + strings.Join(parts, ",") + `]}`
}

func TestCallLimits(t *testing.T) {
	cases := []struct {
		name, ep, body, msg string // msg "" = success
	}{
		{"grant 200", "batch_instance", instBody("grant", "user", "alice", []string{"edit_host"}, "host", ids("h", 200), ""), ""},
		{"grant 201", "batch_instance", instBody("grant", "user", "alice", []string{"edit_host"}, "host", ids("h", 201), ""),
			`{"non_field_errors": ["maximum number of instance grant 200"]}`},
		{"revoke 1000", "batch_instance", instBody("revoke", "user", "alice", []string{"edit_host"}, "host", ids("h", 1000), ""), ""},
		{"revoke 1001", "batch_instance", instBody("revoke", "user", "alice", []string{"edit_host"}, "host", ids("h", 1001), ""),
			`{"non_field_errors": ["maximum number of instance revoke 1000"]}`},
		{"path grant 200", "batch_path", pathCall("grant", "alice", ids("h", 200)), ""},
		{"path grant 201", "batch_path", pathCall("grant", "alice", ids("h", 201)), `{"non_field_errors": ["maximum number of path grant 200"]}`},
		{"path revoke 1001", "batch_path", pathCall("revoke", "alice", ids("h", 1001)), `{"non_field_errors": ["maximum number of path revoke 1000"]}`},
		{"creator 200", "batch_resource_creator_action", creatorCall(200), ""},
		{"creator 201", "batch_resource_creator_action", creatorCall(201), `{"non_field_errors": ["maximum number of instance grant 200"]}`},
		{"id 36", "batch_instance", instBody("grant", "user", "alice", []string{"edit_host"}, "host", []string{strings.Repeat("x", 36)}, ""), ""},
		{"id 37", "batch_instance", instBody("grant", "user", "alice", []string{"edit_host"}, "host", []string{strings.Repeat("x", 37)}, ""),
			`{"resources": [{"instances": [{"id": ["Ensure this field has no more than 36 characters."]}]}]}`},
		{"path id 37", "batch_path", pathCall("grant", "alice", []string{strings.Repeat("x", 37)}),
			`{"resources": [{"paths": [[{"id": ["Ensure this field has no more than 36 characters."]}]]}]}`},
		{"creator id 37", "batch_resource_creator_action", strings.Replace(creatorCall(1), "j0", strings.Repeat("y", 37), 1),
			`{"instances": [{"id": ["Ensure this field has no more than 36 characters."]}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				s := newServer(t)
				r := send(t, s, tr, tc.ep, tc.body)
				if tc.msg == "" {
					wantOK(t, r)
					return
				}
				wantSaaSError(t, tr, r, 200, 1902412, tc.msg)
				wantPolicies(t, s, all, noPolicies)
			})
		})
	}
}

func TestPolicyInstanceLimitAfterMerge(t *testing.T) {
	// The real default (10000) with the real grant limit: 50 calls of 200 fill a policy exactly.
	s := newServer(t)
	for i := 0; i < 50; i++ {
		wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"edit_host"}, "host", ids(fmt.Sprintf("c%d-", i), 200), "")))
	}
	before := policies(t, s, all)
	// Re-granting covered instances is fine; one more instance is not, and nothing changes — not
	// even view_host, which the same call would have created.
	wantOK(t, send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"edit_host"}, "host", ids("c0-", 200), "")))
	r := send(t, s, gw, "batch_instance", instBody("grant", "user", "alice", []string{"view_host", "edit_host"}, "host", []string{"one-more"}, ""))
	wantSaaSError(t, gw, r, 200, 1902412, "the number of instances of resource type[host] in the policy of action[edit_host] exceeds the limit 10000 (VALIDATE_ERROR)")
	if after := policies(t, s, all); after != before {
		t.Fatalf("a failed grant changed the store")
	}

	// Limits come from the model.
	m := loadModel(t, `{"systems":[{"id":"bk_cmdb","resource_types":[{"id":"host"}],"actions":[{"id":"edit_host","related_types":["host"]}],
		"allow_list":{"instance_actions":["*"],"creator_types":["*"]}}],"users":["alice"],
		"apps":[{"code":"bkiam-sandbox","secret":"sandbox-secret","client_of":["*"],"esb_skip_login":true}],
		"limits":{"grant_instances":3,"revoke_instances":4,"instance_id_length":5,"policy_instances":5}}`)
	s = newServer(t, sandbox.WithModel(m))
	wantSaaSError(t, gw, send(t, s, gw, "batch_instance", hostGrant("alice", "1", "2", "3", "4")), 200, 1902412, `{"non_field_errors": ["maximum number of instance grant 3"]}`)
	wantSaaSError(t, gw, send(t, s, gw, "batch_instance", hostRevoke("alice", "1", "2", "3", "4", "5")), 200, 1902412, `{"non_field_errors": ["maximum number of instance revoke 4"]}`)
	wantSaaSError(t, gw, send(t, s, gw, "batch_instance", hostGrant("alice", "123456")), 200, 1902412,
		`{"resources": [{"instances": [{"id": ["Ensure this field has no more than 5 characters."]}]}]}`)
	wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "1", "2", "3")))
	wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "4", "5")))
	wantSaaSError(t, gw, send(t, s, gw, "batch_instance", hostGrant("alice", "6")), 200, 1902412,
		"the number of instances of resource type[host] in the policy of action[edit_host] exceeds the limit 5 (VALIDATE_ERROR)")
}
