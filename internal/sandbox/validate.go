package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// The field validation below mirrors the Django REST framework serializers of bk-iam-saas: the same
// messages, all field errors collected before answering, object-level checks (the limits) only once
// every field is valid, and CharField's leniency (numbers accepted as strings). Ids (system, type,
// instance, path node, subject and action ids) are trimmed of surrounding white space, the CharField
// default; names are declared with trim_whitespace=False and kept as sent; choices are not trimmed.

// Node is one node of a resource path.
type Node struct {
	System string `json:"system"`
	Type   string `json:"type"`
	ID     string `json:"id"`
}

// pathKey renders a path as the contract's inspection string: nodes "system,type,id" joined and
// wrapped by "/". It is also the identity used to merge and revoke (string equality, like the server).
func pathKey(p []Node) string {
	var b strings.Builder
	b.WriteByte('/')
	for _, n := range p {
		b.WriteString(n.System + "," + n.Type + "," + n.ID + "/")
	}
	return b.String()
}

type subject struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// resourceReq is one resources[] entry; instances are converted to 1-node paths.
type resourceReq struct {
	System string
	Type   string
	Paths  [][]Node
}

type instanceReq struct {
	System    string
	Operate   string
	Subject   subject
	Actions   []string
	Resources []resourceReq
	ExpiredAt int64 // 0: not given
}

type creatorReq struct {
	System    string
	Type      string
	Creator   string
	Instances [][]Node // ancestors + the instance
}

// decodeBody parses a JSON body; numbers stay json.Number so ids like 1 can be read as "1".
func decodeBody(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	// Not dec.More(): it reports false for a stray "]" or "}", and the server's json.loads rejects those too.
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("extra data after the JSON value")
	}
	return v, nil
}

// pyType names a decoded JSON value's Python type, as DRF's messages do.
func pyType(v any) string {
	switch n := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case json.Number:
		if strings.ContainsAny(n.String(), ".eE") {
			return "float"
		}
		return "int"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	return "object"
}

type validator struct {
	errs fieldErrors
}

// object checks that v is a JSON object (a nested serializer).
func (v *validator) object(val any, path ...any) (map[string]any, bool) {
	m, ok := val.(map[string]any)
	if !ok {
		if len(path) > 0 {
			if _, isIndex := path[len(path)-1].(int); isIndex {
				// An invalid list item reports on the item itself, as DRF's ListSerializer does.
				path = append(append([]any{}, path...), "non_field_errors")
			}
		}
		if val == nil {
			v.errs.add("This field may not be null.", path...)
		} else {
			v.errs.add(fmt.Sprintf("Invalid data. Expected a dictionary, but got %s.", pyType(val)), path...)
		}
	}
	return m, ok
}

// str reads an id CharField: required, not null, trimmed, then not blank, at most maxLen (0 = any).
func (v *validator) str(obj map[string]any, key string, maxLen int, path ...any) (string, bool) {
	return v.charField(obj, key, maxLen, true, path...)
}

// name reads a name CharField (trim_whitespace=False): required, not null, not "" — but " " is kept.
func (v *validator) name(obj map[string]any, key string, path ...any) (string, bool) {
	return v.charField(obj, key, 0, false, path...)
}

// optName reads a name CharField with allow_blank=True (and trim_whitespace=False): required and not
// null, but "" is accepted.
func (v *validator) optName(obj map[string]any, key string, path ...any) (string, bool) {
	if s, ok := obj[key].(string); ok && s == "" {
		return "", true
	}
	return v.charField(obj, key, 0, false, path...)
}

