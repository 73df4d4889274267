package rights

import (
	resourcev1 "k8s.io/api/resource/v1"
)

// Confirm names what the backend's confirmation writes: the driver of
// the confirmation devices, and the DeviceClass that serves them. The
// jobs it makes are written as every pod's ([Jobs]).
type Confirm struct {
	Driver, Class string
}

// confirmRights are the rules of the backend's confirmation (-confirm),
// beside those of publishing devices, which cover some of them.
func (a Access) confirmRights() []Rule {
	c := a.Confirm
	var out []Rule
	if a.DRADriver == "" {
		out = append(out,
			rule(resourcev1.GroupName, "resourceslices", nil, "publish each node's confirmation device: read which slices of "+c.Driver+" exist at start, and create one for each node that has none (RBAC cannot name them: the API server makes their names up; -print-node-policy fences them to "+c.Driver+" and its nodes)", "list", "create"),
			rule(resourcev1.GroupName, "resourceclaims", nil, "watch the claims, for the shares of its nodes' confirmation devices they were given (RBAC cannot select claims by the pool of their devices, so every claim)", "list", "watch"))
	}
	return append(out,
		rule(resourcev1.GroupName, "resourceclaims/status", nil, "write the backend's confirmation or refusal of a pod to its claim's status, a server-side apply of the share's entry (RBAC cannot select claims by the pool of their devices)", "patch"),
		rule(resourcev1.GroupName, "resourceclaims/driver", []string{c.Driver}, "change the status.devices entries of "+c.Driver+" and of no other driver, as the API server checks it for each driver whose entries a status write changes (Kubernetes 1.37, KEP-4817: the verb arbitrary-node:patch on the driver's name); the allocation and the pods it is reserved for need resourceclaims/binding, which it has not", "arbitrary-node:patch"),
		rule(resourcev1.GroupName, "deviceclasses", nil, "create the DeviceClass "+c.Class+", which serves the confirmation devices as an extended resource, at start unless it exists (RBAC cannot name what does not exist yet; -print-node-policy fences it to that class)", "create"),
	)
}
