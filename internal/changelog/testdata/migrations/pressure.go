// migrates: PressureConditions: true
package caller

import "github.com/pingnode/pingnode/nodeapply"

// Options set the pressure conditions False.
var Options = nodeapply.Options{PressureConditions: true}
