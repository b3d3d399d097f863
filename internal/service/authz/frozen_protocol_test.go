package authz_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/service/authz"
)

// TestProtocolExpiryCheckOfAFrozenOrOtherCasedUser: alice holds view_host
// on three hosts for good, granted outside Terraform, and a resource grants
// her one more for an hour (expiry_conflicts = "error"): IAM would keep the
// permanent expiry for the new host too, and the plan must say so, when
// the configuration names her "ALICE" (IAM's ids compare without case) and
// when IAM has frozen her (freezing a leaver first is common): the policy
// query then answers 403 1901403, and the check reads the action's list.
// Before issue 61 the first planned without a word and the second failed
// with "Cannot read the expiry IAM keeps".
func TestProtocolExpiryCheckOfAFrozenOrOtherCasedUser(t *testing.T) {
	for _, tc := range []struct {
		name, user string
		frozen     bool
	}{
		{"named in other case", "ALICE", false},
		{"frozen", "alice", true},
		{"frozen and named in other case", "Alice", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := acctest.NewProtoEnv(t, map[string]any{"expiry_conflicts": "error"})
			acctest.ChangeHostsOutside(t, env.Sandbox, bkiam.OperationGrant, "alice", []string{"view_host"}, hostRange(1, 3), bkiam.PermanentExpiry)
			if err := env.Sandbox.Freeze("user", "alice", tc.frozen); err != nil {
				t.Fatal(err)
			}
			config := acctest.HostsOf([]string{"view_host"}, "201")
			config.Subject = protocol.Known(authz.SubjectModel{Type: protocol.Known("user"), ID: protocol.Known(tc.user)})
			config.ExpiresAt = protocol.Known(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
			plan := acctest.InstanceProto.Plan(t, env.Server, nil, nil, config)
			acctest.ExpectDiags(t, plan.Diagnostics, acctest.ProtoDiag{Severity: tfprotov6.DiagnosticSeverityError,
				Text: "Expiry cannot take effect", At: protocol.Root("expires_at")})
			if len(plan.Diagnostics) == 1 && !strings.Contains(plan.Diagnostics[0].Detail, "permanent") {
				t.Errorf("the error does not say IAM keeps the policy for good: %s", plan.Diagnostics[0].Detail)
			}
		})
	}
}
