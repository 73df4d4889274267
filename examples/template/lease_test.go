package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// leaseTest is a renewer on a fake clientset, with a clock the test steps.
type leaseTest struct {
	t      *testing.T
	client *fake.Clientset
	r      *leaseRenewer
	now    time.Time
}

func newLeaseTest(t *testing.T, objects ...runtime.Object) *leaseTest {
	lt := &leaseTest{t: t, client: fake.NewClientset(objects...), now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	lt.r = newLeaseRenewer(lt.client, nodeName, func() time.Time { return lt.now }, slog.New(slog.NewTextHandler(t.Output(), nil)))
	return lt
}

// renewAfter steps the clock by d, renews, and returns the requests of
// the renewal, as "verb resource".
func (lt *leaseTest) renewAfter(d time.Duration) []string {
	lt.t.Helper()
	lt.now = lt.now.Add(d)
	lt.client.ClearActions()
	lt.r.renew(context.Background())
	var requests []string
	for _, a := range lt.client.Actions() {
		requests = append(requests, a.GetVerb()+" "+a.GetResource().Resource)
	}
	return requests
}

func (lt *leaseTest) lease() *coordinationv1.Lease {
	lt.t.Helper()
	lease, err := lt.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), nodeName, metav1.GetOptions{})
	if err != nil {
		lt.t.Fatal(err)
	}
	return lease
}

// TestLease: the Lease is created when missing, held and owned by the
// node, with a duration of 40 s, and renewed at each renewal with one
// update; a Lease deleted is created again.
func TestLease(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, UID: "uid-1"}}
	lt := newLeaseTest(t, node)
	if diff := cmp.Diff([]string{"get leases", "get nodes", "create leases"}, lt.renewAfter(0)); diff != "" {
		t.Errorf("first renewal's requests (-want +got):\n%s", diff)
	}
	lease := lt.lease()
	want := coordinationv1.LeaseSpec{
		HolderIdentity:       new(nodeName),
		LeaseDurationSeconds: new(int32(40)),
		RenewTime:            &metav1.MicroTime{Time: lt.now},
	}
	if diff := cmp.Diff(want, lease.Spec); diff != "" {
		t.Errorf("Lease spec (-want +got):\n%s", diff)
	}
	wantOwners := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: nodeName, UID: types.UID("uid-1")}}
	if diff := cmp.Diff(wantOwners, lease.OwnerReferences); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}

	if diff := cmp.Diff([]string{"update leases"}, lt.renewAfter(leaseRenew)); diff != "" {
		t.Errorf("a renewal's requests (-want +got):\n%s", diff)
	}
	if got := lt.lease().Spec.RenewTime.Time; !got.Equal(lt.now) {
		t.Errorf("renewTime = %v, want %v", got, lt.now)
	}

	if err := lt.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(context.Background(), nodeName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"update leases", "get leases", "get nodes", "create leases"}, lt.renewAfter(leaseRenew)); diff != "" {
		t.Errorf("requests after the Lease was deleted (-want +got):\n%s", diff)
	}
	if got := lt.lease().Spec.RenewTime.Time; !got.Equal(lt.now) {
		t.Errorf("renewTime = %v, want %v", got, lt.now)
	}
}

// TestLeaseBeforeTheNode: a Lease renewed before its node is registered
// has no owner; the first renewal after the node is there adds it.
func TestLeaseBeforeTheNode(t *testing.T) {
	lt := newLeaseTest(t)
	lt.renewAfter(0)
	if owners := lt.lease().OwnerReferences; len(owners) != 0 {
		t.Fatalf("owners = %v before the node exists", owners)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, UID: "uid-2"}}
	if _, err := lt.client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lt.renewAfter(leaseRenew)
	if owners := lt.lease().OwnerReferences; len(owners) != 1 || owners[0].UID != "uid-2" {
		t.Errorf("owners = %v, want the node", owners)
	}
}

// TestLeaseRetries: a renewal refused is tried again with backoff, and
// each try reads the Lease again.
func TestLeaseRetries(t *testing.T) {
	lt := newLeaseTest(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, UID: "uid-1"}})
	lt.renewAfter(0)
	refusals := 2
	lt.client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if refusals == 0 {
			return false, nil, nil
		}
		refusals--
		return true, nil, apierrors.NewServiceUnavailable("etcd is down")
	})
	want := []string{"update leases", "get leases", "update leases", "get leases", "update leases"}
	if diff := cmp.Diff(want, lt.renewAfter(leaseRenew)); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if got := lt.lease().Spec.RenewTime.Time; !got.Equal(lt.now) {
		t.Errorf("renewTime = %v, want %v", got, lt.now)
	}
}
