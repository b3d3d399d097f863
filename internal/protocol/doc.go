// Package protocol serves Terraform resources on terraform-plugin-go values,
// below terraform-plugin-framework: the seam the provider's hot path runs
// on (DESIGN.md, "Why the hot path is below the framework").
//
// A resource is a Def: its schema, a codec between tftypes values and a Go
// model of Value fields, and plan, apply and read written against that
// model. Serve adapts a Def to the protocol; a Router answers the calls of
// the served resources and hands every other call to the framework's
// server. An Observer, if any, hears every plan and precedes every apply:
// what spans the resources of one Terraform command without the seam
// knowing what it is. D is the provider's data, handed to every call.
//
// The package knows nothing of IAM and imports no other package of this
// module (TestLayout in internal/provider guards it).
package protocol
