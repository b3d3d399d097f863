package sandbox_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// The request examples of IAM's published API pages for batch_instance and
// batch_resource_creator_action (the creator examples with the Chinese edition's names), with only their syntax fixed: as printed they are not valid
// JSON (a missing "]", trailing commas, Python comments), and that is all that was changed.

const docBatchInstance = `{
  "asynchronous": false,
  "operate": "grant",
  "system": "bk_cmdb",
  "actions": [{"id": "edit_host"}],
  "subject": {"type": "user", "id": "admin"},
  "resources": [{"system": "bk_cmdb", "type": "host", "instances": [{"id": "1", "name": "host1"}]}]
}`

const docCreatorNoAncestors = `{
    "system": "bk_job",
    "type":"job",
    "creator":"admin",
    "instances": [
        {"id":"job1", "name":"第一个作业"},
        {"id":"job2", "name":"第二个作业"},
        {"id":"job3", "name":"第三个作业"}
    ]
}`

const docCreatorAncestors = `{
    "system": "bk_sops",
    "type":"mini_app",
    "creator":"admin",
    "instances": [
        {"id":"mini_app1", "name":"第一个轻应用",
         "ancestors":[{"system": "bk_sops", "type":"project", "id":"project1"}]},
        {"id":"mini_app2", "name":"第二个轻应用",
         "ancestors":[{"system": "bk_sops", "type":"project", "id":"project2"}]}
    ]
}`

// docEntries are the documented answers' data (action id, policy_id), in the documented order.
type docEntry struct {
	action string
	id     int64
}

func TestAPIDocExamples(t *testing.T) {
	cases := []struct {
		name    string
		ep      string
		body    string
		subject string // replaces "admin" ("" keeps the example's admin)
		want    []docEntry
		stored  string
	}{
		{
			name: "batch_instance as printed (admin: echoed, policy_id 0)",
			ep:   "batch_instance", body: docBatchInstance,
			want:   []docEntry{{"edit_host", 0}},
			stored: noPolicies,
		},
		{
			name: "batch_instance for alice (the documented answer)",
			ep:   "batch_instance", body: docBatchInstance, subject: "alice",
			want: []docEntry{{"edit_host", 1}},
			stored: `{"policies":[{"policy_id":1,"system":"bk_cmdb","subject":{"type":"user","id":"alice"},"action":"edit_host",
				"expired_at":1798761600,"any":false,"paths":["/bk_cmdb,host,1/"]}]}`,
		},
		{
			name: "creator without ancestors as printed (admin)",
			ep:   "batch_resource_creator_action", body: docCreatorNoAncestors,
			want:   []docEntry{{"edit", 0}, {"list", 0}, {"delete", 0}, {"view", 0}},
			stored: noPolicies,
		},
		{
			name: "creator without ancestors for alice (the documented answer)",
			ep:   "batch_resource_creator_action", body: docCreatorNoAncestors, subject: "alice",
			want:   []docEntry{{"edit", 1}, {"list", 2}, {"delete", 3}, {"view", 4}},
			stored: `{"policies":[` + creatorJob(1, "edit") + `,` + creatorJob(2, "list") + `,` + creatorJob(3, "delete") + `,` + creatorJob(4, "view") + `]}`,
		},
		{
			name: "creator with ancestors as printed (admin)",
			ep:   "batch_resource_creator_action", body: docCreatorAncestors,
			want:   []docEntry{{"mini_app_view", 0}, {"mini_app_edit", 0}},
			stored: noPolicies,
		},
		{
			name: "creator with ancestors for alice",
			ep:   "batch_resource_creator_action", body: docCreatorAncestors, subject: "alice",
			want:   []docEntry{{"mini_app_view", 1}, {"mini_app_edit", 2}},
			stored: `{"policies":[` + creatorMiniApp(1, "mini_app_view") + `,` + creatorMiniApp(2, "mini_app_edit") + `]}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bothTransports(t, func(t *testing.T, tr string) {
				s := newServer(t)
				body := tc.body
				if tc.subject != "" {
					body = strings.ReplaceAll(body, `"admin"`, `"`+tc.subject+`"`)
				}
				r := send(t, s, tr, tc.ep, body)
				wantOK(t, r)
				var got []docEntry
				for _, e := range r.entries(t) {
					got = append(got, docEntry{e.Action.ID, e.PolicyID})
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("data = %v, want %v\n%s", got, tc.want, r.raw)
				}
				wantPolicies(t, s, all, tc.stored)
			})
		})
	}
}

func creatorJob(id int, action string) string {
	b, _ := json.Marshal(sandbox.PolicyView{PolicyID: int64(id), System: "bk_job", Subject: sandbox.Subject{Type: "user", ID: "alice"},
		Action: action, ExpiredAt: 4102444800, Paths: []string{"/bk_job,job,job1/", "/bk_job,job,job2/", "/bk_job,job,job3/"}})
	return string(b)
}

func creatorMiniApp(id int, action string) string {
	b, _ := json.Marshal(sandbox.PolicyView{PolicyID: int64(id), System: "bk_sops", Subject: sandbox.Subject{Type: "user", ID: "alice"},
		Action: action, ExpiredAt: 4102444800, Paths: []string{
			"/bk_sops,project,project1/bk_sops,mini_app,mini_app1/", "/bk_sops,project,project2/bk_sops,mini_app,mini_app2/"}})
	return string(b)
}
