// Package mlflow is a client of an MLflow tracking server's REST API
// (experiments, runs, batches of params, tags and metrics, a run's end) and
// of its artifact proxy (--serve-artifacts, the mlflow-artifacts API),
// configured from MLflow's own environment variables. Every call has a
// deadline, reads a bounded answer and wraps its cause. It also says what
// tfyarn logs of a job at its end (run.go).
package mlflow

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// MLflow's own variables: the tracking server, its credentials and TLS.
const (
	EnvTrackingURI = "MLFLOW_TRACKING_URI"
	EnvToken       = "MLFLOW_TRACKING_TOKEN"
	EnvUsername    = "MLFLOW_TRACKING_USERNAME"
	EnvPassword    = "MLFLOW_TRACKING_PASSWORD"
	EnvInsecureTLS = "MLFLOW_TRACKING_INSECURE_TLS"
	EnvServerCert  = "MLFLOW_TRACKING_SERVER_CERT_PATH"
	EnvClientCert  = "MLFLOW_TRACKING_CLIENT_CERT_PATH"
	EnvRunID       = "MLFLOW_RUN_ID"
	EnvExperiment  = "MLFLOW_EXPERIMENT_ID"
)

// SecretVariables are the credentials among MLflow's variables: a job's
// tasks and AM get them sealed, like --secret-env values.
var SecretVariables = []string{EnvToken, EnvUsername, EnvPassword}

// TLSVariables are MLflow's TLS settings, passed to tasks as they are
// (the certificate paths must name files on every node).
var TLSVariables = []string{EnvInsecureTLS, EnvServerCert, EnvClientCert}

// Bounds of what the client reads and sends.
const (
	// DefaultCallTimeout bounds one call when the caller's context has no
	// earlier deadline.
	DefaultCallTimeout = 15 * time.Second
	// maxResponseBytes bounds an answer: a run with its data is far less.
	maxResponseBytes = 4 << 20
	// MaxArtifactBytes bounds one uploaded artifact.
	MaxArtifactBytes = 64 << 20
)

// ErrNoTrackingURI: MLFLOW_TRACKING_URI is not set.
var ErrNoTrackingURI = errors.New("MLFLOW_TRACKING_URI is not set: export the tracking server's URL (http://host:port) first")

// Config locates the tracking server and says how to authenticate.
type Config struct {
	TrackingURI string
	// Token is sent as a bearer token; Username and Password, when both
	// set, as basic authentication instead (as MLflow's own client does).
	Token, Username, Password string
	InsecureTLS               bool
	// ServerCertPath is a PEM bundle of the CAs the server's certificate is
	// checked against; ClientCertPath a PEM with a client certificate and
	// its key.
	ServerCertPath, ClientCertPath string
	CallTimeout                    time.Duration
}

// ConfigFromEnv reads MLflow's variables through getenv. A tracking URI
// that is not an http(s) URL is refused: the REST API is all tfyarn speaks.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		TrackingURI: strings.TrimRight(getenv(EnvTrackingURI), "/"),
		Token:       getenv(EnvToken), Username: getenv(EnvUsername), Password: getenv(EnvPassword),
		InsecureTLS:    strings.EqualFold(getenv(EnvInsecureTLS), "true"),
		ServerCertPath: getenv(EnvServerCert), ClientCertPath: getenv(EnvClientCert),
	}
	if cfg.TrackingURI == "" {
		return Config{}, ErrNoTrackingURI
	}
	u, err := url.Parse(cfg.TrackingURI)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Config{}, fmt.Errorf("MLFLOW_TRACKING_URI %q is not an http(s) URL of a tracking server: give one such as http://host:5000", cfg.TrackingURI)
	}
	if u.User != nil {
		return Config{}, errors.New("MLFLOW_TRACKING_URI holds credentials: give them in MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD instead")
	}
	return cfg, nil
}

// Client calls one tracking server.
type Client struct {
	cfg  Config
	base string
	hc   *http.Client
}

// New makes a client; it fails on certificate files it cannot use.
func New(cfg Config) (*Client, error) {
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil                                                                            // loopback and cluster-internal servers: no environment proxy in the way
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureTLS} // only when MLFLOW_TRACKING_INSECURE_TLS=true asks for it
	if cfg.ServerCertPath != "" {
		pem, err := os.ReadFile(cfg.ServerCertPath)
		if err != nil {
			return nil, fmt.Errorf("mlflow: %s: %w", EnvServerCert, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mlflow: %s %s holds no PEM certificate", EnvServerCert, cfg.ServerCertPath)
		}
		tlsConf.RootCAs = pool
	}
	if cfg.ClientCertPath != "" {
		pem, err := os.ReadFile(cfg.ClientCertPath)
		if err != nil {
			return nil, fmt.Errorf("mlflow: %s: %w", EnvClientCert, err)
		}
		cert, err := tls.X509KeyPair(pem, pem)
		if err != nil {
			return nil, fmt.Errorf("mlflow: %s %s: a PEM with the certificate and its key: %w", EnvClientCert, cfg.ClientCertPath, err)
		}
		tlsConf.Certificates = []tls.Certificate{cert}
	}
	tr.TLSClientConfig = tlsConf
	return &Client{cfg: cfg, base: strings.TrimRight(cfg.TrackingURI, "/"), hc: &http.Client{Transport: tr}}, nil
}

// APIError is the server's refusal: its HTTP status and MLflow's error code.
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	msg := e.Message
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	if e.Code == "" {
		return fmt.Sprintf("HTTP %d: %s", e.Status, msg)
	}
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, msg)
}

// IsCode says whether err is the server's refusal with MLflow's code.
func IsCode(err error, code string) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == code
}

// call sends one request (a JSON body when in is not nil; raw bytes when
// it is a []byte) and decodes the JSON answer into out (if not nil).
func (c *Client) call(ctx context.Context, method, path string, query url.Values, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	err := c.roundTrip(ctx, method, path, query, in, out)
	if err != nil {
		return fmt.Errorf("mlflow: %s %s: %w", method, path, err)
	}
	return nil
}

func (c *Client) roundTrip(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body io.Reader
	contentType := ""
	switch v := in.(type) {
	case nil:
	case []byte:
		body, contentType = bytes.NewReader(v), "application/octet-stream"
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		body, contentType = bytes.NewReader(data), "application/json"
	}
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	c.authenticate(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	if len(data) > maxResponseBytes {
		return fmt.Errorf("the answer is over %d bytes", maxResponseBytes)
	}
	if resp.StatusCode/100 != 2 {
		ae := &APIError{Status: resp.StatusCode}
		var e struct {
			Code    string `json:"error_code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &e) == nil && (e.Code != "" || e.Message != "") {
			ae.Code, ae.Message = e.Code, e.Message
		} else {
			ae.Message = strings.TrimSpace(string(data))
		}
		return ae
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding the answer: %w", err)
	}
	return nil
}

func (c *Client) authenticate(req *http.Request) {
	switch {
	case c.cfg.Username != "" && c.cfg.Password != "":
		req.SetBasicAuth(c.cfg.Username, c.cfg.Password)
	case c.cfg.Token != "":
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
}
