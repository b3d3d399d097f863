package authz

// The acceptance and protocol tests beside the resources (package
// authz_test) reach these through the names below; the provider itself
// needs none of them.

const PrivateImportKey = privateImportKey

type ImportRequest = importRequest

var (
	CreatorInstancesOf   = creatorInstancesOf
	PoliciesValue        = policiesValue
	ReadCreatorHoldings  = readCreatorHoldings
	ReadImportRequest    = readImportRequest
	WriteCreatorHoldings = writeCreatorHoldings
	WriteHoldings        = writeHoldings
)
