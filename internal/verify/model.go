package verify

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// Reading a system's model for the plan-time checks (model_checks.go), and
// the words the checks' errors use.

// SystemModel returns the model of the system at, or nil after reporting
// why it cannot be had. It is nil without a report when the checks are
// off or the system is unknown.
func SystemModel(ctx context.Context, data *conns.Data, at *tftypes.AttributePath, system protocol.StringValue, diags *protocol.Diagnostics) *bkiam.SystemModel {
	id, ok := system.Get()
	if data == nil || !data.CheckModel || data.Models == nil || !ok {
		return nil
	}
	m, err := data.Models.Get(ctx, id)
	if err != nil {
		diags.AddAttributeError(at, "Cannot read the model of system "+id,
			fmt.Sprintf("The plan checks each grant against the model its system registered in IAM, and reading the model "+
				"of %s failed: %s. Fix the cause, or set check_model = false in the provider configuration to plan without "+
				"the checks (IAM then refuses what the model does not allow at apply).", id, err))
		return nil
	}
	return m
}

// Closest names up to three ids of have nearest to id (edit distance at
// most a third of the longer id, and at least 2), for "did you mean".
func Closest(id string, have []string) string {
	type cand struct {
		id string
		d  int
	}
	var cs []cand
	for _, h := range have {
		if d := editDistance(id, h); d <= max(2, max(len(id), len(h))/3) {
			cs = append(cs, cand{h, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d || cs[i].d == cs[j].d && cs[i].id < cs[j].id })
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, fmt.Sprintf("%q", cs[i].id))
	}
	if len(out) == 0 {
		return ""
	}
	return " Did you mean " + strings.Join(out, ", ") + "?"
}

// editDistance is the Levenshtein distance of a and b, in bytes (ids are
// ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func ActionIDs(m *bkiam.SystemModel) []string {
	ids := make([]string, 0, len(m.Actions))
	for _, a := range m.Actions {
		ids = append(ids, a.ID)
	}
	return ids
}

// TypeList renders related resource types as "bk_cmdb/biz, bk_cmdb/host".
func TypeList(rts []bkiam.RelatedResourceType) string {
	parts := make([]string, len(rts))
	for i, rt := range rts {
		parts[i] = rt.System + "/" + rt.ID
	}
	return strings.Join(parts, ", ")
}

// OtherSystemsType is the advice for a resource of the right type under the wrong system: a
// resource is written under the system of its type, which for bk_job's access_business (on
// bk_cmdb's biz) is not the action's.
func OtherSystemsType(rt bkiam.RelatedResourceType) string {
	return fmt.Sprintf("Resource type %s is %s's: write the entry's system as %q, the system of the type, which need not be "+
		"the action's.", rt.ID, rt.System, rt.System)
}

// RelatedTypeProblem is a way resources fail an action's related resource
// types; index is the entry at fault, -1 for the whole list.
type RelatedTypeProblem struct {
	Index           int
	Summary, Detail string
}

// RelatedTypeProblems checks that the resource types got (system and type;
// nil where unknown) are the action's related resource types, in order, as
// IAM checks a grant (1902417). where names the list in the messages;
// alone and elsewhere say where an action of other types goes.
func RelatedTypeProblems(model *bkiam.SystemModel, a bkiam.ModelAction, got []*[2]string, where, alone, elsewhere string) []RelatedTypeProblem {
	want := a.RelatedResourceTypes
	if len(want) == 0 {
		if len(got) > 0 {
			return []RelatedTypeProblem{{-1, "Resources for an action without resource types",
				fmt.Sprintf("Action %q of system %s relates to no resource type: IAM grants it on everything and refuses "+
					"resources with it. Set %s = [] and %s.", a.ID, model.System, where, alone)}}
		}
		return nil
	}
	if len(got) != len(want) {
		return []RelatedTypeProblem{{-1, "Resources do not match the action",
			fmt.Sprintf("Action %q of system %s relates to %d resource type(s), %s in this order, and %s has %d "+
				"entries: give one entry per type, in that order. Actions with other resource types go in %s.",
				a.ID, model.System, len(want), TypeList(want), where, len(got), elsewhere)}}
	}
	var out []RelatedTypeProblem
	for i, g := range got {
		if g == nil || g[0] == want[i].System && g[1] == want[i].ID {
			continue
		}
		msg := fmt.Sprintf("Action %q of system %s relates to %s in this order, so %s[%d] must be %s/%s, got %s/%s.",
			a.ID, model.System, TypeList(want), where, i, want[i].System, want[i].ID, g[0], g[1])
		if j := slices.IndexFunc(want, func(rt bkiam.RelatedResourceType) bool { return rt.System == g[0] && rt.ID == g[1] }); j >= 0 {
			msg += " Reorder the entries to follow the action's resource types."
		} else if g[1] == want[i].ID {
			msg += " " + OtherSystemsType(want[i])
		}
		out = append(out, RelatedTypeProblem{i, "Resource type does not match the action", msg})
	}
	return out
}
