package ipc

import (
	"bytes"
	"testing"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/proto"
)

const fuzzMaxFrame = 1 << 16

func seedResponse(f *testing.F) []byte {
	h := &hadoopcommon.RpcResponseHeaderProto{
		CallId: proto.Uint32(7),
		Status: hadoopcommon.RpcResponseHeaderProto_SUCCESS.Enum(),
	}
	pkt, err := appendPacket(nil, fuzzMaxFrame, h, &hadoopcommon.UserInformationProto{EffectiveUser: proto.String("u")})
	if err != nil {
		f.Fatal(err)
	}
	return pkt
}

// FuzzReadFrame: any byte stream yields a frame no larger than the limit, or
// an error, without ever allocating much beyond what actually arrived.
func FuzzReadFrame(f *testing.F) {
	f.Add(seedResponse(f))
	f.Add(rawFrame(0xFFFFFFFF, nil))
	f.Add(rawFrame(fuzzMaxFrame+1, []byte{1}))
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for {
			frame, err := readFrame(r, fuzzMaxFrame)
			if err != nil {
				return
			}
			if len(frame) > fuzzMaxFrame || cap(frame) > 2*len(data)+frameChunk {
				t.Fatalf("frame len %d cap %d from %d input bytes", len(frame), cap(frame), len(data))
			}
		}
	})
}

// FuzzDecodeResponse: any frame decodes to a header (and body within the
// frame) or an error, never a panic.
func FuzzDecodeResponse(f *testing.F) {
	f.Add(seedResponse(f)[4:])
	f.Add([]byte{0x7f, 1, 2})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, body, err := decodeResponse(frame)
		if err != nil {
			return
		}
		if len(body) > len(frame) {
			t.Fatalf("body of %d bytes from a %d-byte frame", len(body), len(frame))
		}
		if h.GetStatus() != hadoopcommon.RpcResponseHeaderProto_SUCCESS {
			_ = newRemoteError(h).Error()
			return
		}
		_ = decodeBody(body, &hadoopcommon.UserInformationProto{})
	})
}

// FuzzReadSasl: the SASL negotiation reader survives any server bytes.
func FuzzReadSasl(f *testing.F) {
	id := saslCallID
	pkt, _ := appendPacket(nil, fuzzMaxFrame, &hadoopcommon.RpcResponseHeaderProto{
		CallId: proto.Uint32(uint32(id)),
		Status: hadoopcommon.RpcResponseHeaderProto_SUCCESS.Enum(),
	}, &hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_NEGOTIATE.Enum(), Auths: []*hadoopcommon.RpcSaslProto_SaslAuth{tokenOffer}})
	f.Add(pkt)
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &rawStreamForTest{r: bytes.NewReader(data)}
		_, _ = readSasl(s, fuzzMaxFrame)
		ws := &wrapStream{raw: s, wrapper: xorWrapper{max: 8}, maxFrame: fuzzMaxFrame}
		_, _ = readFrame(ws, fuzzMaxFrame)
	})
}

type rawStreamForTest struct{ r *bytes.Reader }

func (s *rawStreamForTest) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s *rawStreamForTest) Write(p []byte) (int, error) { return len(p), nil }
func (s *rawStreamForTest) Flush() error                { return nil }
