package bench

import (
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestMain removes the provider the tests built (testutil.BuildProvider).
func TestMain(m *testing.M) { testutil.Main(m) }
