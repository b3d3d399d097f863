package protocol

import (
	"bytes"
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// Router is the framework's server with the calls of the protocol-level
// resources routed to them. The framework serves everything else: the
// provider's schema, configuration and validation, the resources'
// schemas, and any plain framework resource or data source. The
// resources' stored state and identities are upgraded here too
// (state_upgrade.go, identity_upgrade.go), not by the framework, so that
// the upgrade steps work on the same JSON and types as the codecs, and
// moved blocks between their types are answered here (move.go). data is
// the provider's data, the zero D until the provider is configured.
type Router[D comparable] struct {
	tfprotov6.ProviderServer
	data      func() D
	resources map[string]Resource[D]
	lists     map[string]*servedList
	moves     []Move
}

func NewRouter[D comparable](framework tfprotov6.ProviderServer, data func() D, resources []Resource[D]) *Router[D] {
	s := &Router[D]{ProviderServer: framework, data: data, resources: map[string]Resource[D]{}, lists: map[string]*servedList{}}
	for _, r := range resources {
		s.resources[r.TypeName()] = r
	}
	return s
}

// ServeLists makes the router stream the results of the list types (by
// type name) itself (list.go); the others stay the framework's.
func (s *Router[D]) ServeLists(lists map[string]ListType) *Router[D] {
	for name, l := range lists {
		s.lists[name] = &servedList{ListType: l}
	}
	return s
}

func (s *Router[D]) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	if r, ok := s.resources[req.TypeName]; ok {
		return r.validateConfig(ctx, req), nil
	}
	return s.ProviderServer.ValidateResourceConfig(ctx, req)
}

func (s *Router[D]) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if r, ok := s.resources[req.TypeName]; ok {
		return r.planChange(ctx, s.data(), req), nil
	}
	return s.ProviderServer.PlanResourceChange(ctx, req)
}

func (s *Router[D]) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	if r, ok := s.resources[req.TypeName]; ok {
		return r.applyChange(ctx, s.data(), req), nil
	}
	return s.ProviderServer.ApplyResourceChange(ctx, req)
}

func (s *Router[D]) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if r, ok := s.resources[req.TypeName]; ok {
		return r.readResource(ctx, s.data(), req), nil
	}
	return s.ProviderServer.ReadResource(ctx, req)
}

func (s *Router[D]) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	if r, ok := s.resources[req.TypeName]; ok {
		return r.upgradeState(ctx, req), nil
	}
	return s.ProviderServer.UpgradeResourceState(ctx, req)
}

func (s *Router[D]) UpgradeResourceIdentity(ctx context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	if r, ok := s.resources[req.TypeName]; ok {
		return r.upgradeIdentity(ctx, req), nil
	}
	return s.ProviderServer.UpgradeResourceIdentity(ctx, req)
}

func (s *Router[D]) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	if r, ok := s.resources[req.TypeName]; ok {
		return r.importResource(ctx, req), nil
	}
	return s.ProviderServer.ImportResourceState(ctx, req)
}

// sameValue reports whether a and b are encoded alike, and so are the
// same value: Terraform encodes values deterministically (map keys
// sorted).
func sameValue(a, b *tfprotov6.DynamicValue) bool {
	return a != nil && b != nil && len(a.MsgPack) > 0 && len(a.JSON) == 0 && len(b.JSON) == 0 && bytes.Equal(a.MsgPack, b.MsgPack)
}

// The list resources (terraform query) are the framework's: their RPCs
// are not in tfprotov6.ProviderServer yet (ListResourceServer,
// terraform-plugin-go v0.31), so the router forwards them by name, or the
// embedded interface would hide them. The list types given to ServeLists
// are streamed by the router (list.go); their results of resources served
// here are encoded by those resources' codecs (internal/listing).

func (s *Router[D]) ValidateListResourceConfig(ctx context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	lists, ok := s.ProviderServer.(tfprotov6.ListResourceServer)
	if !ok {
		return &tfprotov6.ValidateListResourceConfigResponse{Diagnostics: noLists(req.TypeName)}, nil
	}
	return lists.ValidateListResourceConfig(ctx, req)
}

func (s *Router[D]) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	if l, ok := s.lists[req.TypeName]; ok {
		var data any // nil until the provider is configured, as the framework passes it
		if d, zero := s.data(), *new(D); d != zero {
			data = d
		}
		return listResource(ctx, l, data, req), nil
	}
	lists, ok := s.ProviderServer.(tfprotov6.ListResourceServer)
	if !ok {
		return &tfprotov6.ListResourceServerStream{Results: func(push func(tfprotov6.ListResourceResult) bool) {
			push(tfprotov6.ListResourceResult{Diagnostics: noLists(req.TypeName)})
		}}, nil
	}
	return lists.ListResource(ctx, req)
}

func noLists(typeName string) []*tfprotov6.Diagnostic {
	return []*tfprotov6.Diagnostic{{Severity: tfprotov6.DiagnosticSeverityError, Summary: "List resources not served",
		Detail: "The server behind the router serves no list resources, so " + typeName + " cannot be listed. This is a bug in the provider."}}
}

var _ tfprotov6.ListResourceServer = (*Router[int])(nil)

// The actions (terraform apply -invoke, action_trigger; Terraform 1.14+) are the framework's, but
// their RPCs are not in tfprotov6.ProviderServer yet (ActionServer, terraform-plugin-go v0.31): the
// embedded interface would hide them and tf6server would answer "not implemented". The router
// forwards them by name.

func (s *Router[D]) ValidateActionConfig(ctx context.Context, req *tfprotov6.ValidateActionConfigRequest) (*tfprotov6.ValidateActionConfigResponse, error) {
	actions, ok := s.ProviderServer.(tfprotov6.ActionServer)
	if !ok {
		return &tfprotov6.ValidateActionConfigResponse{Diagnostics: noActions(req.ActionType)}, nil
	}
	return actions.ValidateActionConfig(ctx, req)
}

func (s *Router[D]) PlanAction(ctx context.Context, req *tfprotov6.PlanActionRequest) (*tfprotov6.PlanActionResponse, error) {
	actions, ok := s.ProviderServer.(tfprotov6.ActionServer)
	if !ok {
		return &tfprotov6.PlanActionResponse{Diagnostics: noActions(req.ActionType)}, nil
	}
	return actions.PlanAction(ctx, req)
}

func (s *Router[D]) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	actions, ok := s.ProviderServer.(tfprotov6.ActionServer)
	if !ok {
		return &tfprotov6.InvokeActionServerStream{Events: func(push func(tfprotov6.InvokeActionEvent) bool) {
			push(tfprotov6.InvokeActionEvent{Type: tfprotov6.CompletedInvokeActionEventType{Diagnostics: noActions(req.ActionType)}})
		}}, nil
	}
	return actions.InvokeAction(ctx, req)
}

func noActions(typeName string) []*tfprotov6.Diagnostic {
	return []*tfprotov6.Diagnostic{{Severity: tfprotov6.DiagnosticSeverityError, Summary: "Actions not served",
		Detail: "The server behind the router serves no actions, so " + typeName + " cannot be planned or invoked. This is a bug in the provider."}}
}

var _ tfprotov6.ActionServer = (*Router[int])(nil)
