package provider

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
)

// TestEveryServiceResourceIsRegistered catches a resource written in a
// service package but never added to registry.go, which every other guard
// (codecs, schemas, nothing ignored) would then never see: every type of
// internal/service/* with a codec (an Encode(tftypes.Object, M) method) has
// its model M among protocolResources, and every New…() resource.Resource,
// datasource.DataSource or list.ListResource is in frameworkResources,
// frameworkDataSources or listResources.
func TestEveryServiceResourceIsRegistered(t *testing.T) {
	registered := map[string]bool{}
	for _, r := range protocolResources {
		c, ok := r.(protocol.Codec)
		if !ok {
			t.Fatalf("%s offers no codec", r.TypeName())
		}
		registered["model "+c.ModelType().Name()] = true
	}
	funcName := func(f any) string {
		name := runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
		return name[strings.LastIndex(name, "/")+1:]
	}
	for _, f := range frameworkResources {
		registered["func "+funcName(f)] = true
	}
	for _, f := range frameworkDataSources {
		registered["func "+funcName(f)] = true
	}
	for _, f := range listResources {
		registered["func "+funcName(f)] = true
	}

	dirs, err := filepath.Glob(filepath.Join("..", "service", "*"))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			name := f.Name.Name
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Type.Params == nil {
					continue
				}
				var want string
				switch {
				case fn.Recv != nil && fn.Name.Name == "Encode" && len(fn.Type.Params.List) == 2:
					if id, ok := fn.Type.Params.List[1].Type.(*ast.Ident); ok {
						want = "model " + id.Name
					}
				case fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "New") && fn.Type.Results != nil && len(fn.Type.Results.List) == 1:
					if sel, ok := fn.Type.Results.List[0].Type.(*ast.SelectorExpr); ok &&
						(sel.Sel.Name == "Resource" || sel.Sel.Name == "DataSource" || sel.Sel.Name == "ListResource") {
						want = "func " + name + "." + fn.Name.Name
					}
				}
				if want == "" {
					continue
				}
				found++
				if !registered[want] {
					t.Errorf("%s: %s is not registered in registry.go", file, want)
				}
			}
		}
	}
	if listed := len(protocolResources) + len(frameworkResources) + len(frameworkDataSources) + len(listResources); found != listed {
		t.Errorf("found %d resources, data sources and list resources in internal/service, registry.go lists %d", found, listed)
	}
}
