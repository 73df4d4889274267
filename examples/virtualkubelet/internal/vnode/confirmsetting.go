package vnode

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// The settings of the backend's confirmation (Config.Confirm), and their
// check.

// schedulerBindingTimeout is the scheduler's default binding timeout
// (its DynamicResources plugin's bindingTimeout): a pod held at PreBind
// longer is given up on, so ConfirmDeadline is less, that the refusal,
// and the job's removal, come first.
const schedulerBindingTimeout = 600 * time.Second

// DefaultPartPin is -part-pin's default: interLink's Slurm plugin copies
// the pod's annotation slurm-job.vk.io/flags, verbatim, into the sbatch
// flags of its job, and --nodelist pins the job to a machine.
const DefaultPartPin = podapi.SlurmFlags + "=--nodelist="

// PinOf returns the annotation and the flag of a PartPin, "annotation=flag".
func PinOf(pin string) (annotation, flag string) {
	annotation, flag, _ = strings.Cut(pin, "=")
	return annotation, flag
}

// confirmProblem returns what is wrong with the settings of the backend's
// confirmation: a deadline of the scheduler's binding timeout or more,
// and a pin that is not an annotation key, "=" and a flag.
func (c Config) confirmProblem() error {
	if c.ConfirmDeadline < 0 || c.ConfirmDeadline >= schedulerBindingTimeout {
		return settingError("ConfirmDeadline", c.ConfirmDeadline, "want zero (the default) or more, and less than the scheduler's binding timeout, %v", schedulerBindingTimeout)
	}
	if annotation, flag := PinOf(c.PartPin); c.PartPin != "" && (len(validation.IsQualifiedName(annotation)) > 0 || flag == "") {
		return settingError("PartPin", c.PartPin, "want an annotation key, = and the flag that names a part, like %s, or nothing", DefaultPartPin)
	}
	return nil
}
