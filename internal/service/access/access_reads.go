package access

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// What bkiam_access_check and bkiam_effective_permissions both read
// before they ask IAM: the actions' related types from the model, and
// whether IAM knows the user.

// relatedTypes returns, with check_model, each action's related resource
// types (SYSTEM/TYPE, in order) from the system's model, and refuses an
// action the model does not have; nil without check_model. ok is false
// when it reported an error.
func relatedTypes(ctx context.Context, data *conns.Data, system string, actions []string, diags *diag.Diagnostics) (related map[string][]string, ok bool) {
	if !data.CheckModel || data.Models == nil {
		return nil, true
	}
	model, err := data.Models.Get(ctx, system)
	if err != nil {
		diags.AddAttributeError(path.Root("system"), "Cannot read the model of system "+system, err.Error())
		return nil, false
	}
	related = map[string][]string{}
	for _, id := range actions {
		a := model.Action(id)
		if a == nil {
			diags.AddAttributeError(path.Root("actions"), "Unknown action",
				fmt.Sprintf("System %s has no action %q in its IAM model.%s", system, id, verify.Closest(id, verify.ActionIDs(model))))
			continue
		}
		related[id] = []string{}
		for _, rt := range a.RelatedResourceTypes {
			related[id] = append(related[id], rt.System+"/"+rt.ID)
		}
	}
	return related, !diags.HasError()
}

// knownUser reads the groups of user (at: its attribute), once per
// provider process (conns.Data.UserGroups), and refuses a user IAM does
// not know: IAM answers one as a user without permissions, so that a
// typo would read as reads (the data source's answer, e.g. "denied"). err is the read's failure when IAM's
// user-groups route cannot be called (a site may not have granted it to
// the app); the caller warns. known is false when it reported an error.
func knownUser(ctx context.Context, data *conns.Data, user string, at path.Path, reads string, diags *diag.Diagnostics) (groups []string, known bool, err error) {
	groups, err = data.UserGroups.Get(ctx, user)
	if errors.Is(err, bkiam.ErrUnknownSubject) {
		diags.AddAttributeError(at, "Unknown user",
			fmt.Sprintf("IAM does not know user %q, and answers it as a user without permissions: a typo would read as %s. "+
				"Check the username.", user, reads))
		return nil, false, nil
	}
	return groups, true, err
}

// knownGroup refuses a group IAM does not know (a typo, a group deleted
// since), which IAM answers as a group without permissions: a check that
// it may not do something would pass. It asks the backend's policy query,
// whose debug output says whether IAM knows the subject, once per group
// and process (conns.Data.Groups); where IAM's answer cannot tell, it
// warns. It returns false when it reported an error.
func knownGroup(ctx context.Context, data *conns.Data, system, group, action string, diags *diag.Diagnostics) bool {
	at := path.Root("subject").AtName("id")
	if _, err := strconv.ParseInt(group, 10, 64); err != nil {
		diags.AddAttributeError(at, "Invalid group id",
			fmt.Sprintf("A user group is named by its numeric id, such as bkiam_group.dev.id or \"42\"; got %q, which IAM would "+
				"answer as a group without permissions.", group))
		return false
	}
	known, err := data.Groups.Known(ctx, system, group, action)
	switch {
	case err != nil:
		diags.AddAttributeWarning(at, "Cannot tell an unknown group from a denied one",
			fmt.Sprintf("IAM answers a group it does not know false, and the provider could not ask IAM whether it knows group %s "+
				"(the backend's policy query, whose debug output says it): %v.", group, err))
	case !known:
		diags.AddAttributeError(at, "Unknown group",
			fmt.Sprintf("IAM does not know group %s in system %s, and answers it as a group without permissions: a typo or a "+
				"deleted group would read as \"denied\". Check the group's id (bkiam_group's id, or the IAM web UI's).", group, system))
		return false
	}
	return true
}
