package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
)

// NewServer returns the provider's protocol 6 server, as main and the
// acceptance tests serve it: the framework's server, with the calls of
// the protocol-level resources (protocolResources) answered by them.
func NewServer(version string) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) {
		return newServer(&bkiamProvider{version: version, frameworkResources: frameworkResources, dataSources: frameworkDataSources,
			listResources: listResources, actions: frameworkActions}, protocolResources)
	}
}

// newServer serves p, with resources served at the protocol level.
func newServer(p *bkiamProvider, resources []protocol.Resource[*conns.Data]) (tfprotov6.ProviderServer, error) {
	if p.book.Load() == nil {
		p.book.Store(sharedgrants.NewBook())
	}
	framework, err := providerserver.NewProtocol6WithError(p)()
	if err != nil {
		return nil, err
	}
	router := protocol.NewRouter(framework, p.data.Load, resources).ServeLists(servedLists(p, resources)).ServeMoves(protocolMoves)
	return &bkiamServer{Router: router, provider: p}, nil
}

// servedLists are p's list resources, each with the resource it lists, for
// the router to stream (protocol.ListType).
func servedLists(p *bkiamProvider, resources []protocol.Resource[*conns.Data]) map[string]protocol.ListType {
	ctx := context.Background()
	byName := map[string]resource.Resource{}
	name := func(r resource.Resource) string {
		var resp resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: typeName}, &resp)
		return resp.TypeName
	}
	for _, r := range resources {
		byName[r.TypeName()] = r.FrameworkResource()
	}
	for _, newResource := range p.frameworkResources {
		r := newResource()
		byName[name(r)] = r
	}
	lists := map[string]protocol.ListType{}
	for _, newList := range p.listResources {
		var resp resource.MetadataResponse
		newList().Metadata(ctx, resource.MetadataRequest{ProviderTypeName: typeName}, &resp)
		if r, ok := byName[resp.TypeName]; ok {
			lists[resp.TypeName] = protocol.ListType{New: newList, Resource: r}
		}
	}
	return lists
}

// bkiamServer is the router with what the shared grants need of every
// command: the process's book in each plan's context, and the news that
// the command refreshes.
type bkiamServer struct {
	*protocol.Router[*conns.Data]
	provider *bkiamProvider
}

func (s *bkiamServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return s.Router.PlanResourceChange(sharedgrants.WithBook(ctx, s.provider.book.Load()), req)
}

func (s *bkiamServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if b := s.provider.book.Load(); b != nil {
		b.Refreshed.Store(true) // a plan walk: see sharedgrants.Account.Plan
	}
	return s.Router.ReadResource(ctx, req)
}

// StartCommand begins a new command's ledger of shared grants without
// configuring the provider anew. Configure starts one at the beginning of
// every Terraform command; this is for callers that drive one configured
// server through several commands in one process and want the rest of the
// configuration (its caches) kept: the protocol tests and the benchmarks.
func (s *bkiamServer) StartCommand() {
	s.provider.book.Store(sharedgrants.NewBook())
	if data := s.provider.data.Load(); data != nil {
		data.Book = s.provider.book.Load()
	}
}
