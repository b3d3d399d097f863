package provider

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layers are the provider's packages from the bottom up (DESIGN.md,
// "Layers"): each may import those before it, never one after it, and the
// seam none of the module's. The packages beneath them (bkiam, heldpolicy,
// and the pure grantplan, memberplan, policyexpr, ledger) are open to all
// but the seam.
var layers = []string{
	"internal/protocol",
	"internal/sharedgrants",
	"internal/conns",
	"internal/applyrun",
	"internal/verify",
	"internal/rolling",
	"internal/listing",
	"internal/service/authz",
	"internal/service/access",
	"internal/service/management",
	"internal/service/admin",
	"internal/provider",
}

// TestLayout keeps the layout a newcomer reads in DESIGN.md true: the seam
// imports nothing of the module, no package imports one above it (so no
// cycle can form through a shortcut), and only main imports the provider.
func TestLayout(t *testing.T) {
	const module = "github.com/bkiam/terraform-provider-bkiam/"
	imports := func(dir string) []string {
		pkg, err := build.ImportDir(filepath.Join("..", "..", dir), 0)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		var out []string
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module) {
				out = append(out, strings.TrimPrefix(imp, module))
			}
		}
		return out
	}
	for i, dir := range layers {
		for _, imp := range imports(dir) {
			switch {
			case dir == "internal/protocol":
				t.Errorf("%s imports %s: the seam imports no package of this module", dir, imp)
			case slices.Contains(layers[i:], imp):
				t.Errorf("%s imports %s, which is not below it (layers in layout_test.go, DESIGN.md)", dir, imp)
			}
		}
	}
	// Nothing under internal/ imports the provider: main serves it. The
	// one exception is the tests' harness, internal/acctest, which serves
	// it to the CLI; and no package's code (its tests aside) imports that.
	dirs, err := filepath.Glob(filepath.Join("..", "*"))
	if err != nil {
		t.Fatal(err)
	}
	services, err := filepath.Glob(filepath.Join("..", "service", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range append(dirs, services...) {
		rel := "internal/" + strings.TrimPrefix(filepath.ToSlash(d), "../")
		if _, err := build.ImportDir(d, 0); err != nil {
			continue // no Go package here
		}
		if rel != "internal/acctest" && slices.Contains(imports(rel), "internal/provider") {
			t.Errorf("%s imports internal/provider: only main (and the tests' harness, internal/acctest) may", rel)
		}
		if slices.Contains(imports(rel), "internal/acctest") {
			t.Errorf("%s imports internal/acctest, the tests' harness: only tests may", rel)
		}
	}
}
