package provider

// The external tests (package provider_test) reach these through their
// exported names.

var ProtocolResources = protocolResources

var ProviderSchema = providerSchema

const TypeName = typeName

type URLValidator = urlValidator

var VersionedServer = versionedServer

var ProtoServerB = protoServerB
