package provider_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestAccSecretsStayOutOfLogsAndPlans: with the provider and Terraform
// logging at trace level, a create, an update, a failed call, a plan with
// a wrong app secret, the retry and the destroy, over the gateway and over
// ESB with a bk_token, never write app_secret or bk_token (nor the wrong
// secret) into the logs, the plan JSON, the state (its JSON as Terraform
// shows it and the raw file, the provider's private record included) or
// the errors Terraform prints. The secrets come from the environment, as
// the docs recommend, so that any copy of them in a plan, a state, a log
// or an error is the provider's doing.
func TestAccSecretsStayOutOfLogsAndPlans(t *testing.T) {
	// Not parallel: it sets TF_LOG and the secrets in the environment
	// (t.Setenv), which Go allows only in a test that runs alone.
	acctest.NeedsSandbox(t)
	const token = "token-alice" // the sandbox's ESB token of alice
	// wrongSecret is an app secret IAM refuses: recognisable, and sharing
	// no part with the real one that a search for either could confuse.
	const wrongSecret = "WR0NG-app-s3cret-9d41"
	for _, tc := range []struct {
		name    string
		block   func(url string) string
		env     map[string]string
		secrets []string
		// refused is what Terraform prints when IAM refuses the app's
		// credentials, over this transport.
		refused *regexp.Regexp
		// management adds the steps of a group's members (gateway only).
		management bool
	}{
		{"gateway", func(url string) string {
			return fmt.Sprintf("provider \"bkiam\" {\n  apigw_url = %q\n  app_code = %q\n  max_retries = 0\n}\n", url, sandboxtest.AppCode)
		}, map[string]string{"BKIAM_APP_SECRET": sandboxtest.AppSecret}, []string{sandboxtest.AppSecret, wrongSecret}, acctest.PlanErrorPattern("bk_app_code or bk_app_secret is incorrect"), true},
		{"esb with bk_token", func(url string) string {
			return fmt.Sprintf("provider \"bkiam\" {\n  esb_url = %q\n  app_code = %q\n  max_retries = 0\n}\n", url, sandboxtest.AppCode)
		}, map[string]string{"BKIAM_APP_SECRET": sandboxtest.AppSecret, "BKIAM_BK_TOKEN": token}, []string{sandboxtest.AppSecret, token, wrongSecret}, acctest.PlanErrorPattern("APP Secret verification failed, please check bk_app_code and bk_app_secret"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logFile := filepath.Join(t.TempDir(), "trace.log")
			t.Setenv("TF_ACC_LOG_PATH", logFile)
			for _, name := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
				t.Setenv(name, "TRACE")
			}
			// The working directories, and so the state files, go where
			// secretFreeState can find them.
			workDirs := t.TempDir()
			t.Setenv("TF_ACC_TEMP_DIR", workDirs)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			sb := sandboxtest.Start(t)
			provider := tc.block(sb.URL)
			noSecretInPlan := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{secretFreePlan(tc.secrets)}}
			noSecretInState := []statecheck.StateCheck{secretFreeState{dir: workDirs, secrets: tc.secrets}}
			grant := func(ids ...string) string {
				return acctest.HostGrant{Actions: []string{"view_host"}, Ids: ids}.Config(provider)
			}
			errs := acctest.NewErrorWatch(t, tc.secrets...)
			// After a failed step too, the state must hold no secret.
			errs.AfterError = func() error { return secretFreeState{dir: workDirs, secrets: tc.secrets}.check(nil) }
			var managementSteps []resource.TestStep
			if tc.management {
				// A grade manager, its group and the group's members: created,
				// changed, a refresh that fails.
				members := func(users ...string) string {
					m := map[string]string{}
					for _, u := range users {
						m[u] = ""
					}
					return grant("3", "4") + acctest.GradeManagerHCL("platform", "", users, true) + acctest.GroupsHCL([3]string{"dev", "dev", ""}) +
						strings.Replace(acctest.GroupMembersConfig("", 0, m, nil), `group_id = "0"`, "group_id = bkiam_group.dev.id", 1) + acctest.PermissionHCL("hosts", []string{"view_host"}, map[string]string{"/bk_cmdb,biz,2/bk_cmdb,host," + fmt.Sprint(len(users)) + "/": "h"})
				}
				managementSteps = []resource.TestStep{
					errs.Pass(resource.TestStep{Config: members("alice", "bob"), ConfigPlanChecks: noSecretInPlan, ConfigStateChecks: noSecretInState}),
					errs.Pass(resource.TestStep{Config: members("bob", "carol"), ConfigPlanChecks: noSecretInPlan, ConfigStateChecks: noSecretInState}),
					errs.Expect(resource.TestStep{
						PreConfig: func() {
							if err := sb.SetFaults(sandbox.Faults{Fail: &sandbox.FailFault{Count: 1, Status: 500, Code: 1902500}}); err != nil {
								t.Fatal(err)
							}
						},
						Config: members("bob", "carol", "dave"),
					}, regexp.MustCompile(`(?s)Cannot read the (grade manager|group|group's members|group's permissions)`)),
					errs.Pass(resource.TestStep{
						PreConfig: func() {
							if err := sb.SetFaults(sandbox.Faults{}); err != nil {
								t.Fatal(err)
							}
						},
						Config: members("bob", "carol", "dave"), ConfigPlanChecks: noSecretInPlan, ConfigStateChecks: noSecretInState,
					}),
				}
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				ErrorCheck:               errs.Check,
				CheckDestroy: func(*terraform.State) error {
					return secretFreeState{dir: workDirs, secrets: tc.secrets}.check(nil)
				},
				Steps: append([]resource.TestStep{
					errs.Pass(resource.TestStep{Config: grant("1", "2"), ConfigPlanChecks: noSecretInPlan, ConfigStateChecks: noSecretInState}),
					errs.Pass(resource.TestStep{Config: grant("2", "3"), ConfigPlanChecks: noSecretInPlan, ConfigStateChecks: noSecretInState}),
					errs.Expect(resource.TestStep{
						PreConfig: func() {
							// The first write fails, after the expiry check's
							// reads.
							if err := sb.SetFaults(sandbox.Faults{SpareReads: true, Fail: &sandbox.FailFault{Count: 1, Status: 500, Code: 1902500}}); err != nil {
								t.Fatal(err)
							}
						},
						Config: grant("3", "4"),
					}, regexp.MustCompile(`(?s)Call 1 of \d+ failed`)),
					// IAM refuses the credentials: the apply fails, and
					// says so without repeating either secret.
					errs.Expect(resource.TestStep{
						PreConfig: func() {
							if err := sb.SetFaults(sandbox.Faults{}); err != nil {
								t.Fatal(err)
							}
							t.Setenv("BKIAM_APP_SECRET", wrongSecret)
						},
						Config: grant("3", "4"),
					}, tc.refused),
					errs.Pass(resource.TestStep{
						PreConfig: func() { t.Setenv("BKIAM_APP_SECRET", sandboxtest.AppSecret) },
						Config:    grant("3", "4"), ConfigPlanChecks: noSecretInPlan, ConfigStateChecks: noSecretInState,
					}),
				}, managementSteps...),
			})
			raw, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			logs := string(raw)
			// The logs must hold what a secret could hide in: the provider's
			// own request logs, for both operations.
			wantLogs := []string{"sending planned IAM call", "batch_instance"}
			if tc.management {
				wantLogs = append(wantLogs, "sending planned member call", "member add", "member delete", "grade manager create",
					"grade manager update", "group create", "grade manager delete", "group policy grant", "group policy revoke")
			}
			for _, want := range wantLogs {
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

// secretFreeState is a state check that fails when the state holds one of
// its secrets: the state as Terraform shows it (terraform show -json), and
// every state file under dir (TF_ACC_TEMP_DIR) as it is on disk, with
// whatever it holds base64-encoded decoded: the resources' private state,
// and the JSON documents inside that.
type secretFreeState struct {
	dir     string
	secrets []string
}

func (s secretFreeState) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = s.check(req.State)
}

// check checks shown, the state as Terraform shows it (a *tfjson.State),
// unless nil, and the state files.
func (s secretFreeState) check(shown any) error {
	if shown != nil {
		raw, err := json.Marshal(shown)
		if err != nil {
			return err
		}
		if err := s.search("the state Terraform shows", raw, 0); err != nil {
			return err
		}
	}
	files, err := filepath.Glob(filepath.Join(s.dir, "plugintest*", "work*", "terraform.tfstate*"))
	if err != nil {
		return err
	}
	found := false
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		found = found || strings.Contains(string(raw), `"type": "bkiam_instance_grant"`)
		if err := s.search(file, raw, 0); err != nil {
			return err
		}
	}
	// After the destroy the grant is gone, but the file stays: only a
	// missing file means this check looked in the wrong place.
	if len(files) == 0 || (shown != nil && !found) {
		return fmt.Errorf("no state file with a bkiam_instance_grant under %s (%d files): this check could not see a leak", s.dir, len(files))
	}
	return nil
}

