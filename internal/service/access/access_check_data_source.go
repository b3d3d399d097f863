package access

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/policyexpr"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// accessCheckDataSource is bkiam_access_check: IAM's own answer to "may
// this subject do these actions on these resources", counting what IAM
// counts (its own grants, its groups' joined directly or through a
// department or an ancestor department, permission templates, expiry),
// for check blocks, postconditions and terraform test assertions.
type accessCheckDataSource struct {
	conns.DataSource
}

var _ datasource.DataSourceWithConfigure = &accessCheckDataSource{}

func NewAccessCheckDataSource() datasource.DataSource {
	return &accessCheckDataSource{conns.DataSource{Name: "access_check"}}
}

func (d *accessCheckDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Whether a subject may do actions, as IAM itself answers it (the backend's " +
			"`auth_by_actions`, at most 10 actions per call): counting the subject's own grants, the grants of every " +
			"group it belongs to (directly, through a department or an ancestor department), permission-template rows, " +
			"and leaving out what has expired. For `check` blocks, `postcondition`s and `terraform test` assertions. " +
			"IAM allows `admin`, super managers and the system's managers everything without reading a policy: " +
			"`as_manager` says so, so that an assertion about a manager is not taken for one about their grants. IAM " +
			"answers a user or a group it does not know `false`; the plan fails instead, naming it (a group is named by " +
			"its numeric id: the backend's policy query says whether IAM knows it, once per group and provider process).\n\n" +
			"IAM never looks an instance's topology or attributes up: a grant of every host under business 1 (how the web " +
			"UI and CMDB grant) or on an attribute (`host.os eq linux`) allows an instance only when the check gives its " +
			"`paths` (or the attribute). Give each resource's `paths`. When IAM answers `false` and its own policy says " +
			"the answer depends on a path or an attribute the configuration does not give, the action is `conditional`: " +
			"`allowed` is null for it (never a plain `false`), `all_allowed` is null unless another action is denied, " +
			"and the plan warns, naming the resource, the action and what to give. To tell, the provider reads the " +
			"subject's policy for the denied actions (the backend's `query_by_actions`, one more call, only when an action " +
			"is denied; an action related to another system's resource type, which that query refuses without resources, " +
			"is asked alone through the single-action `query`) and evaluates it with what the configuration gives. That " +
			"read asks for the query's debug output (`?debug=1&force=1`), which names the rows IAM read: a row with a " +
			"daily time window (`_bk_iam_env_`, as the web UI grants one) is evaluated by IAM with its own clock and " +
			"left out of its answer outside the window, so for an action still denied the provider reads those rows " +
			"by id (at most 20 per check) and warns \"Allowed only within a time window\", naming the row and the window, " +
			"when one would allow the request at another time of day; `allowed` stays IAM's answer now. Without the debug " +
			"output (the backend's to change) nothing is said of a window. In a " +
			"`check` block or a postcondition, a condition that is such a null fails the plan (\"Condition expression must " +
			"return either true or false, not null\"), and so does its negation; `alltrue` over a list holding it is `false`, and `anytrue` ignores it: " +
			"write \"nobody may\" as `alltrue([for c in … : c.all_allowed == false])`, never `!anytrue(…)`, which lets a " +
			"conditional answer pass silently ([Audit who may do what](../guides/audit-access.md)).\n\n" +
			"Read through the API gateway (`apigw_url`); the app must be a client of the system. IAM's backend caches " +
			"policies and memberships, so a check made right after a change may answer from before it (not measured here).",
		Attributes: map[string]schema.Attribute{
			"system": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The system of the actions, e.g. `bk_cmdb`.",
				Validators:          []validator.String{verify.IAMIDValidator{}},
			},
			"subject": schema.SingleNestedAttribute{
				Required:            true,
				MarkdownDescription: "Who: `{ type = \"user\", id = \"alice\" }`, or a user group by its numeric id.",
				Attributes: map[string]schema.Attribute{
					"type": schema.StringAttribute{Required: true, MarkdownDescription: "`user` or `group`.",
						Validators: []validator.String{stringvalidator.OneOf(bkiam.SubjectUser, bkiam.SubjectGroup)}},
					"id": schema.StringAttribute{Required: true, MarkdownDescription: "The username or the group's id."},
				},
			},
			"actions": schema.SetAttribute{
				Required:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The actions to check.",
				Validators:          []validator.Set{setvalidator.SizeAtLeast(1)},
			},
			"resources": schema.ListNestedAttribute{
				Optional: true,
				MarkdownDescription: "On what: one instance of each resource type the actions relate to, in the order of " +
					"the actions' related types (the `bkiam_system` data source lists them); every action must relate to " +
					"the same types. Leave it out for actions related to no resource type. IAM compares them as a set and " +
					"accepts another order; the plan asks for the model's, as a grant's `resources` do.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"system": schema.StringAttribute{Required: true, MarkdownDescription: "The resource type's system, which " +
						"need not be the action's: bk_job's `access_business` relates to bk_cmdb's `biz`, so its resource is " +
						"`{ system = \"bk_cmdb\", type = \"biz\", id = \"2\" }`."},
					"type": schema.StringAttribute{Required: true, MarkdownDescription: "The resource type."},
					"id":   schema.StringAttribute{Required: true, MarkdownDescription: "The instance's id."},
					"paths": schema.ListAttribute{
						Optional:    true,
						ElementType: types.StringType,
						MarkdownDescription: "The instance's topology paths in IAM's form: the path of its ancestors, outermost " +
							"first, each node `TYPE,ID`, starting and ending with `/`, e.g. `[\"/biz,1/\"]` for a host of business 1 " +
							"or `[\"/biz,1/set,2/module,3/\"]`; several for an instance under several parents. `[]` says the " +
							"instance has no ancestors. Sent as the resource's `_bk_iam_path_`: IAM allows a grant by topology " +
							"(every host under business 1) only when it is given. Left out, an action such a grant would allow " +
							"is `conditional`.",
						Validators: []validator.List{listvalidator.ValueStringsAre(topologyPathValidator{})},
					},
					"attributes": schema.MapAttribute{
						Optional:    true,
						ElementType: types.StringType,
						MarkdownDescription: "Other attributes of the instance, by name, for grants IAM holds on an attribute " +
							"(`host.os eq linux`, made in the web UI): sent as strings, so a condition IAM holds on a number or " +
							"a bool never holds for them. Left out, an action such a grant would allow is `conditional`.",
						Validators: []validator.Map{mapvalidator.KeysAre(attributeNameValidator{})},
					},
				}},
			},
			"allowed": schema.MapAttribute{
				Computed:    true,
				ElementType: types.BoolType,
				MarkdownDescription: "By action: whether IAM allows it; null when it is `conditional` (IAM's answer depends " +
					"on a path or an attribute the configuration does not give).",
			},
			"all_allowed": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether IAM allows every action: `false` when it denies one, else null when an action " +
					"is `conditional`, else `true`.",
			},
			"conditional": schema.SetAttribute{
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "The actions whose answer depends on a topology path or an attribute the configuration " +
					"does not give: IAM answers them `false` only for want of it, and the subject's policy would allow them " +
					"for some values. Empty when every answer is definite. Give the resources' `paths` (or the `attributes` " +
					"the plan's warning names).",
			},
			"as_manager": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether IAM allowed the subject as `admin`, a super manager or a manager of the " +
					"system, without reading any policy.",
			},
		},
	}
}

