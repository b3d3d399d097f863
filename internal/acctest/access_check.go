package acctest

// AccessCheckHCL renders a bkiam_access_check data source from attributes
// (each an expression) and an output of its answer, which makes Terraform
// read it during the plan.
func AccessCheckHCL(attrs string) string {
	return "data \"bkiam_access_check\" \"test\" {\n  system = \"bk_cmdb\"\n" + attrs + "}\n\noutput \"allowed\" {\n  value = data.bkiam_access_check.test.allowed\n}\n"
}

// AccessCheckValidationCases are bkiam_access_check's plan-time errors:
// the model's checks and the unknown user, each before any check is sent.
func AccessCheckValidationCases() []PlanTimeCase {
	return []PlanTimeCase{
		{Name: "access check: unknown action", Config: AccessCheckHCL("  subject = { type = \"user\", id = \"alice\" }\n  actions = [\"view_hots\"]\n"),
			Want: []string{"Unknown action", `System bk_cmdb has no action "view_hots" in its IAM model. Did you mean "view_host"?`}},
		{Name: "access check: resources that do not match", Config: AccessCheckHCL("  subject = { type = \"user\", id = \"alice\" }\n  actions = [\"view_host\"]\n"),
			Want: []string{"Resources do not match the action", "Action view_host relates to [bk_cmdb/host], in that order; resources give []. " +
				"Give one instance of each, in order (IAM answers a mismatch with a system error)."}},
		{Name: "access check: unknown user", Config: AccessCheckHCL("  subject = { type = \"user\", id = \"alcie\" }\n  actions = [\"view_host\"]\n" +
			"  resources = [{ system = \"bk_cmdb\", type = \"host\", id = \"1\" }]\n"),
			Want: []string{"Unknown user", `IAM does not know user "alcie", and answers it as a user without permissions: a typo would read as "denied". Check the username.`}},
		{Name: "access check: unknown group", Config: AccessCheckHCL("  subject = { type = \"group\", id = \"987654\" }\n  actions = [\"view_host\"]\n" +
			"  resources = [{ system = \"bk_cmdb\", type = \"host\", id = \"1\" }]\n"),
			Want: []string{"Unknown group", `IAM does not know group 987654 in system bk_cmdb, and answers it as a group without permissions: a typo or ` +
				`a deleted group would read as "denied". Check the group's id (bkiam_group's id, or the IAM web UI's).`}},
		{Name: "access check: a group named, not numbered", Config: AccessCheckHCL("  subject = { type = \"group\", id = \"ops\" }\n  actions = [\"view_host\"]\n" +
			"  resources = [{ system = \"bk_cmdb\", type = \"host\", id = \"1\" }]\n"),
			Want: []string{"Invalid group id", `A user group is named by its numeric id, such as bkiam_group.dev.id or "42"; got "ops", which IAM would ` +
				`answer as a group without permissions.`}},
		{Name: "access check: unknown subject type", Config: AccessCheckHCL("  subject = { type = \"robot\", id = \"r2\" }\n  actions = [\"view_host\"]\n"),
			Want: []string{"Invalid Attribute Value Match", `Attribute subject.type value must be one of: ["user" "group"], got: "robot"`}},
		{Name: "access check: no actions", Config: AccessCheckHCL("  subject = { type = \"user\", id = \"alice\" }\n  actions = []\n"),
			Want: []string{"Invalid Attribute Value", "Attribute actions set must contain at least 1 elements, got: 0"}},
		{Name: "access check: a path without its slashes", Config: AccessCheckHCL(hostCheck(`paths = ["/biz,1/", "biz,1"]`)),
			Want: []string{"Invalid topology path", `resources[0].paths[1] = "biz,1" does not start and end with "/". Give the path of the instance's ` +
				`ancestors in IAM's form: nodes TYPE,ID, outermost first, each followed by "/" and the whole starting with "/", e.g. "/biz,1/" or "/biz,1/set,2/module,3/".`}},
		{Name: "access check: a path node without its id", Config: AccessCheckHCL(hostCheck(`paths = ["/biz,1/set/"]`)),
			Want: []string{"Invalid topology path", `resources[0].paths[0] = "/biz,1/set/" has a node "set" that is not TYPE,ID. Give the path`}},
		{Name: "access check: the path as an attribute", Config: AccessCheckHCL(hostCheck(`attributes = { _bk_iam_path_ = "/biz,1/" }`)),
			Want: []string{"Invalid attribute name", `resources[0].attributes names "_bk_iam_path_", the topology path: give the instance's paths in resources[0].paths instead.`}},
		{Name: "access check: the id as an attribute", Config: AccessCheckHCL(hostCheck(`attributes = { id = "2", os = "linux" }`)),
			Want: []string{"Invalid attribute name", `resources[0].attributes names "id", which is not an attribute: IAM takes the instance's id from the resource's id; ` +
				`name the attributes IAM's policy conditions are on (e.g. os).`}},
	}
}

// hostCheck is alice's check of view_host on host 1, with more of the
// resource's attributes.
func hostCheck(more string) string {
	return "  subject = { type = \"user\", id = \"alice\" }\n  actions = [\"view_host\"]\n" +
		"  resources = [{ system = \"bk_cmdb\", type = \"host\", id = \"1\", " + more + " }]\n"
}

// EffectivePermissionsValidationCases are bkiam_effective_permissions'
// plan-time errors, before any query is sent.
func EffectivePermissionsValidationCases() []PlanTimeCase {
	hcl := func(attrs string) string {
		return "data \"bkiam_effective_permissions\" \"test\" {\n  system = \"bk_cmdb\"\n" + attrs +
			"}\n\noutput \"permissions\" {\n  value = data.bkiam_effective_permissions.test.permissions\n}\n"
	}
	return []PlanTimeCase{
		{Name: "effective permissions: unknown user", Config: hcl("  user = \"alcie\"\n  actions = [\"view_host\"]\n"),
			Want: []string{"Unknown user", `IAM does not know user "alcie", and answers it as a user without permissions: a typo would read as "no permissions". Check the username.`}},
		{Name: "effective permissions: unknown action", Config: hcl("  user = \"alice\"\n  actions = [\"view_hots\"]\n"),
			Want: []string{"Unknown action", `System bk_cmdb has no action "view_hots" in its IAM model. Did you mean "view_host"?`}},
	}
}
