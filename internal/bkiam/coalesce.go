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
// after a merged call whose outcome is unknown is safe. A request waits
// for companions only while others of its kind keep coming (see gather),
// so a lone request leaves at once.
type Coalescer struct {
	client *Client
	window time.Duration
	limits map[Operation]int

	mu     sync.Mutex
	queues map[string]*coalesceQueue
	// streams keeps, per key, how requests have been arriving.
	streams map[string]*arrivals
	// inside counts the requests in BatchInstance now (waiting or in a
	// call); peak is the most there have been at once, an estimate of
	// how many resources Terraform applies in parallel.
	inside, peak int
}

type coalesceQueue struct {
	waiting []*coalesceWaiter
}

type coalesceWaiter struct {
	ctx     context.Context
	req     BatchInstanceRequest
	arrived time.Time
	done    chan coalesceResult
}

// arrivals follows the stream of requests of one key: when the last one
// came, and the typical gap between two (0 when there is no stream).
type arrivals struct {
	last time.Time
	gap  time.Duration
}

// note records an arrival at now. A gap longer than the window ends the
// stream: what comes after it is a new, lone request.
func (a *arrivals) note(now time.Time, window time.Duration) {
	switch g := now.Sub(a.last); {
	case a.last.IsZero() || g > window:
		a.gap = 0
	case a.gap == 0:
		a.gap = g
	default:
		a.gap = (7*a.gap + 3*g) / 10 // recent gaps count most
	}
	a.last = now
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
		client:  client,
		window:  window,
		limits:  map[Operation]int{OperationGrant: grantLimit, OperationRevoke: revokeLimit},
		queues:  map[string]*coalesceQueue{},
		streams: map[string]*arrivals{},
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
	w := &coalesceWaiter{ctx: ctx, req: req, arrived: time.Now(), done: make(chan coalesceResult, 1)}
	c.mu.Lock()
	q, running := c.queues[key]
	if !running {
		q = &coalesceQueue{}
		c.queues[key] = q
	}
	q.waiting = append(q.waiting, w)
	stream, ok := c.streams[key]
	if !ok {
		stream = &arrivals{}
		c.streams[key] = stream
	}
	stream.note(w.arrived, c.window)
	c.inside++
	c.peak = max(c.peak, c.inside)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.inside--
		c.mu.Unlock()
	}()
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

// work sends the queue's requests in merged calls until it is empty,
// gathering companions before each call.
func (c *Coalescer) work(key string, q *coalesceQueue) {
	for {
		c.gather(key, q)
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

// gather waits for companions of the queue's oldest request, and returns
// when the next call should leave:
//   - at once when the request is lone: none of its kind came within the
//     window before it, so a single resource's apply never waits;
//   - at once when half of the requests Terraform can have in flight are
//     waiting (peak, the most there have been at once, is Terraform's
//     parallelism): at scale Terraform finishes each resource under a
//     global lock, about 20 ms each at 1000 resources, and two alternating
//     half-batches keep that lock busy where one whole batch would leave
//     it idle while its call is answered;
//   - when the stream pauses for three of its typical gaps: Terraform
//     hands resources over one by one, each after the previous one's
//     bookkeeping, so at scale they arrive spread out, not together;
//   - at the latest when the oldest request has waited the window.
func (c *Coalescer) gather(key string, q *coalesceQueue) {
	for {
		c.mu.Lock()
		if len(q.waiting) == 0 {
			c.mu.Unlock()
			return
		}
		deadline := q.waiting[0].arrived.Add(c.window)
		stream := *c.streams[key]
		half := len(q.waiting) >= max(2, c.peak/2)
		c.mu.Unlock()
		if stream.gap == 0 || half {
			return
		}
		wait := min(time.Until(stream.last.Add(3*stream.gap)), time.Until(deadline))
		if wait <= 0 {
			return
		}
		time.Sleep(wait)
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
	start := time.Now()
	ctx := batch[0].ctx
	defer func() {
		took := time.Since(start)
		// Where a request's time goes, for make bench's trace (and anyone
		// asking why an apply is slow): waiting for companions and for the
		// calls before it, then the call.
		var waited time.Duration
		for _, w := range batch {
			waited += start.Sub(w.arrived)
		}
		tflog.Debug(ctx, "IAM call of merged requests answered", map[string]any{
			"requests": len(batch), "operation": string(batch[0].req.Operate),
			"waited_ms_mean": float64(waited.Microseconds()) / 1000 / float64(len(batch)),
			"waited_ms_max":  float64(start.Sub(batch[0].arrived).Microseconds()) / 1000,
			"call_ms":        float64(took.Microseconds()) / 1000,
		})
	}()
	if len(batch) == 1 {
		policies, err := c.client.BatchInstance(ctx, batch[0].req)
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
