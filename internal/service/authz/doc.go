// Package authz holds the resources of IAM's authorization API:
// bkiam_instance_grant (batch_instance) and bkiam_creator_grant
// (batch_resource_creator_action, revoked with batch_path), served on
// internal/protocol, and the bkiam_system data source. Their drift detection
// and plan-time model checks live here too.
package authz