type accessCheckModel struct {
	System      types.String `tfsdk:"system"`
	Subject     types.Object `tfsdk:"subject"`
	Actions     types.Set    `tfsdk:"actions"`
	Resources   types.List   `tfsdk:"resources"`
	Allowed     types.Map    `tfsdk:"allowed"`
	AllAllowed  types.Bool   `tfsdk:"all_allowed"`
	Conditional types.Set    `tfsdk:"conditional"`
	AsManager   types.Bool   `tfsdk:"as_manager"`
}

type accessResourceModel struct {
	System     types.String `tfsdk:"system"`
	Type       types.String `tfsdk:"type"`
	ID         types.String `tfsdk:"id"`
	Paths      types.List   `tfsdk:"paths"`
	Attributes types.Map    `tfsdk:"attributes"`
}

func (d *accessCheckDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	m, ok := conns.ReadConfig[accessCheckModel](ctx, &d.DataSource, req, resp)
	if !ok {
		return
	}
	var subject struct {
		Type types.String `tfsdk:"type"`
		ID   types.String `tfsdk:"id"`
	}
	resp.Diagnostics.Append(m.Subject.As(ctx, &subject, basetypes.ObjectAsOptions{})...)
	var actions []string
	resp.Diagnostics.Append(m.Actions.ElementsAs(ctx, &actions, false)...)
	var resources []bkiam.AuthResource
	if !m.Resources.IsNull() {
		var rs []accessResourceModel
		resp.Diagnostics.Append(m.Resources.ElementsAs(ctx, &rs, false)...)
		for _, r := range rs {
			res := bkiam.AuthResource{System: r.System.ValueString(), Type: r.Type.ValueString(), ID: r.ID.ValueString(), Attribute: map[string]any{}}
			if !r.Attributes.IsNull() {
				var attrs map[string]string
				resp.Diagnostics.Append(r.Attributes.ElementsAs(ctx, &attrs, false)...)
				for k, v := range attrs {
					res.Attribute[k] = v
				}
			}
			if !r.Paths.IsNull() {
				paths := []string{}
				resp.Diagnostics.Append(r.Paths.ElementsAs(ctx, &paths, false)...)
				res.Attribute[policyexpr.AttributePath] = paths
			}
			resources = append(resources, res)
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	slices.Sort(actions)
	system := m.System.ValueString()
	who := bkiam.Subject{Type: subject.Type.ValueString(), ID: subject.ID.ValueString()}
	d.checkAgainstModel(ctx, system, actions, resources, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if who.Type == bkiam.SubjectUser && !strings.EqualFold(who.ID, "admin") {
		at := path.Root("subject").AtName("id")
		_, known, err := knownUser(ctx, d.Data, who.ID, at, `"denied"`, &resp.Diagnostics)
		if !known {
			return
		}
		if err != nil {
			resp.Diagnostics.AddAttributeWarning(at, "Cannot tell an unknown user from a denied one",
				fmt.Sprintf("IAM answers a user it does not know false, and the provider could not ask IAM whether it knows %q "+
					"(the gateway's user-groups route, which an app may need granted): %v.", who.ID, err))
		}
	}
	if who.Type == bkiam.SubjectGroup && !knownGroup(ctx, d.Data, system, who.ID, actions[0], &resp.Diagnostics) {
		return
	}
	answer, err := d.Data.Client.AuthByActions(ctx, system, who, actions, resources)
	frozen := errors.Is(err, bkiam.ErrSubjectFrozen)
	if frozen {
		// IAM denies a frozen subject everything: that is the answer, not
		// a failure to get one.
		resp.Diagnostics.AddAttributeWarning(path.Root("subject").AtName("id"), "Frozen in IAM",
			fmt.Sprintf("IAM has frozen %s %s (its admin API freezes a leaver): the backend refuses every access check of it, "+
				"and every system that asks IAM denies it each action until it is unfrozen. allowed is false for each action.",
				who.Type, who.ID))
		answer, err = bkiam.AccessAnswer{Allowed: map[string]bool{}}, nil
		for _, a := range actions {
			answer.Allowed[a] = false
		}
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot check access", err.Error())
		return
	}
	// IAM's false is "denied" only if the request gave what the subject's
	// policy asks about: read the policy of the denied actions and evaluate
	// it with what the configuration gives.
	var denied []string
	for _, a := range actions {
		if !answer.Allowed[a] {
			denied = append(denied, a)
		}
	}
	gaps := map[string][]policyexpr.Gap{}
	if len(denied) > 0 && !answer.AsManager && !frozen {
		conditions, rows, err := deniedPolicy(ctx, d.Data.Client, d.Data.AskAlone(ctx, system), system, who, denied)
		if err != nil {
			resp.Diagnostics.AddError("Cannot check access", "IAM denied "+strings.Join(denied, ", ")+", and the provider could not read "+
				"the subject's policy to tell a denial from an answer that depends on a path or an attribute: "+err.Error())
			return
		}
		request := evalRequest(resources)
		var plainlyDenied []string
		for _, c := range conditions {
			if !slices.Contains(denied, c.Action) {
				continue
			}
			v, err := evalCondition(c.Condition, request)
			if err != nil {
				resp.Diagnostics.AddError("Cannot check access", fmt.Sprintf("IAM's policy for %s: %v", c.Action, err))
				return
			}
			switch {
			case v.Truth == policyexpr.Unknown && onlyEnvironment(v.Gaps):
				// A time window, which IAM evaluated with its clock: its
				// denial stands, now.
				resp.Diagnostics.AddAttributeWarning(path.Root("allowed").AtMapKey(c.Action), "Allowed only within a time window",
					fmt.Sprintf("IAM denied %s now, and %s's policy for it allows it only within a time window (an environment "+
						"condition IAM evaluates against its own clock): the answer may differ at another time of day.",
						c.Action, who.Type+" "+who.ID))
			case v.Truth == policyexpr.Unknown:
				gaps[c.Action] = v.Gaps
			case v.Truth == policyexpr.True:
				// IAM denied what its own policy allows (a cache that lags
				// a change): its answer stands.
				tflog.Debug(ctx, "IAM denied an action its policy allows", map[string]any{"action": c.Action, "condition": string(c.Condition)})
			default:
				plainlyDenied = append(plainlyDenied, c.Action)
			}
		}
		// IAM's query leaves a row outside its time window out of its
		// answer: the rows it read tell.
		windowedDenials(ctx, d.Data.Client, system, who, rows, plainlyDenied, request, &resp.Diagnostics)
	}
	allowed := map[string]attr.Value{}
	var conditional []string
	anyDenied := false
	for _, a := range actions {
		if g, ok := gaps[a]; ok {
			allowed[a] = types.BoolNull()
			conditional = append(conditional, a)
			at, detail := dependsOn(who, a, g, resources)
			resp.Diagnostics.AddAttributeWarning(at, fmt.Sprintf("IAM's answer for %s depends on what the configuration does not give", a), detail)
			continue
		}
		allowed[a] = types.BoolValue(answer.Allowed[a])
		anyDenied = anyDenied || !answer.Allowed[a]
	}
	var diags diag.Diagnostics
	m.Allowed, diags = types.MapValue(types.BoolType, allowed)
	resp.Diagnostics.Append(diags...)
	m.Conditional, diags = types.SetValueFrom(ctx, types.StringType, append([]string{}, conditional...))
	resp.Diagnostics.Append(diags...)
	switch {
	case anyDenied:
		m.AllAllowed = types.BoolValue(false)
	case len(conditional) > 0:
		m.AllAllowed = types.BoolNull()
	default:
		m.AllAllowed = types.BoolValue(true)
	}
	m.AsManager = types.BoolValue(answer.AsManager)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// onlyEnvironment reports whether every gap is a condition on IAM's
// environment (a time window), which no request gives: IAM decides it by
// its clock.
func onlyEnvironment(gaps []policyexpr.Gap) bool {
	return len(gaps) > 0 && !slices.ContainsFunc(gaps, func(g policyexpr.Gap) bool { return g.Type != policyexpr.EnvironmentType })
}

// evalRequest is what the configuration gives of the resources, as
// policyexpr evaluates it: by type, the id and the attributes (the paths
// among them).
func evalRequest(resources []bkiam.AuthResource) policyexpr.Request {
	r := policyexpr.Request{}
	for _, res := range resources {
		r[res.Type] = policyexpr.Resource{ID: res.ID, Attributes: res.Attribute}
	}
	return r
}

// evalCondition evaluates an action's effective expression, as
// query_by_actions answers it ({} or nothing: no policy), for a request.
func evalCondition(raw []byte, r policyexpr.Request) (policyexpr.Verdict, error) {
	if noPolicy(raw) {
		return policyexpr.Verdict{Truth: policyexpr.False}, nil
	}
	e, err := policyexpr.Parse(raw)
	if err != nil {
		return policyexpr.Verdict{}, err
	}
	return e.Eval(r), nil
}

// noPolicy reports whether query_by_actions's condition for an action
// says the subject holds nothing of it: {}, null or nothing.
func noPolicy(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("{}")) || bytes.Equal(raw, []byte("null"))
}

// dependsOn words the warning of an action IAM denied for want of what
// gaps name, and where it belongs: the resource when all of it is about
// one, else resources.
func dependsOn(who bkiam.Subject, action string, gaps []policyexpr.Gap, resources []bkiam.AuthResource) (path.Path, string) {
	index := func(typ string) int {
		return slices.IndexFunc(resources, func(r bkiam.AuthResource) bool { return r.Type == typ })
	}
	var what, give []string
	at, one := path.Root("resources"), -2
	for _, typ := range gapTypes(gaps) {
		i := index(typ)
		if one == -2 || one == i {
			one = i
		} else {
			one = -1
		}
		if i < 0 {
			what = append(what, fmt.Sprintf("a condition on resource type %s, which resources do not give", typ))
			give = append(give, fmt.Sprintf("an instance of %s in resources, as the action's related types in the bkiam_system data source say", typ))
			continue
		}
		r := resources[i]
		name := fmt.Sprintf("%s/%s/%s", r.System, r.Type, r.ID)
		var attrs, ops []string
		needPath := false
		for _, g := range gaps {
			switch {
			case g.Type != typ:
			case g.Op != "":
				ops = append(ops, fmt.Sprintf("%s.%s %s", g.Type, g.Attribute, g.Op))
			case g.Attribute == policyexpr.AttributePath:
				needPath = true
			default:
				attrs = append(attrs, g.Attribute)
			}
		}
		if needPath {
			what = append(what, fmt.Sprintf("the topology path of %s, which resources[%d].paths does not give", name, i))
			give = append(give, fmt.Sprintf("resources[%d].paths: the path of the instance's ancestors in IAM's form, e.g. [\"/biz,1/\"] "+
				"([] for an instance without ancestors)", i))
		}
		if len(attrs) > 0 {
			what = append(what, fmt.Sprintf("the attributes %s of %s, which resources[%d].attributes does not give", strings.Join(attrs, ", "), name, i))
			give = append(give, fmt.Sprintf("them in resources[%d].attributes", i))
		}
		if len(ops) > 0 {
			what = append(what, fmt.Sprintf("conditions on %s that the provider cannot evaluate (%s)", name, strings.Join(ops, ", ")))
		}
	}
	if one >= 0 {
		at = at.AtListIndex(one)
	}
	detail := fmt.Sprintf("IAM answers false for %s %s's %s, and the %s's policy allows %s on some instances depending on %s: IAM "+
		"never looks a path or an attribute up, so its false may only mean that the check did not give it.", who.Type, who.ID, action,
		who.Type, action, strings.Join(what, "; "))
	if len(give) > 0 {
		detail += " To decide it, give " + strings.Join(give, "; and ") + "."
	}
	return at, detail + fmt.Sprintf(" Until then allowed[%q] is null and conditional lists %s.", action, action)
}

// gapTypes are the resource types gaps name, sorted, each once.
func gapTypes(gaps []policyexpr.Gap) []string {
	var out []string
	for _, g := range gaps {
		if !slices.Contains(out, g.Type) {
			out = append(out, g.Type)
		}
	}
	slices.Sort(out)
	return out
}

// topologyPathValidator checks a resource's path in IAM's form:
// "/TYPE,ID/…/".
type topologyPathValidator struct{}

func (topologyPathValidator) Description(context.Context) string {
	return `a topology path in IAM's form, "/TYPE,ID/…/"`
}

func (v topologyPathValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (topologyPathValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	p := req.ConfigValue.ValueString()
	if problem := topologyPathProblem(p); problem != "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid topology path",
			fmt.Sprintf("%s = %q %s. Give the path of the instance's ancestors in IAM's form: nodes TYPE,ID, outermost first, "+
				"each followed by \"/\" and the whole starting with \"/\", e.g. \"/biz,1/\" or \"/biz,1/set,2/module,3/\".", req.Path, p, problem))
	}
}

// topologyPathProblem says what is wrong with a path, "" when nothing.
func topologyPathProblem(p string) string {
	if !strings.HasPrefix(p, "/") || !strings.HasSuffix(p, "/") || len(p) < 2 {
		return `does not start and end with "/"`
	}
	for _, node := range strings.Split(p[1:len(p)-1], "/") {
		typ, id, ok := strings.Cut(node, ",")
		if !ok || typ == "" || id == "" || strings.Contains(id, ",") {
			return fmt.Sprintf("has a node %q that is not TYPE,ID", node)
		}
	}
	return ""
}

// attributeNameValidator refuses the attribute names the check gives
// otherwise: the path (paths) and the id (id).
type attributeNameValidator struct{}

func (attributeNameValidator) Description(context.Context) string {
	return "an attribute name other than id and " + policyexpr.AttributePath
}

func (v attributeNameValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (attributeNameValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	switch name := req.ConfigValue.ValueString(); name {
	case policyexpr.AttributePath:
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid attribute name",
			fmt.Sprintf("%s names %q, the topology path: give the instance's paths in %s instead.", req.Path.ParentPath(), name,
				req.Path.ParentPath().ParentPath().AtName("paths")))
	case "id", "":
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid attribute name",
			fmt.Sprintf("%s names %q, which is not an attribute: IAM takes the instance's id from the resource's id; name the attributes IAM's "+
				"policy conditions are on (e.g. os).", req.Path.ParentPath(), name))
	}
}

// checkAgainstModel refuses, with check_model, actions the system does
// not have and resources that are not one of each of the actions'
// related types, in order.
func (d *accessCheckDataSource) checkAgainstModel(ctx context.Context, system string, actions []string, resources []bkiam.AuthResource, diags *diag.Diagnostics) {
	related, ok := relatedTypes(ctx, d.Data, system, actions, diags)
	if !ok || related == nil {
		return
	}
	given := make([]string, len(resources))
	for i, r := range resources {
		given[i] = r.System + "/" + r.Type
	}
	for _, id := range actions {
		want := related[id]
		if slices.Equal(want, given) {
			continue
		}
		detail := fmt.Sprintf("Action %s relates to [%s], in that order; resources give [%s]. Give one instance of each, in order "+
			"(IAM answers a mismatch with a system error).", id, strings.Join(want, ", "), strings.Join(given, ", "))
		for i := range min(len(want), len(given)) {
			wantSystem, wantType, _ := strings.Cut(want[i], "/")
			if gotSystem, gotType, _ := strings.Cut(given[i], "/"); gotType == wantType && gotSystem != wantSystem {
				detail += " " + verify.OtherSystemsType(bkiam.RelatedResourceType{System: wantSystem, ID: wantType})
			}
		}
		diags.AddAttributeError(path.Root("resources"), "Resources do not match the action", detail)
	}
}
