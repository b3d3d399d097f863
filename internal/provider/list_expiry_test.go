package provider_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestListExpiryZeroIsGone: a policy row whose expiry is 0 is expired to
// IAM (its list keeps expired_at > now) and to an import, which reads it
// as gone; bkiam_instance_grant's list leaves it out the same way, with
// no result and no warning, rather than generating a grant that expired
// in 1970. The sandbox never lists such a row, so a front rewrites
// alice's row of its answer; bob's stays listed.
func TestListExpiryZeroIsGone(t *testing.T) {
	sb := sandboxtest.Start(t)
	c := acctest.OutsideClient(t, sb)
	for _, user := range []string{"alice", "bob"} {
		grantHosts(t, c, bkiam.Subject{Type: "user", ID: user}, "view_host", "1")
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		sb.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if strings.HasSuffix(r.URL.Path, "/policies") {
			var answer map[string]any
			if err := json.Unmarshal(body, &answer); err != nil {
				t.Errorf("the policy list's answer: %v", err)
			}
			data, _ := answer["data"].(map[string]any)
			results, _ := data["results"].([]any)
			for _, row := range results {
				if row, _ := row.(map[string]any); row != nil {
					if subject, _ := row["subject"].(map[string]any); subject["id"] == "alice" {
						row["expired_at"] = 0
					}
				}
			}
			body, _ = json.Marshal(answer)
		}
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	t.Cleanup(front.Close)

	ctx := context.Background()
	server := acctest.ProtoServer(t)
	typ, _ := provider.ProviderSchema().Type().TerraformType(ctx).(tftypes.Object)
	config, err := tfprotov6.NewDynamicValue(typ, objectWith(typ, map[string]any{
		"apigw_url": front.URL, "app_code": sandboxtest.AppCode, "app_secret": sandboxtest.AppSecret, "max_retries": int64(0),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := server.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: &config}); err != nil || testutil.HasError(resp.Diagnostics) {
		t.Fatalf("ConfigureProvider: %v %s", err, testutil.RenderDiags(resp.Diagnostics))
	}
	schema, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	listType, _ := schema.ListResourceSchemas["bkiam_instance_grant"].ValueType().(tftypes.Object)
	listConfig, err := tfprotov6.NewDynamicValue(listType, objectWith(listType, map[string]any{"system": "bk_cmdb", "action": "view_host"}))
	if err != nil {
		t.Fatal(err)
	}
	lists, _ := server.(tfprotov6.ListResourceServer)
	stream, err := lists.ListResource(ctx, &tfprotov6.ListResourceRequest{TypeName: "bkiam_instance_grant", Config: &listConfig, IncludeResource: true})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for r := range stream.Results {
		if len(r.Diagnostics) > 0 {
			t.Errorf("the list said: %s", testutil.RenderDiags(r.Diagnostics))
		}
		listed = append(listed, r.DisplayName)
	}
	if len(listed) != 1 || listed[0] != "user bob" {
		t.Fatalf("listed %q, want only user bob: alice's policy expired at 0 is gone", listed)
	}
}
