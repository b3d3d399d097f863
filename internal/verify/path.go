package verify

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
)

// ParsePath reads a path in IAM's notation, /SYSTEM,TYPE,ID/…/, the form
// a group permission's and a creator grant's instance keys take for an
// instance under its ancestors. The notation cannot carry an id holding
// "," or "/", nor one longer than IAM's 36 characters.
func ParsePath(key string) ([]bkiam.PathNode, error) {
	if !strings.HasPrefix(key, "/") || !strings.HasSuffix(key, "/") || len(key) < 2 {
		return nil, errors.New("it does not begin and end with \"/\"")
	}
	var nodes []bkiam.PathNode
	for _, part := range strings.Split(strings.Trim(key, "/"), "/") {
		f := strings.Split(part, ",")
		if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" {
			return nil, fmt.Errorf("its node %q is not SYSTEM,TYPE,ID", part)
		}
		if len(f[2]) > 36 {
			return nil, fmt.Errorf("the id of its node %q is longer than IAM's 36 characters", part)
		}
		nodes = append(nodes, bkiam.PathNode{System: f[0], Type: f[1], ID: f[2]})
	}
	return nodes, nil
}
