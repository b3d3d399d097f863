package acctest

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// ProtoServer is the provider behind the same protocol 6 server Terraform
// talks to, so tests see exactly the diagnostics a user would.
func ProtoServer(t *testing.T) tfprotov6.ProviderServer {
	t.Helper()
	server, err := provider.NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	// The framework wants the schema fetched before configuration calls.
	if resp, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{}); err != nil || testutil.HasError(resp.Diagnostics) {
		t.Fatalf("GetProviderSchema: %v %v", err, resp.Diagnostics)
	}
	return server
}
