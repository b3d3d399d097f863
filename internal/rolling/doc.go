// Package rolling is what the resources with a rolling expiry
// (bkiam_instance_grant, bkiam_group_members, bkiam_user_groups) share of
// it on the protocol's values: the three attributes (expires_in,
// renew_before, the computed expires_at), what the configuration cannot
// mean, what a plan does to expires_at, what the apply sets where the plan
// left it unknown, when the next renewal is due (kept in private state for
// the seam's protocol.Renewer), what an apply renewed, and the refusals of
// an expiry IAM will not take (one that has passed, one past the site's
// cap, Cap).
//
// The engine underneath is internal/renewal, which knows nothing of
// Terraform's values; this package turns the resources' attributes into
// its terms and its decisions back into attributes and diagnostics. The
// resources keep what they say of their own objects (whose grant, which
// members), and pass it in.
package rolling
