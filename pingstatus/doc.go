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
//	    "ephemeralStorage": "1800Gi",
//	    "hugepages": { "2Mi": "4Gi", "1Gi": "16Gi" },
//	    "basis": "available",
//	    "accelerators": [
//	      { "resourceType": "nvidia.com/gpu", "available": "8" },
//	      { "resourceType": "xilinx.com/fpga", "available": "2" }
//	    ]
//	  },
//	  "taints": [
//	    { "key": "vendor.io/maintenance", "value": "true", "effect": "NoSchedule" }
//	  ],
//	  "labels": {
//	    "feature.node.kubernetes.io/cpu-model.vendor_id": "AMD",
//	    "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"
//	  },
//	  "devices": [
//	    {
//	      "name": "a100",
//	      "count": 8,
//	      "attributes": {
//	        "productName": { "string": "NVIDIA A100-SXM4-80GB" },
//	        "type": { "string": "gpu" },
//	        "cudaComputeCapability": { "version": "8.0.0" },
//	        "multiprocessors": { "int": 108 },
//	        "migCapable": { "bool": true }
//	      },
//	      "capacity": { "memory": { "value": "80Gi" } },
//	      "taints": [
//	        { "key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule" }
//	      ]
//	    }
//	  ]
//	}
//
// Quantities are Kubernetes quantity strings; JSON numbers are accepted too
// (a Python plugin may send "cpu": 128). "taints" absent or null leaves the
// node's taints alone; "taints": [] removes every taint the plugin set
// earlier. "labels" is alike: absent or null leaves the node's labels
// alone, and {} removes every label the plugin set earlier; a label's
// value may be null, read as "". "devices" lists groups of identical
// devices, which a provider on Kubernetes 1.34 or later publishes as
// Dynamic Resource Allocation devices (a ResourceSlice) named after the
// group, a100-0, a100-1 and so on, each with the group's attributes,
// capacity and taints in resource.k8s.io/v1's own shape: an attribute has
// exactly one of "string", "int", "bool" and "version"; a taint says what
// is wrong with the devices (NVIDIA's driver's gpu.nvidia.com/xid: the GPU
// reported an error of that number), and a group without taints is
// healthy. "devices" absent or null leaves the published devices alone;
// [] says the backend has none. Unknown
// fields are ignored, in the reply and in each of its objects, so
// interLink and every provider before labels and devices read a reply
// with them as before; one that looks like a known field misspelled or
// misplaced is warned of (rule key-near-miss).
//
// The resources are what the backend can take right now: idle cpus, free
// memory and devices, room for more pods. The scheduler subtracts the
// requests of the pods bound to the node from its allocatable, so a
// provider that knows what its own pods hold on the backend adds it back
// (nodeapply's Ping.Held); otherwise those pods would count twice. A plugin
// that reports instead the total its backend gives the node, its pods'
// share included, says so with "basis": "total" in "resources" ("available"
// is the default); [NodePatch.Basis] carries it. interLink ignores the
// field, so a reply with it works with every provider. The basis holds
// for the devices' counts too: by default a count is the devices free
// now; with "total", all that the backend gives the node, those its pods
// hold included. A cpu or memory of "0" among figures of what is
// available says the backend is full now, as interLink's Slurm plugin
// says it (rule resource-full); a total of zero says no such thing.
//
// The scheduler fits a pod on a node by cpu, memory, the pod count,
// ephemeral-storage, hugepages-<size> and every extended resource, each
// as allocatable minus what the pods bound to the node request. A
// resource the node does not advertise counts as zero: a pod that
// requests any ephemeral-storage stays Pending on such a node for good
// ("Insufficient ephemeral-storage", kubernetes/kubernetes#63190),
// however much scratch disk the backend has. interLink's reply and its
// configuration name cpu, memory, pods and accelerators only, so no
// interLink virtual node advertises it. A plugin that knows its scratch
// space sends "ephemeralStorage", and its huge pages "hugepages".
//
// A backend of many machines may list them as its parts instead, each
// a node of its own that the scheduler can fit a pod on, for a provider
// that serves parts (rules part-entries, part-fields and part-no-sum):
//
//	{
//	  "status": "ok",
//	  "labels": { "feature.node.kubernetes.io/slurm-cluster": "hpc1" },
//	  "nodes": [
//	    { "name": "cn001", "resources": { "cpu": "1", "memory": "4000Mi" } },
//	    { "name": "cn002", "resources": { "cpu": "12", "memory": "48000Mi" },
//	      "taints": [ { "key": "slurm.example.com/drain", "effect": "NoSchedule" } ],
//	      "labels": { "feature.node.kubernetes.io/slurm-partition": "gpu" },
//	      "devices": [ { "name": "a100", "count": 2 } ] }
//	  ]
//	}
//
// A sum over machines takes a pod that no machine can run: 24 free cpus,
// one on each of 24 machines, take a 4-cpu pod that then never starts.
// Liqo (#2712), k3k (#610) and Karmada's estimator (KEP-521) met the same
// failure. A plugin sends parts when a pod must fit on one machine of its
// backend (an HPC cluster, a pool of VMs), and the sum when the backend
// fits a pod anywhere it has room (a cloud's serverless containers). A
// part is a machine, or a partition of identical machines that reports
// what one of them has free (its emptiest machine, never the partition's
// sum). A machine's cpu and memory take about 75 bytes of a reply, 125
// with a partition label, so [DefaultMaxParts] parts fit
// [DefaultMaxBodyBytes].
//
// A body that is not a JSON object (plain text such as "ok" or "0", an
// array, a string, a number, null, nothing) is a [Legacy] reply, the kind
// plugins sent before resources existed: an empty patch and no warning. A
// body that starts like an object but does not parse, even read as told in
// "What serializers write" below, or is larger than [Options.MaxBodyBytes],
// is [Unusable]: an empty patch and a warning.
//
// # How a reply is read
//
// [Parse] reads a reply in three stages, syntax then rules:
//
//   - The text: a body over [Options.MaxBodyBytes] is ignored; a byte
//     order mark is dropped and UTF-16 or UTF-32 text decoded (see "What
//     serializers write"); a body that is not a JSON object is [Legacy].
//   - The tree: the text is read once, in one pass, into a syntax tree of
//     its values: objects with their members, each key as spelled and a
//     key given twice given twice; arrays; and each string, number,
//     boolean and null as its token, written as sent. It takes what
//     encoding/json takes, and NaN and the infinities where a value may
//     stand; a body it does not take is [Unusable]. Keys given more than
//     once, and unknown keys that look like known fields, are judged on
//     the tree, in the values Parse reads.
//   - The rules: one pass over the tree, along the fields of the wire
//     types ([PingResponse] and its parts, the one description of the
//     reply's shape, which [JSONSchema] follows, field names matched as
//     encoding/json matches them), reads each value from its token and
//     judges it by the rules below. A value of the wrong JSON type is
//     refused first, with a warning, and a list over its limit is
//     counted, not read.
//
// Warnings come in that order: the text's, the keys', those about values
// of the wrong JSON type and lists over their limits, then the rules'.
//
// A patch is judged once: the one that Parse gives remembers it, with a
// fingerprint of what it says, and [Options.Check], the entry by which
// nodeapply and its steps take every patch, returns it as it is. A patch
// built by hand is judged by Check, by the same rules, with the same
// code: what a rule says of a reply's field it says of the patch's field
// that holds it. So is a judged patch changed after (its parts put in
// another order, a name repeated, a taint appended): its fingerprint no
// longer matches, and what Check gives for it, and so what nodeapply and
// its steps do with it, is what they do with the same patch built by
// hand.
//
// # The rules
//
// Each field is read and judged on its own, so a reply with a wrong
// "memory" still updates "cpu" and "taints". What is refused is left
// unchanged on the node, and a warning names its JSON path
// ("taints[2].effect") and what was done. Each rule has a name, which
// the warnings it gives carry ([Warning.Rule]) and which does not change
// when a rule is added. A caller that counts or sorts warnings asks
// [Warning.Subject] (the reply as a whole, a resource, a taint, a label,
// a device, a part), [Warning.Action] ([Refused]: not accepted, the node
// keeps what it has; [Repaired]: read to the safe side and used, like an
// unknown effect as NoSchedule; [Ignored]: passed over whole, like a list
// over its limit) and [Warning.Part] (the part of the backend it is
// about), never the path. [Kind], [Subject] and [Action] marshal as their
// names ("structured", "taint", "repaired").
//
//   - reply-unusable: A body larger than [Options.MaxBodyBytes], or one
//     that starts like a JSON object but does not parse, is ignored
//     whole: [Unusable], an empty patch.
//   - reply-encoding: A reply in UTF-16 or UTF-32 is decoded and read,
//     with a warning: JSON must be UTF-8.
//   - key-repeated: A key given more than once counts by its last value
//     (the earlier ones are passed over unread), with a warning.
//   - value-type: A value of the wrong JSON type (a number where a string
//     must be, NaN, an object for a list) is refused, and what the node
//     has for it stays; an effect that is no string is read as
//     NoSchedule, and a basis as "total" (the safe side).
//   - quantity-valid: Quantities must parse and must not be negative (the
//     API server would reject the node, and with it every later status
//     update), nor exceed what a scheduler counts in an int64.
//   - resource-nonzero: pods and ephemeralStorage of zero are refused
//     unless [Options.AllowZero], and so are cpu and memory of zero whose
//     basis is "total" (a zero among figures of what the backend has
//     available is rule resource-full's). Written, a total of zero (a
//     figure the plugin does not track, or a mistake) or no room for pods
//     silently drains the node (interLink issue #558), and no scratch
//     space keeps every pod that asks for it off the node; the tool for
//     "take no pods" is a taint. ephemeralStorage is Kubernetes'
//     ephemeral-storage, the scratch space the scheduler counts for pods
//     that request it (Slurm's TmpDisk per node, in MB, so "64000M"; an
//     HTCondor slot's Disk, in KiB, so "52428800Ki"): a node without it
//     takes no such pod.
//   - resource-full: A zero cpu or memory among figures of what the
//     backend has available now (resources.basis "available", or none,
//     wherever it stands in "resources") says the backend is full: a true
//     zero, as interLink's Slurm plugin sends when its cluster has no
//     room. The figure is not written, so the node keeps its capacity and
//     nothing is drained, and the patch records the resource in
//     [NodePatch.Full] (cpu before memory), with a warning; nodeapply then
//     takes no new pod on the node until a reply gives more (its rule
//     backend-full). With [Options.AllowZero] the zero is written as a
//     figure, and nothing is full. A part's figures are judged so, each
//     part on its own. In a patch built by hand, an entry of Full passes
//     as it is, once, unless it is no cpu or memory, or the resource has
//     a figure, which counts, or the basis is "total"; with AllowZero it
//     is written as a figure of zero.
//   - resource-whole: pods and accelerators must be whole numbers.
//   - resource-basis: resources.basis must be "available" or "total";
//     anything else is read as "total", so that nothing is added to
//     figures whose meaning is unknown.
//   - accelerator-name: accelerators[].resourceType must be an extended
//     resource name: a domain-prefixed qualified name outside
//     kubernetes.io, not starting with "requests." (nvidia.com/gpu,
//     xilinx.com/fpga). Zero is allowed: the devices are gone. A type
//     listed twice is summed. In a patch's Resources, a name other than
//     cpu, memory, pods, ephemeral-storage and hugepages-<size> is an
//     accelerator's.
//   - taint-valid: taints[].key must be a qualified name and value a
//     label value (empty or at most 63 characters); an entry with a bad
//     key is dropped, and one with a bad value is dropped while the
//     plugin's current taints with that key are kept
//     ([NodePatch.KeptTaintKeys]). An empty or unknown effect becomes
//     NoSchedule, the safe side.
//   - taint-unique: Taints are unique by key and effect: of a repeated
//     pair the last entry is kept.
//   - taint-reserved: Keys that Kubernetes controllers own
//     (node.kubernetes.io/*, node.cloudprovider.kubernetes.io/*,
//     node-role.kubernetes.io/*), pingnode's own (the taints nodeapply
//     puts on a node whose plugin does not answer,
//     pingnode.io/plugin-unreachable, on a part's node whose part the
//     reply no longer lists, pingnode.io/part-gone, and on a node whose
//     backend has no free cpu or memory now, pingnode.io/backend-full)
//     and the provider's protected keys ([DefaultProtectedKey] and
//     [Options.ProtectedKeys]) are dropped.
//   - list-limit: Over [Options.MaxAccelerators], [Options.MaxTaints] or
//     [Options.MaxLabels] entries, the whole list is ignored.
//   - label-valid: labels' keys must be qualified names and their values
//     label values (empty, or at most 63 characters). An entry with a bad
//     key is dropped, and one with a bad value, or a value that is not a
//     string, is dropped while the plugin's current label with that key
//     is kept ([NodePatch.KeptLabelKeys]).
//   - label-namespace: A label key must be in a namespace the provider
//     allows: its prefix is one of [DefaultLabelNamespaces]
//     (node-feature-discovery's, feature.node.kubernetes.io and
//     profile.node.kubernetes.io) or of [Options.LabelNamespaces], or a
//     subdomain of one. Whatever the options, no plugin sets an
//     unprefixed label (the cluster's users'), nor one in kubernetes.io,
//     k8s.io or their subdomains but those two (Kubernetes' and the
//     kubelet's; node-restriction.kubernetes.io is how administrators
//     fence nodes, KEP-279), nor one of the provider's own
//     ([Options.ProtectedLabels]): a node that could label itself there
//     could attract workloads dedicated to other nodes. Such entries are
//     dropped.
//   - resource-hugepages: hugepages maps a page size, written as the
//     kubelet writes it (a power of two below 1024 followed by Ki, Mi or
//     Gi: 2Mi, 1Gi), to the memory in pages of that size; it becomes the
//     resource hugepages-<size> that pods request. Zero is allowed (the
//     pages are gone); an entry with another size is dropped, and more
//     than 16 sizes are ignored whole.
//   - device-name: devices[].name must be a DNS label (lowercase letters,
//     digits and '-', starting and ending with a letter or digit) of at
//     most 56 characters, so that each device's name, the group's with
//     '-' and an index, is one too. An entry without a valid name is
//     dropped. Of entries with the same name the last counts, with a
//     warning: the earlier ones are passed over unread.
//   - device-fields: devices[].count is required: a whole number from 0
//     (none free) to [Options.MaxDevices], as a JSON number or a quantity
//     string ("8", "1k"). Each attribute's name, and each capacity's, is
//     a C identifier of at most 32 characters ("productName"), which
//     Kubernetes reads as in the driver's domain, or a lowercase DNS
//     subdomain of at most 63 characters, '/' and such an identifier
//     ("gpu.nvidia.com/memory"). An attribute has exactly one value that
//     is not null: "string" (at most 64 bytes), "int" (a whole JSON number
//     in an int64, read from its text: 80.0 is 80), "bool", or "version"
//     (a semantic version 2.0.0 of at most 64 bytes: "8.0.0", not "8.0").
//     A capacity is {"value": quantity}, not negative. A device has at
//     most 32 attributes and capacities together.
//   - device-taints: devices[].taints (absent, null or [] for healthy
//     devices) lists at most 16 taints, which go on each device of the
//     group in the reply's order, judged as the API server judges a
//     ResourceSlice device's: "key" a qualified name, "value" a label
//     value (empty, or at most 63 characters; null is empty), and
//     "effect" required, one of None (it tells, and does nothing),
//     NoSchedule (no new claim that does not tolerate it is given the
//     device) and NoExecute (the pods using the device are evicted too).
//     An empty or unknown effect is a mistake, not NoSchedule as for the
//     node's taints (PreferNoSchedule is a node's effect only). Keys that
//     Kubernetes controllers own on a node are a device's to use, and a
//     key and effect given twice are taken twice, as the API server takes
//     them.
//   - device-kept: An entry with a valid name and any other mistake (a
//     bad taint among them) is refused whole, with a warning for each
//     mistake, and the plugin's devices of that group are kept as they
//     are ([NodePatch.KeptDeviceGroups]): a group is never published in
//     part.
//   - device-limit: Over [Options.MaxDevices] entries, or counts that add
//     up to more than it, the whole list is ignored.
//   - device-not-counted: A reply that lists devices counts none of them
//     as accelerators: an accelerator other than 0 beside a devices list
//     is refused. The scheduler counts devices itself, and serves a
//     classic request (nvidia.com/gpu: 1) from them through a
//     DeviceClass's extendedResourceName (KEP-5004); a count of the same
//     GPUs beside them would let it give each twice. An accelerator of 0
//     is read, so that a plugin moving from counts to devices clears the
//     count an earlier reply left on the node.
//   - key-near-miss: An unknown key is ignored, but one that looks like a
//     known field of its object is ignored with a warning that names the
//     field meant ([Warning.Subject] is that field's): a near miss, one
//     insertion, deletion or substitution of a character or one swap of
//     two adjacent ones from a field of at least 5 characters
//     ("attribues", "memroy"), or a field with "s" or "es" added or taken
//     away or a final "y" as "ies" ("device", "attribute", "cpus",
//     "capacities"); or a field of another level, exactly in any letter
//     case: the reply's "resources", "taints", "labels" and "devices"
//     under "resources" or in a device group, and resources' fields at
//     the top of the reply. Letter case never counts ("Devices" is
//     devices, read as encoding/json reads it), and "status", for logs
//     only, has no near misses ("state", "stats"), so "message",
//     "timestamp", "error", "time" and "name" beside the reply's fields
//     stay silent. A reply gets at most 16 such warnings and one more
//     saying how many were left out; those in a value Parse passes over
//     (the earlier value of a repeated key, a list over its limit) are
//     not warned. In a part (rule part-entries), a resource's field is
//     warned as belonging in "resources", and "nodes" as belonging at the
//     top of the reply; "nodes" has "node" for its one near miss
//     ("notes", "codes" and "modes" are words of other replies).
//   - part-entries: "nodes" lists the backend's parts, its machines or
//     its partitions of identical machines, each a node of its own
//     ([NodePatch.Parts], sorted by name). An entry is an object whose
//     "name" is a DNS label (lowercase letters, digits and '-', starting
//     and ending with a letter or digit) of at most 63 characters: the
//     provider names the part's node after it and labels the node with
//     it. An entry that is no object, or has no valid name, is dropped
//     with a warning, and the list is then incomplete
//     ([NodePatch.PartsIncomplete]): the part it meant may be one the
//     provider serves, so no part leaves with this reply. Of entries with
//     the same name the last counts, with a warning: the earlier ones are
//     passed over unread. "nodes" absent or null is no news of the parts;
//     [] says the backend has none; over [Options.MaxParts] entries, or
//     not a list, it is ignored whole, and is no news either.
//   - part-fields: A part's resources, taints, labels and devices are read
//     by the rules of a reply's, each part on its own, and the paths of
//     their warnings start with its entry's ("nodes[3].resources.cpu").
//     The reply's taints and labels beside "nodes" are every part's,
//     before its own: a part's taints are the reply's, then its own,
//     unique by key and effect with the part's counting, as the last of a
//     repeated pair does (rule taint-unique); its labels are the reply's,
//     with its own over them. A part without a list of its own has the
//     reply's, shared, read-only. The reply's list refused whole (of the
//     wrong type, or over its limit) leaves every part's list of that
//     field unchanged, and so does a part's own refused whole. Beside
//     "nodes" the reply's taints and labels have at most [MaxShared]
//     entries each (each part with a list of its own gets a copy of
//     them); a part's own are judged by the limits of a reply's. (So
//     a part's patch holds at most MaxShared more than a reply's limit,
//     which is what [Options.Check] takes of a part's lists.)
//   - part-no-sum: Beside "nodes" (not null), the reply's "resources" and
//     "devices" are ignored with a warning: a sum is what the parts
//     replace. The patch itself then carries none of the four fields of a
//     node, only its parts, so a provider that serves no parts leaves its
//     node as it is with such a reply.
//   - patch-fields: A patch built by hand is read as the reply it stands
//     for ([Options.Check]): a list of taints, labels, devices or parts
//     without the field that says it replaces the node's (ReplaceTaints,
//     ReplaceLabels, ReplaceDevices, ReplaceParts) is no news, ignored
//     with a warning, and a part's patch lists no parts of its own.
//
// # What serializers write
//
// A reply is read as its author meant it, whatever the habits of the
// serializer that wrote it (Python, Node, .NET, Java, shell tools):
//
//   - A UTF-8 byte order mark (.NET, PowerShell) is ignored, as RFC 8259
//     lets a reader do. UTF-16 and UTF-32 text (Windows PowerShell's
//     default), told by its byte order mark or by the zero bytes beside the
//     first '{' (RFC 4627), is decoded and read, with a warning: JSON must
//     be UTF-8.
//   - Spaces, tabs, CR and LF around the object are JSON's whitespace:
//     CRLF line ends and trailing newlines change nothing.
//   - Field names match as encoding/json matches them: exactly, or else
//     without regard to case (.NET writes "Cpu" and "ResourceType").
//   - Numbers are read from their text, never through a float64: 64.0 and
//     1e3 are whole numbers, 9007199254740993 is exact, and an integer
//     beyond what a scheduler counts is too large (rule quantity-valid).
//   - NaN, Infinity and -Infinity (Python's json.dumps, Gson) and nan, inf,
//     -inf and -nan (C's printf) are no JSON numbers: a field that holds one
//     is refused as a value of the wrong type, with a warning, and the other
//     fields are read. In an unknown field they are ignored with it.
//   - A key given more than once counts by its last value, as in Python,
//     JavaScript and jq (a repeated object is not merged into the earlier
//     one), with a warning.
//   - A NUL or another control character makes a quantity, name, key,
//     value or effect invalid; warnings show it escaped. The status and a
//     device attribute's string are kept as sent.
//   - A second value after the object (two replies in one body, or
//     garbage) makes the reply [Unusable]: which part was meant is unknown.
//
// # Bounds
//
// No reply within [Options.MaxBodyBytes] costs more than a small multiple
// of decoding it with encoding/json (go test ./pingstatus -run '^$'
// -bench ParseWorstCase measures the worst case):
//
//   - The text is read once, in one pass and without recursion, into the
//     tree, with objects and arrays nested at most 10000 deep, as
//     encoding/json nests them; the keys and the rules each walk the
//     tree once, and only the values Parse reads.
//   - A quantity, string or JSON number, longer than 64 bytes is refused
//     without being parsed: the quantity parser's work grows faster than
//     its text. Every value that rule quantity-valid accepts is far shorter: it is below
//     2^63, so at most 19 digits before the point, and the quantity parser
//     keeps 9 after it (nano), so a plain decimal takes at most 30
//     characters with its sign, and a suffix or an exponent a few more.
//     Only a longer spelling of one (leading or trailing zeros) is refused. The JSON
//     Schema has the same bound.
//   - A decimal exponent beyond ±100 is judged without big arithmetic. With
//     at most 64 characters the mantissa lies between 10^-63 and 10^64, so
//     a larger exponent means too large, and a smaller one an amount below
//     1n, which the quantity parser rounds up to 1n as it does any other.
//   - A taint (the node's or a device's) or label key or resource type
//     longer than 317 bytes (a 253-byte prefix, '/' and a 63-byte name)
//     and a taint or label value longer than 63 are refused by their
//     length alone; a warning names a
//     label whose key is no qualified name by its key quoted and cut.
//   - A list over its limit (rules list-limit and device-limit), and a device's attributes
//     and capacity, or its taints, over theirs, are counted, not read.
//   - A device attribute's int is read from its text in one pass, however
//     long, never through big arithmetic; a string or version longer than
//     64 bytes and a group name longer than 56 are refused by their
//     length alone.
//   - Warnings quote a plugin's text escaped as a Go string and cut after
//     64 bytes, so a field of a megabyte never makes a warning of one.
//   - A reply of parts is read as one reply of each part: the work is
//     the same for 5,000 parts in one body as for the body's size in
//     one node's fields, and the parts are sorted once, by name.
//   - Only keys that name no field are compared with the fields (rule
//     key-near-miss), and only those of at most 18 characters, with the few fields of
//     their object and of one other level.
//
// # For plugin authors
//
// [PingResponse] and its parts are the wire types; [PingResponse.Validate]
// reports what a provider would refuse, and [JSONSchema] is the same format
// as a JSON Schema (draft 2020-12) for plugins in other languages.
//
// A reply is read the same way by every later release: what each body
// in the repository (the shared replies, real plugins' among them, the
// sample plugin's and interLink's plugin API's) was read as at a release
// is frozen in testdata/wire (its patch, and each warning's path, subject,
// action and rule; a warning's words may change), and a release that
// reads one otherwise names it in CHANGELOG.md. A patch release never
// does.
//
// Labels are best named as pods already select them on real nodes: GPU
// feature discovery's names for GPUs (nvidia.com/gpu.product, such as
// NVIDIA-A100-SXM4-80GB; nvidia.com/gpu.memory, in MiB;
// nvidia.com/gpu.count; nvidia.com/gpu.family;
// nvidia.com/cuda.driver.major), node-feature-discovery's
// feature.node.kubernetes.io/ for CPU model and flags, kernel and PCI
// devices (its custom- names for a plugin's own features, such as
// feature.node.kubernetes.io/custom-cvmfs), and
// profile.node.kubernetes.io/ for a whole profile, such as a software
// stack. The nvidia.com names need a provider that allows that namespace
// ([Options.LabelNamespaces]).
//
// Devices are best named as the driver they describe names them.
// NVIDIA's DRA driver (gpu.nvidia.com) publishes for each GPU the
// attributes type ("gpu"), uuid, productName, brand and architecture,
// the versions cudaComputeCapability and driverVersion, and the capacity
// memory. With the provider's driver set to gpu.nvidia.com, the same CEL
// selects a real node's GPU and a virtual node's:
// device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0.
// For device taints (KEP-5055, GA in Kubernetes 1.37) the driver uses
// gpu.nvidia.com/xid (NoSchedule, or None for an XID error that is not
// fatal), gpu.nvidia.com/gpu-lost (NoSchedule) and
// gpu.nvidia.com/unmonitored (None). Taints are per group: a plugin that
// tells one failing GPU from the others sends it as a group of its own.
package pingstatus
