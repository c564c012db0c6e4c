// Package rendezvous is the channel between each task's launcher
// (`tfyarn task`, package executor) and the ApplicationMaster.
//
// A launcher registers its task's address, long-polls for the cluster spec
// the AM publishes once every chief, worker and ps task has registered,
// long-polls for a stop order while its program runs (and, beside it, for
// fresh Hadoop credentials the AM publishes), and reports how the program
// exited.
//
// The protocol is HTTP/1.1 with (sealed) JSON bodies under PathPrefix,
// mounted beside the AM's web UI:
//
//	POST PathPrefix+"register"           Registration       → 200
//	GET  PathPrefix+"spec?task=worker:1&wait=20000"         → 200 {"cluster":…,"program":…} | 204 not yet
//	GET  PathPrefix+"stop?task=worker:1&container=…&wait=…" → 200 {"reason":…}  | 204 not yet
//	GET  PathPrefix+"credentials?task=worker:1&after=N&wait=…" → 200 {"version":M,"credentials":base64 HDTS} | 204 no newer
//	GET  PathPrefix+"warning?task=worker:1&container=…&after=N&wait=…" → 200 {"seq":M,"kind":…,"deadline_unix_ms":…,"reason":…} | 204 none newer
//	POST PathPrefix+"exit"               ExitReport         → 200
//
// The spec's "program" (WithPrograms, program.go) is what the launcher
// runs: the job's command, arguments and environment as base64 bytes. It
// comes this way, not in the container's launch context, because the
// NodeManager rewrites and shell-expands what a launch context holds.
//
// While its program runs a launcher also long-polls for the AM's warnings
// for its own container, one after another (Board.Warn, warning.go): a
// preemption the ResourceManager announced, with its deadline, or the
// job's GPUs idle.
//
// The credentials (Board.PublishCredentials, at most MaxCredentialsBytes)
// never hold an AMRMToken or the secret; an AM whose Handler is not a
// CredentialsHandler answers 404 (ErrNotServed), as an older AM does.
//
// Each launcher holds the key of its own container only: ContainerKey,
// HMAC-SHA256 of the container id under the per-application secret (32
// random bytes, see NewSecret), which the AM alone holds and hands each
// container in its credentials under SecretAlias (never on a command line
// or in the environment: YARN writes the file readable by the container's
// user only). A request names its container (reqsign.HeaderSigner) and is
// signed with that container's key over the method, the request URI, the
// container, a timestamp, a random nonce and the SHA-256 of the body as
// sent: package reqsign's scheme, the one every request between our
// processes uses, under the rendezvous's own purposes. Every body, both ways, is sealed (AES-256-GCM under a key derived
// from the container's) and bound to its request, so refreshed tokens and
// stderr tails never cross the network in clear.
//
// The server checks the signed headers before it reads a byte of the body
// (the digest is among what is signed), then reads exactly the declared
// length (at most MaxBodyBytes sealed) and compares it. It refuses bad
// signatures, timestamps outside its clock-skew window and nonces it has
// seen (replays), with an unsigned 401 that closes the connection, and
// logs the refusal without the key or the signature: the first few one
// by one, each field clipped, then a count a minute (package refusals),
// so strangers cannot fill the AM's log. A request that
// passes is the container's own: the server asks the Handler whether that
// container may act as the task the request names (Authorize: only the
// task the AM gave it), so a launcher cannot report, stop or wait as
// another task. Every answer to an authenticated request is signed over
// the request's signature, the status and the body, so a launcher only
// believes an answer from its own AM to this very request; no refusal of
// an unauthenticated request is ever signed. An answer that does not
// verify is no answer: the client retries it as it would a refused
// connection, and asks its locator for a new AM, so whoever binds a dead
// attempt's port and answers 401 cannot pin a launcher there.
//
// Strangers' connections are bounded (HTTPServer, package connlimit):
// at most MaxUnauthenticatedConns of them, the oldest closed for a new
// one; a connection leaves that pool once it carried a signed request.
package rendezvous