func (v *validator) charField(obj map[string]any, key string, maxLen int, trim bool, path ...any) (string, bool) {
	p := append(append([]any{}, path...), key)
	raw, present := obj[key]
	if !present {
		v.errs.add("This field is required.", p...)
		return "", false
	}
	var s string
	switch x := raw.(type) {
	case nil:
		v.errs.add("This field may not be null.", p...)
		return "", false
	case string:
		s = x
	case json.Number:
		s = x.String()
	default:
		v.errs.add("Not a valid string.", p...)
		return "", false
	}
	if trim {
		s = strings.TrimSpace(s)
	}
	if s == "" {
		v.errs.add("This field may not be blank.", p...)
		return "", false
	}
	if maxLen > 0 && len([]rune(s)) > maxLen {
		v.errs.add(fmt.Sprintf("Ensure this field has no more than %d characters.", maxLen), p...)
		return "", false
	}
	return s, true
}

// choice reads a ChoiceField: the value must be one of choices as sent (no trimming; "" is not a
// valid choice either); "" when it is not.
func (v *validator) choice(obj map[string]any, key string, choices []string, path ...any) string {
	p := append(append([]any{}, path...), key)
	raw, present := obj[key]
	if !present {
		v.errs.add("This field is required.", p...)
		return ""
	}
	var s string
	switch x := raw.(type) {
	case nil:
		v.errs.add("This field may not be null.", p...)
		return ""
	case string:
		s = x
	case json.Number:
		s = x.String()
	case bool: // Python's str(True)
		s = map[bool]string{true: "True", false: "False"}[x]
	default:
		s = fmt.Sprint(x)
	}
	for _, c := range choices {
		if s == c {
			return s
		}
	}
	v.errs.add(`"`+s+`" is not a valid choice.`, p...)
	return ""
}

// list reads a list field; allowEmpty false gives DRF's "This list may not be empty.".
func (v *validator) list(obj map[string]any, key string, allowEmpty bool, path ...any) ([]any, bool) {
	p := append(append([]any{}, path...), key)
	raw, present := obj[key]
	if !present {
		v.errs.add("This field is required.", p...)
		return nil, false
	}
	switch x := raw.(type) {
	case nil:
		v.errs.add("This field may not be null.", p...)
		return nil, false
	case []any:
		if len(x) == 0 && !allowEmpty {
			v.errs.add("This list may not be empty.", p...)
			return nil, false
		}
		return x, true
	default:
		v.errs.add(fmt.Sprintf("Expected a list of items but got type %q.", pyType(raw)), p...)
		return nil, false
	}
}

// boolean reads an optional BooleanField (default false) with DRF's accepted spellings.
func (v *validator) boolean(obj map[string]any, key string) {
	raw, present := obj[key]
	if !present {
		return
	}
	switch x := raw.(type) {
	case bool:
		return
	case string:
		switch strings.ToLower(x) {
		case "true", "false", "1", "0", "yes", "no", "on", "off", "t", "f", "y", "n":
			return
		}
	case json.Number:
		if x.String() == "1" || x.String() == "0" {
			return
		}
	}
	v.errs.add("Must be a valid boolean.", key)
}

// expiredAt reads the optional expired_at: an integer, 0 (= default) or a time after now, at most
// PERMANENT_SECONDS.
func (v *validator) expiredAt(obj map[string]any, now time.Time) int64 {
	raw, present := obj["expired_at"]
	if !present || raw == nil {
		return 0
	}
	var n int64
	switch x := raw.(type) {
	case json.Number:
		i, err := strconv.ParseInt(x.String(), 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(x.String(), 64)
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1e18 {
				v.errs.add("A valid integer is required.", "expired_at")
				return 0
			}
			i = int64(f)
		}
		n = i
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			v.errs.add("A valid integer is required.", "expired_at")
			return 0
		}
		n = i
	default:
		v.errs.add("A valid integer is required.", "expired_at")
		return 0
	}
	switch {
	case n < 0:
		v.errs.add("Ensure this value is greater than or equal to 0.", "expired_at")
	case n > permanentExpiredAt:
		v.errs.add(fmt.Sprintf("Ensure this value is less than or equal to %d.", permanentExpiredAt), "expired_at")
	case n != 0 && n <= now.Unix():
		v.errs.add("greater than now timestamp", "expired_at")
	default:
		return n
	}
	return 0
}

