package admin_test

import (
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
)

// TestMain prepares the environment of the acceptance tests
// (acctest.Main): no BlueKing setting of the developer's leaks in.
func TestMain(m *testing.M) { acctest.Main(m) }
