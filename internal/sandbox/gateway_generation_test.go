package sandbox_test

import (
	"encoding/json"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// TestGatewayGenerations: the 2026 gateway refuses the backend's users/{id}/groups to an app
// without a grant of open_user_groups (403 APP_NO_PERMISSION, before IAM), and serves it to one
// with the grant; the older generation serves it to any app.
func TestGatewayGenerations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gateway string
		grants  []string
		status  int
		code    int
	}{
		{"older generation", "", nil, 200, 0},
		{"2026 without a grant", "2026", nil, 403, 1640301},
		{"2026 with the grant", "2026", []string{"open_user_groups"}, 200, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := sandbox.DefaultModel()
			m.Gateway = tc.gateway
			for i := range m.Apps {
				m.Apps[i].GatewayGrants = tc.grants
			}
			raw, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			m, err = sandbox.LoadModel(raw)
			if err != nil {
				t.Fatal(err)
			}
			s := newServer(t, sandbox.WithModel(m))
			r := getRead(t, s, "/api/v1/open/users/alice/groups?inherit=true", goodAuth)
			if r.status != tc.status || r.code() != tc.code {
				t.Fatalf("HTTP %d code %d, want HTTP %d code %d: %s", r.status, r.code(), tc.status, tc.code, r.raw)
			}
		})
	}
}
