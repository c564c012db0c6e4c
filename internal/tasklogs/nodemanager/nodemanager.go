// Package nodemanager reads a running container's log files from its
// NodeManager's web services (/ws/v1/node/containers/<id>/logs), the way
// Hadoop's `yarn logs` does for running applications, and follows them.
//
// The NodeManager answers a file request with `yarn logs`' header (its
// LogLength is the file's length at that moment) and, with size=-K, only
// the file's last K bytes: a follower asks for what grew since it last
// looked, plus a margin, and checks the header's length to stitch the
// pieces together without gaps or repeats.
package nodemanager

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to NodeManagers' web services.
type Client struct {
	hc *http.Client
	// User is sent as user.name, which clusters with simple HTTP
	// authentication may require.
	User string
	// Scheme is http or https (yarn.http.policy).
	Scheme string
}

// callTimeout bounds one request: a log piece is at most maxPiece bytes.
const callTimeout = 15 * time.Second

// maxPiece bounds the bytes one request may return (and so the memory a
// follower uses per file); longer files are read in pieces from their end.
const maxPiece = 8 << 20

// maxListing bounds a container's log listing (JSON).
const maxListing = 1 << 20

// New returns a client with bounded dials and calls and no HTTP proxy (the
// NodeManagers are on the cluster's network).
func New(user string) *Client {
	return &Client{User: user, Scheme: "http", hc: &http.Client{
		Timeout:   callTimeout,
		Transport: &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext},
	}}
}

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// FileInfo is one log file of a container.
type FileInfo struct {
	Name     string
	Size     int64
	Modified string // as the NodeManager formats it (Hadoop's Times.format)
}

// Error is a NodeManager's refusal: its status and first line.
type Error struct {
	URL    string
	Status int
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("nodemanager: %s: %d %s", e.URL, e.Status, e.Msg)
}

// UnknownContainer reports whether the NodeManager does not (or no longer)
// know the container: it ended and its application finished, or it never
// ran there.
func UnknownContainer(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.Status == http.StatusNotFound || strings.Contains(e.Msg, "Unknown container"))
}

