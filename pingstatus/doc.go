// Package pingstatus turns a plugin's reply to a Virtual Kubelet provider's
// ping into a typed, validated [NodePatch], with a [Warning] for everything it
// had to refuse. It does no I/O, keeps no state and never panics: bytes in,
// a patch and warnings out.
//
// # The reply
//
// Every field is optional; an omitted field means "no news", and the node
// keeps what it has. Field names are interLink 0.6.2's:
//
//	{
//	  "status": "ok",
//	  "resources": {
//	    "cpu": "128",
//	    "memory": "512Gi",
//	    "pods": "1000",
//	    "accelerators": [
//	      { "resourceType": "nvidia.com/gpu", "available": "8" },
//	      { "resourceType": "xilinx.com/fpga", "available": "2" }
//	    ]
//	  },
//	  "taints": [
//	    { "key": "vendor.io/maintenance", "value": "true", "effect": "NoSchedule" }
//	  ]
//	}
//
// Quantities are Kubernetes quantity strings; JSON numbers are accepted too
// (a Python plugin may send "cpu": 128). "taints" absent or null leaves the
// node's taints alone; "taints": [] removes every taint the plugin set
// earlier. Unknown fields are ignored.
//
// A body that is not a JSON object (plain text such as "ok" or "0", an
// array, a string, a number, null, nothing) is a [Legacy] reply, the kind
// plugins sent before resources existed: an empty patch and no warning. A
// body that starts like an object but does not parse, or is larger than
// [Options.MaxBodyBytes], is [Unusable]: an empty patch and a warning.
//
// # The rules
//
// Each field is decoded and judged on its own, so a reply with a wrong
// "memory" still updates "cpu" and "taints". What is refused is left
// unchanged on the node, and a warning names its JSON path
// ("taints[2].effect") and what was done.
//
//  1. Quantities must parse and must not be negative (the API server would
//     reject the node, and with it every later status update), nor exceed
//     what a scheduler counts in an int64.
//  2. cpu, memory and pods of zero are refused unless [Options.AllowZero]:
//     a plugin that reports no cpu silently drains the node; the tool for
//     "take no pods" is a taint.
//  3. pods and accelerators must be whole numbers.
//  4. accelerators[].resourceType must be an extended resource name: a
//     domain-prefixed qualified name outside kubernetes.io, not starting with
//     "requests." (nvidia.com/gpu, xilinx.com/fpga). Zero is allowed: the
//     devices are gone. A type listed twice is summed.
//  5. taints[].key must be a qualified name and value a label value (empty
//     or at most 63 characters); an entry with a bad key is dropped, and one
//     with a bad value is dropped while the plugin's current taints with that
//     key are kept ([NodePatch.KeptTaintKeys]). An empty or unknown effect
//     becomes NoSchedule, the safe side.
//  6. Taints are unique by key and effect: of a repeated pair the last entry
//     is kept.
//  7. Keys that Kubernetes controllers own (node.kubernetes.io/*,
//     node.cloudprovider.kubernetes.io/*, node-role.kubernetes.io/*) and the
//     provider's protected keys ([DefaultProtectedKey] and
//     [Options.ProtectedKeys]) are dropped.
//  8. Over [Options.MaxAccelerators] or [Options.MaxTaints] entries, the
//     whole list is ignored.
//
// # For plugin authors
//
// [PingResponse] and its parts are the wire types; [PingResponse.Validate]
// reports what a provider would refuse, and [JSONSchema] is the same format
// as a JSON Schema (draft 2020-12) for plugins in other languages.
package pingstatus
