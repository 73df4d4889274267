package kuberules

import "strconv"

// Device names. A plugin describes groups of identical devices; the
// devices of a group are named after it, group-0, group-1, and so on, so
// that a name says which group a device belongs to and stays the same from
// one reply to the next (an allocation names a device, and must keep
// pointing at the same one). A device name must be a DNS label of at most
// 63 characters (the API server's rule for a ResourceSlice's devices);
// a group name of at most MaxDeviceGroupNameBytes leaves room for '-' and
// an index of MaxDeviceIndexDigits.
const (
	// MaxDeviceNameBytes is the longest device name: a DNS label.
	MaxDeviceNameBytes = 63
	// MaxDeviceIndexDigits is the most digits of a device's index in its
	// group: more than any count a reply may give.
	MaxDeviceIndexDigits = 6
	// MaxDeviceGroupNameBytes is the longest group name.
	MaxDeviceGroupNameBytes = MaxDeviceNameBytes - 1 - MaxDeviceIndexDigits
	// MaxDeviceIndex is the largest index a device name may carry.
	MaxDeviceIndex = 999999
)

// DeviceName returns the name of the device of group at index: group-index.
func DeviceName(group string, index int) string {
	return group + "-" + strconv.Itoa(index)
}

// SplitDeviceName returns the group and index of a device name that
// [DeviceName] could have made, and false for any other name: the index
// follows the last '-', in decimal without leading zeros, at most
// MaxDeviceIndex. It does not allocate.
func SplitDeviceName(name string) (group string, index int, ok bool) {
	dash := -1
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '-' {
			dash = i
			break
		}
	}
	if dash <= 0 {
		return "", 0, false
	}
	digits := name[dash+1:]
	if digits == "" || len(digits) > MaxDeviceIndexDigits || len(digits) > 1 && digits[0] == '0' {
		return "", 0, false
	}
	for i := range len(digits) {
		c := digits[i]
		if c < '0' || c > '9' {
			return "", 0, false
		}
		index = index*10 + int(c-'0')
	}
	return name[:dash], index, true
}
