package pingstatus

// The names of the rules of the package comment, which each [Warning]
// carries in its Rule: one constant a rule, its value the name the
// contract gives it.
const (
	ruleReplyUnusable     = "reply-unusable"
	ruleReplyEncoding     = "reply-encoding"
	ruleKeyRepeated       = "key-repeated"
	ruleValueType         = "value-type"
	ruleQuantityValid     = "quantity-valid"
	ruleResourceNonzero   = "resource-nonzero"
	ruleResourceFull      = "resource-full"
	ruleResourceWhole     = "resource-whole"
	ruleResourceBasis     = "resource-basis"
	ruleAcceleratorName   = "accelerator-name"
	ruleTaintValid        = "taint-valid"
	ruleTaintUnique       = "taint-unique"
	ruleTaintReserved     = "taint-reserved"
	ruleListLimit         = "list-limit"
	ruleLabelValid        = "label-valid"
	ruleLabelNamespace    = "label-namespace"
	ruleResourceHugepages = "resource-hugepages"
	rulePatchFields       = "patch-fields"
	ruleDeviceName        = "device-name"
	ruleDeviceFields      = "device-fields"
	ruleDeviceTaints      = "device-taints"
	ruleDeviceKept        = "device-kept"
	ruleDeviceLimit       = "device-limit"
	ruleDeviceNotCounted  = "device-not-counted"
	ruleKeyNearMiss       = "key-near-miss"
	rulePartEntries       = "part-entries"
	rulePartFields        = "part-fields"
	rulePartNoSum         = "part-no-sum"
)