// parseInstanceRequest validates a batch_instance (paths=false) or batch_path (paths=true) body.
func parseInstanceRequest(body any, paths bool, lim Limits, now time.Time) (*instanceReq, *saasError) {
	var v validator
	obj, ok := v.object(body, "non_field_errors")
	if !ok {
		return nil, v.errs.err()
	}
	req := &instanceReq{}
	v.boolean(obj, "asynchronous")
	req.Operate = v.choice(obj, "operate", []string{"grant", "revoke"})
	req.System, _ = v.str(obj, "system", 0)
	if acts, ok := v.list(obj, "actions", false); ok {
		for i, a := range acts {
			if ao, ok := v.object(a, "actions", i); ok {
				if id, ok := v.str(ao, "id", 0, "actions", i); ok {
					req.Actions = append(req.Actions, id)
				}
			}
		}
	}
	if raw, present := obj["subject"]; !present {
		v.errs.add("This field is required.", "subject")
	} else if so, ok := v.object(raw, "subject"); ok {
		req.Subject.Type = v.choice(so, "type", []string{"user", "group"}, "subject")
		// Group ids are not checked here (the serializer's id is a plain CharField): a non-numeric
		// group is simply an unknown one.
		req.Subject.ID, _ = v.str(so, "id", 0, "subject")
	}
	if res, ok := v.list(obj, "resources", true); ok {
		for i, r := range res {
			ro, ok := v.object(r, "resources", i)
			if !ok {
				continue
			}
			rr := resourceReq{}
			rr.System, _ = v.str(ro, "system", 0, "resources", i)
			rr.Type, _ = v.str(ro, "type", 0, "resources", i)
			if paths {
				rr.Paths = v.paths(ro, lim, i)
			} else {
				rr.Paths = v.instances(ro, lim, rr.System, rr.Type, i)
			}
			req.Resources = append(req.Resources, rr)
		}
	}
	req.ExpiredAt = v.expiredAt(obj, now)
	if !v.errs.empty() {
		return nil, v.errs.err()
	}
	// Object-level checks run only once every field is valid, as in DRF.
	word := "instance"
	if paths {
		word = "path"
	}
	for _, r := range req.Resources {
		if req.Operate == "grant" && len(r.Paths) > lim.GrantInstances {
			return nil, nonFieldError(fmt.Sprintf("maximum number of %s grant %d", word, lim.GrantInstances))
		}
		if req.Operate == "revoke" && len(r.Paths) > lim.RevokeInstances {
			return nil, nonFieldError(fmt.Sprintf("maximum number of %s revoke %d", word, lim.RevokeInstances))
		}
	}
	return req, nil
}

func (v *validator) instances(ro map[string]any, lim Limits, system, typ string, i int) [][]Node {
	list, ok := v.list(ro, "instances", true, "resources", i)
	if !ok {
		return nil
	}
	out := [][]Node{}
	for j, inst := range list {
		io, ok := v.object(inst, "resources", i, "instances", j)
		if !ok {
			continue
		}
		id, idOK := v.str(io, "id", lim.InstanceIDLength, "resources", i, "instances", j)
		v.name(io, "name", "resources", i, "instances", j)
		if idOK {
			out = append(out, []Node{{System: system, Type: typ, ID: id}})
		}
	}
	return out
}

