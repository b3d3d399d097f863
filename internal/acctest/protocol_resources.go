package acctest

import (
	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
)

var InstanceProto = ProtoResource[authz.InstanceGrantModel]{
	Def: authz.InstanceGrant{},
	Proposed: func(config authz.InstanceGrantModel, prior *authz.InstanceGrantModel) authz.InstanceGrantModel {
		if prior == nil {
			config.ID, config.Policies = protocol.Unknown[string](), protocol.Unknown[map[string]protocol.Value[int64]]()
		} else {
			config.ID, config.Policies = prior.ID, prior.Policies
			if config.ExpiresAt.IsNull() {
				// Optional and computed: Terraform proposes the prior value.
				config.ExpiresAt = prior.ExpiresAt
			}
		}
		return config
	},
}

// HostsOf grants subject (user alice unless given) actions on the
// bk_cmdb hosts ids, each named "host<id>": a configuration, so with id
// and policies null. Actions are given sorted.
func HostsOf(actions []string, ids ...string) *authz.InstanceGrantModel {
	return &authz.InstanceGrantModel{
		System:    protocol.Known("bk_cmdb"),
		Subject:   protocol.Known(authz.SubjectModel{Type: protocol.Known("user"), ID: protocol.Known("alice")}),
		Actions:   protocol.KnownStrings(actions),
		Resources: authz.ResourcesValue([]grantplan.Resource{{System: "bk_cmdb", Type: "host", Instances: HostNames(ids...)}}),
	}
}

func HostNames(ids ...string) map[string]string {
	out := map[string]string{}
	for _, id := range ids {
		out[id] = sandboxtest.HostName(id)
	}
	return out
}
