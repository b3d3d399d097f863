package bkiam

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// Reading grants back (see the package doc, "Reading grants back"). These routes belong to the IAM backend, reached through
// the API gateway only: ESB has none of them. They answer the backend envelope {code, message,
// data} with HTTP 200 for errors too, and speak the backend's own policy ids, never the SaaS
// policy_id that a grant returns.

// PolicyKind chooses which of an action's policy lists to read.
type PolicyKind string

const (
	// PolicyKindABAC is the default list: every policy stored as an expression.
	PolicyKindABAC PolicyKind = "abac"
	// PolicyKindRBAC is the list of ?type=rbac: a group's single-type instance grants of an action
	// whose auth_type is rbac or all, which IAM stores as RBAC relations and leaves out of the
	// default list.
	PolicyKindRBAC PolicyKind = "rbac"
)

// ErrReadNeedsGateway is returned, before any I/O, by the reads of a client configured for ESB:
// the policy-list API is served by the API gateway only.
var ErrReadNeedsGateway = errors.New("bkiam: reading grants back (drift detection) needs the API gateway: " +
	"ESB has no policy-list API; set apigw_url")

// ScanPageSize is the page size of ScanPolicies: the largest the backend accepts, so a scan costs
// ceil(count/500) calls.
const ScanPageSize = 500

// scanSlackPages bounds how far a scan may run past the pages its first answer announced
// (policies granted while it runs are appended at the end) before it gives up as inconsistent.
const scanSlackPages = 100

// Policy is one row of a policy list.
type Policy struct {
	// ID is the backend id (never the SaaS policy_id): stable while the policy exists, new after
	// it was emptied and granted again.
	ID          int64
	Subject     Subject
	SubjectName string
	Action      string
	// Expression is everything the subject holds for the action, merged (see internal/policyexpr).
	Expression json.RawMessage
	// ExpiredAt is unix seconds; a policy with ExpiredAt <= now is expired and counts as gone.
	ExpiredAt int64
}

// PolicyPage is one page of a policy list.
type PolicyPage struct {
	// Count is the number of policies in the whole list, rows of unresolvable subjects included.
	Count int
	// Timestamp is the list's metadata timestamp: policies expired before it were left out.
	// Pass it back for later pages so that every page is cut at the same time.
	Timestamp int64
	// Results is nil when IAM answered null (empty, or past the end). It can be shorter than the
	// page size before the end: IAM skips rows whose subject it cannot resolve.
	Results []Policy
}

// policyListPath is the route path (relative to the gateway base) of a policy list: the route the
// official SDKs use. The newer /api/v1/open/systems/{system}/policies/ cannot be read through a
// real gateway (see the package doc), so it is not offered.
func policyListPath(system string) string {
	return "/api/v1/systems/" + url.PathEscape(system) + "/policies"
}

// ListPolicies fetches one page of the policy list of an action: every subject's policies, users
// and groups, several rows for one subject where it has them (a group's custom policy and its
// permission templates' are separate rows). kind picks the default (ABAC) list or the RBAC one.
// page starts at 1; pageSize is 10–500; timestamp 0 lets IAM pick its default (today 00:00,
// server time). Expired rows can still be listed: callers drop ExpiredAt <= now.
func (c *Client) ListPolicies(ctx context.Context, kind PolicyKind, system, action string, page, pageSize int, timestamp int64) (*PolicyPage, error) {
	if c.cfg.transport != TransportGateway {
		return nil, ErrReadNeedsGateway
	}
	path := policyListPath(system)
	switch {
	case kind != PolicyKindABAC && kind != PolicyKindRBAC:
		return nil, invalid("policy list", "kind is %q, want %q or %q", kind, PolicyKindABAC, PolicyKindRBAC)
	case strings.TrimSpace(system) == "":
		return nil, invalid("policy list", "system is empty")
	case strings.TrimSpace(action) == "":
		return nil, invalid("policy list", "action is empty")
	case page < 1:
		return nil, invalid("policy list", "page is %d, want >= 1", page)
	case pageSize < 10 || pageSize > ScanPageSize:
		return nil, invalid("policy list", "page size is %d, want 10 to %d", pageSize, ScanPageSize)
	case timestamp < 0:
		return nil, invalid("policy list", "timestamp is %d, want >= 0", timestamp)
	}
	q := url.Values{}
	q.Set("action_id", action)
	if kind == PolicyKindRBAC {
		q.Set("type", string(PolicyKindRBAC)) // the default list is abac; left out, as the SDKs do
	}
	q.Set("page", strconv.Itoa(page))
	q.Set("page_size", strconv.Itoa(pageSize))
	if timestamp > 0 {
		q.Set("timestamp", strconv.FormatInt(timestamp, 10))
	}
	// The operation names the route, so that every error says which call failed.
	op := fmt.Sprintf("policy list GET %s for action %s, page %d", path, action, page)
	if kind == PolicyKindRBAC {
		op = fmt.Sprintf("policy list GET %s?type=rbac for action %s, page %d", path, action, page)
	}

	var out *PolicyPage
	e := c.get(ctx, op, path, q, func(d []byte) (int, error) {
		p, err := decodePolicyPage(d, action)
		if err != nil {
			return 0, err
		}
		out = p
		return len(p.Results), nil
	})
	if e != nil {
		c.explainReadError(e, path, system, "reading grants back")
		return nil, e
	}
	return out, nil
}

