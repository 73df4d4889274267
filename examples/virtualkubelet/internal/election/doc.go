// Package election elects, among replicas of the provider run for the
// same nodes (`-leader-elect`), the one that runs the nodes and
// pings: client-go's leader election with a Lease ([Election.Lead]). Only
// the leader writes the nodes, their Leases and their events; a standby
// writes nothing but its tries at the election Lease.
//
// The Lease is [Election]'s Namespace and Name, held under this replica's
// Identity: by default the host name and the process id
// ([DefaultIdentity]), in a Deployment the pod's name. The timings are
// kube-controller-manager's ([DefaultLease], [DefaultRenewDeadline],
// [DefaultRetryPeriod]): the leader renews the Lease every retry period;
// a standby tries every retry period, stretched at random by up to
// client-go's JitterFactor (1.2) times more, and takes the Lease once it
// has seen it unrenewed for the lease duration. [Election.Check] refuses
// what client-go's elector refuses, a renew deadline not shorter than the
// lease or not longer than 1.2 retry periods, and names the API server
// would refuse, each as a [setting.Error] that names its field: the
// command line checks the election at start, with or without
// `-leader-elect`, and reports each under its flag.
//
// A leader never writes beside another. One that cannot renew the Lease
// within the renew deadline is told so at once (Lead's lost), by a
// watchdog that looks every quarter retry period at the time of its last
// successful write of the Lease, while its work may still run: lost must
// stop every write, and the provider exits. The renew deadline is shorter
// than the lease, so the leader has stopped before any standby can take
// the Lease. client-go's own elector would cancel the work's context only
// after it had tried to release the Lease, up to one more renew deadline
// later, when a standby may be writing already. A leader whose context
// ends (the provider's, on SIGTERM) stops its work first, then releases
// the Lease, so that a standby takes it at its next try instead of
// waiting for the lease to run out, and carries on from the nodes as
// stored.
//
// What a replica's election says goes to its metrics ([metrics.Metrics]):
// pingnode_leader, 1 while it leads; and on standby /readyz, ready when
// its last try at the Lease reached the API server and was allowed (a
// read of the Lease some replica holds, or a write taken or lost to
// another's). A standby that may not read or write the Lease, or cannot
// reach the API server, is not ready. A read that finds no Lease says
// nothing yet: the create that follows does.
//
// The provider's end-to-end tests show it, with two replicas as child
// processes, each through a proxy of the API server that records its
// writes: TestLeaderTakeover (the leader killed, the standby leads within
// the lease and a jittered retry period or two), TestLeaderStepsDown (the
// leader's connection cut: it exits at the renew deadline, before the
// standby writes) and TestLeaderReleasesOnSIGTERM (the Lease released, the
// standby leads at its next try). Its rights are the election's rules in
// internal/rights: create a Lease in its namespace, get and update the
// election Lease by name, each shown needed by TestRightsEachNeeded.
package election
