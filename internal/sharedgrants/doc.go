// Package sharedgrants keeps the IAM paths the resources of one provider
// process grant in a ledger (internal/ledger), so that a revoke never takes
// from a resource a path another still grants (DESIGN.md, "Shared grants").
//
// Account is the protocol.Observer every protocol-served resource is served
// with: at plan it records the resource's claims in the process's Book and
// answers what it finds (warnings, paths a destroy must spare, an update that
// grants again what another revokes); at apply it gives the resource its
// Handle, through which the resource's calls wait and filter.
package sharedgrants
