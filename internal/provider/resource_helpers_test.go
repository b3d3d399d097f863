package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// objectTypeOf is the value type of a protocol-level resource, by its
// full type name.
func objectTypeOf(typeName string) tftypes.Object {
	for _, r := range protocolResources {
		if r.TypeName() == typeName {
			return r.ObjectType()
		}
	}
	panic("no protocol-level resource " + typeName)
}