// paths reads a batch_path resource's paths. A node's system is optional (absent or "" is filled
// in later from the model, as the SaaS fills it from the instance selection: fillPathSystems); its
// name must be present and may be "" only when the id is "*" (checked by the node serializer's
// validate, so only once the node's fields are valid).
func (v *validator) paths(ro map[string]any, lim Limits, i int) [][]Node {
	list, ok := v.list(ro, "paths", true, "resources", i)
	if !ok {
		return nil
	}
	out := [][]Node{}
	for j, raw := range list {
		nodes, ok := raw.([]any)
		if !ok {
			v.errs.add(fmt.Sprintf("Expected a list of items but got type %q.", pyType(raw)), "resources", i, "paths", j)
			continue
		}
		if len(nodes) == 0 {
			v.errs.add("This list may not be empty.", "resources", i, "paths", j)
			continue
		}
		var path []Node
		valid := true
		for k, rawNode := range nodes {
			at := []any{"resources", i, "paths", j, k}
			no, ok := v.object(rawNode, at...)
			if !ok {
				valid = false
				continue
			}
			// A node without a system gets one from the model once the request's system is known
			// (fillPathSystems).
			n := Node{}
			okS := true
			if raw, present := no["system"]; present {
				if s, isStr := raw.(string); !isStr || strings.TrimSpace(s) != "" {
					n.System, okS = v.str(no, "system", 0, at...)
				}
			}
			var okT, okI bool
			n.Type, okT = v.str(no, "type", 0, at...)
			n.ID, okI = v.str(no, "id", lim.InstanceIDLength, at...)
			name, okN := v.optName(no, "name", at...)
			if okS && okT && okI && okN && name == "" && n.ID != "*" {
				v.errs.add(fmt.Sprintf("name is required when id(%s) is not `*`", n.ID), append(at, "non_field_errors")...)
				okN = false
			}
			valid = valid && okS && okT && okI && okN
			path = append(path, n)
		}
		if valid {
			out = append(out, path)
		}
	}
	return out
}

// parseCreatorRequest validates a batch_resource_creator_action body.
func parseCreatorRequest(body any, lim Limits) (*creatorReq, *saasError) {
	var v validator
	obj, ok := v.object(body, "non_field_errors")
	if !ok {
		return nil, v.errs.err()
	}
	req := &creatorReq{}
	req.System, _ = v.str(obj, "system", 0)
	req.Type, _ = v.str(obj, "type", 0)
	req.Creator, _ = v.str(obj, "creator", 0)
	if list, ok := v.list(obj, "instances", false); ok {
		for j, raw := range list {
			io, ok := v.object(raw, "instances", j)
			if !ok {
				continue
			}
			id, idOK := v.str(io, "id", lim.InstanceIDLength, "instances", j)
			v.name(io, "name", "instances", j)
			var path []Node
			valid := idOK
			if ancRaw, present := io["ancestors"]; present && ancRaw != nil {
				ancs, ok := v.list(io, "ancestors", true, "instances", j)
				valid = valid && ok
				for k, a := range ancs {
					at := []any{"instances", j, "ancestors", k}
					ao, ok := v.object(a, at...)
					if !ok {
						valid = false
						continue
					}
					n := Node{}
					var okS, okT, okI bool
					n.System, okS = v.str(ao, "system", 0, at...)
					n.Type, okT = v.str(ao, "type", 0, at...)
					n.ID, okI = v.str(ao, "id", lim.InstanceIDLength, at...)
					valid = valid && okS && okT && okI
					path = append(path, n)
				}
			}
			if valid {
				req.Instances = append(req.Instances, append(path, Node{System: req.System, Type: req.Type, ID: id}))
			}
		}
	}
	if !v.errs.empty() {
		return nil, v.errs.err()
	}
	if len(req.Instances) > lim.GrantInstances {
		return nil, nonFieldError(fmt.Sprintf("maximum number of instance grant %d", lim.GrantInstances))
	}
	return req, nil
}

// leniently pulls a string field without validation, for the checks that the server runs before field
// validation (system client, allow-list).
func looseString(obj any, key string) string {
	m, _ := obj.(map[string]any)
	switch x := m[key].(type) {
	case string:
		return strings.TrimSpace(x)
	case json.Number:
		return x.String()
	}
	return ""
}

func looseActionIDs(obj any) []string {
	m, _ := obj.(map[string]any)
	list, _ := m["actions"].([]any)
	var ids []string
	for _, a := range list {
		if id := looseString(a, "id"); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}
