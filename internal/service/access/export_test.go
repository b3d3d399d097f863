package access

// The tests beside the data sources (package access_test) reach these
// through the names below; the provider itself needs none of them.

// Permission is what bkiam_effective_permissions shows of one action.
type Permission struct {
	Expression             string
	Any, None, Conditional bool
	Instances, Paths       map[string][]string
}

// ReadPermission reads one action's expression as the data source does,
// every type's system being system.
func ReadPermission(raw, system string) (Permission, error) {
	p, err := readPermission([]byte(raw), func(string) string { return system })
	return Permission{Expression: p.expression, Any: p.any, None: p.none, Conditional: p.conditional, Instances: p.instances, Paths: p.paths}, err
}
