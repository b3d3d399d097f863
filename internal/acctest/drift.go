package acctest

import (
	"strings"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// DriftProvider is the gateway provider block with detect_drift on
// (IAM serves policy reads through the gateway only).
func DriftProvider(sb *sandboxtest.Sandbox, extra string) string {
	return strings.Replace(Transports[GatewayTransport].Block(sb.URL), "  max_retries = 2\n",
		"  max_retries = 2\n  detect_drift = true\n"+extra, 1)
}
