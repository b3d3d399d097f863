package verify

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// IAMIDValidator is checkID for the framework's attributes: not blank,
// no surrounding white space, no control characters.
type IAMIDValidator struct{}

var _ validator.String = IAMIDValidator{}

func (v IAMIDValidator) Description(context.Context) string {
	return "value must be an IAM id: not blank, without surrounding white space or control characters"
}

func (v IAMIDValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v IAMIDValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	s := req.ConfigValue.ValueString()
	if strings.TrimSpace(s) == "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Blank value", req.Path.String()+" must not be empty or blank.")
		return
	}
	if problem := IDProblem(s); problem != "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid IAM id",
			fmt.Sprintf("%s is %q, which %s; write the id exactly as IAM knows it.", req.Path, s, problem))
	}
}

// TrimmedValidator refuses a name or description with surrounding white
// space: IAM stores grade managers' and groups' names and descriptions
// trimmed, so the value read back would differ from the configuration and
// every plan would show a change.
type TrimmedValidator struct{}

var _ validator.String = TrimmedValidator{}

func (v TrimmedValidator) Description(context.Context) string {
	return "value must not begin or end with white space"
}

func (v TrimmedValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v TrimmedValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if s := req.ConfigValue.ValueString(); s != strings.TrimSpace(s) {
		resp.Diagnostics.AddAttributeError(req.Path, "Surrounding white space",
			fmt.Sprintf("%s is %q. IAM stores names and descriptions without the white space around them, so it would "+
				"read back %q and every plan would show a change: write %q.", req.Path, s, strings.TrimSpace(s), strings.TrimSpace(s)))
	}
}
