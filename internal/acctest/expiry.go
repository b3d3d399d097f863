package acctest

import "strings"

// ExpiryConflictCases are the plans expiry_conflicts = "error" refuses
// whatever IAM holds, for a provider block with that setting and
// check_model = false (TestAccExpiryConflictsError_planTime).
func ExpiryConflictCases() []PlanTimeCase {
	const until = "2099-01-01T00:00:00Z"
	return []PlanTimeCase{
		// The configuration's own conflict: IAM keeps one expiry per user
		// and action, so one of the two never applies.
		{Name: "expiry: two resources, two expiries", Config: `
resource "bkiam_instance_grant" "forever" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
}

resource "bkiam_instance_grant" "until" {
  system     = "bk_cmdb"
  subject    = { type = "user", id = "alice" }
  actions    = ["view_host"]
  resources  = [{ system = "bk_cmdb", type = "host", instances = { "2" = "host2" } }]
  expires_at = "` + until + `"
}
`, Want: []string{"One expiry per subject and action", "Another resource grants the same subject and action with a different expiry",
			"Give both resources the same expiry, or grant the instances in one resource. The plan fails because the provider sets " +
				`expiry_conflicts = "error".`}},
		// A policy the check cannot read: "error" promises a checked plan
		// or none.
		{Name: "expiry: policy unreadable", Config: `
resource "bkiam_instance_grant" "elsewhere" {
  system    = "bk_nope"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_nope", type = "host", instances = { "1" = "host1" } }]
}
`, Want: []string{"Cannot read the expiry IAM keeps", "The provider could not read user alice's policy for view_host",
			`Set expiry_conflicts = "off" to plan without reading it. The plan fails because the provider sets expiry_conflicts = "error".`}},
	}
}

// ExpiryConflictsError is provider with expiry_conflicts = "error" and
// check_model = false.
func ExpiryConflictsError(provider string) string {
	return strings.Replace(NoModelChecks(provider), "provider \"bkiam\" {\n", "provider \"bkiam\" {\n  expiry_conflicts = \"error\"\n", 1)
}
