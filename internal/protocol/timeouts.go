package protocol

import (
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// DefaultTimeout bounds a create, update or delete without a timeouts block.
const DefaultTimeout = 30 * time.Minute

// timeoutsOperations are the operations a timeouts attribute bounds.
var timeoutsOperations = []string{"create", "delete", "update"}

// TimeoutsAttribute is the timeouts attribute of the protocol-level
// resources: the shape terraform-plugin-framework-timeouts gives, without
// its validators, which the protocol path would not run; checkTimeouts
// checks the same at validation.
func TimeoutsAttribute() schema.Attribute {
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

// TimeoutsModel is the timeouts attribute.
type TimeoutsModel struct {
	Create StringValue `tf:"create"`
	Update StringValue `tf:"update"`
	Delete StringValue `tf:"delete"`
}

func (t TimeoutsModel) byOperation() map[string]StringValue {
	return map[string]StringValue{"create": t.Create, "update": t.Update, "delete": t.Delete}
}

func DecodeTimeouts(d *Decoder, v tftypes.Value) Value[TimeoutsModel] {
	return DecodeValue(d, v, func(d *Decoder, v tftypes.Value) TimeoutsModel {
		a := AsAttributes(d, v)
		return TimeoutsModel{Create: DecodeString(d, a["create"]), Update: DecodeString(d, a["update"]), Delete: DecodeString(d, a["delete"])}
	})
}

func EncodeTimeouts(typ tftypes.Type, x Value[TimeoutsModel]) tftypes.Value {
	return EncodeValue(typ, x, func(typ tftypes.Type, t TimeoutsModel) tftypes.Value {
		return NewAttrs(typ).String("create", t.Create).String("update", t.Update).String("delete", t.Delete).Object()
	})
}

// TimeoutOf is how long operation ("create", "update" or "delete") may
// take.
func TimeoutOf(x Value[TimeoutsModel], operation string) time.Duration {
	t, _ := x.Get()
	if s, ok := t.byOperation()[operation].Get(); ok {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return DefaultTimeout
}

// CheckTimeouts refuses a timeout that is not a positive duration.
func CheckTimeouts(x Value[TimeoutsModel], diags *Diagnostics) {
	t, _ := x.Get()
	byOperation := t.byOperation()
	for _, op := range timeoutsOperations {
		s, ok := byOperation[op].Get()
		if !ok {
			continue
		}
		if d, err := time.ParseDuration(s); err != nil || d <= 0 {
			at := Root("timeouts").WithAttributeName(op)
			diags.AddAttributeError(at, "Invalid duration",
				fmt.Sprintf(`%s must be a positive duration such as "30m" or "1h", got %s.`, PathString(at), strconv.Quote(s)))
		}
	}
}
