package acctest

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// ProtoServer is the provider behind the same protocol 6 server Terraform
// talks to, so tests see exactly the diagnostics a user would.
func ProtoServer(t *testing.T) tfprotov6.ProviderServer {
	t.Helper()
	server, _, err := servedSchema()
	if err != nil {
		t.Fatal(err)
	}
	return server
}
