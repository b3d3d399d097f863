package access_test

import (
	"reflect"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/service/access"
)

// TestReadPermission: each shape IAM writes, as bkiam_effective_permissions
// shows it: ids on their own or under a path in instances, prefixes in
// paths, every instance or everything in any, and attributes, combined
// resources and what else no key can say in conditional; the expression
// in one form whatever IAM's order.
func TestReadPermission(t *testing.T) {
	const (
		host1     = `{"field":"host.id","op":"eq","value":"1"}`
		underBiz1 = `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}`
		mix       = `{"op":"OR","content":[{"field":"host.id","op":"in","value":["2","1"]},` +
			`{"op":"AND","content":[{"field":"host.id","op":"eq","value":"3"},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}]},` +
			`{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,2/"}]}`
		mixReordered = `{"op":"OR","content":[{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,2/"},` +
			`{"op":"AND","content":[{"value":"/biz,1/","field":"host._bk_iam_path_","op":"starts_with"},{"field":"host.id","op":"eq","value":"3"}]},` +
			`{"field":"host.id","op":"in","value":["1","2","1"]}]}`
		mixCanonical = `{"content":[{"content":[{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"},{"field":"host.id","op":"eq","value":"3"}],"op":"AND"},` +
			`{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,2/"},{"field":"host.id","op":"in","value":["1","2"]}],"op":"OR"}`
	)
	hosts := func(ids ...string) map[string][]string { return map[string][]string{"bk_cmdb/host": ids} }
	none := map[string][]string{}
	cases := []struct {
		name, expr string
		want       access.Permission
	}{
		{"nothing", `{}`, access.Permission{Expression: "{}", None: true, Instances: none, Paths: none}},
		{"no answer", ``, access.Permission{Expression: "{}", None: true, Instances: none, Paths: none}},
		{"one host", host1, access.Permission{Expression: host1, Instances: hosts("1"), Paths: none}},
		{"every host under business 1", underBiz1, access.Permission{Expression: underBiz1, Instances: none, Paths: hosts("/biz,1/")}},
		{"every set of business 1", `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/set,*/"}`,
			access.Permission{Expression: `{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/set,*/"}`, Instances: none, Paths: hosts("/biz,1/set,*/")}},
		{"ids, an id under a path, a prefix", mix, access.Permission{Expression: mixCanonical, Instances: hosts("1", "2", "3"), Paths: hosts("/biz,2/")}},
		{"the same in another order", mixReordered, access.Permission{Expression: mixCanonical, Instances: hosts("1", "2", "3"), Paths: hosts("/biz,2/")}},
		{"every host", `{"field":"host.id","op":"any","value":[]}`,
			access.Permission{Expression: `{"field":"host.id","op":"any","value":[]}`, Any: true, Instances: none, Paths: none}},
		{"everything", `{"field":"","op":"any","value":[]}`,
			access.Permission{Expression: `{"field":"","op":"any","value":[]}`, Any: true, Instances: none, Paths: none}},
		{"two id lists together", `{"op":"AND","content":[{"field":"host.id","op":"in","value":["1","2"]},{"field":"host.id","op":"in","value":["2","3"]}]}`,
			access.Permission{Expression: `{"content":[{"field":"host.id","op":"in","value":["1","2"]},{"field":"host.id","op":"in","value":["2","3"]}],"op":"AND"}`,
				Instances: hosts("2"), Paths: none}},
		{"an attribute", `{"op":"OR","content":[` + host1 + `,{"field":"host.os","op":"eq","value":"linux"}]}`,
			access.Permission{Expression: `{"content":[{"field":"host.id","op":"eq","value":"1"},{"field":"host.os","op":"eq","value":"linux"}],"op":"OR"}`,
				Conditional: true, Instances: hosts("1"), Paths: none}},
		{"a host with an attribute", `{"op":"AND","content":[` + host1 + `,{"field":"host.os","op":"eq","value":"linux"}]}`,
			access.Permission{Expression: `{"content":[{"field":"host.id","op":"eq","value":"1"},{"field":"host.os","op":"eq","value":"linux"}],"op":"AND"}`,
				Conditional: true, Instances: none, Paths: none}},
		{"a combined resource", `{"op":"AND","content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"eq","value":"7"}]}`,
			access.Permission{Expression: `{"content":[{"field":"biz.id","op":"eq","value":"1"},{"field":"host.id","op":"eq","value":"7"}],"op":"AND"}`,
				Conditional: true, Instances: none, Paths: none}},
		{"a group's RBAC path", `{"field":"host._bk_iam_path_","op":"string_contains","value":"/biz,1/"}`,
			access.Permission{Expression: `{"field":"host._bk_iam_path_","op":"string_contains","value":"/biz,1/"}`, Conditional: true, Instances: none, Paths: none}},
		{"under two prefixes at once", `{"op":"AND","content":[` + underBiz1 + `,{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/set,2/"}]}`,
			access.Permission{Expression: `{"content":[{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/set,2/"}],"op":"AND"}`,
				Conditional: true, Instances: none, Paths: none}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := access.ReadPermission(c.expr, "bk_cmdb")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s:\n got %+v\nwant %+v", c.expr, got, c.want)
			}
		})
	}
	if _, err := access.ReadPermission(`{"op":"xor"}`, "bk_cmdb"); err == nil {
		t.Error("an expression that does not parse: no error")
	}
}