// ScanPolicies reads an action's whole policy list: pages of 500, the first page's metadata
// timestamp reused for every later page (so that all pages are cut at the same time), until
// page*500 >= count. Rows of subjects IAM cannot resolve are skipped but counted, so a page can
// be short, or even null, before the end: the count, not the length of a page, says when the list
// ends. A policy listed twice (rows shifting between pages while policies are deleted) is kept
// once. Expired rows are returned: callers drop ExpiredAt <= now. IAM lists the rows that expired
// since today 00:00 of its own clock; ScanPoliciesSince reaches further back.
func (c *Client) ScanPolicies(ctx context.Context, kind PolicyKind, system, action string) ([]Policy, error) {
	return c.ScanPoliciesSince(ctx, kind, system, action, 0)
}

// ExpiredWindow is how far back ExpiredSince reaches: IAM's list refuses a timestamp more than a
// day before today 00:00 of its own clock (1901400), whatever its time zone, and now less a day
// is never earlier than that; ten minutes spare a client whose clock runs behind IAM's.
const ExpiredWindow = 24*time.Hour - 10*time.Minute

// ExpiredSince is the oldest list timestamp IAM accepts whatever its time zone, at now: the
// policy list then shows the rows that expired since (at least the last 23 hours and 50 minutes).
func ExpiredSince(now time.Time) int64 { return now.Add(-ExpiredWindow).Unix() }

// ScanPoliciesSince is ScanPolicies listing the rows that expired after since (unix seconds; 0
// lets IAM pick today 00:00 of its clock), as IAM's timestamp parameter does.
func (c *Client) ScanPoliciesSince(ctx context.Context, kind PolicyKind, system, action string, since int64) ([]Policy, error) {
	return c.scanPolicies(ctx, kind, system, action, since, 0)
}

// scanPolicies is ScanPoliciesSince reading no further than the first page of a list that
// announces more than limit policies (0: no limit): it then answers that page's rows and a
// *ScanLimitError.
func (c *Client) scanPolicies(ctx context.Context, kind PolicyKind, system, action string, since int64, limit int) ([]Policy, error) {
	var all []Policy
	seen := map[int64]int{} // backend id → index in all
	ts := since
	lastPage := 0
	for page := 1; ; page++ {
		p, err := c.ListPolicies(ctx, kind, system, action, page, ScanPageSize, ts)
		if err != nil {
			return nil, err
		}
		if page == 1 {
			if p.Timestamp > 0 {
				ts = p.Timestamp
			}
			lastPage = pagesFor(p.Count) + scanSlackPages
		}
		for _, row := range p.Results {
			if i, ok := seen[row.ID]; ok {
				all[i] = row
				continue
			}
			seen[row.ID] = len(all)
			all = append(all, row)
		}
		if page*ScanPageSize >= p.Count {
			return all, nil
		}
		if limit > 0 && p.Count > limit {
			return all, &ScanLimitError{System: system, Action: action, Count: p.Count, Limit: limit}
		}
		if p.Results == nil {
			// A whole page of unresolvable subjects; the list goes on (see above).
			tflog.SubsystemDebug(c.logContext(ctx), logSubsystem, "IAM policy list page without resolvable rows",
				map[string]any{"system": system, "action": action, "page": page, "count": p.Count})
		}
		if page >= lastPage {
			return nil, fmt.Errorf("%w: the policy list of action %s in system %s still announces %d policies after %d pages of %d; giving up",
				ErrUnexpectedResponse, action, system, p.Count, page, ScanPageSize)
		}
	}
}

// pagesFor is ceil(count / ScanPageSize), at least 1.
func pagesFor(count int) int {
	return max(1, (count+ScanPageSize-1)/ScanPageSize)
}

// get sends one GET to the gateway through the shared machinery (retries, request ids, logging,
// redirects not followed) and hands a successful answer's data to decode, which returns the
// number of policies read (for the log). An answer without data is malformed.
func (c *Client) get(ctx context.Context, op, path string, q url.Values, decode func([]byte) (int, error)) *Error {
	u := c.cfg.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	_, e := c.backendCall(ctx, op, http.MethodGet, u, nil, decode)
	return e
}

