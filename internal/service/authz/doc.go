// Package authz holds the resources of IAM's authorization API:
// bkiam_instance_grant (batch_instance) and bkiam_creator_grant
// (batch_resource_creator_action, revoked with batch_path), served on
// internal/protocol, and the bkiam_system data source. Their drift detection,
// plan-time model checks and the plan's expiry check live here too; the data
// sources that only read IAM's policy engine are in internal/service/access.
package authz
