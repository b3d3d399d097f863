// Package acctest is the harness of the acceptance and protocol tests,
// shared by the tests beside each resource (internal/service/authz,
// internal/service/management) and the provider's own
// (internal/provider), as terraform-provider-aws shares its acctest:
//
//   - where a test runs: a sandbox of its own (Target, EachTransport over
//     both transports) or the real site the BKIAM_ACC_* variables name
//     (Site, Profile, SiteEnv), and the provider served to the CLI in
//     process (ProtoV6ProviderFactories);
//   - what it checks: the sandbox's holdings (CheckHeld), the calls each
//     step sent (CallCounter), state against IAM (CheckStateMatchesStore);
//   - the CLI driven directly, outside terraform-plugin-testing
//     (CLIWorkspace, NewAttachedWorkspace), for what the framework cannot
//     do: read the state a failed apply leaves, interrupt an apply;
//   - the protocol server driven as Terraform drives it, without a CLI
//     (ProtoEnv, ProtoResource);
//   - the plan-time cases of every resource (PlanTimeCase and the
//     ...ValidationCases functions), which both the resources' tests and
//     the provider's guard TestEveryValidationHasAnAcceptanceCase read.
//
// Every test package's TestMain calls Main. Only tests import this
// package (TestLayout): it imports the provider, which nothing else under
// internal/ may.
package acctest
