package nodeapply

// The names of the rules of the package comment, which each warning that
// Apply gives carries in its Rule: one constant a rule that warns, its
// value the name the contract gives it.
const (
	ruleResourceWritten = "resource-written"
	ruleTaintOwnership  = "taint-ownership"
	ruleTaintForeign    = "taint-foreign"
	ruleConditionSet    = "condition-set"
	ruleFailureKeeps    = "failure-keeps"
	ruleNodeValid       = "node-valid"
	ruleLabelOwnership  = "label-ownership"
	ruleLabelForeign    = "label-foreign"
	rulePartGone        = "part-gone"
)
