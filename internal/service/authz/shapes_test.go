package authz

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/policyexpr"
)

// TestShapeBeyond: what a policy holds beyond what a resource grants, in every shape IAM writes.
// Nothing is taken for the resource's own unless its grant covers it: a topology path, every
// instance, an attribute condition, a combination and another type are all named.
func TestShapeBeyond(t *testing.T) {
	hosts := func(ids ...string) shape {
		r := grantplan.Resource{System: "bk_cmdb", Type: "host", Instances: map[string]string{}}
		for _, id := range ids {
			r.Instances[id] = "h" + id
		}
		return instanceShape(grantplan.Grant{Actions: []string{"view_host"}, Resources: []grantplan.Resource{r}})
	}
	combo := instanceShape(grantplan.Grant{Actions: []string{"edit_biz_host"}, Resources: []grantplan.Resource{
		{System: "bk_cmdb", Type: "biz", Instances: map[string]string{"2": "b2"}},
		{System: "bk_cmdb", Type: "host", Instances: map[string]string{"9": "h9", "10": "h10"}},
	}})
	creator := creatorShape(grantplan.CreatorTarget{System: "bk_cmdb", Type: "host"}, map[string]grantplan.CreatorInstance{
		"7": {ID: "7", Name: "h7", Ancestors: []grantplan.Node{{System: "bk_cmdb", Type: "biz", ID: "1"}}},
	}, true)
	const (
		ids       = `{"field":"host.id","op":"in","value":["1","9","10"]}`
		path      = `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}`
		every     = `{"field":"host.id","op":"any","value":[]}`
		attribute = `{"op":"AND","content":[{"field":"host.id","op":"eq","value":"1"},{"field":"host.os","op":"eq","value":"linux"}]}`
		osOnly    = `{"field":"host.os","op":"eq","value":"linux"}`
		pair      = `{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"2"},{"field":"host.id","op":"eq","value":"9"}]}`
		otherPair = `{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"3"},{"field":"host.id","op":"eq","value":"9"}]}`
		under     = `{"op":"AND","content":[{"field":"host.id","op":"eq","value":"7"},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}]}`
		elsewhere = `{"op":"AND","content":[{"field":"host.id","op":"eq","value":"7"},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,2/"}]}`
	)
	or := func(members ...string) string { return `{"op":"OR","content":[` + strings.Join(members, ",") + `]}` }
	// A period_daily environment as IAM's translation writes it: time zone, and hours as hhmmss.
	const windowOnly = `{"op":"AND","content":[{"field":"_bk_iam_env_.tz","op":"eq","value":"Asia/Shanghai"},` +
		`{"field":"_bk_iam_env_.hms","op":"gte","value":0},{"field":"_bk_iam_env_.hms","op":"lte","value":120000}]}`
	window := func(id string) string {
		return `{"op":"AND","content":[{"field":"host.id","op":"eq","value":"` + id + `"},` + windowOnly + `]}`
	}
	cases := []struct {
		name  string
		shape shape
		expr  string
		want  string
	}{
		{"its own ids", hosts("1", "9", "10"), ids, ""},
		{"ids it does not name", hosts("1"), ids, "2 bk_cmdb/host instances this resource does not manage (10, 9)"},
		{"every host under a business", hosts("1"), path, "host under /biz,1/"},
		{"ids and a path", hosts("1"), or(ids, path), "2 bk_cmdb/host instances this resource does not manage (10, 9); host under /biz,1/"},
		{"every host", hosts("1"), every, "every host"},
		{"everything", hosts("1"), `{"field":"","op":"any","value":[]}`, "everything"},
		{"its own id, narrowed by an attribute", hosts("1"), attribute, ""},
		{"another id, narrowed by an attribute", hosts("2"), attribute, "host 1 and host.os eq linux"},
		{"an attribute alone", hosts("1"), osOnly, "host.os eq linux"},
		{"a combination", hosts("9"), pair, "biz 2 and host 9"},
		{"its own id within a time window", hosts("1"), window("1"), ""},
		{"another id within a time window", hosts("2"), window("1"), "host 1 and within IAM's time window (tz eq Asia/Shanghai; hms gte 0; hms lte 120000)"},
		{"its own combination within a time window", combo, `{"op":"AND","content":[` + pair + `,` + windowOnly + `]}`, ""},
		{"its own combination", combo, pair, ""},
		{"another combination", combo, or(pair, otherPair), "biz 3 and host 9"},
		{"ids of one type beside a combination", combo, or(pair, ids), "host 1, 9, 10"},
		{"an action related to no type", instanceShape(grantplan.Grant{Actions: []string{"create_biz"}}), `{"field":"","op":"any","value":[]}`, ""},
		{"a creator's own instance under its ancestors", creator, under, ""},
		{"a creator's instance collapsed to its id", creator, `{"field":"host.id","op":"eq","value":"7"}`, ""},
		{"a creator's instance under other ancestors", creator, elsewhere, "host 7 and host under /biz,2/"},
		{"a creator's own and a path", creator, or(under, path), "host under /biz,1/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := policyexpr.Parse([]byte(c.expr))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.shape.beyond(e); got != c.want {
				t.Errorf("beyond(%s)\n got %q\nwant %q", c.expr, got, c.want)
			}
		})
	}
}

// TestShapeBeyondNamesAFewAndCounts: a policy of many other alternatives names five and counts
// the rest; one too complex to flatten is named as such, never taken for the resource's own.
func TestShapeBeyondNamesAFewAndCounts(t *testing.T) {
	var paths []string
	for i := range 8 {
		paths = append(paths, fmt.Sprintf(`{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,%d/"}`, i))
	}
	r := grantplan.Resource{System: "bk_cmdb", Type: "host", Instances: map[string]string{"1": "h1"}}
	s := instanceShape(grantplan.Grant{Resources: []grantplan.Resource{r}})
	e, _ := policyexpr.Parse([]byte(`{"op":"OR","content":[` + strings.Join(paths, ",") + `]}`))
	if got, want := s.beyond(e), "host under /biz,0/; host under /biz,1/; host under /biz,2/; host under /biz,3/; host under /biz,4/; 3 more"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	var members []string
	for i := range 200 {
		members = append(members, fmt.Sprintf(`{"field":"host.id","op":"eq","value":"%d"}`, i))
	}
	many := `{"op":"OR","content":[` + strings.Join(members, ",") + `]}`
	e, _ = policyexpr.Parse([]byte(`{"op":"AND","content":[` + many + `,` + many + `]}`))
	if got := s.beyond(e); !strings.Contains(got, "not told apart here") {
		t.Errorf("a policy of 40 000 alternatives: got %q", got)
	}
}
