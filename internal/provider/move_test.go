package provider_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// groupGrantState is a bkiam_instance_grant of group 42 as Terraform
// stores it (schema version 0).
const groupGrantState = `{"id":"bk_cmdb/group/42","system":"bk_cmdb","subject":{"type":"group","id":"42"},"actions":["edit_host","view_host"],` +
	`"resources":[{"system":"bk_cmdb","type":"host","instances":{"7":"host7","8":"host8"}}],` +
	`"expires_at":null,"expires_in":null,"renew_before":null,"policies":{"edit_host":11,"view_host":12},"timeouts":{"create":"5m","update":null,"delete":null}}`

// groupPermissionState is the same object as a bkiam_group_permission.
const groupPermissionState = `{"id":"bk_cmdb/42","system":"bk_cmdb","group_id":"42","group_system":null,"actions":["edit_host","view_host"],` +
	`"resources":[{"system":"bk_cmdb","type":"host","instances":{"7":"host7","8":"host8"}}],` +
	`"timeouts":{"create":"5m","update":null,"delete":null}}`

// TestMoveResourceState: the router answers a moved block across types
// (MoveResourceState) for the moves the provider takes, without a call
// (the server here is not even configured): a group's instance grant
// becomes its group permission and back, with the same actions,
// resources, timeouts and private state, and the identity of what it
// became; the same type from another address of this provider moves as
// it is. Any other move is refused, naming the moves the target takes.
// Without the route, the framework's view of these resources refused
// every move ("Unable to Move Resource State").
func TestMoveResourceState(t *testing.T) {
	const here = "registry.terraform.io/bkiam/bkiam"
	private := []byte(`{"anything":"kept"}`)
	cases := []struct {
		name                 string
		from, to, address    string
		state                string
		want, wantIdentity   string
		err, warning         string
		version              int64
		dropPolicies, compat bool
	}{
		{name: "group grant to group permission", from: "bkiam_instance_grant", to: "bkiam_group_permission", address: here,
			state: groupGrantState, want: groupPermissionState,
			wantIdentity: `{"actions":["edit_host","view_host"],"group_id":"42","system":"bk_cmdb"}`},
		{name: "group permission to group grant", from: "bkiam_group_permission", to: "bkiam_instance_grant", address: here,
			state: groupPermissionState, want: strings.Replace(groupGrantState, `{"edit_host":11,"view_host":12}`, `{}`, 1),
			wantIdentity: `{"actions":["edit_host","view_host"],"resource_types":["bk_cmdb/host"],"subject_id":"42","subject_type":"group","system":"bk_cmdb"}`},
		{name: "routed through another system", from: "bkiam_group_permission", to: "bkiam_instance_grant", address: here,
			state: strings.Replace(groupPermissionState, `"group_system":null`, `"group_system":"bk_job"`, 1),
			want:  strings.Replace(groupGrantState, `{"edit_host":11,"view_host":12}`, `{}`, 1), warning: "next change fails unless the app is a client of bk_cmdb"},
		{name: "OpenTofu's short address", from: "bkiam_instance_grant", to: "bkiam_group_permission", address: "bkiam",
			state: groupGrantState, want: groupPermissionState},
		{name: "same type, another address", from: "bkiam_instance_grant", to: "bkiam_instance_grant",
			address: "registry.opentofu.org/hashicorp/bkiam", state: groupGrantState, want: groupGrantState},
		{name: "a user's grant", from: "bkiam_instance_grant", to: "bkiam_group_permission", address: here,
			state: strings.Replace(groupGrantState, `"type":"group","id":"42"`, `"type":"user","id":"alice"`, 1),
			err:   `only when its subject is a group; this one grants user "alice"`},
		{name: "imported holding nothing known", from: "bkiam_instance_grant", to: "bkiam_group_permission", address: here,
			state: `{"id":"bk_cmdb/group/42","system":"bk_cmdb","subject":{"type":"group","id":"42"},"actions":null,"resources":null,` +
				`"expires_at":null,"expires_in":null,"renew_before":null,"policies":{},"timeouts":null}`,
			err: "import the bkiam_group_permission by bk_cmdb/42/ACTION"},
		{name: "a permission by path", from: "bkiam_group_permission", to: "bkiam_instance_grant", address: here,
			state: strings.Replace(groupPermissionState, `"8":"host8"`, `"/bk_cmdb,biz,2/bk_cmdb,host,5/":"host5"`, 1),
			err:   `names the instance "/bk_cmdb,biz,2/bk_cmdb,host,5/" by its path, which a bkiam_instance_grant cannot`},
		{name: "a permission holding nothing known", from: "bkiam_group_permission", to: "bkiam_instance_grant", address: here,
			state: `{"id":"bk_cmdb/42","system":"bk_cmdb","group_id":"42","group_system":null,"actions":null,"resources":null,"timeouts":null}`,
			err:   "holds nothing known yet, so it names no grant to move"},
		{name: "another type", from: "bkiam_creator_grant", to: "bkiam_group_permission", address: here, state: `{}`, version: 1,
			err: "It takes a moved block only from bkiam_instance_grant (a grant to a group)."},
		{name: "into a type that takes none", from: "bkiam_instance_grant", to: "bkiam_group_members", address: here, state: groupGrantState,
			err: "It takes no moved block from another resource type."},
		{name: "another provider", from: "bkiam_instance_grant", to: "bkiam_group_permission", address: "registry.terraform.io/example/other",
			state: groupGrantState, err: "cannot take the state of a bkiam_instance_grant of registry.terraform.io/example/other"},
		{name: "written by a newer provider", from: "bkiam_instance_grant", to: "bkiam_group_permission", address: here,
			state: groupGrantState, version: 7, err: "written at schema version 7 by a newer version of the provider"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := acctest.ProtoServer(t)
			resp, err := s.MoveResourceState(context.Background(), &tfprotov6.MoveResourceStateRequest{
				SourceProviderAddress: c.address, SourceTypeName: c.from, SourceSchemaVersion: c.version,
				SourceState: &tfprotov6.RawState{JSON: []byte(c.state)}, SourcePrivate: private, TargetTypeName: c.to,
			})
			if err != nil {
				t.Fatal(err)
			}
			if c.err != "" {
				if !testutil.HasError(resp.Diagnostics) || !strings.Contains(testutil.RenderDiags(resp.Diagnostics), c.err) {
					t.Fatalf("diagnostics %s, want an error saying %q", testutil.RenderDiags(resp.Diagnostics), c.err)
				}
				if resp.TargetState != nil {
					t.Errorf("a refused move returned a state")
				}
				return
			}
			if testutil.HasError(resp.Diagnostics) || (c.warning == "") != (len(resp.Diagnostics) == 0) ||
				!strings.Contains(testutil.RenderDiags(resp.Diagnostics), c.warning) {
				t.Fatalf("diagnostics %s, want %q", testutil.RenderDiags(resp.Diagnostics), c.warning)
			}
			got := jsonOf(t, resp.TargetState, acctest.ObjectTypeOf(c.to))
			if want := normalJSON(t, c.want); !reflect.DeepEqual(got, want) {
				t.Errorf("moved state\n%v\nwant\n%v", got, want)
			}
			if string(resp.TargetPrivate) != string(private) {
				t.Errorf("private state %q, want %q", resp.TargetPrivate, private)
			}
			if resp.TargetIdentity == nil || resp.TargetIdentity.IdentityData == nil {
				t.Fatal("no identity")
			}
			if c.wantIdentity != "" {
				ids, err := s.GetResourceIdentitySchemas(context.Background(), &tfprotov6.GetResourceIdentitySchemasRequest{})
				if err != nil {
					t.Fatal(err)
				}
				idType := ids.IdentitySchemas[c.to].ValueType()
				if got, want := jsonOf(t, resp.TargetIdentity.IdentityData, idType), normalJSON(t, c.wantIdentity); !reflect.DeepEqual(got, want) {
					t.Errorf("identity %v, want %v", got, want)
				}
			}
		})
	}
}

// jsonOf is a DynamicValue as the JSON Terraform would store, decoded.
func jsonOf(t *testing.T, dv *tfprotov6.DynamicValue, typ tftypes.Type) any {
	t.Helper()
	if dv == nil {
		t.Fatal("no value")
	}
	v, err := dv.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	return protocol.GoValue(v)
}

func normalJSON(t *testing.T, s string) any {
	t.Helper()
	var out any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return out
}
