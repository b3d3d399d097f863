package provider

import (
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// defaultTimeout bounds a create, update or delete without a timeouts block.
const defaultTimeout = 30 * time.Minute

// timeoutsOperations are the operations a timeouts attribute bounds.
var timeoutsOperations = []string{"create", "delete", "update"}

// timeoutsAttribute is the timeouts attribute of the protocol-level
// resources: the shape terraform-plugin-framework-timeouts gives, without
// its validators, which the protocol path would not run; checkTimeouts
// checks the same at validation.
func timeoutsAttribute() schema.Attribute {
	attributes := map[string]schema.Attribute{}
	for _, op := range timeoutsOperations {
		attributes[op] = schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: fmt.Sprintf("How long the %s may take, as a positive duration such as `\"30m\"` or `\"1h\"`.", op),
		}
	}
	return schema.SingleNestedAttribute{
		Optional:   true,
		Attributes: attributes,
		MarkdownDescription: "How long a create, update or delete may take in all, e.g. `{ create = \"1h\" }`; " +
			"default 30 minutes each. When it runs out, the call in flight finishes and the run stops before the next, " +
			"recording exactly what IAM holds.",
	}
}

// timeoutsModel is the timeouts attribute.
type timeoutsModel struct {
	Create stringValue `tf:"create"`
	Update stringValue `tf:"update"`
	Delete stringValue `tf:"delete"`
}

func (t timeoutsModel) byOperation() map[string]stringValue {
	return map[string]stringValue{"create": t.Create, "update": t.Update, "delete": t.Delete}
}

func decodeTimeouts(d *decoder, v tftypes.Value) value[timeoutsModel] {
	return decodeValue(d, v, func(d *decoder, v tftypes.Value) timeoutsModel {
		a := asAttributes(d, v)
		return timeoutsModel{Create: decodeString(d, a["create"]), Update: decodeString(d, a["update"]), Delete: decodeString(d, a["delete"])}
	})
}

func encodeTimeouts(typ tftypes.Type, x value[timeoutsModel]) tftypes.Value {
	return encodeValue(typ, x, func(typ tftypes.Type, t timeoutsModel) tftypes.Value {
		return newAttrs(typ).string("create", t.Create).string("update", t.Update).string("delete", t.Delete).object()
	})
}

// timeoutOf is how long operation ("create", "update" or "delete") may
// take.
func timeoutOf(x value[timeoutsModel], operation string) time.Duration {
	t, _ := x.get()
	if s, ok := t.byOperation()[operation].get(); ok {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return defaultTimeout
}

// checkTimeouts refuses a timeout that is not a positive duration.
func checkTimeouts(x value[timeoutsModel], diags *diagnostics) {
	t, _ := x.get()
	byOperation := t.byOperation()
	for _, op := range timeoutsOperations {
		s, ok := byOperation[op].get()
		if !ok {
			continue
		}
		if d, err := time.ParseDuration(s); err != nil || d <= 0 {
			at := root("timeouts").WithAttributeName(op)
			diags.addAttributeError(at, "Invalid duration",
				fmt.Sprintf(`%s must be a positive duration such as "30m" or "1h", got %s.`, pathString(at), strconv.Quote(s)))
		}
	}
}
