// Package provider is the bkiam Terraform provider: its configuration on
// terraform-plugin-framework, its server (NewServer) and the registry of
// its resources (registry.go), which live in the packages of
// internal/service, one per IAM API they serve. DESIGN.md at the
// repository's root is the map: the layers, why the hot path is below the
// framework, and the checklist a new resource follows.
//
// The package's tests are the provider's: the acceptance tests through the
// real Terraform and OpenTofu CLIs, the protocol tests of every resource
// through NewServer, and the guards that read every registered resource.
package provider

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/heldpolicy"
	"github.com/bkiam/terraform-provider-bkiam/internal/sharedgrants"
)

// typeName is the provider's type name: the prefix of every resource type.
const typeName = "bkiam"

var (
	_ provider.Provider                  = (*bkiamProvider)(nil)
	_ provider.ProviderWithListResources = (*bkiamProvider)(nil)
	_ provider.ProviderWithActions       = (*bkiamProvider)(nil)
)

// bkiamProvider is the provider. version is the release version set at build
// time ("dev" for local builds, "test" in acceptance tests).
type bkiamProvider struct {
	version string
	// data is what Configure made, for the resources that the router
	// serves; nil until then. Framework resources and data sources get the
	// same value as their ProviderData.
	data atomic.Pointer[conns.Data]
	// frameworkResources and dataSources are served by the framework
	// itself, beside protocolResources.
	frameworkResources []func() resource.Resource
	dataSources        []func() datasource.DataSource
	// listResources are the list resources (registry.go).
	listResources []func() list.ListResource
	// actions are the actions (registry.go).
	actions []func() action.Action
	// book is the ledger of shared grants (internal/sharedgrants) of the command
	// walk under way: Configure, which starts every walk, starts a new one.
	book atomic.Pointer[sharedgrants.Book]
}

func (p *bkiamProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = typeName
	resp.Version = p.version
}

func (p *bkiamProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = providerSchema()
}

func (p *bkiamProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var model providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &model)...)
	if resp.Diagnostics.HasError() {
		return
	}

	settings, diags := resolveConfig(model, lookupEnv)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}

	httpClient, diags := newHTTPClient(settings)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}

	clientConfig := settings.client
	clientConfig.HTTPClient = httpClient
	clientConfig.UserAgent = userAgent(p.version, req.TerraformVersion)

	client, err := bkiam.New(clientConfig)
	if err != nil {
		// resolveConfig checks everything bkiam.New does, attribute by
		// attribute; reaching this is a bug, but still say what failed.
		resp.Diagnostics.AddError("Cannot create the IAM client", err.Error())
		return
	}

	tflog.Debug(ctx, "configured the IAM client", map[string]any{
		"transport":         string(client.Transport()),
		"base_url":          settings.baseURL(),
		"app_code":          clientConfig.AppCode,
		"tenant_id":         clientConfig.TenantID,
		"grant_batch_size":  settings.grantBatchSize,
		"revoke_batch_size": settings.revokeBatchSize,
		"request_timeout":   clientConfig.Timeout.String(),
		"max_retries":       clientConfig.MaxRetries,
		"batch_window":      settings.batchWindow.String(),
		"detect_drift":      settings.detectDrift,
		"check_model":       settings.checkModel,
		"allow_shared":      settings.allowSharedGrants,
		"expiry_conflicts":  settings.expiryConflicts,
		"expiry_scan_limit": settings.expiryScanLimit,
		"max_member_expiry": settings.maxMemberExpiry.String(),
	})

	data := &conns.Data{
		Client:          client,
		Instances:       bkiam.NewCoalescer(client, settings.batchWindow, settings.grantBatchSize, settings.revokeBatchSize),
		GrantBatchSize:  settings.grantBatchSize,
		RevokeBatchSize: settings.revokeBatchSize,
		Book:            sharedgrants.NewBook(),
		Models:          bkiam.NewModelCache(client),
		CheckModel:      settings.checkModel,
		GroupPolicies:   conns.NewGroupPolicyCache(client),
		PlannedScopes:   conns.NewPlannedScopes(),
		UserGroups:      conns.NewUserGroupCache(client),

		AllowSharedGrants:   settings.allowSharedGrants,
		ExpiryConflictsFail: settings.expiryConflicts == expiryConflictsError,
		MaxMemberExpiry:     settings.maxMemberExpiry,
	}
	p.book.Store(data.Book)
	var models *bkiam.ModelCache
	if settings.checkModel {
		// The model tells which actions relate to another system's resource
		// type: the backend's batch query refuses them without resources, so
		// the queries ask them one by one (bkiam.AskAlone).
		models = data.Models
	}
	data.Groups = conns.NewGroupCheck(client, models)
	newScans := func() *bkiam.ScanCache {
		scans := bkiam.NewScanCache(client, time.Now)
		if settings.checkModel {
			// The model tells which actions can have RBAC rows: a group's
			// read of any other action skips the RBAC list.
			scans.UseModels(data.Models)
		}
		return scans
	}
	if settings.detectDrift {
		data.Scans = newScans()
	}
	if client.Transport() == bkiam.TransportGateway {
		// What one subject holds, for the expiry check and bkiam_expiring:
		// IAM's answer about the subject, and the policy lists where it
		// cannot tell (detect_drift's scans when it is on). Every write of
		// this process invalidates those scans, detect_drift or not, so
		// that bkiam_expiring read after a write sees it; a write never
		// changes what the expiry check has read (heldpolicy.Reader).
		data.PolicyScans = data.Scans
		if data.PolicyScans == nil {
			// Scans of the expiry check's own: bounded, so that a plan does
			// not cost IAM a whole list for one user (expiry_scan_limit).
			data.PolicyScans = newScans()
			data.PolicyScans.Limit(settings.expiryScanLimit)
		}
		data.Policies = heldpolicy.NewClientSource(client, data.PolicyScans, models)
		if settings.expiryConflicts != expiryConflictsOff {
			data.Expiry = heldpolicy.NewReader(data.Policies)
		}
	}
	p.data.Store(data)
	resp.ResourceData = data
	resp.DataSourceData = data
	resp.ListResourceData = data
	resp.ActionData = data
}

// Resources declares the protocol-level resources to the framework (for
// their schemas), then the framework's own.
func (p *bkiamProvider) Resources(context.Context) []func() resource.Resource {
	var out []func() resource.Resource
	for _, r := range protocolResources {
		out = append(out, r.FrameworkResource)
	}
	return append(out, p.frameworkResources...)
}

func (p *bkiamProvider) DataSources(context.Context) []func() datasource.DataSource {
	return p.dataSources
}

// ListResources are the list resources (terraform query), each named
// after the resource whose objects it lists.
func (p *bkiamProvider) ListResources(context.Context) []func() list.ListResource {
	return p.listResources
}

// Actions are the actions (terraform apply -invoke, Terraform 1.14+).
func (p *bkiamProvider) Actions(context.Context) []func() action.Action {
	return p.actions
}

// userAgent names the provider and, when known, the Terraform version that
// drives it, so that IAM operators can tell who sent a request.
func userAgent(providerVersion, terraformVersion string) string {
	ua := "terraform-provider-bkiam/" + providerVersion
	if terraformVersion != "" {
		ua = fmt.Sprintf("%s (+https://www.terraform.io) Terraform/%s", ua, terraformVersion)
	}
	return ua
}
