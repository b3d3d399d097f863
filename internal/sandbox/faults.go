package sandbox

import (
	"fmt"
	"sync"
)

// Faults is the body of POST /_sandbox/faults. The zero value clears every fault.
type Faults struct {
	LatencyMS int        `json:"latency_ms,omitempty"`
	Fail      *FailFault `json:"fail,omitempty"`
	RateLimit *RateFault `json:"rate_limit,omitempty"`
	Drop      *DropFault `json:"drop,omitempty"`
	Slow      *SlowFault `json:"slow,omitempty"`
	// ModelFail fails the next Count model queries (After is ignored). The other faults never
	// touch the model query, so that the counts of a fault test are the same with or without the
	// provider's model checks.
	ModelFail *FailFault `json:"model_fail,omitempty"`
	// SpareReads keeps Fail, RateLimit, Drop and Slow off the policy reads (the policy list and
	// get routes, and the backend's access checks), which then neither fail nor count towards
	// After: a test of the writes gets the same faults whatever a plan reads first (the
	// provider's plan-time expiry check reads the policies of each user it grants to).
	SpareReads bool `json:"spare_reads,omitempty"`
}

// FailFault: after After further authorization requests have succeeded, the next Count fail with
// HTTP Status (gateway; ESB answers HTTP 200 like the real ESB) and body code Code. With Body "html"
// they answer HTTP Status with an HTML error page instead, on both transports, as a reverse proxy in
// front of IAM does (Code is then unused but still required, to keep one shape). Message, when set,
// is the envelope's message instead of "fault injected by the sandbox": IAM's own words for an
// answer the store would not give then (the ownership 403 for a group that is there).
type FailFault struct {
	After   int    `json:"after"`
	Count   int    `json:"count"`
	Status  int    `json:"status"`
	Code    int    `json:"code"`
	Body    string `json:"body,omitempty"`
	Message string `json:"message,omitempty"`
}

// DropFault: after After successes, the next Count requests get no answer: the connection is reset
// (TCP RST). With Served, each is carried out first and only its answer is lost, the case where a
// client cannot know what happened.
type DropFault struct {
	After  int  `json:"after"`
	Count  int  `json:"count"`
	Served bool `json:"served,omitempty"`
}

// SlowFault: after After successes, the next Count requests take DelayMS longer, then are carried
// out whether or not the client still waits, as a real server does when a client times out.
type SlowFault struct {
	After   int `json:"after"`
	Count   int `json:"count"`
	DelayMS int `json:"delay_ms"`
}

// RateFault: after After successes, the next Count are rate limited (gateway 429 + 1642902,
// ESB 200 + 1306429), with Retry-After: RetryAfterS.
type RateFault struct {
	After       int `json:"after"`
	Count       int `json:"count"`
	RetryAfterS int `json:"retry_after_s"`
}

func (f Faults) validate() error {
	if f.LatencyMS < 0 || f.LatencyMS > 600000 {
		return fmt.Errorf("latency_ms: must be between 0 and 600000")
	}
	if f.Fail != nil {
		if f.Fail.After < 0 || f.Fail.Count < 0 {
			return fmt.Errorf("fail: after and count must not be negative")
		}
		if f.Fail.Status < 100 || f.Fail.Status > 599 {
			return fmt.Errorf("fail.status: %d is not an HTTP status", f.Fail.Status)
		}
		if f.Fail.Code == 0 {
			return fmt.Errorf("fail.code: required (a non-zero error code)")
		}
		if f.Fail.Body != "" && f.Fail.Body != "html" {
			return fmt.Errorf(`fail.body: %q is not a body kind (only "html", or absent for the JSON envelope)`, f.Fail.Body)
		}
	}
	if f.ModelFail != nil {
		if f.ModelFail.Count < 0 || f.ModelFail.Status < 100 || f.ModelFail.Status > 599 || f.ModelFail.Code == 0 {
			return fmt.Errorf("model_fail: count must not be negative, status must be an HTTP status, code non-zero")
		}
		if f.ModelFail.Body != "" && f.ModelFail.Body != "html" {
			return fmt.Errorf(`model_fail.body: %q is not a body kind (only "html", or absent for the JSON envelope)`, f.ModelFail.Body)
		}
	}
	if f.Drop != nil && (f.Drop.After < 0 || f.Drop.Count < 0) {
		return fmt.Errorf("drop: after and count must not be negative")
	}
	if f.Slow != nil && (f.Slow.After < 0 || f.Slow.Count < 0 || f.Slow.DelayMS < 0 || f.Slow.DelayMS > 600000) {
		return fmt.Errorf("slow: after and count must not be negative, delay_ms between 0 and 600000")
	}
	if f.RateLimit != nil && (f.RateLimit.After < 0 || f.RateLimit.Count < 0 || f.RateLimit.RetryAfterS < 0) {
		return fmt.Errorf("rate_limit: after, count and retry_after_s must not be negative")
	}
	return nil
}

