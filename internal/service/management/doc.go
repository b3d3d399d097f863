// Package management holds the resources of IAM's management API:
// bkiam_group_members and bkiam_group_permission, served on
// internal/protocol, bkiam_grade_manager and bkiam_group on the framework,
// and the grade manager and group data sources. A group permission is an
// instance grant sent through the management API, so this package imports
// internal/service/authz; authz never imports it.
package management
