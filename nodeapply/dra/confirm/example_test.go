package confirm_test

import (
	"fmt"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// What a provider publishes: its node's confirmation device, in a pool
// of its own on the node, and the class that serves it as an extended
// resource, which a pod asks for with a classic request.
func ExampleClass() {
	class := confirm.Class("pingnode-confirmed", "backend.pingnode.io", "pingnode.io/confirmed")
	device := confirm.Device("confirm")
	fmt.Println(*class.Spec.ExtendedResourceName)
	fmt.Println(class.Spec.Selectors[0].CEL.Expression)
	fmt.Println(device.Name, device.BindingConditions, device.BindingFailureConditions)
	// Output:
	// pingnode.io/confirmed
	// device.driver == "backend.pingnode.io" && "confirmation" in device.attributes["pingnode.io"] && device.attributes["pingnode.io"].confirmation
	// confirm [pingnode.io/BackendRuns] [pingnode.io/BackendRefused]
}

// One step of a provider: two pods wait at PreBind on vk-0. The backend
// runs the first; the second has no job yet, and is started. A job of a
// pod bound elsewhere is removed.
func ExampleStep() {
	claims := []*resourcev1.ResourceClaim{} // the claims, from an informer
	allocations := confirm.Allocations(claims, "backend.pingnode.io")
	allocations = append(allocations, share("a", "vk-0", 0), share("b", "vk-0", 0)) // as if read

	jobs := []confirm.Job{ // what the backend says (interLink's GET /status)
		{Pod: "uid-a", Namespace: "hpc", Name: "a", Node: "vk-0", State: confirm.JobStarted},
		{Pod: "uid-z", Namespace: "hpc", Name: "z", Node: "vk-0", State: confirm.JobQueued},
	}
	bound := map[types.UID]string{"uid-z": "vk-1"} // the pods bound to nodes
	now := base.Add(10 * time.Second)

	res := confirm.Step(allocations, jobs, bound, now, confirm.Options{})
	for _, d := range res.Decisions {
		if patch := d.Patch(now); patch != nil {
			fmt.Printf("write %s: %s\n", d.Allocation.Claim, d.Reason) // apply patch to resourceclaims/status
		}
	}
	for _, s := range res.Start {
		fmt.Println("create", s) // interLink's POST /create, spec.nodeName = s.Node
	}
	for _, j := range res.Remove {
		fmt.Println("delete", j) // interLink's POST /delete
	}
	// Output:
	// write hpc/a-backend: BackendRuns
	// create hpc/b (uid-b) on "vk-0"
	// delete hpc/z (uid-z) on "vk-0": queued
}
