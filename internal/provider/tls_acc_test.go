package provider_test

import (
	"encoding/pem"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccTLSVerification: against IAM behind a certificate no system CA
// signed, an apply fails on the certificate and says plainly that nothing
// was changed (a failed handshake is a definite outcome, not a call IAM
// may have carried out); with the CA in ca_cert_file it goes through; with
// insecure_skip_verify it goes through too (the warning itself is pinned
// by TestConfigureProvider).
func TestAccTLSVerification(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the provider's HTTP client")
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	srv, err := sandbox.New()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(srv)
	t.Cleanup(ts.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	provider := func(extra string) string {
		return fmt.Sprintf("provider \"bkiam\" {\n  apigw_url = %q\n  app_code = %q\n  app_secret = %q\n  max_retries = 0\n%s}\n",
			ts.URL, sandboxtest.AppCode, sandboxtest.AppSecret, extra)
	}
	grant := func(extra string, ids ...string) string {
		return acctest.HostGrant{Actions: []string{"view_host"}, Ids: ids}.Config(provider(extra))
	}
	held := func(ids ...string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			got := sandboxtest.HeldPaths(&sandboxtest.Sandbox{Server: srv}, "bk_cmdb", "user", "alice")["view_host"]
			if want := sandboxtest.HostPaths(ids...); !acctest.EqualStrings(got, want) {
				return fmt.Errorf("IAM holds %v, want %v", got, want)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			// The plan's model read meets the certificate first; without
			// it, the apply's first call.
			{Config: grant("", "1"), ExpectError: regexp.MustCompile(`(?s)Cannot read the model of system bk_cmdb.*certificate signed by unknown\s+authority\.\s+Fix\s+the\s+cause,\s+or\s+set\s+check_model\s+=\s+false`)},
			{Config: grant("  check_model = false\n", "1"), ExpectError: regexp.MustCompile(`(?s)certificate signed by unknown\s+authority\.\s+Nothing\s+was\s+changed\.\s+Fix\s+the\s+cause`)},
			{
				Config: grant(fmt.Sprintf("  ca_cert_file = %q\n", caFile), "1"),
				Check:  held("1"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				Config: grant("  insecure_skip_verify = true\n", "1", "2"),
				Check:  held("1", "2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
	if got := sandboxtest.HeldPaths(&sandboxtest.Sandbox{Server: srv}, "bk_cmdb", "user", "alice"); len(got) != 0 {
		t.Fatalf("destroy left %v", got)
	}
}
