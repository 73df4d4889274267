package main

import (
	"sync"
	"time"
)

// statusCache is the one cache of the pod status endpoint, as
// interLink's Slurm plugin keeps it: an answer computed less than ttl
// ago is served again, verbatim, to any pod status request, whatever
// pods it asks about; the ping is not in it, nor an answer that failed.
// A ttl of 0 or less caches nothing. Its methods are safe for
// concurrent use.
type statusCache struct {
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex
	at   time.Time // when body was computed
	body []byte    // the last answer computed; nil before the first
}

// answer returns the cached answer, if it is less than ttl old, and
// otherwise the answer compute returns, encoded, which it caches from
// then on; or compute's error, which it does not cache, and the cached
// answer stays as it was, as the Slurm plugin keeps its cache and its
// timer when a refresh fails.
func (c *statusCache) answer(compute func() (any, error)) ([]byte, error) {
	if c.ttl <= 0 {
		v, err := compute()
		if err != nil {
			return nil, err
		}
		return encode(v), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.body != nil && c.now().Sub(c.at) < c.ttl {
		return c.body, nil
	}
	v, err := compute()
	if err != nil {
		return nil, err
	}
	c.body = encode(v)
	c.at = c.now() // after computing it, as the Slurm plugin sets its timer
	return c.body, nil
}
