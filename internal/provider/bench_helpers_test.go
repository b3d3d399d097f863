package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
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

// newCommand starts a new command on server (bkiamServer.StartCommand).
func newCommand(server tfprotov6.ProviderServer) {
	if s, ok := server.(*bkiamServer); ok {
		s.StartCommand()
	}
}
