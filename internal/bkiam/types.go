package bkiam

import (
	"errors"
	"fmt"
	"strings"
)

// Operation is the "operate" field of batch_instance and batch_path.
type Operation string

const (
	OperationGrant  Operation = "grant"
	OperationRevoke Operation = "revoke"
)

// PermanentExpiry is IAM's "never expires" (PERMANENT_SECONDS, 2100-01-01). A user grant sent
// without expired_at expires after 365 days, so permanent grants must send this value.
const PermanentExpiry int64 = 4102444800

// ErrEmptyInstances is returned, before any I/O, for a resource entry without instances, a
// path entry without paths or with an empty path, or a creator request without instances.
// IAM reads an empty instance list as "every instance": sending one on grant hands out
// unlimited permission, so this guard is never bypassed. It applies to revoke as well: an empty
// list is never what a caller means there either.
var ErrEmptyInstances = errors.New("refusing to send an empty instance list, which IAM reads as \"every instance\"")

// Subject is who receives the permission: type "user" or "group" (numeric id).
type Subject struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// The subject types an authorization call takes.
const (
	SubjectUser  = "user"
	SubjectGroup = "group"
)

// Action is one IAM action id.
type Action struct {
	ID string `json:"id"`
}

// Instance is one resource instance; Name is required by IAM but not verified.
type Instance struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// InstanceResource is one resource type of the actions (in the actions' order) with its instances.
type InstanceResource struct {
	System    string     `json:"system"`
	Type      string     `json:"type"`
	Instances []Instance `json:"instances"`
}

// BatchInstanceRequest is a batch_instance grant or revoke.
type BatchInstanceRequest struct {
	System  string    `json:"system"`
	Operate Operation `json:"operate"`
	// ExpiredAt is unix seconds; 0 = not sent (a new user policy then expires after 365 days).
	ExpiredAt int64    `json:"expired_at,omitempty"`
	Subject   Subject  `json:"subject"`
	Actions   []Action `json:"actions"`
	// Resources is always sent; nil is sent as [] (actions with no related resource type).
	Resources []InstanceResource `json:"resources"`
}

// PathNode is one node of a topology path; Name is required unless ID is "*".
type PathNode struct {
	System string `json:"system"`
	Type   string `json:"type"`
	ID     string `json:"id"`
	Name   string `json:"name"`
}

// PathResource is one resource type with the paths that lead to its instances.
type PathResource struct {
	System string       `json:"system"`
	Type   string       `json:"type"`
	Paths  [][]PathNode `json:"paths"`
}

// BatchPathRequest is a batch_path grant or revoke.
type BatchPathRequest struct {
	System    string         `json:"system"`
	Operate   Operation      `json:"operate"`
	ExpiredAt int64          `json:"expired_at,omitempty"`
	Subject   Subject        `json:"subject"`
	Actions   []Action       `json:"actions"`
	Resources []PathResource `json:"resources"`
}

// Ancestor is a topology ancestor of a created instance; IAM looks its name up itself.
type Ancestor struct {
	System string `json:"system"`
	Type   string `json:"type"`
	ID     string `json:"id"`
}

// CreatorInstance is one created instance with its ancestors, outermost first.
type CreatorInstance struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Ancestors []Ancestor `json:"ancestors,omitempty"`
}

// CreatorActionRequest is a batch_resource_creator_action grant (there is no creator revoke).
type CreatorActionRequest struct {
	System    string            `json:"system"`
	Type      string            `json:"type"`
	Creator   string            `json:"creator"`
	Instances []CreatorInstance `json:"instances"`
}

// PolicyResult is one entry of a grant/revoke answer. IAM lists unrelated policies of the
// subject too (server bug), so callers pick entries by Action.ID.
type PolicyResult struct {
	Action     Action `json:"action"`
	PolicyID   int64  `json:"policy_id"`
	Statistics struct {
		InstanceCount int `json:"instance_count"`
	} `json:"statistics"`
}

// Human operation names used in errors and logs.
const (
	opGrant        = "grant"
	opRevoke       = "revoke"
	opCreatorGrant = "creator grant"
	opPathGrant    = "path grant"
	opPathRevoke   = "path revoke"
)

// Wire bodies. "asynchronous" is sent because the published docs mark it required; the server
// ignores it and always works synchronously.
type batchInstanceBody struct {
	System       string             `json:"system"`
	Operate      Operation          `json:"operate"`
	Asynchronous bool               `json:"asynchronous"`
	ExpiredAt    int64              `json:"expired_at,omitempty"`
	Subject      Subject            `json:"subject"`
	Actions      []Action           `json:"actions"`
	Resources    []InstanceResource `json:"resources"`
}

type batchPathBody struct {
	System       string         `json:"system"`
	Operate      Operation      `json:"operate"`
	Asynchronous bool           `json:"asynchronous"`
	ExpiredAt    int64          `json:"expired_at,omitempty"`
	Subject      Subject        `json:"subject"`
	Actions      []Action       `json:"actions"`
	Resources    []PathResource `json:"resources"`
}

