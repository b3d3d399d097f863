package authz_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
)

// warningModel has what the plan-time warnings are about: a hidden
// action, an RBAC action, and a creator configuration with an action
// related to no resource type.
const warningModel = `{
  "systems": [{"id": "bk_cmdb", "resource_types": [{"id": "biz"}, {"id": "host", "parents": ["biz"]}],
    "actions": [
      {"id": "view_host", "related_types": ["host"]},
      {"id": "audit_host", "related_types": ["host"], "hidden": true},
      {"id": "manage_host", "related_types": ["host"], "auth_type": "rbac"},
      {"id": "view_biz", "related_types": ["biz"]},
      {"id": "create_host", "related_types": []}
    ],
    "creator_actions": [{"id": "biz", "actions": [{"id": "view_biz", "required": false}, {"id": "create_host", "required": false}]},
                        {"id": "host", "actions": [{"id": "view_host", "required": false}]}],
    "allow_list": {"instance_actions": ["*"], "creator_types": ["*"]}}],
  "users": ["alice"], "groups": ["1"],
  "apps": [{"code": "bkiam-sandbox", "secret": "sandbox-secret", "client_of": ["*"]}]
}`

// TestProtocolModelWarnings: the plan warns of a hidden action, of a
// group's grant of an RBAC action (not a user's), and of creator
// configuration actions related to no type (not for a type without
// them), each on its attribute.
func TestProtocolModelWarnings(t *testing.T) {
	m, err := sandbox.LoadModel([]byte(warningModel))
	if err != nil {
		t.Fatal(err)
	}
	env := acctest.NewProtoEnvWith(t, nil, sandbox.WithModel(m))
	grant := func(subjectType, subject, action string) *authz.InstanceGrantModel {
		return &authz.InstanceGrantModel{System: protocol.Known("bk_cmdb"), Subject: protocol.Known(authz.SubjectModel{Type: protocol.Known(subjectType), ID: protocol.Known(subject)}),
			Actions: protocol.KnownStrings([]string{action}), Resources: authz.ResourcesValue([]grantplan.Resource{{System: "bk_cmdb", Type: "host", Instances: acctest.HostNames("1")}})}
	}
	action := func(id string) *tftypes.AttributePath {
		return protocol.Root("actions").WithElementKeyValue(tftypes.NewValue(tftypes.String, id))
	}
	acctest.ExpectDiags(t, acctest.InstanceProto.Plan(t, env.Server, nil, nil, grant("user", "alice", "audit_host")).Diagnostics, acctest.ProtoWarning("Hidden action: Action \"audit_host\" of system bk_cmdb is hidden in IAM", action("audit_host")))
	acctest.ExpectDiags(t, acctest.WithoutNotices(acctest.InstanceProto.Plan(t, env.Server, nil, nil, grant("group", "1", "manage_host")).Diagnostics), acctest.ProtoWarning("Group grant of an RBAC action: Action \"manage_host\" of system bk_cmdb has auth_type \"rbac\"", action("manage_host")))
	acctest.ExpectDiags(t, acctest.InstanceProto.Plan(t, env.Server, nil, nil, grant("user", "alice", "manage_host")).Diagnostics)
	acctest.ExpectDiags(t, acctest.WithoutNotices(acctest.InstanceProto.Plan(t, env.Server, nil, nil, grant("group", "1", "view_host")).Diagnostics))

	creator := func(typ string) *authz.CreatorGrantModel {
		return &authz.CreatorGrantModel{System: protocol.Known("bk_cmdb"), Type: protocol.Known(typ), Creator: protocol.Known("alice"),
			Instances: protocol.KnownStringMap(map[string]string{"i1": "one"})}
	}
	acctest.ExpectDiags(t, creatorProto.Plan(t, env.Server, nil, nil, creator("biz")).Diagnostics, acctest.ProtoWarning("Unlimited creator actions: The creator configuration of biz in system bk_cmdb lists create_host", protocol.Root("type")))
	acctest.ExpectDiags(t, creatorProto.Plan(t, env.Server, nil, nil, creator("host")).Diagnostics)
	if n := env.Sandbox.Stats().Requests["model_query"]; n != 1 {
		t.Errorf("%d model reads in one configuration, want 1", n)
	}
}
