package acctest

import (
	"fmt"
	"strings"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// AllowShared turns on allow_shared_grants in a provider block: the
// tests of the ledger make two resources grant the same paths, which a
// configuration must allow.
func AllowShared(provider string) string {
	i := strings.LastIndex(provider, "}")
	return provider[:i] + "  allow_shared_grants = true\n" + provider[i:]
}

// SharedHostGrant renders a bkiam_instance_grant of action to alice on hosts.
func SharedHostGrant(name, action string, extra string, ids ...string) string {
	return fmt.Sprintf(`
resource "bkiam_instance_grant" %q {
  system  = "bk_cmdb"
  subject = { type = "user", id = "alice" }
  actions = [%q]
  resources = [{ system = "bk_cmdb", type = "host", instances = %s }]
%s}
`, name, action, InstancesHCL(ids, sandboxtest.HostName), extra)
}
