package sandbox

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// GET …/group_member_types/{user|department|template}/members/{id}/groups/-/details/?group_ids=
// (allow-list v2_member_groups_detail_list) answers, for the listed groups the member belongs to,
// the group and the membership's expiry and creation time: [{id, name, description, created_at,
// expired_at}]. Groups the member is not in are left out; expired memberships are not (the
// backend's query has no expiry filter). Every listed group must be the app's (the SaaS's
// GROUP_IDS_IN_QUERY check: a group no grade manager of the app's system holds, a deleted one
// included, is 403 for the whole call). group_ids holds 1 to 100 integers. A department or
// template member id must be an integer; a user or department IAM does not know is the backend's
// lookup failure, passed on as 1902000.
//
// Seen on the real IAM run here (TestAccSite_UserGroups, bk-iam-saas 1605dc3c with bk-iam
// 8b09c983): a membership whose expiry has passed is answered with that expiry; a known user in
// none of the groups is []; a deleted group in the list is 403 1902403 "groups[[ID]] can not
// operated by app_code[…], since related role of group is not created by system[…)]."; an unknown
// user (or department "999") is HTTP 200 1902000 whose message quotes the backend's
// GET /api/v1/web/subjects-groups/detail answering 1901500 with the chain of errors below (its
// handler's format string, unfilled, included).

// memberGroupDetailLimit is the most group ids one call may name.
const memberGroupDetailLimit = 100

func (mc *mgmtCall) memberGroupDetails() (any, bool, *saasError) {
	rt := mc.rt
	var fe fieldErrors
	switch rt.memberType {
	case "user":
	case "department", "template":
		if _, err := strconv.ParseInt(rt.memberID, 10, 64); err != nil {
			fe.add(fmt.Sprintf("当 group_member_type 为 %s 时，member_id(%s) 必须为整数", rt.memberType, rt.memberID), "member_id")
		}
	default:
		fe.add(fmt.Sprintf("“%s” 不是合法选项。", rt.memberType), "group_member_type")
	}
	if len(fe.errs) > 0 {
		return nil, false, validationErr(fe)
	}
	raw := mc.q.Get("group_ids")
	var ids []int64
	for _, part := range strings.Split(raw, ",") {
		if part == "" {
			continue
		}
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil {
			fe.add("用户组 ID 必须为整数", "group_ids", "group_ids")
			return nil, false, validationErr(fe)
		}
		if !slices.Contains(ids, n) {
			ids = append(ids, n)
		}
	}
	switch {
	case raw == "" || len(ids) == 0:
		fe.add("该字段是必填项。", "group_ids")
	case len(strings.Split(raw, ",")) > memberGroupDetailLimit:
		fe.add(fmt.Sprintf("Ensure this field has no more than %d elements.", memberGroupDetailLimit), "group_ids")
	}
	if len(fe.errs) > 0 {
		return nil, false, validationErr(fe)
	}
	// The permission layer: every group must belong to a role (a deleted one does not: 403 for the
	// whole call), then each role must be the app's: a grade manager its system created, or the
	// path system's manager.
	var unowned []string
	for _, id := range ids {
		if mc.ms.groups[id] == nil {
			unowned = append(unowned, strconv.FormatInt(id, 10))
		}
	}
	if len(unowned) > 0 {
		return nil, false, forbidden(fmt.Sprintf("groups[[%s]] can not operated by app_code[%s], since related role of group is not created by system[%s)].",
			strings.Join(unowned, ", "), mc.app.Code, mc.system))
	}
	for _, id := range ids {
		if _, e := mc.groupOwned(id); e != nil {
			return nil, false, e
		}
	}
	rows := []map[string]any{}
	if rt.memberType != "template" && !mc.known(rt.memberType, rt.memberID) {
		return nil, false, backendErrorAt("http_get", "/api/v1/web/subjects-groups/detail", backendSystemError,
			fmt.Sprintf("[Handler:ctl.ListSubjectGroupDetails type=`%%s`, id=`%%s` fail] %[1]s%%!(EXTRA string=%[2]s) => "+
				"[GroupCTL:ListSubjectGroupDetails] cacheimpls.GetLocalSubjectPK _type=`%[1]s`, id=`%[2]s` fail => "+
				"[Cache:GetLocalSubjectPK] LocalSubjectPKCache.Get _type=`%[1]s`, id=`%[2]s` fail => "+
				"[Cache:GetSubjectPK] SubjectPKCache.Get _type=`%[1]s`, id=`%[2]s` fail => [Raw:Error] sql: no rows in result set",
				rt.memberType, rt.memberID))
	}
	slices.Sort(ids)
	for _, id := range ids {
		g := mc.ms.groups[id]
		var expiredAt, createdAt int64
		if rt.memberType == "template" {
			t, _ := strconv.ParseInt(rt.memberID, 10, 64)
			b := g.Templates[t]
			if b == nil {
				continue
			}
			expiredAt, createdAt = b.ExpiredAt, b.CreatedAt
		} else {
			m := g.Members[memberKey{rt.memberType, rt.memberID}]
			if m == nil {
				continue
			}
			expiredAt, createdAt = m.ExpiredAt, m.CreatedAt
		}
		rows = append(rows, map[string]any{"id": g.ID, "name": g.Name, "description": g.Description, "created_at": createdAt, "expired_at": expiredAt})
	}
	return rows, false, nil
}
