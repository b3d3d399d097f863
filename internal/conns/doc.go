// Package conns holds what the provider's Configure makes for every
// resource and data source (Data: the IAM client and what the resources of
// one process share), after terraform-provider-aws's internal/conns. Every
// resource's package imports it; it imports none of them.
package conns
