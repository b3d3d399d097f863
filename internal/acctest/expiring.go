package acctest

// ExpiringHCL renders a bkiam_expiring data source from attributes (each
// an expression) and an output of its count, which makes Terraform read
// it during the plan.
func ExpiringHCL(attrs string) string {
	return "data \"bkiam_expiring\" \"test\" {\n" + attrs + "}\n\noutput \"lapsing\" {\n  value = data.bkiam_expiring.test.lapsing\n}\n"
}

// ExpiringValidationCases are bkiam_expiring's plan-time errors: its
// validation, and what its read (during the plan) refuses.
func ExpiringValidationCases() []PlanTimeCase {
	return []PlanTimeCase{
		{Name: "expiring: window not a duration", Config: ExpiringHCL("  system = \"bk_cmdb\"\n  within = \"a month\"\n  group_id = \"1\"\n"),
			Want: []string{"Invalid duration", `within: "a month" is not a duration such as "90d", "12h", "1w" or "1d12h". Write the window from now, e.g. "30d".`}},
		{Name: "expiring: neither group nor user", Config: ExpiringHCL("  system = \"bk_cmdb\"\n  within = \"30d\"\n"),
			Want: []string{"Missing Attribute Configuration", `Exactly one of these attributes must be configured: [group_id,user]`}},
		{Name: "expiring: user without actions", Config: ExpiringHCL("  system = \"bk_cmdb\"\n  within = \"30d\"\n  user = \"alice\"\n"),
			Want: []string{"Invalid Attribute Combination", `These attributes must be configured together: [user,actions]`}},
		{Name: "expiring: group id not a number", Config: ExpiringHCL("  system = \"bk_cmdb\"\n  within = \"30d\"\n  group_id = \"dev\"\n"),
			Want: []string{"Invalid group id", `group_id must be a user group's numeric id, such as bkiam_group.dev.id or "42"; got "dev".`}},
		{Name: "expiring: a group IAM does not have", Config: ExpiringHCL("  system = \"bk_cmdb\"\n  within = \"30d\"\n  group_id = \"987654\"\n"),
			Want: []string{"Cannot read the group's members"}},
		{Name: "expiring: renewed_by neither a grant nor members", Config: ExpiringHCL("  system = \"bk_cmdb\"\n  within = \"30d\"\n  group_id = \"1\"\n" +
			"  renewed_by = { oncall = { system = \"bk_cmdb\", expires_in = \"90d\", renew_before = \"7d\" } }\n"),
			Want: []string{"Not a rolling grant nor a group's members", `renewed_by["oncall"] must be a bkiam_instance_grant (system, subject and actions) or a ` +
				`bkiam_group_members (system, group_id), e.g. renewed_by = { oncall = bkiam_instance_grant.oncall }.`}},
		{Name: "expiring: renewed_by's expires_in not a duration", Config: ExpiringHCL("  system = \"bk_cmdb\"\n  within = \"30d\"\n  group_id = \"1\"\n" +
			"  renewed_by = { oncall = { system = \"bk_cmdb\", group_id = \"1\", expires_in = \"a quarter\", renew_before = \"7d\" } }\n"),
			Want: []string{"Invalid duration", `renewed_by["oncall"].expires_in: "a quarter" is not a duration such as "90d", "12h", "1w" or "1d12h". ` +
				`Pass the rolling resource's own value (the resource itself), or write it as that resource does, e.g. "90d".`}},
		{Name: "expiring: an action IAM does not have", Config: ExpiringHCL("  system = \"bk_cmdb\"\n  within = \"30d\"\n  user = \"alice\"\n  actions = [\"no_such_action\"]\n"),
			Want: []string{"Cannot read the user's policies"}},
	}
}
