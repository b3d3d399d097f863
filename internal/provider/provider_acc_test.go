package provider_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
)

// TestAccProviderConfigErrors: every provider configuration mistake, as
// users see it from the real Terraform CLI, naming the attribute and the
// fix. The warnings (plain http to a remote host, insecure_skip_verify,
// username or bk_token with apigw_url) fail nothing, so ExpectError cannot
// see them: TestConfigureProvider covers them.
func TestAccProviderConfigErrors(t *testing.T) {
	// Not parallel: each case sets the provider's environment variables
	// (acctest.IsolateEnv), which Go allows only in a test that runs alone.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "not.pem"), []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	resource.Test(t, acctest.PlanTimeTest(t, "", acctest.ProviderConfigErrorCases(dir)))
}

// providerSources are the Go files of the packages that make up the
// provider's resources: this one, and every package under internal/ that
// talks to Terraform (the protocol seam, and those importing it or the
// plugin framework: the resources' rooms and what they share), so that a
// new package is read without a test naming it.
func providerSources(t *testing.T) []string {
	t.Helper()
	const seam = "github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	dirs, err := filepath.Glob("../*")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("../service/*")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, dir := range append(dirs, more...) {
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if base := filepath.Base(dir); base == "acctest" || base == "testutil" {
			continue // the tests' harness: its errors are the tests' own
		}
		var sources []string
		uses := filepath.Base(dir) == "protocol" || filepath.Base(dir) == "provider"
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			sources = append(sources, name)
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				if path := strings.Trim(imp.Path.Value, `"`); path == seam || strings.HasPrefix(path, "github.com/hashicorp/terraform-plugin-framework") {
					uses = true
				}
			}
		}
		if uses {
			files = append(files, sources...)
		}
	}
	if len(files) == 0 {
		t.Fatal("no provider sources found")
	}
	return files
}

// notAtPlanTime are the error messages of the provider's source that no
// configuration can bring about at plan time, by the function that gives
// them and the longest fixed part of their summary, with the reason.
// TestEveryValidationHasAnAcceptanceCase lets them go without a case.
var notAtPlanTime = map[string]string{
	"userCleanupAction.ModifyPlan: Provider not configured": "a bug: Terraform configures the provider before it plans an action",
	"userCleanupAction.Invoke: Provider not configured":     "invoke time, and a bug",
	"userCleanupAction.Invoke: IAM refused the leaver cleanup": "invoke time: the plan's probe refuses first what the gateway " +
		"or the allow-list refuses (TestAccUserCleanupRefusedAtPlan)",
	"checkLimits: Invalid request_timeout":                       "the schema's durationValidator refuses the same value first, and the attribute has no environment fallback",
	"checkLimits: Invalid batch_window":                          "the schema's durationValidator refuses the same value first, and the attribute has no environment fallback",
	"checkRange: Invalid":                                        "the schema's int64validator.Between refuses the same value first, and the attributes have no environment fallback",
	"bkiamProvider.Configure: Cannot create the IAM client":      "resolveConfig refuses first, on the attribute, everything bkiam.New refuses: a bug",
	"newHTTPClient: Cannot create the HTTP client":               "only if http.DefaultTransport was replaced: a bug",
	"ReadConfig: Provider not configured":                        "a bug: Terraform configures the provider before reading a data source",
	"applyChange: Provider not configured":                       "apply time, and a bug",
	"unmarshal: Cannot decode the":                               "Terraform sent a value that does not fit the schema: a bug",
	"decodeValue: Cannot decode the":                             "a codec that does not fit its schema: a bug (TestCodecsRoundTrip)",
	"AsInt64: is not a 64-bit integer":                           "a number in state the provider did not write: a bug",
	"marshal: Cannot encode the resource's state":                "a bug",
	"identityData: Cannot encode the resource's identity":        "a bug (TestProtocolSchemasUseNothingIgnored holds identities to strings and lists)",
	"heldIdentity: Cannot decode the resource's identity":        "an identity Terraform kept or checked against the identity schema: a bug",
	"importResource: Cannot decode the import identity":          "Terraform checks an import block's identity against the identity schema first: a bug",
	"Base.Client: Provider not configured":                       "terraform query configures the provider before listing: a bug",
	"checkIdentityKept: Unexpected Identity Change":              "a bug in a resource's IdentityOf, caught as the framework catches it (TestIdentityAsTheFrameworkDoes)",
	"ReadPrivateState: Cannot read the resource's private state": "private state Terraform kept, not configuration",
	"PrivateState.Get: Cannot read the resource's private state": "private state Terraform kept, not configuration",
	"PrivateState.Bytes: Cannot record what the resource holds":  "apply time, and a bug",
	"PrivateState.Set: Cannot record what the resource holds":    "apply time, and a bug",
	"InstanceGrant.Apply: Unknown grant at apply":                "apply time, and a bug",
	"CreatorGrant.Apply: Unknown instances at apply":             "apply time, and a bug",
	"GroupMembers.Apply: Unknown members at apply":               "apply time, and a bug",
	"memberRunner.Load: Unknown members in state":                "apply time, and a bug",
	"UserGroups.Apply: Unknown memberships at apply":             "apply time, and a bug",
	"userGroupsRunner.Load: Unknown memberships in state":        "apply time, and a bug",
	"userGroupsRunner.Load: Cannot read the memberships": "apply time: depends on the groups in IAM " +
		"(TestAccUserGroupsRefusedGroup provokes it)",
	"UserGroups.Read: Cannot read the memberships": "refresh time: depends on what IAM answers to the read",
	"userGroupsRunner.After: IAM dropped the member": "apply time: IAM refuses to read the groups of a user it does not " +
		"know before any add (TestAccUserGroupsUnknownUser); the check stands for one it forgets between the read and the add",
	"memberRunner.Load: Cannot read the group's members": "apply time: depends on the group in IAM " +
		"(TestAccGroupMembersGroupGone provokes it)",
	"GroupMembers.Read: Cannot read the group's members":       "refresh time: depends on what IAM answers to the read",
	"FromProviderData: Unexpected provider data":               "a bug: Configure always hands over *conns.Data",
	"gradeManagerResource.configured: Provider not configured": "a bug: Terraform configures the provider first",
	"groupResource.configured: Provider not configured":        "a bug: Terraform configures the provider first",
	"gradeManagerResource.Create: Cannot create the grade manager": "apply time: depends on IAM " +
		"(TestAccGradeManagerRefusals provokes the name conflict)",
	"gradeManagerResource.Read: Invalid grade manager id":          "refresh time: a state the provider did not write",
	"gradeManagerResource.Read: Cannot read the grade manager":     "refresh time: depends on what IAM answers to the read",
	"gradeManagerResource.Update: Cannot update the grade manager": "apply time: depends on IAM",
	"gradeManagerResource.Create: Grade manager created without its sync group": "apply time: depends on IAM's organisation " +
		"(TestAccGradeManagerSyncGroupRefused provokes it)",
	"gradeManagerResource.Delete: Cannot delete the grade manager":                  "apply time: depends on IAM",
	"gradeManagerResource.Delete: Cannot tell whether the grade manager is deleted": "apply time: depends on IAM's read after the delete",
	"gradeManagerResource.Delete: The grade manager is still there": "apply time: IAM's background delete outlasts timeouts.delete " +
		"(TestAccGradeManagerDeleteWaits provokes it)",
	"groupResource.Create: group ids for one group": "apply time: an answer IAM never gives",
	"groupResource.Create: Cannot create the group": "apply time: depends on IAM " +
		"(TestAccGradeManagerRefusals provokes the ownership 403)",
	"groupResource.Read: Invalid group id":          "refresh time: a state the provider did not write",
	"groupResource.Read: Cannot read the group":     "refresh time: depends on what IAM answers to the read",
	"groupResource.Update: Cannot update the group": "apply time: depends on IAM",
	"groupResource.Delete: Cannot delete the group": "apply time: depends on IAM",
	"groupDataSource.Read: No such group": "read time: depends on the groups in IAM " +
		"(TestAccGradeManagerRefusals provokes it)",
	"groupDataSource.Read: Cannot find the group": "read time: depends on what IAM answers to the list",
	"gradeManagerDataSource.Read: No such grade manager": "read time: depends on the grade managers in IAM " +
		"(TestAccGradeManagerRefusals provokes it)",
	"gradeManagerDataSource.Read: Several grade managers":        "read time: IAM keeps names unique, so only a broken site answers it",
	"gradeManagerDataSource.Read: Cannot find the grade manager": "read time: depends on what IAM answers to the list",
	"gradeManagerDataSource.Read: Cannot read the grade manager": "read time: depends on what IAM answers to the read",
	"GroupPermission.Read: Cannot read the group's permissions":  "refresh time: depends on what IAM answers to the read",
	"GroupPermission.readImport: Cannot import the permissions": "import time: depends on what the group holds in IAM " +
		"(TestAccGroupPermission imports)",
	"listedResources: which a resource never grants": "import time: depends on what the group holds in IAM",
	"syncGroupOf: reading the marks of its groups (IAM's v1 group list": "list time: depends on what IAM answers to the " +
		"v1 group list (TestSyncGroupOf provokes it)",
	"listedResources: by a condition on their attributes (made in the IAM web UI), which a resource never grants: it grants instances by id or path only": "import " +
		"and list time: depends on what the group holds in IAM (TestListedResourcesRefusesAttributes)",
	"pathKeyOf: in a path, which this resource's notation (/SYSTEM,TYPE,ID/…/) cannot write: an id with \",\" or \"/\" can be granted only by itself, as a plain key": "import time: depends on what the " +
		"group holds in IAM (TestInstancePathKeys provokes it)",
	"managementCaller.BatchInstance: a group permission's call for": "apply time, and a bug: the resource's subject is always its group",
	"managementCaller.BatchInstance: outside the authorization scope of the group's grade manager: widen its authorization_scopes, or grant less": "apply time: " +
		"IAM checks the scope (TestAccGroupPermissionOutsideScope provokes it)",
	"managementCaller.BatchInstance: the group is gone, or its grade manager was made in the IAM web UI: IAM's management API manages only the groups of grade managers a system created through it": "apply " +
		"time: depends on the group in IAM (TestAccGradeManagerRefusals provokes it)",
	"managementCaller.BatchInstance: IAM also checks the system that created the group's grade manager: the app must be a client of both, each with the management allow-list for the call. If the app is not a client of system, set group_system to the system that created the grade manager": "apply " +
		"time: depends on the app's rights in IAM (TestAccGroupPermissionNotClientOfActionsSystem provokes it)",
	"memberRunner.After: IAM dropped members": "apply time: depends on IAM's organisation " +
		"(TestAccGroupMembersDropped provokes it)",
	"effectivePermissionsDataSource.Read: Cannot read the effective permissions": "read time: IAM's refusal of the query, or an " +
		"expression it answers that the provider cannot parse",
	"accessCheckDataSource.Read: Cannot check access": "read time: IAM's refusal of the check (TestAccAccessCheck provokes it with " +
		"check_model off and resources of another type)",
	"Run: Cannot plan the IAM calls": "apply time; the validation refuses every grant the planner would",
	"InstanceGrant.read: Cannot read grants back from IAM": "refresh time: depends on what IAM answers to the read " +
		"(TestAccDriftReadErrors provokes it)",
	"CreatorGrant.Read: Cannot read grants back from IAM": "refresh time: depends on what IAM answers to the read",
	"InstanceGrant.readImport: Cannot import the grant":   "import time: depends on what the subject holds in IAM",
	"importedHoldings: instance (a grant with an empty instance list); bkiam_instance_grant never grants that, so it cannot be imported": "import time: " +
		"depends on what the subject holds in IAM",
	"importedHoldings: instances directly; there is nothing to import": "import time: depends on what the subject holds in IAM",
	"importedWithoutType: on resource instances, not as an action related to no resource type; name its resource types after the actions in the import": "import " +
		"time: depends on what the subject holds in IAM",
	"importedWithoutType: there is nothing to import":     "import time: depends on what the subject holds in IAM",
	"importedCombinations: cannot read the expression of": "import time: an expression IAM sent that does not parse",
	"importedCombinations: a grant with an empty instance list); bkiam_instance_grant never grants that, so it cannot be imported": "import " +
		"time: depends on what the subject holds in IAM",
	"importedCombinations: a bkiam_instance_grant holds one, so it cannot be imported": "import time: depends on what the subject holds in IAM",
	"conflictAt: The plan fails because the provider sets expiry_conflicts = \"error": "plan time, but only once IAM holds a " +
		"policy the grant conflicts with (TestAccPlanSaysWhatAGrantDoesToIAMsExpiry provokes it)",
	"importedCombinations: instances; there is nothing to import": "import time: depends on what the subject holds in IAM",
	"goneCheck.groupGone: but IAM refuses its groups": "refresh time: an answer the real IAM never gives (a grade manager it lists but " +
		"refuses); TestProtocolOwnership403OnRefresh provokes the refresh's other refusal",
	"UpgradePrivate: use that newer version (or a later one) with this state, since an older one could lose track of what the resource granted": "private state Terraform kept, not " +
		"configuration (TestPrivateStateVersion)",
	"UpgradePrivate: which this provider cannot upgrade (a bug in the provider": "a bug: TestPrivateUpgradesCoverEveryVersion",
	"UpgradePrivate: upgrading it from format":                                  "private state Terraform kept, and a bug",
	"upgradeState: Cannot read the stored state":                                "state Terraform kept, not configuration (TestUpgradeState)",
	"listResource: Cannot read the list block":                                  "terraform query sends the list block Terraform validated against the list schema; a bug otherwise",
	"servedList.result: Incomplete list result":                                 "a list resource that streams a result without identity: a bug (the framework's list server says the same)",
	"servedList.result: Cannot encode a list result's identity":                 "EncodeDynamic refuses unknown values and dynamic types, which no list result holds (TestEncodeDynamicRoundTrip)",
	"servedList.result: Cannot encode a list result's resource":                 "as above",
	"encoder.value: an unknown":                                                 "wrapped in servedList.result's errors above: list results hold no unknown value",
	"encoder.value: has no value":                                               "wrapped in servedList.result's errors above: a value built by tftypes.NewValue has every attribute",
	"encoder.value: which list results do not hold":                             "wrapped in servedList.result's errors above: no schema of this provider has a dynamic or tuple type",
	"upgradeState: Cannot upgrade the stored state":                             "state Terraform kept; the CLIs refuse a newer schema version first (TestUpgradeState, TestAccStateUpgrade)",
	"upgradeState: Cannot encode the resource's state":                          "a bug",
	"upgradeSteps: by a newer version of the provider, and this one knows versions up to": "state or identity Terraform kept; " +
		"the CLIs refuse a newer version first (TestUpgradeState, TestUpgradeIdentity, TestAccStateUpgrade)",
	"upgradeSteps: is not a version":                                                          "state Terraform kept: a negative version is a broken state file",
	"upgradeSteps: its attributes are not a JSON object":                                      "state Terraform kept: a broken state file",
	"upgradeSteps: and this provider has no upgrade from that version (a bug in the provider": "a bug: TestProtocolSchemasUseNothingIgnored",
	"upgradeSteps: upgrading it from":                                                         "state Terraform kept, refused by an upgrade step (upgradeCreatorV0: TestProtocolCreatorGrantUpgradeV0)",
	"upgradeIdentity: Cannot read the stored identity":                                        "identity Terraform kept, not configuration (TestUpgradeIdentity)",
	"upgradeIdentity: Cannot upgrade the stored identity":                                     "identity Terraform kept (TestUpgradeIdentity)",
	"upgradeIdentity: Cannot encode the resource's identity":                                  "a bug",
	"upgradeCreatorV0: under its ancestors cannot be written as a path (an id holds \",\" or \"/\"): remove the resource from state (terraform state rm), then import it and list its instances anew": "state " +
		"Terraform kept at schema version 0, not configuration (TestProtocolCreatorGrantUpgradeV0 provokes it)",
	"creatorGrantRunner.recordPolicies: do not include them. Remove them from actions, or leave actions unset to record what IAM grants": "apply time: " +
		"depends on the creator actions the system configured in IAM",
	"instanceGrantRunner.Failed: IAM answers a grant to a user group that does not exist this way: check that group": "apply time: " +
		"depends on whether IAM knows the group",
	"refusePassedExpiry: Rolling expiry passed": "plan time, but only once the rolling expiry a bkiam_group_members or a " +
		"bkiam_user_groups recorded without renew_before (or with it, over state not refreshed since) has passed, which a " +
		"plan-only case cannot arrange: TestProtocolGroupMembersRollingPassed and TestProtocolUserGroupsRollingPassed provoke both",
	"checkRollingAhead: Rolling expiry passed": "as refusePassedExpiry's, for a bkiam_instance_grant: TestProtocolRollingExpiryPassed " +
		"provokes both",
	"Plan: Grants not comparable until apply": "plan time, but only beside a grant in state that does not change, which a " +
		"plan-only case cannot arrange: TestAccShared_overlapUnknownAtPlan provokes it; TestProtocolSharedUnknownAtPlan in both orders",
	"pend: Grants not comparable until apply": "as Plan's: TestAccShared_overlapUnknownAtPlan",
	"MoveResourceState: Unsupported move": "plan time, but only of a moved block over state, which a plan-only case cannot " +
		"arrange: TestMoveResourceState provokes each refusal, TestAccMoveRefused through the CLIs",
	"permissionFromGrant: Unsupported move":    "as MoveResourceState's: TestMoveResourceState, TestAccMoveRefused",
	"grantFromPermission: Unsupported move":    "as MoveResourceState's: TestMoveResourceState",
	"MoveResourceState: Cannot move the state": "a bug: a move Terraform sent without state, or a source state that its own schema does not fit after its upgrade",
	"NewMove: Cannot move the state":           "a bug: the source's state, upgraded by the router, read by the source's own codec",
	"movedIn: Cannot move the state":           "a bug: a move that made a state the target's codec cannot read",
	"checkPlannedScope: Outside the grade manager's scope": "plan time, but only once the grade manager and the group exist " +
		"(their ids known at plan), which a plan-only case cannot arrange: TestAccGroupPermissionPlannedScope provokes both",
}

// TestEveryValidationHasAnAcceptanceCase keeps the acceptance cases
// complete, so that a new validation cannot slip in untested. It needs no
// Terraform: it reads the provider's source and schema, and the cases.
//
//   - Every error message of the source (the summary and the detail given
//     to a diagnostic, and every fmt.Errorf, as those end up in details)
//     has its longest fixed part, between the values filled in, in some
//     case's expected message, unless notAtPlanTime explains why not.
//   - Every validator of the provider schema has a case whose message is
//     that validator's, on that attribute.
func TestEveryValidationHasAnAcceptanceCase(t *testing.T) {
	var cases []acctest.PlanTimeCase
	cases = append(cases, acctest.ProviderConfigErrorCases(t.TempDir())...)
	cases = append(cases, acctest.InstanceGrantValidationCases()...)
	cases = append(cases, acctest.CreatorGrantValidationCases()...)
	cases = append(cases, acctest.CreatorActionsNeedModelCases()...)
	cases = append(cases, acctest.ModelCheckCases()...)
	cases = append(cases, acctest.BlueKingModelCheckCases()...)
	cases = append(cases, acctest.ExpiryConflictCases()...)
	cases = append(cases, acctest.GroupMembersValidationCases()...)
	cases = append(cases, acctest.UserGroupsValidationCases()...)
	cases = append(cases, acctest.MemberExpiryCapCases()...)
	cases = append(cases, acctest.ManagementCases()...)
	cases = append(cases, acctest.ManagementValidationCases()...)
	cases = append(cases, acctest.GroupPermissionValidationCases()...)
	cases = append(cases, acctest.IdentityValidationCases()...)
	cases = append(cases, acctest.ExpiringValidationCases()...)
	cases = append(cases, acctest.AccessCheckValidationCases()...)
	cases = append(cases, acctest.EffectivePermissionsValidationCases()...)
	cases = append(cases, acctest.UserAccessValidationCases()...)
	cases = append(cases, acctest.UserAccessGatewayCases()...)
	for _, c := range acctest.UserCleanupCases() { // planned with -invoke in internal/service/admin
		cases = append(cases, c.PlanTimeCase)
	}
	expected := func(match func(want []string, fragment string) bool) bool {
		for _, c := range cases {
			for _, f := range c.Want {
				if match(c.Want, f) {
					return true
				}
			}
		}
		return false
	}

	files := providerSources(t)
	fset := token.NewFileSet()
	excused := map[string]bool{}
	for _, name := range files {
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				parts := errorMessageParts(call)
				if len(parts) == 0 {
					return true
				}
				key := funcName(fn) + ": " + parts[0]
				if _, ok := notAtPlanTime[key]; ok {
					excused[key] = true
					return true
				}
				for _, part := range parts {
					if !expected(func(_ []string, f string) bool { return strings.Contains(f, part) }) {
						t.Errorf("%s: no acceptance case expects %q (%s); add one that provokes it at plan time, or explain in notAtPlanTime why none can",
							fset.Position(call.Pos()), part, key)
					}
				}
				return true
			})
		}
	}
	for key := range notAtPlanTime {
		if !excused[key] {
			t.Errorf("notAtPlanTime names %q, which the source no longer gives", key)
		}
	}

	ctx := context.Background()
	for attrName, attr := range provider.ProviderSchema().Attributes {
		var descriptions []string
		switch a := attr.(type) {
		case interface{ StringValidators() []validator.String }:
			for _, v := range a.StringValidators() {
				if _, ok := v.(provider.URLValidator); ok {
					// Its messages are checkBaseURL's, checked above; here
					// only that some case shows one on this attribute.
					if !expected(func(want []string, f string) bool {
						return want[0] == "Invalid URL" && strings.HasPrefix(f, attrName+" ")
					}) {
						t.Errorf("no acceptance case expects an invalid URL in %s", attrName)
					}
					continue
				}
				descriptions = append(descriptions, v.Description(ctx))
			}
		case interface{ Int64Validators() []validator.Int64 }:
			for _, v := range a.Int64Validators() {
				descriptions = append(descriptions, v.Description(ctx))
			}
		case interface{ BoolValidators() []validator.Bool }:
			for _, v := range a.BoolValidators() {
				descriptions = append(descriptions, v.Description(ctx))
			}
		default:
			t.Errorf("provider attribute %s is of a kind (%T) this test does not read validators of", attrName, attr)
		}
		for _, d := range descriptions {
			// The framework's validators say "Attribute <attr> <description>,
			// got: …"; durationValidator "<attr>: <description>, got …";
			// ConflictsWith has a message of its own.
			forms := []string{"Attribute " + attrName + " " + d, attrName + ": " + d}
			if strings.HasPrefix(d, "Ensure that if an attribute is set, these are not set:") {
				forms = []string{`cannot be specified when "` + attrName + `" is specified`}
			}
			if !expected(func(_ []string, f string) bool {
				return slices.ContainsFunc(forms, func(form string) bool { return strings.Contains(f, form) })
			}) {
				t.Errorf("no acceptance case expects the message of %s's validator %q", attrName, d)
			}
		}
	}
}

// messageHole stands, in a message's template, for a value filled in.
const messageHole = "\x00"

var formatVerb = regexp.MustCompile(`%[-+# 0-9.*]*[a-zA-Z%]`)

// errorMessageParts returns, for a call that makes an error message (a
// diagnostic's error or fmt.Errorf), the longest fixed part of each of its
// texts: the summary and the detail, or the format. Nil for other calls.
func errorMessageParts(call *ast.CallExpr) []string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	var texts []string
	switch pkg, _ := sel.X.(*ast.Ident); {
	case sel.Sel.Name == "Errorf" && pkg != nil && pkg.Name == "fmt" && len(call.Args) > 0:
		texts = []string{formatVerb.ReplaceAllString(messageTemplate(call.Args[0]), messageHole)}
	case (sel.Sel.Name == "AddError" || sel.Sel.Name == "addError") && len(call.Args) == 2:
		texts = []string{messageTemplate(call.Args[0]), messageTemplate(call.Args[1])}
	case (sel.Sel.Name == "AddAttributeError" || sel.Sel.Name == "addAttributeError") && len(call.Args) == 3:
		texts = []string{messageTemplate(call.Args[1]), messageTemplate(call.Args[2])}
	}
	var parts []string
	for _, text := range texts {
		longest := ""
		for _, part := range strings.Split(text, messageHole) {
			if part = strings.Trim(part, ` .,;:()"`); len(part) > len(longest) {
				longest = part
			}
		}
		// Shorter pieces ("got", "of") say nothing about the message.
		if len(longest) >= 6 {
			parts = append(parts, longest)
		}
	}
	return parts
}

// messageTemplate is the text of a message expression, with messageHole
// for every value computed at run time.
func messageTemplate(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		if s, err := strconv.Unquote(e.Value); err == nil && e.Kind == token.STRING {
			return s
		}
	case *ast.ParenExpr:
		return messageTemplate(e.X)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return messageTemplate(e.X) + messageTemplate(e.Y)
		}
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(e.Args) > 0 {
			return formatVerb.ReplaceAllString(messageTemplate(e.Args[0]), messageHole)
		}
	}
	return messageHole
}

// funcName names a function as notAtPlanTime does: "recv.name" for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
