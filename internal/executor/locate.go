package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
)

// Bounds of the search for a new AM (Config.Locate).
const (
	// DefaultAMLostAfter: an AM that has not answered this long is looked
	// for elsewhere.
	DefaultAMLostAfter = 10 * time.Second
	// DefaultAMLostTimeout: without any AM for this long the launcher stops
	// looking, says so, and leaves its program running (YARN still stops
	// the container when the job ends). It covers YARN noticing a lost
	// node (yarn.nm.liveness-monitor.expiry-interval-ms, 10 minutes by
	// default) and starting the next attempt.
	DefaultAMLostTimeout = 15 * time.Minute
	// maxSavedAM bounds the saved state read (the AM's task table: about
	// 120 bytes a task).
	maxSavedAM = 4 << 20
)

// hdfsLocator reads the current AM's address from where the AM saves it
// (contract.AMLocator), with the container's HDFS delegation tokens.
func hdfsLocator(l contract.AMLocator, creds *security.Credentials) rendezvous.Locator {
	conf := hadoopconf.New(nil)
	for k, v := range l.Conf {
		conf.Set(k, v)
	}
	opts := hdfs.Options{User: l.User}
	if creds != nil {
		for _, t := range creds.TokensOfKind(security.KindHDFSDelegation) {
			opts.Tokens = append(opts.Tokens, t.Token)
		}
	}
	return func(ctx context.Context) (string, error) {
		if v, _ := conf.Get("hadoop.security.authentication"); v == "kerberos" {
			// Reading a file's blocks needs a Kerberos login; delegation
			// tokens only reach the NameNode.
			return "", fmt.Errorf("reading %s: %w", l.Path, hdfs.ErrTokenOnly)
		}
		fs, err := hdfs.ConnectOptions(ctx, conf, opts)
		if err != nil {
			return "", err
		}
		defer fs.Close()
		f, err := fs.Open(ctx, l.Path)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", l.Path, err)
		}
		defer f.Close()
		if f.Size() > maxSavedAM {
			return "", fmt.Errorf("reading %s: larger than %d bytes", l.Path, maxSavedAM)
		}
		data := make([]byte, f.Size())
		if _, err := f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("reading %s: %w", l.Path, err)
		}
		return decodeSavedAM(l.Path, data)
	}
}

// decodeSavedAM is the address in an AM's saved state.
func decodeSavedAM(path string, data []byte) (string, error) {
	var st contract.SavedAM
	if err := json.Unmarshal(data, &st); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	if st.AM == "" {
		return "", fmt.Errorf("reading %s: no AM address in it", path)
	}
	return st.AM, nil
}

// locatorOption is the rendezvous client's locator for cfg, nil without
// one.
func locatorOption(cfg *Config, log *logger) rendezvous.ClientOption {
	if cfg.Locate == nil {
		return nil
	}
	return rendezvous.WithLocator(rendezvous.LocatorConfig{
		Locate: cfg.Locate,
		Where:  cfg.LocateWhere,
		After:  cfg.AMLostAfter,
		GiveUp: cfg.AMLostTimeout,
		Moved: func(addr string, err error) {
			if err != nil {
				log.printf("the AM moved to %s (found in %s); registering there again failed: %v", addr, cfg.LocateWhere, err)
				return
			}
			log.printf("the AM moved to %s (found in %s): registered there again", addr, cfg.LocateWhere)
		},
	})
}
