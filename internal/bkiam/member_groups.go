package bkiam

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// MemberGroupDetailLimit is the most groups one member's-groups details call may name (the
// SaaS's group_ids: 1 to 100 ids).
const MemberGroupDetailLimit = 100

// MemberGroup is a member's membership in one group, as the management API's member's-groups
// details route answers it.
type MemberGroup struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// ExpiredAt is the membership's expiry (unix seconds; 4102444800 permanent). Expired
	// memberships are answered too: compare with the time yourself.
	ExpiredAt int64 `json:"expired_at"`
	CreatedAt int64 `json:"created_at"`
}

// MemberGroupDetails reads a member's (memberType "user", "department" or "template")
// memberships in the given groups: one row per group the member is in, the others left out. It
// sends one call per MemberGroupDetailLimit groups, in order, and every group must be the app's
// (management API v2 GET …/group_member_types/{type}/members/{id}/groups/-/details/, allow-list
// v2_member_groups_detail_list): a group that is not, a deleted one included, fails the call of
// its batch with ErrForbidden. A user IAM does not know fails with the backend's lookup error.
func (c *Client) MemberGroupDetails(ctx context.Context, system, memberType, memberID string, groups []int64) ([]MemberGroup, error) {
	ids := slices.Clone(groups)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var out []MemberGroup
	for batch := range slices.Chunk(ids, MemberGroupDetailLimit) {
		parts := make([]string, len(batch))
		for i, id := range batch {
			parts[i] = strconv.FormatInt(id, 10)
		}
		q := url.Values{"group_ids": {strings.Join(parts, ",")}}
		path := managementPath(system, "group_member_types", memberType, "members", memberID, "groups", "-", "details")
		err := c.manage(ctx, "member's groups", http.MethodGet, path, q, nil, func(d []byte) error {
			var rows []MemberGroup
			if err := json.Unmarshal(d, &rows); err != nil {
				return fmt.Errorf("data is not a list of groups: %s", d)
			}
			for _, r := range rows {
				if r.ID <= 0 {
					return fmt.Errorf("a member's-groups row without a group id: %s", d)
				}
			}
			out = append(out, rows...)
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}
