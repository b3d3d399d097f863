package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestAccSecretsStayOutOfLogsAndPlans: with the provider and Terraform
// logging at trace level, a create, an update, a failed call, its retry
// and the destroy, over the gateway and over ESB with a bk_token, never
// write app_secret or bk_token into the logs or the plan JSON. The
// secrets come from the environment, as the docs recommend, so that any
// copy of them in a plan or a log is the provider's doing.
func TestAccSecretsStayOutOfLogsAndPlans(t *testing.T) {
	needsSandbox(t)
	const token = "token-alice" // the sandbox's ESB token of alice
	for _, tc := range []struct {
		name    string
		block   func(url string) string
		env     map[string]string
		secrets []string
	}{
		{"gateway", func(url string) string {
			return fmt.Sprintf("provider \"bkiam\" {\n  apigw_url = %q\n  app_code = %q\n  max_retries = 0\n}\n", url, sandboxtest.AppCode)
		}, map[string]string{"BKIAM_APP_SECRET": sandboxtest.AppSecret}, []string{sandboxtest.AppSecret}},
		{"esb with bk_token", func(url string) string {
			return fmt.Sprintf("provider \"bkiam\" {\n  esb_url = %q\n  app_code = %q\n  max_retries = 0\n}\n", url, sandboxtest.AppCode)
		}, map[string]string{"BKIAM_APP_SECRET": sandboxtest.AppSecret, "BKIAM_BK_TOKEN": token}, []string{sandboxtest.AppSecret, token}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "trace.log")
			t.Setenv("TF_ACC_LOG_PATH", logFile)
			for _, name := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
				t.Setenv(name, "TRACE")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			sb := sandboxtest.Start(t)
			provider := tc.block(sb.URL)
			noSecretInPlan := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{secretFreePlan(tc.secrets)}}
			grant := func(ids ...string) string {
				return hostGrant{actions: []string{"view_host"}, ids: ids}.config(provider)
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{
					{Config: grant("1", "2"), ConfigPlanChecks: noSecretInPlan},
					{Config: grant("2", "3"), ConfigPlanChecks: noSecretInPlan},
					{
						PreConfig: func() {
							if err := sb.SetFaults(sandbox.Faults{Fail: &sandbox.FailFault{Count: 1, Status: 500, Code: 1902500}}); err != nil {
								t.Fatal(err)
							}
						},
						Config:      grant("3", "4"),
						ExpectError: regexp.MustCompile(`(?s)Call 1 of \d+ failed`),
					},
					{
						PreConfig: func() {
							if err := sb.SetFaults(sandbox.Faults{}); err != nil {
								t.Fatal(err)
							}
						},
						Config: grant("3", "4"), ConfigPlanChecks: noSecretInPlan,
					},
				},
			})
			raw, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			logs := string(raw)
			// The logs must hold what a secret could hide in: the provider's
			// own request logs, for both operations.
			for _, want := range []string{"sending planned IAM call", "batch_instance"} {
				if !strings.Contains(logs, want) {
					t.Fatalf("the trace log (%d bytes) lacks %q: logging was not captured, so this test could not see a leak", len(raw), want)
				}
			}
			for _, secret := range tc.secrets {
				if i := strings.Index(logs, secret); i >= 0 {
					t.Fatalf("the trace log leaks %q: …%s…", secret, logs[max(0, i-200):min(len(logs), i+200)])
				}
			}
		})
	}
}

// secretFreePlan is a plan check that fails when the plan JSON holds one
// of its secrets.
type secretFreePlan []string

func (s secretFreePlan) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	raw, err := json.Marshal(req.Plan)
	if err != nil {
		resp.Error = err
		return
	}
	for _, secret := range s {
		if strings.Contains(string(raw), secret) {
			resp.Error = fmt.Errorf("the plan JSON holds the secret %q", secret)
			return
		}
	}
}
