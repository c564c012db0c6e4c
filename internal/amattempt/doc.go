// Package amattempt is what one ApplicationMaster attempt leaves the next
// (--am-attempts above 1) and how the launchers of the tasks a new attempt
// adopts come to know it.
//
// With --am-attempts, YARN keeps a dead attempt's containers running and
// hands them to the next attempt. Each attempt saves its State (its
// rendezvous address, the table of running tasks, the restarts so far) in
// the job's staging directory (FileName, through Store and Saver); the
// next attempt reads it back and decides which tasks it adopts (that
// decision is the AM core's, not this package's). The package does no
// HDFS I/O itself: the AM hands Store its own reads and writes, so the
// launcher, which uses this package only for its control port, links no
// HDFS client.
//
// Launchers never read HDFS to find the new attempt: tasks talk only to
// the AM, and under Kerberos a container's delegation tokens reach the
// NameNode but not the DataNodes, so reading the saved file failed there.
// Instead every launcher of a job that allows several attempts listens on
// a small control port (Listen) on its container's host and announces it
// when it registers (rendezvous.Registration.ControlPort); the AM saves it
// with the task table. A new attempt, having read the table, calls every
// adopted launcher there (Announce) with its own address, and the
// launcher's rendezvous client moves there once its old AM stops
// answering (Listener.Locate is its rendezvous.Locator) and registers
// again, as it did when the address came from HDFS. So the new address
// travels the same way as everything else: from the AM to the task.
//
// An announcement is a single POST (AnnouncePath) of at most
// MaxAnnouncement bytes, signed like every request between our processes
// (package reqsign) with a key derived from the container's rendezvous
// key (rendezvous.ContainerKey of the job's secret, which every attempt
// shares and which only the AM and that container hold) under a purpose
// of its own. The launcher checks the signature before it reads the body:
// the MAC, a time within AnnounceSkew of its clock, a nonce it never saw;
// then that the call names its own container and that its attempt is
// newer than any it heard (its own AM's at first): another user on the
// node, who has no key, cannot redirect a launcher, and a captured
// announcement replayed is refused. The port's connections, headers,
// bodies and times are bounded (connlimit and the server's timeouts);
// refusals are logged without the key, and only the first few of them
// one by one, then a count a minute (package refusals).
// Even a launcher sent to a wrong address would gain nothing: every answer
// of the rendezvous server is signed with the container's key.
//
// What changes for a cluster: each such task holds one more TCP port on
// its node, which the node of a later attempt must be able to reach (the
// same as the tasks' own ports).
package amattempt
