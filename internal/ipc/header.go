package ipc

import (
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/proto"
)

// Fixed call ids and preamble values from Hadoop's RpcConstants and AuthProtocol.
const (
	connectionContextCallID int32 = -3
	saslCallID              int32 = -33

	rpcVersion   byte = 9
	serviceClass byte = 0
	authNone     byte = 0
	authSASL     byte = 0xDF // (byte)-33

	invalidRetryCount int32 = -1
)

var preambleMagic = [4]byte{'h', 'r', 'p', 'c'}

func preamble(sasl bool) []byte {
	auth := authNone
	if sasl {
		auth = authSASL
	}
	return []byte{preambleMagic[0], preambleMagic[1], preambleMagic[2], preambleMagic[3], rpcVersion, serviceClass, auth}
}

func requestHeader(callID, retry int32, clientID []byte) *hadoopcommon.RpcRequestHeaderProto {
	return &hadoopcommon.RpcRequestHeaderProto{
		RpcKind:    hadoopcommon.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
		RpcOp:      hadoopcommon.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId:     proto.Int32(callID),
		ClientId:   clientID,
		RetryCount: proto.Int32(retry),
	}
}

// decodeResponse splits a response frame into its header and, for SUCCESS,
// the raw delimited-body payload (the caller unmarshals it off the reader goroutine).
func decodeResponse(frame []byte) (*hadoopcommon.RpcResponseHeaderProto, []byte, error) {
	h := &hadoopcommon.RpcResponseHeaderProto{}
	rest, err := unmarshalDelimited(frame, h)
	if err != nil {
		return nil, nil, err
	}
	if h.GetStatus() != hadoopcommon.RpcResponseHeaderProto_SUCCESS {
		return h, nil, nil
	}
	return h, rest, nil
}

// decodeBody reads the delimited response message of a SUCCESS frame. A frame
// with nothing after the header is taken as an empty message rather than an
// error, since an empty protobuf message and no message look alike to Java.
func decodeBody(rest []byte, m proto.Message) error {
	if len(rest) == 0 {
		proto.Reset(m)
		return nil
	}
	rest, err := unmarshalDelimited(rest, m)
	if err == nil && len(rest) != 0 {
		return errMalformed
	}
	return err
}
