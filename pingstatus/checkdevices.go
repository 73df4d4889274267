package pingstatus

// CheckDevices judges the devices of a patch built by hand, not by
// [Parse], by the rules Parse judges a reply's devices with, and returns
// the patch as Parse would have given it for the same devices: of a
// repeated group name the last group, the groups sorted by name, a group
// that breaks a rule moved to KeptDeviceGroups (its published devices
// kept as they are), and, over the limits of o, no devices at all
// (ReplaceDevices false). Each problem is a warning whose path starts
// with "patch.devices[" and the group's name. It returns p itself, and
// allocates nothing, when p's devices are valid and in order, as Parse
// gives them.
func (o Options) CheckDevices(p *NodePatch) (*NodePatch, []Warning) {
	return p, nil // TODO: the one implementation of the device rules, shared with Parse
}
