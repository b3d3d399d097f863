package bench

import (
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestMain removes the providers the tests built (testutil.BuildProvider,
// testutil.BuildFloorProvider).
func TestMain(m *testing.M) { testutil.Main(m) }