// requestError is a request refused before any I/O. It matches its sentinel (ErrValidation or
// ErrEmptyInstances) with errors.Is.
type requestError struct {
	op, msg  string
	sentinel error
}

func (e *requestError) Error() string { return "bkiam: invalid " + e.op + " request: " + e.msg }
func (e *requestError) Unwrap() error { return e.sentinel }

// invalid builds a local validation error; it matches ErrValidation.
func invalid(op, format string, args ...any) error {
	return &requestError{op: op, msg: fmt.Sprintf(format, args...), sentinel: ErrValidation}
}

// emptyInstances builds the guard error; it matches ErrEmptyInstances.
func emptyInstances(op, format string, args ...any) error {
	return &requestError{op: op, sentinel: ErrEmptyInstances,
		msg: fmt.Sprintf(format, args...) + `; IAM reads an empty list as "every instance", so it is never sent`}
}

func operationName(o Operation, grant, revoke string) (string, error) {
	switch o {
	case OperationGrant:
		return grant, nil
	case OperationRevoke:
		return revoke, nil
	}
	return "", invalid("batch", "operate is %q, want %q or %q", o, OperationGrant, OperationRevoke)
}

func checkCommon(op, system string, subject Subject, actions []Action, expiredAt int64) error {
	if strings.TrimSpace(system) == "" {
		return invalid(op, "system is empty")
	}
	if strings.TrimSpace(subject.Type) == "" || strings.TrimSpace(subject.ID) == "" {
		return invalid(op, "subject type and id must be set")
	}
	if len(actions) == 0 {
		return invalid(op, "no actions")
	}
	for i, a := range actions {
		if strings.TrimSpace(a.ID) == "" {
			return invalid(op, "action %d has an empty id", i)
		}
	}
	if expiredAt < 0 || expiredAt > PermanentExpiry {
		return invalid(op, "expired_at %d is outside 0..%d", expiredAt, PermanentExpiry)
	}
	return nil
}

func (r BatchInstanceRequest) body() (string, batchInstanceBody, error) {
	op, err := operationName(r.Operate, opGrant, opRevoke)
	if err != nil {
		return "", batchInstanceBody{}, err
	}
	if err := checkCommon(op, r.System, r.Subject, r.Actions, r.ExpiredAt); err != nil {
		return op, batchInstanceBody{}, err
	}
	for i, res := range r.Resources {
		if len(res.Instances) == 0 {
			return op, batchInstanceBody{}, emptyInstances(op, "resource %d (%s/%s) has no instances", i, res.System, res.Type)
		}
		for j, in := range res.Instances {
			if strings.TrimSpace(in.ID) == "" {
				return op, batchInstanceBody{}, invalid(op, "resource %d (%s/%s) instance %d has an empty id", i, res.System, res.Type, j)
			}
		}
	}
	resources := r.Resources
	if resources == nil {
		resources = []InstanceResource{} // IAM needs the key; [] means "no related resource type"
	}
	return op, batchInstanceBody{
		System: r.System, Operate: r.Operate, ExpiredAt: r.ExpiredAt,
		Subject: r.Subject, Actions: r.Actions, Resources: resources,
	}, nil
}

func (r BatchPathRequest) body() (string, batchPathBody, error) {
	op, err := operationName(r.Operate, opPathGrant, opPathRevoke)
	if err != nil {
		return "", batchPathBody{}, err
	}
	if err := checkCommon(op, r.System, r.Subject, r.Actions, r.ExpiredAt); err != nil {
		return op, batchPathBody{}, err
	}
	for i, res := range r.Resources {
		if len(res.Paths) == 0 {
			return op, batchPathBody{}, emptyInstances(op, "resource %d (%s/%s) has no paths", i, res.System, res.Type)
		}
		for j, p := range res.Paths {
			if len(p) == 0 {
				return op, batchPathBody{}, emptyInstances(op, "resource %d (%s/%s) path %d is empty", i, res.System, res.Type, j)
			}
		}
	}
	resources := r.Resources
	if resources == nil {
		resources = []PathResource{}
	}
	return op, batchPathBody{
		System: r.System, Operate: r.Operate, ExpiredAt: r.ExpiredAt,
		Subject: r.Subject, Actions: r.Actions, Resources: resources,
	}, nil
}

func (r CreatorActionRequest) check() error {
	op := opCreatorGrant
	if strings.TrimSpace(r.System) == "" || strings.TrimSpace(r.Type) == "" {
		return invalid(op, "system and type must be set")
	}
	if strings.TrimSpace(r.Creator) == "" {
		return invalid(op, "creator is empty")
	}
	if len(r.Instances) == 0 {
		return emptyInstances(op, "%s/%s has no instances", r.System, r.Type)
	}
	for i, in := range r.Instances {
		if strings.TrimSpace(in.ID) == "" {
			return invalid(op, "instance %d has an empty id", i)
		}
	}
	return nil
}

// SameSubject reports whether a and b are one subject as IAM compares them: the type exactly, the
// id without case (IAM's tables are utf8_general_ci, so a grant to "Alice" is alice's).
func SameSubject(a, b Subject) bool { return a.Type == b.Type && strings.EqualFold(a.ID, b.ID) }
