package management

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/bkiam/terraform-provider-bkiam/internal/applyrun"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
)

// The resources of IAM's management API (bkiam_grade_manager, bkiam_group,
// bkiam_group_members, the bkiam_group data source) share what is said
// here: the API is served through the API gateway only, and a grade
// manager or group that is gone answers the same 403 as one another
// system owns.

// managementNeedsGateway is the error a management resource gives at plan
// time when the provider is configured with esb_url: ESB serves no v2
// management route. ok is false when the provider uses the gateway (or is
// not configured yet, when nothing can be said).
func managementNeedsGateway(data *conns.Data, resourceType string) (summary, detail string, ok bool) {
	if data == nil || data.Client == nil || data.Client.Transport() != bkiam.TransportESB {
		return "", "", false
	}
	return "The management API needs the API gateway",
		fmt.Sprintf("%s is managed through IAM's management API v2, which the API gateway serves and ESB does not. "+
			"The provider is configured with esb_url: set apigw_url (and remove esb_url) in the provider configuration, "+
			"or use a provider alias configured for the gateway for this resource.", resourceType), true
}

// managementError says what a failed management call means to a user:
// what was asked, IAM's answer, and for the answers that have one, the fix.
func managementError(what string, err error) string {
	switch {
	case errors.Is(err, bkiam.ErrNotOwned):
		return fmt.Sprintf("%s: %s\n\nIAM lets an app manage only the grade managers and groups that a system created "+
			"through the management API, and only when the app is a client of that system. This one has no such record: it "+
			"was made in the IAM web UI, or it no longer exists.%s", what, err, objectAllowAdvice(err))
	case isMemberExpiryRefusal(err):
		return fmt.Sprintf("%s: %s\n\nIAM refused the membership's expiry. IAM's SaaS from its July 2026 release caps the "+
			"expiry a member add or renewal sets at two years from the call (\"permanent\" aside): set max_member_expiry in the "+
			"provider configuration (\"730d\" there) so that plans refuse what this IAM will, and shorten the expiry (or "+
			"expires_in and renew_before), or make the membership \"permanent\".", what, err)
	case errors.Is(err, bkiam.ErrConflict):
		return fmt.Sprintf("%s: %s\n\nThe name is taken: grade manager names are unique across IAM and group names "+
			"within their grade manager (compared case-insensitively). Choose another name, or import the existing "+
			"object.", what, err)
	case bkiam.BackendRefused(err) && strings.Contains(err.Error(), "GetLocalSubjectPK"):
		return fmt.Sprintf("%s: %s\n\nIAM's backend does not know a user or department the message names (by id=`…` after "+
			"GetLocalSubjectPK): its organisation has not synced it. Remove it, or have IAM sync the organisation, then apply "+
			"again.", what, err)
	case isGroupsQuotaRefusal(err):
		return fmt.Sprintf("%s: %s\n\nA member would be in more groups holding permissions in one system than IAM allows "+
			"(its backend's subject_max_groups_limit, 100 by default). Take the member out of another group of that system, "+
			"or ask the IAM administrators to raise the limit.", what, err)
	case isSubjectScopeRefusal(err):
		return fmt.Sprintf("%s: %s\n\nThe member is outside the subject_scopes of the group's grade manager, which admit "+
			"the users and departments they name and everyone in a named department or under it. Widen the grade manager's "+
			"subject_scopes (bkiam_grade_manager), or remove the member.", what, err)
	case isOtherSystemRefusal(err):
		return fmt.Sprintf("%s: %s\n\nAn authorization scope names another system's actions. IAM lets a system put other "+
			"systems' actions in its grade managers' scopes only where its SystemAllowAuthSystem table allows it: ask the "+
			"IAM administrators to allow it, or remove that scope.", what, err)
	case isGradeManagerQuotaRefusal(err):
		return fmt.Sprintf("%s: %s\n\nThe system has created as many grade managers through the API as IAM allows (the "+
			"SaaS setting BKAPP_DEFAULT_GRADE_MANAGER_OF_SYSTEM_LIMIT, 500 by default, or the system's entry in "+
			"BKAPP_GRADE_MANAGER_OF_SPECIFIED_SYSTEMS_LIMIT). Delete grade managers the system no longer needs, or ask the "+
			"IAM administrators to raise the limit.", what, err)
	case isScopeRefusal(err):
		return fmt.Sprintf("%s: %s\n\nThe grant is outside the authorization scope of the group's grade manager: widen "+
			"the grade manager's authorization_scopes (bkiam_grade_manager), or grant less.", what, err)
	case errors.Is(err, bkiam.ErrForbidden):
		return fmt.Sprintf("%s: %s\n\nThe app is not allowed this management API for a system the call needs: IAM "+
			"checks the system in the path and then the system that created the grade manager (of the group). For each, "+
			"the app must be a client of it and IAM's management allow-list (ManagementAPIPermission) must list the API "+
			"for it.", what, err)
	}
	return fmt.Sprintf("%s: %s", what, err)
}

