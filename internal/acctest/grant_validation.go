package acctest

import (
	"fmt"
	"strings"

	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
)

// InstanceGrantHCL renders a valid bkiam_instance_grant changed by
// changes: an attribute's expression, "" to leave it out, or under
// "import" an ID to import the resource with.
func InstanceGrantHCL(changes map[string]string) string {
	attrs := map[string]string{
		"system":    `"bk_cmdb"`,
		"subject":   `{ type = "user", id = "alice" }`,
		"actions":   `["view_host"]`,
		"resources": `[{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]`,
	}
	for k, v := range changes {
		attrs[k] = v
	}
	var b strings.Builder
	if id := attrs["import"]; id != "" {
		fmt.Fprintf(&b, "import {\n  to = %s\n  id = %q\n}\n", GrantAddr, id)
	}
	b.WriteString("resource \"bkiam_instance_grant\" \"test\" {\n")
	for _, k := range []string{"system", "subject", "actions", "resources", "expires_at", "expires_in", "renew_before", "timeouts"} {
		if attrs[k] != "" {
			fmt.Fprintf(&b, "  %s = %s\n", k, attrs[k])
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// InstanceGrantValidationCases are bkiam_instance_grant's plan-time errors:
// those of its validation, of its plan, and of an import block's ID, which
// Terraform 1.5 imports during the plan.
func InstanceGrantValidationCases() []PlanTimeCase {
	var tooMany strings.Builder
	for i := 0; i <= conns.MaxPolicyInstances; i++ {
		fmt.Fprintf(&tooMany, "%q = \"h\", ", fmt.Sprint(i))
	}
	blank := func(path string) []string { return []string{"Blank value", path + " must not be empty or blank."} }
	instanceCount := func(n int) []string {
		return []string{"Invalid number of instances", fmt.Sprintf("resources[0].instances map must contain at least 1 element and at most 10000 elements, got: %d. ", n) +
			"An empty map would mean every instance to IAM; split larger sets across resources with different actions or subjects."}
	}
	trimmed := func(path, got, problem string) []string {
		return []string{"Invalid IAM id", fmt.Sprintf("%s is %s, which %s. IAM trims the white space around ids as it stores them, "+
			"so the id it would keep is not the one configured; write the id exactly as IAM knows it.", path, got, problem)}
	}
	timeout := func(op, got string) []string {
		return []string{"Invalid duration", fmt.Sprintf(`timeouts.%s must be a positive duration such as "30m" or "1h", got %q.`, op, got)}
	}
	cases := []struct {
		name    string
		changes map[string]string
		want    []string
	}{
		{"blank system", map[string]string{"system": `" "`}, blank("system")},
		{"unknown subject type", map[string]string{"subject": `{ type = "robot", id = "r2" }`},
			[]string{"Unknown subject type", `subject.type value must be one of "user" or "group", got "robot".`}},
		{"blank subject id", map[string]string{"subject": `{ type = "user", id = "" }`}, blank("subject.id")},
		{"non-numeric group", map[string]string{"subject": `{ type = "group", id = "ops" }`},
			[]string{"Group IDs are numeric", `subject.id must be the numeric ID of an IAM user group when subject.type is "group", got "ops".`}},
		{"no actions", map[string]string{"actions": `[]`},
			[]string{"No actions", "actions set must contain at least 1 action, got: 0. Name the actions to grant, or remove the resource."}},
		{"blank action", map[string]string{"actions": `["view_host", ""]`}, blank(`actions[Value("")]`)},
		{"blank resource system", map[string]string{"resources": `[{ system = " ", type = "host", instances = { "1" = "x" } }]`}, blank("resources[0].system")},
		{"blank resource type", map[string]string{"resources": `[{ system = "bk_cmdb", type = "", instances = { "1" = "x" } }]`}, blank("resources[0].type")},
		{"empty instances", map[string]string{"resources": `[{ system = "bk_cmdb", type = "host", instances = {} }]`}, instanceCount(0)},
		{"over 10000 instances", map[string]string{"resources": `[{ system = "bk_cmdb", type = "host", instances = {` + tooMany.String() + `} }]`}, instanceCount(10001)},
		{"blank instance name", map[string]string{"resources": `[{ system = "bk_cmdb", type = "host", instances = { "1" = " " } }]`}, blank(`resources[0].instances["1"]`)},
		{"blank instance id", map[string]string{"resources": `[{ system = "bk_cmdb", type = "host", instances = { "" = "x" } }]`},
			[]string{"Blank value", `The instance IDs (keys) of resources[0].instances must not be empty or blank, got "".`}},
		{"system with white space", map[string]string{"system": `" bk_cmdb"`}, trimmed("system", `" bk_cmdb"`, "starts or ends with white space")},
		{"subject id with a control character", map[string]string{"subject": `{ type = "user", id = "ali\u0001ce" }`},
			trimmed("subject.id", `"ali\x01ce"`, "holds a control character")},
		{"action with white space", map[string]string{"actions": `["view_host "]`}, trimmed(`actions[Value("view_host ")]`, `"view_host "`, "starts or ends with white space")},
		{"resource type with white space", map[string]string{"resources": `[{ system = "bk_cmdb", type = "host\n", instances = { "1" = "x" } }]`},
			trimmed("resources[0].type", `"host\n"`, "starts or ends with white space")},
		{"instance id with white space", map[string]string{"resources": `[{ system = "bk_cmdb", type = "host", instances = { " 1" = "x" } }]`},
			[]string{"Invalid IAM id", `The instance ID (key) " 1" of resources[0].instances starts or ends with white space. IAM trims the white space ` +
				"around ids as it stores them, so the id it would keep is not the one configured; write the id exactly as IAM knows it."}},
		{"expiry not RFC 3339", map[string]string{"expires_at": `"next tuesday"`},
			[]string{"Invalid RFC 3339 time", `expires_at must be an RFC 3339 time such as "2027-06-30T00:00:00Z", got "next tuesday".`}},
		{"expiry in the past", map[string]string{"expires_at": `"2020-01-01T00:00:00Z"`},
			[]string{"Expiry in the past", "expires_at is 2020-01-01T00:00:00Z, which has passed; IAM refuses expiries that are not in the future. " +
				"Set a later time or remove it for a permanent grant."}},
		{"expiry past 2100", map[string]string{"expires_at": `"2100-01-01T00:00:01Z"`},
			[]string{"Expiry too late", `expires_at must be no later than 2100-01-01T00:00:00Z, IAM's "permanent", got 2100-01-01T00:00:01Z. ` +
				"Remove it for a permanent grant."}},
		{"expiry for a group", map[string]string{"subject": `{ type = "group", id = "1" }`, "expires_at": `"2099-01-01T00:00:00Z"`},
			[]string{"Group grants do not expire", "IAM keeps group policies forever and ignores an expiry. Remove expires_at, or grant to users instead."}},
		{"expires_in not a duration", map[string]string{"expires_in": `"90 days"`},
			[]string{"Invalid duration", `expires_in: "90 days" is not a duration such as "90d", "12h", "1w" or "1d12h". Write a number and a unit, s, m, h, d (24 hours) or w (7 days), or several, such as "90d", "1w" or "1d12h".`}},
		{"expires_in beside expires_at", map[string]string{"expires_in": `"90d"`, "expires_at": `"2099-01-01T00:00:00Z"`},
			[]string{"Both expires_at and expires_in", "A grant expires at a fixed time (expires_at) or a duration after it is granted (expires_in), not both. Remove one."}},
		{"expires_in for a group", map[string]string{"subject": `{ type = "group", id = "1" }`, "expires_in": `"90d"`},
			[]string{"Group grants do not expire", "IAM keeps group policies forever and ignores an expiry. Remove expires_in, or grant to users instead."}},
		{"renew_before not a duration", map[string]string{"expires_in": `"90d"`, "renew_before": `"0d"`},
			[]string{"Invalid duration", `renew_before: "0d" is not a positive duration. Write a number and a unit, s, m, h, d (24 hours) or w (7 days), or several, such as "7d" or "1d12h".`}},
		{"renew_before without expires_in", map[string]string{"renew_before": `"7d"`},
			[]string{"renew_before without expires_in", `renew_before says when to renew the rolling expiry that expires_in sets, and expires_in is not set. ` +
				`Set expires_in as well (for example expires_in = "90d" with renew_before = "7d"), or remove renew_before.`}},
		{"renew_before as long as expires_in", map[string]string{"expires_in": `"7d"`, "renew_before": `"1w"`},
			[]string{"renew_before not shorter than expires_in", "renew_before (1w) must be shorter than expires_in (7d): a renewal adds expires_in to " +
				"the expiry, which must take it out of the renewal window. Shorten renew_before (a week of 90 days, for example) or lengthen expires_in."}},
		{"create timeout not a duration", map[string]string{"timeouts": `{ create = "soon" }`}, timeout("create", "soon")},
		{"zero update timeout", map[string]string{"timeouts": `{ update = "0s" }`}, timeout("update", "0s")},
		{"negative delete timeout", map[string]string{"timeouts": `{ delete = "-1m" }`}, timeout("delete", "-1m")},
		{"the literal id *", map[string]string{"resources": `[{ system = "bk_cmdb", type = "host", instances = { "*" = "all" } }]`},
			[]string{"The id * is literal", `The instance ID (key) "*" of resources[0].instances is not every instance: IAM matches it as the ` +
				`literal id "*", so the grant would match no real instance. Name the instances to grant (or, in a bkiam_group_permission, ` +
				`give a path that ends in *, such as /bk_cmdb,biz,2/bk_cmdb,host,*/, for every instance under a parent).`}},
		{"an id that begins with /", map[string]string{"resources": `[{ system = "bk_cmdb", type = "host", instances = { "/bk_cmdb,host,5/" = "h" } }]`},
			[]string{"An id that begins with /", `The instance ID (key) "/bk_cmdb,host,5/" of resources[0].instances begins with "/", which ` +
				`this provider reads as a path (/SYSTEM,TYPE,ID/…/, as bkiam_group_permission takes them) and so cannot tell from one: an ` +
				`IAM id that begins with "/" cannot be granted with this provider. Check that the key is the instance's id.`}},
		{"import ID of the wrong shape", map[string]string{"import": "bk_cmdb/robot/r2"},
			[]string{"Invalid import ID", `Expected SYSTEM/SUBJECT_TYPE/SUBJECT_ID with SUBJECT_TYPE user or group, e.g. bk_cmdb/user/alice, or, to read what the subject holds (detect_drift), SYSTEM/SUBJECT_TYPE/SUBJECT_ID/ACTION[,ACTION…]/RESOURCE_SYSTEM/TYPE, e.g. bk_cmdb/user/alice/view_host,edit_host/bk_cmdb/host; got "bk_cmdb/robot/r2".`}},
		{"import ID with a blank action", map[string]string{"import": "bk_cmdb/user/alice/view_host,,edit_host/bk_cmdb/host"},
			[]string{"Invalid import ID", `The actions of import ID "bk_cmdb/user/alice/view_host,,edit_host/bk_cmdb/host" are a comma-separated list without blanks, e.g. view_host,edit_host.`}},
		{"import ID of a non-numeric group", map[string]string{"import": "bk_cmdb/group/ops", "subject": `{ type = "group", id = "1" }`},
			[]string{"Group IDs are numeric", `subject.id must be the numeric ID of an IAM user group when subject.type is "group", got "ops".`}},
	}
	out := make([]PlanTimeCase, len(cases))
	for i, tc := range cases {
		out[i] = PlanTimeCase{Name: tc.name, Config: InstanceGrantHCL(tc.changes), Want: tc.want}
	}
	// Another grant of host 1 to alice: a lasting overlap, refused without
	// allow_shared_grants (TestAccPathMatrix takes it down every path).
	return append(out, PlanTimeCase{Name: "lasting overlap", Config: InstanceGrantHCL(nil) + SharedHostGrant("other", "view_host", "", "1"),
		Want: []string{"Grants shared with another resource",
			"After this plan, this resource and another of the configuration would both grant the same paths: shared with",
			"IAM keeps one policy per subject and action, so a revoke by either resource takes a path from both, and on the " +
				"paths of the CLI that do not plan both resources together (-target, -exclude, a taint, -refresh=false) a change " +
				"of one would take away what the other still grants. Let one resource grant each path (move the shared " +
				"instances into one of them), or set allow_shared_grants = true in the provider configuration to allow it with " +
				"those limits."}})
}

// CreatorGrantValidationCases are bkiam_creator_grant's plan-time errors
// (TestAccCreatorGrant_planTimeValidation). They live here, beside the
// instance grant's, so that TestEveryValidationHasAnAcceptanceCase reads
// both resources' cases from one place.
func CreatorGrantValidationCases() []PlanTimeCase {
	// grant renders a bkiam_creator_grant; extra is added inside the block,
	// importID, unless empty, imports it.
	grant := func(system, typ, creator, instances, extra, importID string) string {
		imp := ""
		if importID != "" {
			imp = fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n", CreatorAddr, importID)
		}
		return imp + fmt.Sprintf(`
resource "bkiam_creator_grant" "test" {
  system    = %q
  type      = %q
  creator   = %q
  instances = %s
%s}
`, system, typ, creator, instances, extra)
	}
	var tooMany strings.Builder
	tooMany.WriteString("{")
	for i := 0; i <= conns.MaxPolicyInstances; i++ {
		fmt.Fprintf(&tooMany, "%q = \"j\", ", fmt.Sprint(i))
	}
	tooMany.WriteString("}")
	one := `{ "job1" = "first job" }`
	// keyed is instances of one mini app, "m", under each key given.
	keyed := func(keys ...string) string {
		var b strings.Builder
		b.WriteString("{ ")
		for _, k := range keys {
			fmt.Fprintf(&b, "%q = \"m\", ", k)
		}
		return b.String() + "}"
	}
	// invalidPath is the error of a key that begins with "/" and does
	// not read as the path of a bk_sops mini app, for the reason given.
	invalidPath := func(key, reason string) []string {
		return []string{"Invalid path", fmt.Sprintf(`The key %q of instances begins with "/", so it is the instance's path under its ancestors, `+
			`but %s. Write the path as IAM does, outermost ancestor first and the instance last: /SYSTEM,TYPE,ID/…/, e.g. `+
			`/bk_sops,project,project1/bk_sops,mini_app,mini_app1/.`, key, reason)}
	}
	blank := func(path string) []string { return []string{"Blank value", path + " must not be empty or blank."} }
	instanceCount := func(n int) []string {
		return []string{"Invalid number of instances", fmt.Sprintf("instances map must contain at least 1 element and at most 10000 elements, got: %d. ", n) +
			"An empty map would mean every instance to IAM; split larger sets across resources with different actions or subjects."}
	}
	return []PlanTimeCase{
		{Name: "blank system", Config: grant("", "job", "alice", one, "", ""), Want: blank("system")},
		{Name: "blank type", Config: grant("bk_job", " ", "alice", one, "", ""), Want: blank("type")},
		{Name: "blank creator", Config: grant("bk_job", "job", "", one, "", ""), Want: blank("creator")},
		{Name: "no instances", Config: grant("bk_job", "job", "alice", `{}`, "", ""), Want: instanceCount(0)},
		{Name: "over 10000 instances", Config: grant("bk_job", "job", "alice", tooMany.String(), "", ""), Want: instanceCount(10001)},
		{Name: "blank name", Config: grant("bk_job", "job", "alice", `{ "job1" = "" }`, "", ""), Want: blank(`instances["job1"]`)},
		{Name: "blank name under a path", Config: grant("bk_sops", "mini_app", "alice", `{ "/bk_sops,project,p1/bk_sops,mini_app,m1/" = " " }`, "", ""),
			Want: blank(`instances["/bk_sops,project,p1/bk_sops,mini_app,m1/"]`)},
		{Name: "blank instance id", Config: grant("bk_job", "job", "alice", `{ " " = "j" }`, "", ""),
			Want: []string{"Blank value", `The instance IDs (keys) of instances must not be empty or blank, got " ".`}},
		{Name: "blank ancestor system", Config: grant("bk_sops", "mini_app", "alice", keyed("/,project,p1/bk_sops,mini_app,m1/"), "", ""),
			Want: invalidPath("/,project,p1/bk_sops,mini_app,m1/", `its node ",project,p1" is not SYSTEM,TYPE,ID`)},
		{Name: "blank ancestor type", Config: grant("bk_sops", "mini_app", "alice", keyed("/bk_sops,,p1/bk_sops,mini_app,m1/"), "", ""),
			Want: invalidPath("/bk_sops,,p1/bk_sops,mini_app,m1/", `its node "bk_sops,,p1" is not SYSTEM,TYPE,ID`)},
		{Name: "blank ancestor id", Config: grant("bk_sops", "mini_app", "alice", keyed("/bk_sops,project,/bk_sops,mini_app,m1/"), "", ""),
			Want: invalidPath("/bk_sops,project,/bk_sops,mini_app,m1/", `its node "bk_sops,project," is not SYSTEM,TYPE,ID`)},
		{Name: "path without its closing /", Config: grant("bk_sops", "mini_app", "alice", keyed("/bk_sops,project,p1/bk_sops,mini_app,m1"), "", ""),
			Want: invalidPath("/bk_sops,project,p1/bk_sops,mini_app,m1", `it does not begin and end with "/"`)},
		{Name: "path whose last node is of another type", Config: grant("bk_sops", "mini_app", "alice", keyed("/bk_sops,project,p1/bk_sops,flow,m1/"), "", ""),
			Want: invalidPath("/bk_sops,project,p1/bk_sops,flow,m1/", "its last node, bk_sops,flow,m1, is not an instance of bk_sops/mini_app: "+
				"a key's path ends with the instance itself, under its ancestors")},
		{Name: "one-node path", Config: grant("bk_sops", "mini_app", "alice", keyed("/bk_sops,mini_app,m1/"), "", ""),
			Want: invalidPath("/bk_sops,mini_app,m1/", `it names the instance alone: write its id, "m1", as the key`)},
		{Name: "repeated ancestor", Config: grant("bk_sops", "mini_app", "alice", keyed("/bk_sops,project,p1/bk_sops,project,p1/bk_sops,mini_app,m1/"), "", ""),
			Want: []string{"Repeated path node", `The path "/bk_sops,project,p1/bk_sops,project,p1/bk_sops,mini_app,m1/" of instances names the node ` +
				`project,p1 twice. IAM refuses a path that repeats a node above the instance ("nodes must not repeat"); remove the repeated node.`}},
		{Name: "instance under two paths", Config: grant("bk_sops", "mini_app", "alice",
			keyed("/bk_sops,project,p1/bk_sops,mini_app,m1/", "/bk_sops,project,p2/bk_sops,mini_app,m1/"), "", ""),
			Want: []string{"Instance given twice", `The keys "/bk_sops,project,p1/bk_sops,mini_app,m1/" and "/bk_sops,project,p2/bk_sops,mini_app,m1/" ` +
				`of instances both name the instance "m1". An instance has one place: keep the key with its ancestors (or its id alone, when it has none).`}},
		{Name: "path ending in *", Config: grant("bk_sops", "mini_app", "alice", keyed("/bk_sops,project,p1/bk_sops,mini_app,*/"), "", ""),
			Want: []string{"Invalid path", `The key "/bk_sops,project,p1/bk_sops,mini_app,*/" of instances begins with "/", so it is the ` +
				`instance's path under its ancestors, but it ends with the id *, which IAM reads as every instance under the ancestors, not ` +
				`one created instance.`}},
		{Name: "ancestor id with white space", Config: grant("bk_sops", "mini_app", "alice", keyed("/bk_sops,project, p1/bk_sops,mini_app,m1/"), "", ""),
			Want: []string{"Invalid path", `its node bk_sops,project, p1 holds " p1", which starts or ends with white space (IAM would store it trimmed)`}},
		{Name: "creator with white space", Config: grant("bk_job", "job", " alice", one, "", ""),
			Want: []string{"Invalid IAM id", `creator is " alice", which starts or ends with white space. IAM trims ` +
				"the white space around ids as it stores them, so the id it would keep is not the one configured; write the id exactly as IAM knows it."}},
		{Name: "no actions", Config: grant("bk_job", "job", "alice", one, "  actions = []\n", ""),
			Want: []string{"No actions", "actions set must contain at least 1 action, got: 0. " +
				"Name the creator actions to expect, or omit actions to record those of the type's creator configuration."}},
		{Name: "blank action", Config: grant("bk_job", "job", "alice", one, "  actions = [\"view\", \" \"]\n", ""), Want: blank(`actions[Value(" ")]`)},
		{Name: "timeout not a duration", Config: grant("bk_job", "job", "alice", one, "  timeouts = { update = \"0s\" }\n", ""),
			Want: []string{"Invalid duration", `timeouts.update must be a positive duration such as "30m" or "1h", got "0s".`}},
		{Name: "import ID of the wrong shape", Config: grant("bk_job", "job", "alice", one, "", "bk_job/alice"),
			Want: []string{"Invalid import ID", `Expected SYSTEM/TYPE/CREATOR, e.g. bk_sops/mini_app/alice; got "bk_job/alice".`}},
	}
}
