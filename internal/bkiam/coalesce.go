package bkiam

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// Coalescer merges concurrent batch_instance calls that differ only in
// their instances into shared calls, like the request batchers of other
// large providers. Terraform applies up to ten resources at once; when
// they grant the same actions to the same subject on the same resource
// type (a for_each over hosts, say), one call can carry them all, within
// the server's instance limits. IAM serialises calls for one subject
// anyway, so the merged call costs about as much as any one of them.
//
// Only calls with a single resource entry are merged: for a combined
// resource, the union of two products is not the product of the unions.
// A merged call that fails is retried request by request, so one bad
// request cannot fail the others, and each caller gets exactly its own
// result. Grant and revoke are idempotent, so sending a request again
// after a merged call whose outcome is unknown is safe.
type Coalescer struct {
	client *Client
	window time.Duration
	limits map[Operation]int

	mu     sync.Mutex
	queues map[string]*coalesceQueue
}

type coalesceQueue struct {
	waiting []*coalesceWaiter
}

type coalesceWaiter struct {
	ctx  context.Context
	req  BatchInstanceRequest
	done chan coalesceResult
}

type coalesceResult struct {
	policies []PolicyResult
	err      error
}

// NewCoalescer returns a Coalescer that lets a call wait up to window for
// others to join it (window 0 sends every call on its own), and merges at
// most grantLimit (revokeLimit) instances into one grant (revoke).
func NewCoalescer(client *Client, window time.Duration, grantLimit, revokeLimit int) *Coalescer {
	return &Coalescer{
		client: client,
		window: window,
		limits: map[Operation]int{OperationGrant: grantLimit, OperationRevoke: revokeLimit},
		queues: map[string]*coalesceQueue{},
	}
}

// BatchInstance is Client.BatchInstance, merged with concurrent calls of
// the same kind. It returns when the call carrying req has been answered.
func (c *Coalescer) BatchInstance(ctx context.Context, req BatchInstanceRequest) ([]PolicyResult, error) {
	key, ok := coalesceKey(req)
	if c.window <= 0 || !ok || len(req.Resources[0].Instances) >= c.limits[req.Operate] {
		return c.client.BatchInstance(ctx, req)
	}
	// The checks a merged call would make on req, made now, so that a
	// request that can never be sent fails alone and at once.
	if _, _, err := req.body(); err != nil {
		return nil, err
	}
	w := &coalesceWaiter{ctx: ctx, req: req, done: make(chan coalesceResult, 1)}
	c.mu.Lock()
	q, running := c.queues[key]
	if !running {
		q = &coalesceQueue{}
		c.queues[key] = q
	}
	q.waiting = append(q.waiting, w)
	c.mu.Unlock()
	if !running {
		go c.work(key, q)
	}
	// A request already on its way cannot be withdrawn: wait for its
	// answer whatever happens to ctx (the call itself is bounded by the
	// client's timeout and retries).
	r := <-w.done
	return r.policies, r.err
}

// coalesceKey is what two mergeable requests share: everything but the
// instances. Requests with several resource entries are not mergeable.
func coalesceKey(req BatchInstanceRequest) (string, bool) {
	if len(req.Resources) != 1 || len(req.Resources[0].Instances) == 0 {
		return "", false
	}
	actions := make([]string, len(req.Actions))
	for i, a := range req.Actions {
		actions[i] = a.ID
	}
	sort.Strings(actions)
	r := req.Resources[0]
	return strings.Join([]string{req.System, string(req.Operate), strconv.FormatInt(req.ExpiredAt, 10),
		req.Subject.Type, req.Subject.ID, strings.Join(actions, ","), r.System, r.Type}, "\x00"), true
}

// work sends the queue's requests in merged calls until it is empty. The
// first call waits for companions while they keep arriving — until a
// quarter of the window passes without one, or the window is over — so a
// lone call waits little and a burst from Terraform's parallel walk is
// caught whole; requests that arrive while a call is in flight ride in the
// next one, which leaves at once.
func (c *Coalescer) work(key string, q *coalesceQueue) {
	for {
		c.gather(q)
		c.mu.Lock()
		if len(q.waiting) == 0 {
			delete(c.queues, key)
			c.mu.Unlock()
			return
		}
		batch := c.take(q)
		c.mu.Unlock()
		c.send(batch)
	}
}

// gather waits while requests keep arriving: until a quarter of the window
// passes without a new one, or the window is over. Before every call, not
// just the first: when a call returns, Terraform hands the next resources
// over one by one as their predecessors finish.
func (c *Coalescer) gather(q *coalesceQueue) {
	deadline := time.Now().Add(c.window)
	quiet := c.window / 4
	for {
		c.mu.Lock()
		seen := len(q.waiting)
		c.mu.Unlock()
		wait := min(quiet, time.Until(deadline))
		if wait <= 0 {
			return
		}
		time.Sleep(wait)
		c.mu.Lock()
		arrived := len(q.waiting) > seen
		c.mu.Unlock()
		if !arrived {
			return
		}
	}
}

// take removes from the queue the requests of the next call: in arrival
// order, as many as fit the limit (always at least one).
func (c *Coalescer) take(q *coalesceQueue) []*coalesceWaiter {
	limit := c.limits[q.waiting[0].req.Operate]
	seen := map[string]bool{}
	var batch, rest []*coalesceWaiter
	for _, w := range q.waiting {
		extra := 0
		for _, in := range w.req.Resources[0].Instances {
			if !seen[in.ID] {
				extra++
			}
		}
		if len(batch) > 0 && len(seen)+extra > limit {
			rest = append(rest, w)
			continue
		}
		for _, in := range w.req.Resources[0].Instances {
			seen[in.ID] = true
		}
		batch = append(batch, w)
	}
	q.waiting = rest
	return batch
}

func (c *Coalescer) send(batch []*coalesceWaiter) {
	if len(batch) == 1 {
		policies, err := c.client.BatchInstance(batch[0].ctx, batch[0].req)
		batch[0].done <- coalesceResult{policies, err}
		return
	}
	merged := batch[0].req
	res := merged.Resources[0]
	seen := map[string]bool{}
	res.Instances = nil
	for _, w := range batch {
		for _, in := range w.req.Resources[0].Instances {
			if !seen[in.ID] {
				seen[in.ID] = true
				res.Instances = append(res.Instances, in)
			}
		}
	}
	merged.Resources = []InstanceResource{res}
	ctx := batch[0].ctx
	tflog.Debug(ctx, "coalesced IAM requests into one call", map[string]any{
		"requests": len(batch), "instances": len(res.Instances), "operation": string(merged.Operate),
	})
	policies, err := c.client.BatchInstance(ctx, merged)
	if err == nil {
		for _, w := range batch {
			w.done <- coalesceResult{policies, nil}
		}
		return
	}
	// One request may have spoiled the call for all: send each on its own.
	tflog.Debug(ctx, "coalesced IAM call failed; sending its requests one by one", map[string]any{"error": err.Error()})
	for _, w := range batch {
		policies, err := c.client.BatchInstance(w.ctx, w.req)
		w.done <- coalesceResult{policies, err}
	}
}
