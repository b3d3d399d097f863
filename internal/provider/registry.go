package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/access"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/admin"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/management"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
)

// protocolResources are the resources served on terraform-plugin-go
// values (see DESIGN.md, "Why the hot path is below the framework"). A
// line here is all the registration a resource needs: the framework's
// view of it (its schema, for Terraform and tfplugindocs), the server's
// routing of its calls and its value type are all derived from this list.
var protocolResources = []protocol.Resource[*conns.Data]{
	serveResource[authz.InstanceGrantModel](authz.InstanceGrant{}),
	serveResource[authz.CreatorGrantModel](authz.CreatorGrant{}),
	serveResource[management.GroupMembersModel](management.GroupMembers{}),
	serveResource[management.UserGroupsModel](management.UserGroups{}),
	serveResource[management.GroupPermissionModel](management.NewGroupPermission()),
}

// protocolMoves are the moved blocks across resource types the provider
// takes (protocol.Move): between an instance grant to a group and a group
// permission, both ways.
var protocolMoves = management.Moves()

// frameworkResources and frameworkDataSources are served by the
// framework itself, for values small enough that its machinery costs
// nothing that matters (DESIGN.md, "Resources and data sources on the
// framework"). They get the provider's *conns.Data from Configure.
var (
	frameworkResources   = []func() resource.Resource{management.NewGradeManagerResource, management.NewGroupResource}
	frameworkDataSources = []func() datasource.DataSource{authz.NewSystemDataSource, access.NewExpiringDataSource, access.NewAccessCheckDataSource, access.NewEffectivePermissionsDataSource, access.NewUserAccessDataSource, management.NewGroupDataSource, management.NewGradeManagerDataSource}
)

// listResources are the list resources (terraform query, Terraform
// 1.14+), served by the framework for every kind of resource whose
// objects IAM can enumerate; results of the protocol-level resources are
// encoded by their codecs (internal/listing). IAM cannot enumerate
// creator grants: bkiam_creator_grant has none.
var listResources = []func() list.ListResource{
	authz.NewInstanceGrantListResource,
	management.NewGradeManagerListResource,
	management.NewGroupListResource,
	management.NewGroupMembersListResource,
	management.NewUserGroupsListResource,
	management.NewGroupPermissionListResource,
}

// frameworkActions are the actions (Terraform 1.14+: action blocks,
// terraform apply -invoke), served by the framework; the router passes
// their RPCs on to it.
var frameworkActions = []func() action.Action{admin.NewUserCleanupAction}

// serveResource serves def as a resource of this provider, with the
// shared grants' accounting (shared_account.go) hearing its plans and
// preceding its applies.
func serveResource[M any](def interface {
	protocol.Def[M, *conns.Data]
	sharedgrants.Claimer[M]
}) protocol.Resource[*conns.Data] {
	return protocol.Serve[M, *conns.Data](typeName, def, sharedgrants.Observe[M, *conns.Data](def))
}
