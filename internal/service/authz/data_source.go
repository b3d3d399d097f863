package authz

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"

	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
)

// dataSource is what the authorization API's framework data sources
// share: their type name after the provider's prefix, and the provider's
// data, which Configure keeps.
type dataSource struct {
	name string
	data *conns.Data
}

func (d *dataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.name
}

func (d *dataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = conns.FromProviderData(req.ProviderData, "bkiam_"+d.name, &resp.Diagnostics)
}

// readConfig reads a data source's configuration into an M; false when it
// put an error in resp: the configuration does not read, or the provider
// is not configured.
func readConfig[M any](ctx context.Context, d *dataSource, req datasource.ReadRequest, resp *datasource.ReadResponse) (M, bool) {
	var m M
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return m, false
	}
	if d.data == nil {
		resp.Diagnostics.AddError("Provider not configured", "bkiam_"+d.name+" was read before the provider was configured; this is a bug in the provider.")
		return m, false
	}
	return m, true
}
