package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// timeoutsAttribute is the timeouts attribute of both resources, described.
func timeoutsAttribute(ctx context.Context) schema.Attribute {
	attr := timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})
	if nested, ok := attr.(schema.SingleNestedAttribute); ok {
		nested.MarkdownDescription = "How long a create, update or delete may take in all, e.g. `{ create = \"1h\" }`; " +
			"default 30 minutes each. When it runs out, the call in flight finishes and the run stops before the next, " +
			"recording exactly what IAM holds."
		return nested
	}
	return attr
}
