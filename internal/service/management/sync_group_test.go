package management

import (
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// TestSyncGroupNames: a grade manager's sync group is told by either of
// IAM's default names, the English one the management API gives it
// (seen on the real IAM) and the Chinese one the web UI gives it; a group
// of another name, or of the name of a grade manager without sync_perm,
// is not it.
func TestSyncGroupNames(t *testing.T) {
	synced := syncGroup{gradeManager: bkiam.GradeManager{Name: "ops", SyncPerm: true}, names: syncGroupNames("ops")}
	for _, tc := range []struct {
		s    syncGroup
		name string
		want bool
	}{
		{synced, "ops administrator group", true},
		{synced, "ops-管理员组", true},
		{synced, "ops", false},
		{synced, "ops administrator group 2", false},
		{syncGroup{gradeManager: bkiam.GradeManager{Name: "ops"}}, "ops administrator group", false},
	} {
		if got := tc.s.is(bkiam.Group{Name: tc.name}); got != tc.want {
			t.Errorf("%q with sync_perm %v: is the sync group = %v, want %v", tc.name, tc.s.gradeManager.SyncPerm, got, tc.want)
		}
	}
}
