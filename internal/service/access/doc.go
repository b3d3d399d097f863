// Package access holds the data sources that read IAM's policy engine and
// write nothing: bkiam_access_check (may a subject do these actions, as
// IAM answers it), bkiam_effective_permissions (what a user may do, as IAM
// evaluates it) and bkiam_expiring (what lapses soon). They serve audits,
// check blocks and gates; the resources that grant live in
// internal/service/authz and internal/service/management.
package access
