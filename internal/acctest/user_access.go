package acctest

// UserAccessHCL renders a bkiam_user_access data source from attributes
// (each an expression) and an output of holds_nothing, which makes
// Terraform read it during the plan.
func UserAccessHCL(attrs string) string {
	return "data \"bkiam_user_access\" \"test\" {\n" + attrs + "}\n\noutput \"holds_nothing\" {\n  value = data.bkiam_user_access.test.holds_nothing\n}\n"
}

// UserAccessValidationCases are bkiam_user_access's plan-time errors on
// the default sandbox (the gateway before 2026): what its read (during
// the plan) refuses.
func UserAccessValidationCases() []PlanTimeCase {
	return []PlanTimeCase{
		{Name: "user access: a user IAM does not know", Config: UserAccessHCL("  system = \"bk_cmdb\"\n  user = \"ghost\"\n"),
			Want: []string{"Unknown user", `IAM does not know user "ghost": a typo would read as a user holding nothing. Check the username (a user ` +
				`IAM's organisation sync has removed is no longer known either).`}},
		{Name: "user access: an action IAM does not have", Config: UserAccessHCL("  system = \"bk_cmdb\"\n  user = \"alice\"\n  actions = [\"no_such_action\"]\n"),
			Want: []string{"Cannot read the user's policies", "action.id invalid"}},
	}
}

// UserAccessGatewayCases are bkiam_user_access's plan-time errors on a
// 2026 gateway that grants the app neither route to a user's groups.
func UserAccessGatewayCases() []PlanTimeCase {
	return []PlanTimeCase{
		{Name: "user access: neither route to the user's groups", Config: UserAccessHCL("  system = \"bk_cmdb\"\n  user = \"alice\"\n"),
			Want: []string{"Cannot read the user's groups", "Neither route that lists a user's groups lets this app through. Ask for one of them: on a " +
				"2026 bk-iam API gateway, the gateway resource admin_list_subject_groups granted to the app and subject_joined_group_list on IAM's admin API " +
				"allow-list for it (the admin API's subject groups, with expiry); or the gateway resource open_user_groups granted " +
				"to the app (the backend's users/{id}/groups).", "grant app bkiam-sandbox the bk-iam gateway's resource admin_list_subject_groups",
				"grant app bkiam-sandbox the bk-iam gateway's resource open_user_groups"}},
	}
}
