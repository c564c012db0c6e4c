package hdfs

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
)

// DelegationToken asks the NameNode for an HDFS delegation token that
// renewer (a principal; Hadoop keeps its short name) may renew. The token's
// service names this filesystem as Hadoop's clients name it: "ip:port", or
// "ha-hdfs:<nameservice>". The NameNode issues tokens only to Kerberos
// logins.
func (fs *FS) DelegationToken(ctx context.Context, renewer string) (security.Token, error) {
	return delegationToken(ctx, fs.rpc, fs.target, renewer)
}

func delegationToken(ctx context.Context, rpc *ipc.Client, target hadoopconf.HDFSTarget, renewer string) (security.Token, error) {
	resp := &hadoopcommon.GetDelegationTokenResponseProto{}
	err := rpc.Call(ctx, "getDelegationToken", &hadoopcommon.GetDelegationTokenRequestProto{Renewer: proto.String(renewer)}, resp)
	if err != nil {
		return security.Token{}, &TokenError{URI: target.URI, Op: "cannot get a delegation token from", Err: err}
	}
	p := resp.GetToken()
	if p == nil || len(p.GetIdentifier()) == 0 {
		return security.Token{}, &TokenError{URI: target.URI, Op: "cannot get a delegation token from",
			Err: errors.New("the NameNode issued none (it issues tokens only to Kerberos logins)")}
	}
	return security.Token{
		Identifier: append([]byte(nil), p.GetIdentifier()...),
		Password:   append([]byte(nil), p.GetPassword()...),
		Kind:       p.GetKind(),
		Service:    target.TokenService(),
	}, nil
}

// RenewDelegationToken renews tok at its filesystem (this login must be its
// renewer) and returns when it now expires.
func (fs *FS) RenewDelegationToken(ctx context.Context, tok security.Token) (time.Time, error) {
	return renewToken(ctx, fs.rpc, fs.target, tok)
}

func renewToken(ctx context.Context, rpc *ipc.Client, target hadoopconf.HDFSTarget, tok security.Token) (time.Time, error) {
	req := &hadoopcommon.RenewDelegationTokenRequestProto{Token: &hadoopcommon.TokenProto{
		Identifier: tok.Identifier, Password: tok.Password, Kind: proto.String(tok.Kind), Service: proto.String(tok.Service),
	}}
	resp := &hadoopcommon.RenewDelegationTokenResponseProto{}
	if err := rpc.Call(ctx, "renewDelegationToken", req, resp); err != nil {
		return time.Time{}, &TokenError{URI: target.URI, Op: "cannot renew " + tok.String() + " at", Err: err}
	}
	return time.UnixMilli(int64(resp.GetNewExpiryTime())), nil
}

// FetchDelegationTokens gets one HDFS delegation token, renewable by
// renewer, from each filesystem (hdfs://host:port or hdfs://nameservice,
// resolved through conf) with the Kerberos login. With renew (renewer must
// then be this login), each token is renewed once, which tells when it
// expires: the earliest expiry is returned (zero without renew).
func FetchDelegationTokens(ctx context.Context, conf *hadoopconf.Config, login *security.KerberosLogin, renewer string, uris []string, renew bool) ([]security.Token, time.Time, error) {
	var (
		out      []security.Token
		earliest time.Time
	)
	for _, uri := range uris {
		target, err := conf.HDFS(uri)
		if err != nil {
			return nil, time.Time{}, err
		}
		auth, err := nameNodeAuth(conf, target, Options{Kerberos: login})
		if err != nil {
			return nil, time.Time{}, err
		}
		rpc, err := newNameNodeRPC(target, auth, DefaultConnectTimeout, DefaultIOTimeout)
		if err != nil {
			return nil, time.Time{}, err
		}
		tok, err := delegationToken(ctx, rpc, target, renewer)
		if err == nil && renew {
			var exp time.Time
			exp, err = renewToken(ctx, rpc, target, tok)
			if earliest.IsZero() || exp.Before(earliest) {
				earliest = exp
			}
		}
		rpc.Close()
		if err != nil {
			return nil, time.Time{}, err
		}
		out = append(out, tok)
	}
	return out, earliest, nil
}

// RenewDelegationTokens renews, with the Kerberos login (their renewer), each
// of toks at the filesystem of uris its service names. It returns those it
// renewed and an error for each one it could not: past its maximum lifetime,
// cancelled, or a filesystem that did not answer. A token of no filesystem
// of uris is neither.
func RenewDelegationTokens(ctx context.Context, conf *hadoopconf.Config, login *security.KerberosLogin, uris []string, toks []security.Token) ([]security.Token, []error) {
	var (
		renewed []security.Token
		errs    []error
	)
	for _, uri := range uris {
		target, err := conf.HDFS(uri)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var mine []security.Token
		for _, t := range toks {
			if t.Service == target.TokenService() {
				mine = append(mine, t)
			}
		}
		if len(mine) == 0 {
			continue
		}
		auth, err := nameNodeAuth(conf, target, Options{Kerberos: login})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rpc, err := newNameNodeRPC(target, auth, DefaultConnectTimeout, DefaultIOTimeout)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, t := range mine {
			if _, err := renewToken(ctx, rpc, target, t); err != nil {
				errs = append(errs, err)
				continue
			}
			renewed = append(renewed, t)
		}
		rpc.Close()
	}
	return renewed, errs
}

// TokenError is a delegation-token call that failed.
type TokenError struct {
	URI string // the filesystem
	Op  string
	Err error
}

func (e *TokenError) Error() string {
	return "hdfs: " + e.Op + " " + e.URI + ": " + describe(e.Err)
}
func (e *TokenError) Unwrap() error { return e.Err }