// objectAllowAdvice names, for an ownership 403, the row of IAM's
// management object allow-list that lets the app manage the object all
// the same on a release that has the list (bkiam.ObjectAllowEntryOf);
// "" when the refusal names none.
func objectAllowAdvice(err error) string {
	entry, ok := bkiam.ObjectAllowEntryOf(err)
	if !ok {
		return ""
	}
	every := ""
	if entry.API != "*" {
		every = " (or api \"*\" for every management API on it)"
	}
	return fmt.Sprintf(" If it exists, IAM's SaaS from its July 2026 release lets an app manage an object like it through its "+
		"management object allow-list (ManagementObjectAPIAllowListConfig): ask IAM's administrators for the entry %s%s. IAM "+
		"before that release has no such list.", entry, every)
}

// isMemberExpiryRefusal reports IAM's 400 for the expiry of a member add
// or renewal other than one that has passed (which the plans refuse
// themselves): a cap of the site's (max_member_expiry).
func isMemberExpiryRefusal(err error) bool {
	var e *bkiam.Error
	return errors.Is(err, bkiam.ErrValidation) && errors.As(err, &e) && (e.Operation == "member add" || e.Operation == "member expiry update") &&
		strings.Contains(e.Message, "expired_at") && !strings.Contains(e.Message, "must more then now") && !strings.Contains(e.Message, "4102444800")
}

// managementDataSourceReady reports whether a management data source of a
// configured provider can read: through the API gateway (else the error
// names the fix).
func managementDataSourceReady(data *conns.Data, typeName string, diags *diag.Diagnostics) bool {
	if summary, detail, ok := managementNeedsGateway(data, "the "+typeName+" data source"); ok {
		diags.AddError(summary, detail)
		return false
	}
	return true
}

// lostCreate reports whether a failed create may hide one IAM carried out:
// its answer was lost, or a retry of it found the name taken (by the
// attempt whose answer was lost). The resources then look the name up,
// and record what they find when it is what they asked for.
func lostCreate(err error) bool {
	if bkiam.OutcomeUnknown(err) {
		return true
	}
	var e *bkiam.Error
	return errors.Is(err, bkiam.ErrConflict) && errors.As(err, &e) && e.Attempts > 1
}

// isGroupsQuotaRefusal reports the backend's per-subject quota of groups
// holding permissions in one system, which IAM passes on as 1902000.
func isGroupsQuotaRefusal(err error) bool {
	var e *bkiam.Error
	return errors.As(err, &e) && strings.Contains(e.Message, "checkSubjectGroupsQuota")
}

// isGradeManagerQuotaRefusal reports IAM's 400 for a grade manager past the
// system's quota (check_grade_manager_of_system_limit).
func isGradeManagerQuotaRefusal(err error) bool {
	var e *bkiam.Error
	return errors.As(err, &e) && e.Code == 1902412 && strings.Contains(e.Message, "可创建的分级管理员数量已超过最大值")
}

// isSubjectScopeRefusal reports IAM's 403 for a member outside the grade
// manager's subject scopes (RoleSubjectScopeChecker; IAM's message says
// "在分级管理员的授权范围内", within the scope, where it means outside).
func isSubjectScopeRefusal(err error) bool {
	var e *bkiam.Error
	return errors.As(err, &e) && e.Code == 1902403 && strings.Contains(e.Message, "在分级管理员的授权范围内")
}

// isOtherSystemRefusal reports IAM's 403 for a grade manager whose scopes
// name a system its creator may not authorize (verify_system_scope).
func isOtherSystemRefusal(err error) bool {
	var e *bkiam.Error
	return errors.As(err, &e) && e.Code == 1902403 && strings.Contains(e.Message, "is not allow to operate system[")
}

// isScopeRefusal reports IAM's refusal of a group grant outside its grade
// manager's authorization scope: a 1902412 whose message is the scope
// check's ("系统：S 模板：0 校验错误：…").
func isScopeRefusal(err error) bool {
	var e *bkiam.Error
	return errors.As(err, &e) && e.Code == 1902412 && strings.Contains(e.Message, "校验错误")
}

// The ownership 403 on refresh. IAM answers "not created by system"
// (bkiam.ErrNotOwned) for a grade manager or group with no record of the
// system that created it: one deleted, or one made in the web UI, which
// no resource can have created or imported. An app that lost its rights
// gets other 403s (not a client of the system, not on the allow-list),
// which a refresh reports as errors. So for an object in state the answer
// means deleted; a refresh still removes a resource only when IAM's own
// lists confirm it (goneCheck), and otherwise fails with what to check,
// since a resource dropped from state by mistake would be created again.

// goneCheck confirms through IAM's lists that a grade manager or group
// whose management call answered the ownership 403 is gone.
type goneCheck struct {
	client *bkiam.Client
	system string
}

