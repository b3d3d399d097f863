package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/bkiam/terraform-provider-bkiam/internal/renewal"
)

// urlValidator checks a base URL at plan time; unknown and null values are
// left to Configure, which sees the environment fallbacks too.
type urlValidator struct{}

var _ validator.String = urlValidator{}

func (urlValidator) Description(context.Context) string {
	return "value must be an absolute http or https URL"
}

func (v urlValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (urlValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := checkBaseURL(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid URL",
			fmt.Sprintf("%s %s.", req.Path, err))
	}
}

// rollingDurationValidator checks a duration as expires_in takes it
// ("730d", "1w", "12h"; renewal.ParseDuration).
type rollingDurationValidator struct{}

var _ validator.String = rollingDurationValidator{}

func (rollingDurationValidator) Description(context.Context) string {
	return `value must be a positive duration such as "730d", "52w" or "8760h" (units s, m, h, d for 24 hours, w)`
}

func (v rollingDurationValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v rollingDurationValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := renewal.ParseDuration(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%s: %s, got %q: %v.", req.Path, v.Description(ctx), req.ConfigValue.ValueString(), err))
	}
}

// durationValidator checks a positive (or, with allowZero, non-negative)
// Go duration string such as "30s".
type durationValidator struct{ allowZero bool }

var _ validator.String = durationValidator{}

func (v durationValidator) Description(context.Context) string {
	if v.allowZero {
		return `value must be a Go duration such as "10ms" or "0s"`
	}
	return `value must be a positive Go duration such as "30s" or "2m"`
}

func (v durationValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v durationValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	d, err := time.ParseDuration(req.ConfigValue.ValueString())
	if err != nil || d < 0 || (d == 0 && !v.allowZero) {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid duration",
			fmt.Sprintf("%s: %s, got %q.", req.Path, v.Description(ctx), req.ConfigValue.ValueString()))
	}
}
