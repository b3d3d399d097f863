// Package admin holds what goes through IAM's admin API, the super
// manager's routes (/api/v1/open/admin/…), which an app reaches only on
// the bk-iam gateway's 2026 generation, with a grant of each gateway
// resource, and on IAM's admin API allow-list: the bkiam_user_cleanup
// action, the leaver cleanup. It is an action, not a resource: IAM's
// cleanup is a one-off, asynchronous command with nothing to read back as
// state (bkiam_user_access tells when it finished).
package admin
