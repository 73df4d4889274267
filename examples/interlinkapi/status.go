package main

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// cache is interLink's status cache (pkg/interlink/api/func.go,
// PodStatuses, a global there): the last status the sidecar gave of each
// pod, by the UID in that status.
type cache struct {
	mu       sync.Mutex
	statuses map[string]podapi.PodStatus
}

// toForward returns the pods of asked to ask the sidecar about: those
// the caller says are Running or Pending, and those with no status
// cached (status.go). The phase is the caller's, not the cached status's.
func (c *cache) toForward(asked []*corev1.Pod) []*corev1.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	var forward []*corev1.Pod
	for _, pod := range asked {
		_, cached := c.statuses[string(pod.UID)]
		if pod.Status.Phase == corev1.PodRunning || pod.Status.Phase == corev1.PodPending || !cached {
			forward = append(forward, pod)
		}
	}
	return forward
}

// update caches each of statuses by its UID, pods not asked about among
// them (func.go, updateStatuses).
func (c *cache) update(statuses []podapi.PodStatus) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range statuses {
		c.statuses[s.UID] = s
	}
}

// drop forgets the status of the pod whose UID is uid (func.go,
// deleteCachedStatus).
func (c *cache) drop(uid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.statuses, uid)
}

// answer returns the cached status of each pod of asked, in its order, a
// pod asked twice twice, a pod without one left out; for no pods asked,
// every cached status, in no order (status.go). It is nil when there is
// none, which is sent as null.
func (c *cache) answer(asked []*corev1.Pod) []podapi.PodStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []podapi.PodStatus
	if len(asked) == 0 {
		for _, s := range c.statuses {
			out = append(out, s)
		}
		return out
	}
	for _, pod := range asked {
		if s, ok := c.statuses[string(pod.UID)]; ok {
			out = append(out, s)
		}
	}
	return out
}

// status answers a list of pods with their statuses, as status.go does:
// it asks the sidecar's GET /status about those [cache.toForward]
// returns, caches its answer, and answers from the cache
// ([cache.answer]). A body that is not a list of pods is logged and read
// as what it decoded to, often no pods: every cached status. A sidecar
// that fails is relayed as [sidecar.relay] relays it; one that answers
// 200 with what is not a list of statuses leaves a 200 with no body (the
// relay has written the status).
func (a *api) status(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	var asked []*corev1.Pod
	if err := json.Unmarshal(body, &asked); err != nil {
		a.log.Printf("status: %v", err)
	}
	for _, pod := range asked {
		if pod == nil {
			// interLink dereferences the nil pod and net/http drops the
			// connection without an answer; there the cache's lock stays
			// held, so that every later /status, /delete and /updateCache
			// waits forever. The double drops the connection only.
			panic(http.ErrAbortHandler)
		}
	}
	if forward := a.cache.toForward(asked); len(forward) > 0 {
		out, err := json.Marshal(forward)
		if err != nil {
			a.log.Printf("status: %v", err)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		got, err := a.sidecar.call(context.Background(), w, http.MethodGet, "/status", out, sessionOf(r), kept)
		if err != nil {
			a.log.Printf("status: %v", err)
			return
		}
		var statuses []podapi.PodStatus
		if err := json.Unmarshal(got, &statuses); err != nil {
			a.log.Printf("status: the sidecar's answer: %v", err)
			return
		}
		a.cache.update(statuses)
	}
	out, err := json.Marshal(a.cache.answer(asked))
	if err != nil {
		a.log.Printf("status: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(out)
}
