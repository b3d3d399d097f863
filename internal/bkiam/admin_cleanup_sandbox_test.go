package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// cleanupSandbox starts a sandbox of the default model on the gateway generation given, the app
// holding the gateway grants and admin allow-list entries given.
func cleanupSandbox(t *testing.T, gateway string, grants, admin []string) *sandboxtest.Sandbox {
	t.Helper()
	m := sandbox.DefaultModel()
	m.Gateway = gateway
	for i := range m.Apps {
		m.Apps[i].GatewayGrants = grants
		m.Apps[i].Admin = admin
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = sandbox.LoadModel(raw); err != nil {
		t.Fatal(err)
	}
	return sandboxtest.Start(t, sandbox.WithModel(m), sandbox.WithCleanupDelay(time.Hour))
}

// TestCleanupUsersSandbox: the probe passes where the route is carried and allowed and cleans
// nothing; the cleanup is queued; each refusal names what to ask for.
func TestCleanupUsersSandbox(t *testing.T) {
	ctx := context.Background()
	sb := cleanupSandbox(t, "2026", []string{CleanupGatewayResource}, []string{CleanupAllowListEntry})
	c := sandboxClient(t, sb.URL)
	if err := c.ProbeCleanup(ctx); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if err := c.CleanupUsers(ctx, []CleanupUser{{ID: "alice", Before: time.Unix(1710000000, 0)}, {ID: "bob"}}); err != nil {
		t.Fatalf("cleanup: %v", err)
	}
	if n := sb.Stats().Requests["admin:cleanup"]; n != 2 {
		t.Errorf("calls: %d, want the probe and the cleanup", n)
	}
	if err := c.CleanupUsers(ctx, nil); !errors.Is(err, ErrValidation) {
		t.Errorf("no user: %v", err)
	}
	for _, tc := range []struct {
		name          string
		gateway       string
		grants, admin []string
		want          []string
	}{
		{"older gateway", "", nil, []string{"*"}, []string{"does not carry the bk-iam resource admin_cleanup_users_permission", "subject_permission_cleanup"}},
		{"no gateway grant", "2026", nil, []string{"*"}, []string{"holds no grant of the bk-iam gateway resource admin_cleanup_users_permission", "subject_permission_cleanup"}},
		{"not allow-listed", "2026", []string{"*"}, nil, []string{"admin API allow-list for subject_permission_cleanup"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := cleanupSandbox(t, tc.gateway, tc.grants, tc.admin)
			c := sandboxClient(t, sb.URL)
			for _, err := range []error{c.ProbeCleanup(ctx), c.CleanupUsers(ctx, []CleanupUser{{ID: "alice"}})} {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%v\nwant %q", err, w)
					}
				}
			}
		})
	}
}
