// migrates: opts.CheckDevices(p)
package caller

import "github.com/pingnode/pingnode/pingstatus"

// Check judges a patch built by hand.
func Check(opts pingstatus.Options, p *pingstatus.NodePatch) (*pingstatus.NodePatch, []pingstatus.Warning) {
	return opts.CheckDevices(p)
}
