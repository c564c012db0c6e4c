package appmaster

import (
	"bytes"
	"net/http"
	"time"

	"github.com/tfyarn/tfyarn/internal/connlimit"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/reqsign"
)

// The owner's status requests (contract.StatusRequestPurpose): the clock
// skew allowed between the client and the AM, and the nonces remembered
// within it. A client polls about once a second, so a few owners' clients
// stay far below the bound; when full, the AM refuses rather than forgets
// (the client tries again at its next poll).
const (
	statusSkew      = 5 * time.Minute
	statusMaxNonces = 20000
)

// statusAuth checks the owner's signed requests for contract.StatusPath
// and signs the AM's answers to them.
type statusAuth struct {
	key      []byte // contract.StatusSigningKey
	verifier *reqsign.Verifier
	now      func() time.Time
}

func newStatusAuth(statusKey []byte) *statusAuth {
	return &statusAuth{
		key:      contract.StatusSigningKey(statusKey),
		verifier: reqsign.NewVerifier(statusSkew, statusMaxNonces),
		now:      time.Now,
	}
}

// serve answers a request signed with the status key, fresh (within the
// skew) and never seen before, with next's answer signed over the
// request's signature; every other request gets 401 and why, unsigned.
func (a *statusAuth) serve(w http.ResponseWriter, r *http.Request, next http.Handler) error {
	s, err := reqsign.Parse(contract.StatusRequestPurpose, r)
	if err == nil {
		err = a.verifier.Verify(s, a.key, a.now())
	}
	if err == nil {
		// A status request has no body: the client signs the empty one.
		err = s.CheckBody(nil)
	}
	if err != nil {
		http.Error(w, "the job's status needs a fresh request signed with its owner's status key (tfyarn status as the job's owner): "+err.Error(), http.StatusUnauthorized)
		return err
	}
	// The owner's client keeps its connection through a flood of
	// strangers' ones (package connlimit).
	connlimit.Trust(r.Context())
	ans := &bufferedAnswer{header: http.Header{}, code: http.StatusOK}
	next.ServeHTTP(ans, r)
	h := w.Header()
	for k, v := range ans.header {
		h[k] = v
	}
	h.Set(reqsign.HeaderSignature, reqsign.SignResponse(a.key, contract.StatusAnswerPurpose, s.Signature, ans.code, ans.body.Bytes()))
	w.WriteHeader(ans.code)
	_, _ = w.Write(ans.body.Bytes())
	return nil
}

// bufferedAnswer holds an answer whole, so that it is signed before a
// byte of it is sent.
type bufferedAnswer struct {
	header http.Header
	code   int
	wrote  bool
	body   bytes.Buffer
}

func (b *bufferedAnswer) Header() http.Header { return b.header }

func (b *bufferedAnswer) WriteHeader(code int) {
	if !b.wrote {
		b.code, b.wrote = code, true
	}
}

func (b *bufferedAnswer) Write(p []byte) (int, error) {
	b.wrote = true
	return b.body.Write(p)
}
