package authz

import "github.com/bkiam/terraform-provider-bkiam/internal/grantplan"

// ImportTypes are the resource types a pending import reads, in order
// (for the identity round trip of identity_roundtrip_test.go).
func ImportTypes(r *ImportRequest) []grantplan.Resource { return r.types() }
