package conns

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
)

// DataSource is what the provider's framework data sources share: their
// type name after the provider's prefix, and the provider's data, which
// Configure keeps. A data source embeds it and sets Name.
type DataSource struct {
	Name string
	Data *Data
}

func (d *DataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.Name
}

func (d *DataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.Data = FromProviderData(req.ProviderData, "bkiam_"+d.Name, &resp.Diagnostics)
}

// ReadConfig reads a data source's configuration into an M; false when it
// put an error in resp: the configuration does not read, or the provider
// is not configured.
func ReadConfig[M any](ctx context.Context, d *DataSource, req datasource.ReadRequest, resp *datasource.ReadResponse) (M, bool) {
	var m M
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return m, false
	}
	if d.Data == nil {
		resp.Diagnostics.AddError("Provider not configured", "bkiam_"+d.Name+" was read before the provider was configured; this is a bug in the provider.")
		return m, false
	}
	return m, true
}
