package connlimit

import (
	"log"
	"net/http"
	"time"
)

// ServerBounds bound what one connection may hold of an http.Server.
type ServerBounds struct {
	ReadHeader     time.Duration // the request's headers
	Read           time.Duration // the whole request, body included
	Write          time.Duration // the answer, counted from the end of the request's headers
	Idle           time.Duration // a kept-alive connection between requests
	MaxHeaderBytes int
}

// HTTPServer is the one way tfyarn configures an http.Server that strangers
// can reach: h under bounds b, to be served on a Listener (its ConnContext
// is set, so that Trust finds a request's connection). errorLog may be nil
// for the standard logger.
func HTTPServer(h http.Handler, b ServerBounds, errorLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: b.ReadHeader,
		ReadTimeout:       b.Read,
		WriteTimeout:      b.Write,
		IdleTimeout:       b.Idle,
		MaxHeaderBytes:    b.MaxHeaderBytes,
		ConnContext:       ConnContext,
		ErrorLog:          errorLog,
	}
}