func (c *Client) url(nm, container, file string, q url.Values) string {
	p := "/ws/v1/node/containers/" + url.PathEscape(container) + "/logs"
	if file != "" {
		p += "/" + url.PathEscape(file)
	}
	if c.User != "" {
		if q == nil {
			q = url.Values{}
		}
		q.Set("user.name", c.User)
	}
	u := c.Scheme + "://" + nm + p
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

func (c *Client) get(ctx context.Context, u, accept string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("nodemanager: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("nodemanager: %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &Error{URL: u, Status: resp.StatusCode, Msg: firstLine(body)}
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("nodemanager: %s: answer longer than %d bytes", u, limit)
	}
	return body, nil
}

// firstLine is a refusal's message: the RemoteException's, else the
// body's first line.
func firstLine(b []byte) string {
	var re struct {
		RemoteException struct{ Message string } `json:"RemoteException"`
	}
	if json.Unmarshal(b, &re) == nil && re.RemoteException.Message != "" {
		return re.RemoteException.Message
	}
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 300 {
		s = s[:300]
	}
	return s
}

// List returns a running container's log files.
func (c *Client) List(ctx context.Context, nm, container string) ([]FileInfo, error) {
	body, err := c.get(ctx, c.url(nm, container, "", nil), "application/json", maxListing)
	if err != nil {
		return nil, err
	}
	return parseListing(body)
}

func parseListing(body []byte) ([]FileInfo, error) {
	// One container: an object; Hadoop wraps lists of one as an object
	// rather than an array in some versions, so accept both.
	var v struct {
		Info json.RawMessage `json:"containerLogsInfo"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("nodemanager: log listing: %w", err)
	}
	var infos []json.RawMessage
	if err := json.Unmarshal(v.Info, &infos); err != nil {
		infos = []json.RawMessage{v.Info}
	}
	var out []FileInfo
	for _, raw := range infos {
		var ci struct {
			Files json.RawMessage `json:"containerLogInfo"`
			Type  string          `json:"logAggregationType"`
		}
		if err := json.Unmarshal(raw, &ci); err != nil {
			return nil, fmt.Errorf("nodemanager: log listing: %w", err)
		}
		if ci.Type != "" && ci.Type != "LOCAL" {
			continue
		}
		type file struct {
			Name     string `json:"fileName"`
			Size     string `json:"fileSize"`
			Modified string `json:"lastModifiedTime"`
		}
		var files []file
		if err := json.Unmarshal(ci.Files, &files); err != nil {
			var one file
			if json.Unmarshal(ci.Files, &one) != nil {
				continue
			}
			files = []file{one}
		}
		for _, f := range files {
			n, err := strconv.ParseInt(f.Size, 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("nodemanager: log listing: %s: size %q", f.Name, f.Size)
			}
			out = append(out, FileInfo{Name: f.Name, Size: n, Modified: f.Modified})
		}
	}
	return out, nil
}

// Piece is part of a log file: Data are the file's bytes [Offset,
// Offset+len(Data)) and Length was the file's length when read.
type Piece struct {
	Offset int64
	Length int64
	Data   []byte
}

// Tail reads at most the last max bytes (1..maxPiece) of a running
// container's log file.
func (c *Client) Tail(ctx context.Context, nm, container, file string, max int64) (Piece, error) {
	if max <= 0 || max > maxPiece {
		max = maxPiece
	}
	q := url.Values{"size": {strconv.FormatInt(-max, 10)}}
	body, err := c.get(ctx, c.url(nm, container, file, q), "text/plain", max+64<<10)
	if err != nil {
		return Piece{}, err
	}
	return parsePiece(body, max)
}

// parsePiece reads the NodeManager's answer: `yarn logs`' header, whose
// LogLength is the file's length, then min(max, length) bytes of content.
func parsePiece(body []byte, max int64) (Piece, error) {
	r := bufio.NewReader(bytes.NewReader(body))
	length := int64(-1)
	hdr := 0
	for i := 0; i < 16; i++ {
		line, err := r.ReadString('\n')
		if err != nil {
			return Piece{}, errors.New("nodemanager: answer without LogContents header")
		}
		hdr += len(line)
		line = strings.TrimSuffix(line, "\n")
		if v, ok := strings.CutPrefix(line, "LogLength:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return Piece{}, fmt.Errorf("nodemanager: LogLength %q", v)
			}
			length = n
		}
		if line == "LogContents:" {
			if length < 0 {
				return Piece{}, errors.New("nodemanager: answer without LogLength")
			}
			n := length
			if n > max {
				n = max
			}
			if int64(len(body)-hdr) < n {
				return Piece{}, fmt.Errorf("nodemanager: answer has %d of %d bytes", len(body)-hdr, n)
			}
			return Piece{Offset: length - n, Length: length, Data: body[hdr : int64(hdr)+n]}, nil
		}
	}
	return Piece{}, errors.New("nodemanager: answer without LogContents header")
}

// NoNativeLibrary is what NeedsNativeLibrary's failures mean.
const NoNativeLibrary = "the NodeManager cannot read container logs in secure mode without Hadoop's native library"

// NeedsNativeLibrary reports whether err is a secure NodeManager's failure
// to read a log file without Hadoop's native library (SecureIOUtils needs
// libhadoop.so): it fails so for every container's every file.
func NeedsNativeLibrary(err error) bool {
	var e *Error
	// The first read after the NodeManager starts fails in SecureIOUtils'
	// static initialiser (ExceptionInInitializerError, the class not named
	// in the answer); every later one says it could not initialise the class.
	return errors.As(err, &e) && e.Status == 500 && (strings.Contains(e.Msg, "SecureIOUtils") || strings.Contains(e.Msg, "ExceptionInInitializerError"))
}

// Explain adds what a NodeManager's known failures mean: in secure mode it
// reads logs through SecureIOUtils, which needs Hadoop's native library.
func Explain(err error) error {
	var e *Error
	if NeedsNativeLibrary(err) {
		return fmt.Errorf("%w (%s)", err, NoNativeLibrary)
	}
	if errors.As(err, &e) && e.Status == 401 {
		return fmt.Errorf("%w (the NodeManager's web services want SPNEGO authentication, hadoop.http.authentication.type=kerberos, which tfyarn does not speak)", err)
	}
	return err
}