// gradeManagerGone reports whether the system's grade-manager list (v1)
// no longer holds id.
func (g goneCheck) gradeManagerGone(ctx context.Context, id int64) (bool, error) {
	all, err := g.client.GradeManagers(ctx, g.system)
	if err != nil {
		return false, err
	}
	return !slices.ContainsFunc(all, func(gm bkiam.GradeManagerInfo) bool { return gm.ID == id }), nil
}

// groupGone reports whether no grade manager the system created lists
// group. A grade manager that is gone took its groups with it.
func (g goneCheck) groupGone(ctx context.Context, group int64) (bool, error) {
	all, err := g.client.GradeManagers(ctx, g.system)
	if err != nil {
		return false, err
	}
	for _, info := range all {
		gm := info.ID
		groups, err := g.client.ListGroups(ctx, g.system, gm, bkiam.GroupFilter{ID: group})
		if errors.Is(err, bkiam.ErrNotOwned) {
			gone, err := g.gradeManagerGone(ctx, gm)
			if err != nil {
				return false, err
			}
			if !gone {
				return false, fmt.Errorf("grade manager %d is still listed in %s, but IAM refuses its groups", gm, g.system)
			}
			continue
		}
		if err != nil {
			return false, err
		}
		if slices.ContainsFunc(groups, func(x bkiam.Group) bool { return x.ID == group }) {
			return false, nil
		}
	}
	return true, nil
}

// goneOrUnconfirmed turns the outcome of a goneCheck into what a refresh
// reports: a warning that names the resource when IAM confirms it gone
// (ok: remove it from state), else an error that says what to check.
func goneOrUnconfirmed(resource, object string, gone bool, checkErr error) (summary, detail string, ok bool) {
	if checkErr == nil && gone {
		return "Deleted outside Terraform",
			fmt.Sprintf("%s: IAM no longer has %s (it answers that the system did not create it, and its lists no longer "+
				"hold it). The resource is removed from state, so the plan creates it again; remove it from the configuration "+
				"if the deletion was meant.", resource, object), true
	}
	why := "IAM's lists still hold it"
	if checkErr != nil {
		why = fmt.Sprintf("the provider could not confirm it through IAM's lists: %v", checkErr)
	}
	return "Cannot read " + object,
		fmt.Sprintf("%s: IAM answers that the system did not create %s, which it answers for an object that was deleted, "+
			"but %s. Check in the IAM web UI whether it still exists. If it was deleted, allow the app IAM's v1 "+
			"grade_manager_list management API for this system (which confirms it), or remove the resource from state "+
			"(terraform state rm); if it exists, check that it is the one this resource manages and that the app is still "+
			"a client of the system that created it.", resource, object, why), false
}

// The ownership 403 on destroy. A configuration generated by terraform
// query names its groups by literal id, so Terraform may destroy a group
// before its members and permissions, whose calls then answer the
// ownership 403 (or, racing the group's delete on the real IAM, a system
// error). A group that IAM's lists confirm gone took them with it, and
// their destroy is done; on the 403 alone (a web-UI group answers it
// too), or when the lists cannot say, the destroy keeps its error.

// goneMayExplain reports whether a destroy's error may come of its group
// being gone, which IAM's lists then decide: any refusal of IAM (the real
// IAM answers a member delete that races the group's own delete with a
// system error, 1902000 "sql: no rows in result set"), not a stop or the
// apply's timeout.
func goneMayExplain(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() == nil && !applyrun.IsStop(err)
}

// goneOnDestroy is the warning of a destroy whose group IAM's lists
// confirm gone: what (its members, its permissions) went with it. owned:
// IAM answered the ownership 403 rather than another error.
func goneOnDestroy(resource, object, what string, owned bool) (summary, detail string) {
	answer := "it answers that the system did not create it"
	if !owned {
		answer = "it refused the call"
	}
	return "Already gone",
		fmt.Sprintf("%s: IAM no longer has %s (%s, and its lists no longer hold it), and %s went with it. The "+
			"destroy has nothing left to do: the resource is removed from state.", resource, object, answer, what)
}

// unconfirmedOnDestroy is the warning beside the kept error of a destroy
// whose group IAM's lists could not confirm gone.
func unconfirmedOnDestroy(resource, object string, checkErr error) (summary, detail string) {
	why := "IAM's lists still hold it"
	if checkErr != nil {
		why = fmt.Sprintf("the provider could not confirm it through IAM's lists: %v", checkErr)
	}
	return "Cannot tell whether the group is gone",
		fmt.Sprintf("%s: IAM answers that the system did not create %s, which it answers for a group that was deleted, "+
			"but %s, so the destroy fails rather than drop what IAM may still hold. Check in the IAM web UI whether the "+
			"group still exists. If it was deleted, allow the app IAM's v1 grade_manager_list management API for this system "+
			"(which confirms it), or remove the resource from state (terraform state rm).", resource, object, why)
}
