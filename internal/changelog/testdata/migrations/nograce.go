// migrates: Grace: -1
// still compiles: a Grace below zero now means the default grace, not none
package caller

import "github.com/pingnode/pingnode/nodeapply"

// Options turn Ready False at the first failed ping.
var Options = nodeapply.Options{Grace: -1}
