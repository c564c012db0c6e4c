// Package rendezvous is the channel between each task's launcher
// (`tfyarn task`, package executor) and the ApplicationMaster.
//
// A launcher registers its task's address, long-polls for the cluster spec
// the AM publishes once every chief, worker and ps task has registered,
// long-polls for a stop order while its program runs (and, beside it, for
// fresh Hadoop credentials the AM publishes), and reports how the program
// exited.
//
// The protocol is HTTP/1.1 with JSON bodies under PathPrefix, so it can be
// inspected with curl and mounted beside the AM's web UI:
//
//	POST PathPrefix+"register"           Registration       → 200
//	GET  PathPrefix+"spec?task=worker:1&wait=20000"         → 200 {"cluster":…} | 204 not yet
//	GET  PathPrefix+"stop?task=worker:1&container=…&wait=…" → 200 {"reason":…}  | 204 not yet
//	GET  PathPrefix+"credentials?task=worker:1&after=N&wait=…" → 200 {"version":M,"credentials":base64 HDTS} | 204 no newer
//	GET  PathPrefix+"preemption?task=worker:1&container=…&wait=…" → 200 {"deadline_unix_ms":…,"reason":…} | 204 not yet
//	POST PathPrefix+"exit"               ExitReport         → 200
//
// While its program runs a launcher also long-polls for a preemption
// warning for its own container (Board.WarnPreemption, preemption.go): the
// AM passes on what the ResourceManager announced, with the deadline.
//
// The credentials (Board.PublishCredentials, at most MaxCredentialsBytes)
// never hold an AMRMToken or the secret; an AM whose Handler is not a
// CredentialsHandler answers 404 (ErrNotServed), as an older AM does.
//
// Every request is signed with HMAC-SHA256 under a per-application secret
// (32 random bytes, see NewSecret) over the method, the request URI, a
// timestamp, a random nonce and the body's SHA-256. The server refuses bad
// signatures, timestamps outside its clock-skew window and nonces it has
// seen (replays), always with 401, and logs the refusal without the
// secret or the signature. Every response is signed too, over the
// request's nonce, the status and the body, so a launcher only believes
// a cluster spec that came from its own AM and answers this very request.
//
// The secret reaches containers in their Hadoop credentials file under
// SecretAlias, never on a command line or in the environment: YARN writes
// the file readable by the container's user only.
package rendezvous
