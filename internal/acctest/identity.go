package acctest

// IdentityValidationCases are the import identities refused at plan.
func IdentityValidationCases() []PlanTimeCase {
	grant := `resource "bkiam_instance_grant" "test" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "bob" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "1" } }]
}
`
	return []PlanTimeCase{
		{Name: "instance grant identity without its resource type", Config: grant + `import {
  to       = bkiam_instance_grant.test
  identity = { system = "bk_cmdb", subject_type = "user", subject_id = "bob", actions = ["view_host"] }
}
`, Want: []string{"Invalid import identity", "An instance grant's import identity names its actions and all their resource types, " +
			`each SYSTEM/TYPE in the order of resources: e.g. actions = ["view_host"], resource_types = ["bk_cmdb/host"]; several types for a ` +
			`combined resource, e.g. resource_types = ["bk_cmdb/biz", "bk_cmdb/host"]; resource_types = [] for actions related to no resource ` +
			`type. Or neither actions nor resource_types: the grant is then adopted holding nothing known`}},
	}
}