// backendCall is one call to a backend route (wire nil for a GET): the answer's raw body, and its
// data handed to decode, which returns how many items it read (for the log).
func (c *Client) backendCall(ctx context.Context, op, method, u string, wire []byte, decode func([]byte) (int, error)) ([]byte, *Error) {
	ctx = c.logContext(ctx)
	st := &callState{op: op, url: u, start: time.Now()}
	resp, raw, e := c.roundTrip(ctx, st, method, wire)
	if e != nil {
		return nil, e
	}
	defer resp.Body.Close() // the replayable copy left by peekBody; closing it is a no-op
	n, decoded := 0, false
	e = c.interpretInto(op, resp, raw, func(d []byte) error {
		decoded = true
		var err error
		n, err = decode(d)
		return err
	})
	if e == nil && !decoded {
		e = &Error{Operation: op, Transport: c.cfg.transport, Layer: LayerIAM, HTTPStatus: resp.StatusCode,
			RequestID: attemptRequestID(resp), GatewayRequestID: c.cleanField(resp.Header.Get(headerBkapiRequestID)),
			kind: kindMalformed, Message: "no data in a successful answer: " + c.snippet(raw)}
	}
	if e != nil {
		e.Attempts = st.attempts
		st.logResult(ctx, c, 0, e)
		return nil, e
	}
	st.logResult(ctx, c, n, nil)
	return raw, nil
}

// explainReadError adds to e what the user can do about the failures peculiar to reads; what
// names the read ("reading grants back"). The advice goes into Message, so that it is part of the
// *Error itself.
func (c *Client) explainReadError(e *Error, path, system, what string) {
	var advice string
	switch {
	case e.kind == kindRedirect:
		advice = fmt.Sprintf("GET %s was redirected; check apigw_url (the IAM gateway base with its stage, "+
			"e.g. https://bkapi.example.com/api/bk-iam/prod)", path)
	case e.kind == kindCode && e.Code == 1901401:
		advice = fmt.Sprintf("%s; the app %s is not a client of system %s: %s needs the app "+
			"registered as a client of the system in IAM (the system's \"clients\")", e.Message, c.cfg.AppCode, system, what)
	case e.kind == kindCode && e.Code == 1901404:
		advice = e.Message + "; the action or the system is unknown to IAM: check the ids"
	default:
		return
	}
	e.Message = c.cleanMessage(advice)
}

// wirePolicy is a row of a policy list as the backend sends it; the action is the list's.
type wirePolicy struct {
	ID      *int64 `json:"id"`
	Subject *struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"subject"`
	Expression pageSlice `json:"expression"`
	ExpiredAt  *int64    `json:"expired_at"`
}

// pageSlice is a JSON value kept as the slice of the page it was read
// from, not a copy (json.RawMessage copies): a policy list page is read
// with json.Unmarshal from a buffer of its own, which nothing reuses, so
// each row's expression can share it. A listing of 10 000 grants then
// copies no expression (make bench).
type pageSlice []byte

func (p *pageSlice) UnmarshalJSON(data []byte) error {
	*p = data //nolint:gocritic // the buffer is the page's, read by json.Unmarshal alone (see pageSlice)
	return nil
}

// policy checks a row: a row without its id, subject, expression or expiry cannot be matched or
// judged, and guessing would report a grant as present or gone when it is not.
func (w wirePolicy) policy(action string) (Policy, error) {
	switch {
	case w.ID == nil || *w.ID <= 0:
		return Policy{}, errors.New("a policy without a positive id")
	case w.Subject == nil || w.Subject.Type == "" || w.Subject.ID == "":
		return Policy{}, fmt.Errorf("policy %d without a subject type and id", *w.ID)
	case len(bytes.TrimSpace(w.Expression)) == 0 || bytes.Equal(bytes.TrimSpace(w.Expression), []byte("null")):
		return Policy{}, fmt.Errorf("policy %d without an expression", *w.ID)
	case w.ExpiredAt == nil:
		return Policy{}, fmt.Errorf("policy %d without expired_at", *w.ID)
	case action == "":
		return Policy{}, fmt.Errorf("policy %d without an action", *w.ID)
	}
	return Policy{ID: *w.ID, Subject: Subject{Type: w.Subject.Type, ID: w.Subject.ID}, SubjectName: w.Subject.Name,
		Action: action, Expression: json.RawMessage(w.Expression), ExpiredAt: *w.ExpiredAt}, nil
}

// decodePolicyPage decodes a list page's data. A missing count is an error: the scan's end is
// judged on it.
func decodePolicyPage(d []byte, action string) (*PolicyPage, error) {
	var w struct {
		Metadata struct {
			Timestamp int64 `json:"timestamp"`
			Action    struct {
				ID string `json:"id"`
			} `json:"action"`
		} `json:"metadata"`
		Count   *int         `json:"count"`
		Results []wirePolicy `json:"results"`
	}
	if err := json.Unmarshal(d, &w); err != nil {
		return nil, fmt.Errorf("data is not a policy list (%w)", err)
	}
	switch {
	case w.Count == nil || *w.Count < 0:
		return nil, errors.New("a policy list without a count")
	case w.Metadata.Action.ID != "" && w.Metadata.Action.ID != action:
		return nil, fmt.Errorf("a policy list of action %s, not the requested %s", w.Metadata.Action.ID, action)
	}
	p := &PolicyPage{Count: *w.Count, Timestamp: w.Metadata.Timestamp}
	if w.Results != nil {
		p.Results = make([]Policy, 0, len(w.Results))
	}
	for _, r := range w.Results {
		pol, err := r.policy(action)
		if err != nil {
			return nil, fmt.Errorf("a policy list with %w", err)
		}
		p.Results = append(p.Results, pol)
	}
	return p, nil
}
