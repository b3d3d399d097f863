package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestAccProviderConfigErrors: configuration mistakes, as users see them
// from the real Terraform CLI, each naming the attribute and the fix.
func TestAccProviderConfigErrors(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A resource makes Terraform configure the provider during the plan.
	const grant = `
resource "bkiam_instance_grant" "test" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
}
`
	provider := func(body string) string { return "provider \"bkiam\" {\n" + body + "\n}\n" + grant }
	cases := []struct{ body, want string }{
		{`app_code = "a"
app_secret = "b"`, `No IAM endpoint configured.*BKIAM_APIGW_URL.*BK_IAM_APIGATEWAY_URL.*BKIAM_ESB_URL`},
		{`apigw_url = "https://gw.example.com/prod"
esb_url = "https://paas.example.com"
app_code = "a"
app_secret = "b"`, `esb_url.*apigw_url`},
		{`apigw_url = "https://gw.example.com/prod"
app_secret = "b"`, `Missing app_code.*BKIAM_APP_CODE, BK_APP_CODE or BKPAAS_APP_ID`},
		{`apigw_url = "https://gw.example.com/prod"
app_code = "a"`, `Missing app_secret.*BKIAM_APP_SECRET, BK_APP_SECRET or BKPAAS_APP_SECRET`},
		{`esb_url = "https://paas.example.com"
app_code = "a"
app_secret = "b"`, `ESB needs a user.*BKIAM_USERNAME.*BKIAM_BK_TOKEN`},
		{`apigw_url = "gw.example.com/prod"
app_code = "a"
app_secret = "b"`, `apigw_url.*https://`},
		{`apigw_url = "https://gw.example.com/prod"
app_code = "a"
app_secret = "b"
grant_batch_size = 5000`, `grant_batch_size.*between 1 and 1000`},
		{`apigw_url = "https://gw.example.com/prod"
app_code = "a"
app_secret = "b"
request_timeout = "soon"`, `request_timeout.*Go duration`},
		{`apigw_url = "https://gw.example.com/prod"
app_code = "a"
app_secret = "b"
ca_cert_file = "` + notPEM + `"`, `ca_cert_file.*no PEM-encoded certificate`},
		{`apigw_url = "https://gw.example.com/prod"
app_code = "a"
app_secret = ""`, `app_secret.*at least 1`},
	}
	var steps []resource.TestStep
	for _, tc := range cases {
		steps = append(steps, resource.TestStep{
			Config:      provider(tc.body),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)` + strings.ReplaceAll(tc.want, " ", `\s+`)),
		})
	}
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: protoV6ProviderFactories, Steps: steps})
}
