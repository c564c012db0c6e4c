// Package reqsign signs and checks every request between tfyarn's own
// processes, one scheme for all of them:
//
//   - a launcher's calls to its ApplicationMaster, and the AM's answers
//     (package rendezvous);
//   - a new AM attempt's call to a launcher's control port (package
//     amattempt);
//   - the owner's client asking the AM for the job's status, and the AM's
//     answer (package contract's StatusSigningKey).
//
// Every key is HMAC-SHA256 of a purpose string under its parent key
// (DeriveKey), so a key, and every MAC made with it, is valid for one use
// only. A request's signature (Request, Sign) is HMAC-SHA256 over one
// canonical message: the purpose, the method, the request URI, the signer
// (whose key signs: a container id), a timestamp, a random nonce and the
// SHA-256 of the body as sent. It travels in five headers (HeaderSigner
// and the others), so the receiver checks it (Parse, Verifier.Verify)
// before it reads a byte of the body: form first, then the MAC in
// constant time, then the timestamp against a bounded clock skew, and
// last the nonce against a bounded replay cache, which only correctly
// signed requests enter. An answer is signed over the request's
// signature, its status and its body (SignResponse, CheckResponse), so it
// counts only as the answer to that very request.
//
// What a request says beyond this (the sealing of the rendezvous's
// bodies, who may act as which task, which AM attempt is newer) is its
// user's business.
package reqsign
