package acctest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// schemas is the provider's schema as Terraform reads it, read once: the
// tests build and read values through it as Terraform does, without
// reaching into the provider.
var schemas = sync.OnceValue(func() *tfprotov6.GetProviderSchemaResponse {
	_, resp, err := servedSchema()
	if err != nil {
		panic(err)
	}
	return resp
})

// servedSchema serves the provider and reads its schema, as Terraform does
// first, before any other call (the framework wants it so).
func servedSchema() (tfprotov6.ProviderServer, *tfprotov6.GetProviderSchemaResponse, error) {
	server, err := provider.NewServer("test")()
	if err != nil {
		return nil, nil, fmt.Errorf("serving the provider: %w", err)
	}
	resp, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		return nil, nil, fmt.Errorf("GetProviderSchema: %w", err)
	}
	if testutil.HasError(resp.Diagnostics) {
		return nil, nil, fmt.Errorf("GetProviderSchema:\n%s", testutil.RenderDiags(resp.Diagnostics))
	}
	return server, resp, nil
}

// ObjectTypeOf is the value type of a resource, by its full type name.
func ObjectTypeOf(typeName string) tftypes.Object {
	s, ok := schemas().ResourceSchemas[typeName]
	if !ok {
		panic("no resource " + typeName)
	}
	return objectType(s)
}

// ProviderType is the value type of the provider block.
func ProviderType() tftypes.Object { return objectType(schemas().Provider) }

// ProviderAttributeTypes are the provider block's attributes and their types.
func ProviderAttributeTypes() map[string]tftypes.Type { return ProviderType().AttributeTypes }

func objectType(s *tfprotov6.Schema) tftypes.Object {
	obj, ok := s.ValueType().(tftypes.Object)
	if !ok {
		panic("a schema whose value is not an object")
	}
	return obj
}

// ProviderConfig builds the provider block as Terraform would send it:
// attributes not given are null; a value of testutil.Unknown marks an
// unknown one.
func ProviderConfig(t testing.TB, attrs map[string]any) *tfprotov6.DynamicValue {
	t.Helper()
	return testutil.ObjectValue(t, ProviderType(), attrs)
}