// faultState tracks armed faults and the successes counted since they were set.
type faultState struct {
	mu        sync.Mutex
	cfg       Faults
	successes int
	failLeft  int
	rateLeft  int
	dropLeft  int
	slowLeft  int
	modelLeft int
}

func (fs *faultState) set(f Faults) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.cfg, fs.successes = f, 0
	fs.failLeft, fs.rateLeft, fs.dropLeft, fs.slowLeft, fs.modelLeft = 0, 0, 0, 0, 0
	if f.ModelFail != nil {
		fs.modelLeft = f.ModelFail.Count
	}
	if f.Fail != nil {
		fs.failLeft = f.Fail.Count
	}
	if f.RateLimit != nil {
		fs.rateLeft = f.RateLimit.Count
	}
	if f.Drop != nil {
		fs.dropLeft = f.Drop.Count
	}
	if f.Slow != nil {
		fs.slowLeft = f.Slow.Count
	}
}

func (fs *faultState) latencyMS() int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.cfg.LatencyMS
}

// injected is a fault to answer instead of serving the request.
type injected struct {
	rate *RateFault
	fail *FailFault
	drop *DropFault
	slow *SlowFault
}

// takeModel consumes one model_fail fault, if one is left.
func (fs *faultState) takeModel() *FailFault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.cfg.ModelFail != nil && fs.modelLeft > 0 {
		fs.modelLeft--
		return fs.cfg.ModelFail
	}
	return nil
}

// take decides whether this request fails by injection (rate limit first: the gateway limits before
// the SaaS sees the request; then failures, dropped connections, slow calls) and consumes one fault
// if so.
func (fs *faultState) take() *injected {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if r := fs.cfg.RateLimit; r != nil && fs.rateLeft > 0 && fs.successes >= r.After {
		fs.rateLeft--
		return &injected{rate: r}
	}
	if f := fs.cfg.Fail; f != nil && fs.failLeft > 0 && fs.successes >= f.After {
		fs.failLeft--
		return &injected{fail: f}
	}
	if d := fs.cfg.Drop; d != nil && fs.dropLeft > 0 && fs.successes >= d.After {
		fs.dropLeft--
		return &injected{drop: d}
	}
	if sl := fs.cfg.Slow; sl != nil && fs.slowLeft > 0 && fs.successes >= sl.After {
		fs.slowLeft--
		return &injected{slow: sl}
	}
	return nil
}

// sparesReads reports whether the faults leave the policy reads alone.
func (fs *faultState) sparesReads() bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.cfg.SpareReads
}

func (fs *faultState) success() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.successes++
}

// Stats is the body of GET /_sandbox/stats.
type Stats struct {
	Total               int            `json:"total"`
	Errors              int            `json:"errors"`
	Requests            map[string]int `json:"requests"`
	MaxInstancesPerCall int            `json:"max_instances_per_call"`
}

// Stat keys of Stats.Requests.
var statKeys = []string{"batch_instance:grant", "batch_instance:revoke", "batch_path:grant", "batch_path:revoke",
	"batch_resource_creator_action", "policy_list", "policy_get", "model_query",
	"policy_auth", "policy_auth_by_actions", "policy_auth_by_resources", "policy_query", "policy_query_by_actions", "user_groups",
	"grade_manager:create", "grade_manager:get", "grade_manager:update", "grade_manager:delete", "grade_manager:list",
	"group_policy:grant", "group_policy:revoke", "group_policy:list", "group_policy:delete", "group_policy:actions",
	"group:create", "group:list", "group:list_v1", "group:update", "group:delete",
	"member:list", "member:add", "member:delete", "member:expiry", "member_groups:details", "subject_template:list", "group_subject_template:list",
	"admin:subject_groups", "admin:cleanup"}

type statsState struct {
	mu sync.Mutex
	s  Stats
}

func newStats() Stats {
	s := Stats{Requests: map[string]int{}}
	for _, k := range statKeys {
		s.Requests[k] = 0
	}
	return s
}

// record counts one authorization request; key may be "" when the request was too malformed to tell
// its operation (it still counts in Total and Errors).
func (ss *statsState) record(key string, instances int, failed bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.s.Total++
	if failed {
		ss.s.Errors++
	}
	if key != "" {
		ss.s.Requests[key]++
	}
	ss.s.MaxInstancesPerCall = max(ss.s.MaxInstancesPerCall, instances)
}

func (ss *statsState) get() Stats {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	c := ss.s
	c.Requests = make(map[string]int, len(ss.s.Requests))
	for k, v := range ss.s.Requests {
		c.Requests[k] = v
	}
	return c
}

func (ss *statsState) reset() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.s = newStats()
}
