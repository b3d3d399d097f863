package acctest

const CreatorAddr = "bkiam_creator_grant.test"

// TestAccCreatorGrant_planTimeValidation: mistakes are refused at plan
// time, before any call, with the attribute and the fix (the cases are
// creatorGrantValidationCases). The warning for a grant to admin fails
// nothing, so ExpectError cannot see it: TestCreatorGrantWarnsAboutAdmin
// covers it.
// creatorActionsNeedModelCases: IAM answers a creator registration with
// every permission the creator holds in the system, so without actions a
// creator grant tells its own apart by the model's creator configuration;
// a plan that cannot read the model (ESB, check_model = false) is refused.
func CreatorActionsNeedModelCases() []PlanTimeCase {
	return []PlanTimeCase{{Name: "creator grant without actions or model", Config: `
resource "bkiam_creator_grant" "test" {
  system    = "bk_job"
  type      = "job"
  creator   = "alice"
  instances = { "job1" = "job one" }
}
`, Want: []string{"Creator actions needed without the system's model",
		`IAM answers a creator registration with every permission the creator holds in system bk_job, not only the ones it grants, ` +
			`so without actions the provider tells them apart by the creator configuration of type "job" in the system's model, which it ` +
			`cannot read here (esb_url, or check_model = false). Set actions to the creator actions of the type (the bkiam_system data ` +
			`source lists them under creator_actions), or use apigw_url with check_model = true.`}}}
}