// search looks for the secrets in raw and, when raw is JSON, in what its
// strings hold base64-encoded, down to a few levels (the state file's
// private state is base64-encoded JSON whose values are base64 again).
// where says where raw is, for the error.
func (s secretFreeState) search(where string, raw []byte, depth int) error {
	for _, secret := range s.secrets {
		if strings.Contains(string(raw), secret) {
			return fmt.Errorf("%s holds the secret %s", where, secretName(secret))
		}
	}
	var doc any
	if depth == 3 || !json.Valid(raw) {
		return nil // not JSON: no strings to decode
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	var walk func(at string, v any) error
	walk = func(at string, v any) error {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if err := walk(at+"."+k, e); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range v {
				if err := walk(fmt.Sprintf("%s[%d]", at, i), e); err != nil {
					return err
				}
			}
		case string:
			if decoded, err := base64.StdEncoding.DecodeString(v); err == nil && len(decoded) > 0 {
				return s.search(where+", decoded from base64 at "+at, decoded, depth+1)
			}
		}
		return nil
	}
	return walk("", doc)
}

// secretName names a secret in a failure message without repeating it,
// lest the message trip the errorWatch, which sees the step's failure.
func secretName(secret string) string {
	return fmt.Sprintf("%q…", secret[:min(4, len(secret))])
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
			resp.Error = fmt.Errorf("the plan JSON holds the secret %s", secretName(secret))
			return
		}
	}
}
