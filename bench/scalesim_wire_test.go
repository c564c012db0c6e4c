//go:build bench

package bench

import (
	"errors"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// The ResourceTracker messages a NodeManager exchanges with the ResourceManager
// (Hadoop's yarn_server_common_service_protos and yarn_server_common_protos), written field by
// field with protowire: only the fields the simulated NodeManagers send or read, by the field
// numbers of Hadoop's wire format. internal/yarnpb has the messages they embed (NodeIdProto,
// ResourceProto, ContainerStatusProto, ...), which are marshalled whole.

// resourceTrackerProtocol is the ResourceManager's protocol for NodeManagers (tracker port).
const resourceTrackerProtocol = "org.apache.hadoop.yarn.server.api.ResourceTrackerPB"

// Field numbers of Hadoop's messages that the simulation uses.
const (
	// RegisterNodeManagerRequestProto
	regNodeID    = 1
	regHTTPPort  = 3
	regResource  = 4
	regNMVersion = 5
	// RegisterNodeManagerResponseProto
	regRespContainerKey = 1
	regRespNMKey        = 2
	regRespAction       = 3
	regRespDiagnostics  = 5
	// NodeHeartbeatRequestProto
	hbNodeStatus       = 1
	hbLastContainerKey = 2
	hbLastNMKey        = 3
	// NodeStatusProto
	nsNodeID     = 1
	nsResponseID = 2
	nsContainers = 3
	nsHealth     = 4
	// NodeHealthStatusProto
	healthOK     = 1
	healthReport = 2
	healthTime   = 3
	// NodeHeartbeatResponseProto
	hbRespResponseID   = 1
	hbRespContainerKey = 2
	hbRespNMKey        = 3
	hbRespAction       = 4
	hbRespCleanup      = 5
	hbRespAppsCleanup  = 6
	hbRespInterval     = 7
	hbRespDiagnostics  = 8
	hbRespRemoveFromNM = 9
	// MasterKeyProto
	keyID    = 1
	keyBytes = 2
	// ContainerTokenIdentifierProto (yarn_security_token.proto)
	containerTokenID   = 1
	containerTokenSize = 4
)

// NodeActionProto's values.
const (
	actionNormal   = 0
	actionResync   = 1
	actionShutdown = 2
)

// masterKey is a MasterKeyProto: the ResourceManager's key for container tokens or NMTokens.
type masterKey struct {
	ID    int32
	Bytes []byte
}

func (k *masterKey) encode() []byte {
	b := protowire.AppendTag(nil, keyID, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(uint32(k.ID)))
	b = protowire.AppendTag(b, keyBytes, protowire.BytesType)
	return protowire.AppendBytes(b, k.Bytes)
}

// rawMessage carries bytes encoded here through ipc.Client.Call, which takes proto.Messages:
// an Empty whose unknown fields are the message.
func rawMessage(b []byte) *emptypb.Empty {
	m := &emptypb.Empty{}
	m.ProtoReflect().SetUnknown(b)
	return m
}

func rawBytes(m *emptypb.Empty) []byte { return m.ProtoReflect().GetUnknown() }

func appendMessage(b []byte, field protowire.Number, m proto.Message) []byte {
	enc, err := proto.Marshal(m)
	if err != nil {
		panic(err) // only messages built here, always valid
	}
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, enc)
}

func appendBytesField(b []byte, field protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarintField(b []byte, field protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, field, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func encodeRegister(node *hadoopyarn.NodeIdProto, httpPort int32, res *hadoopyarn.ResourceProto, version string) []byte {
	b := appendMessage(nil, regNodeID, node)
	b = appendVarintField(b, regHTTPPort, uint64(uint32(httpPort)))
	b = appendMessage(b, regResource, res)
	return appendBytesField(b, regNMVersion, []byte(version))
}

// heartbeat is what one NodeHeartbeatRequestProto carries.
type heartbeat struct {
	Node          *hadoopyarn.NodeIdProto
	ResponseID    int32
	Containers    []*hadoopyarn.ContainerStatusProto
	ContainerKey  *masterKey
	NMKey         *masterKey
	HealthReportT int64 // epoch ms
}

func (h heartbeat) encode() []byte {
	var health []byte
	health = appendVarintField(health, healthOK, 1)
	health = appendBytesField(health, healthReport, nil)
	health = appendVarintField(health, healthTime, uint64(h.HealthReportT))
	status := appendMessage(nil, nsNodeID, h.Node)
	status = appendVarintField(status, nsResponseID, uint64(uint32(h.ResponseID)))
	for _, c := range h.Containers {
		status = appendMessage(status, nsContainers, c)
	}
	status = appendBytesField(status, nsHealth, health)
	b := appendBytesField(nil, hbNodeStatus, status)
	if h.ContainerKey != nil {
		b = appendBytesField(b, hbLastContainerKey, h.ContainerKey.encode())
	}
	if h.NMKey != nil {
		b = appendBytesField(b, hbLastNMKey, h.NMKey.encode())
	}
	return b
}

// trackerAnswer is what the simulation reads of a RegisterNodeManagerResponseProto or a
// NodeHeartbeatResponseProto.
type trackerAnswer struct {
	ResponseID    int32
	ContainerKey  *masterKey
	NMKey         *masterKey
	Action        int
	Diagnostics   string
	IntervalMS    int64
	Cleanup       []*hadoopyarn.ContainerIdProto // containers to stop
	RemoveFromNM  []*hadoopyarn.ContainerIdProto // completed ones the RM has seen
	AppsToCleanup []*hadoopyarn.ApplicationIdProto
}

// fieldHandler reads one field's value; typ says how it is encoded.
type fieldHandler func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error

// eachField walks the top-level fields of b: bytes fields as v, varints as n.
func eachField(b []byte, f fieldHandler) error {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return protowire.ParseError(l)
		}
		b = b[l:]
		var v []byte
		var n uint64
		switch typ {
		case protowire.BytesType:
			v, l = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			n, l = protowire.ConsumeVarint(b)
		default:
			l = protowire.ConsumeFieldValue(num, typ, b)
		}
		if l < 0 {
			return protowire.ParseError(l)
		}
		b = b[l:]
		if err := f(num, typ, v, n); err != nil {
			return err
		}
	}
	return nil
}

func decodeMasterKey(b []byte) (*masterKey, error) {
	k := &masterKey{}
	err := eachField(b, func(num protowire.Number, _ protowire.Type, v []byte, n uint64) error {
		switch num {
		case keyID:
			k.ID = int32(n)
		case keyBytes:
			k.Bytes = append([]byte(nil), v...)
		}
		return nil
	})
	return k, err
}

func decodeRegisterAnswer(b []byte) (trackerAnswer, error) {
	var a trackerAnswer
	err := eachField(b, func(num protowire.Number, _ protowire.Type, v []byte, n uint64) error {
		var err error
		switch num {
		case regRespContainerKey:
			a.ContainerKey, err = decodeMasterKey(v)
		case regRespNMKey:
			a.NMKey, err = decodeMasterKey(v)
		case regRespAction:
			a.Action = int(n)
		case regRespDiagnostics:
			a.Diagnostics = string(v)
		}
		return err
	})
	return a, err
}

func decodeHeartbeatAnswer(b []byte) (trackerAnswer, error) {
	var a trackerAnswer
	err := eachField(b, func(num protowire.Number, _ protowire.Type, v []byte, n uint64) error {
		var err error
		switch num {
		case hbRespResponseID:
			a.ResponseID = int32(n)
		case hbRespContainerKey:
			a.ContainerKey, err = decodeMasterKey(v)
		case hbRespNMKey:
			a.NMKey, err = decodeMasterKey(v)
		case hbRespAction:
			a.Action = int(n)
		case hbRespDiagnostics:
			a.Diagnostics = string(v)
		case hbRespInterval:
			a.IntervalMS = int64(n)
		case hbRespCleanup, hbRespRemoveFromNM:
			id := &hadoopyarn.ContainerIdProto{}
			if err = proto.Unmarshal(v, id); err == nil {
				if num == hbRespCleanup {
					a.Cleanup = append(a.Cleanup, id)
				} else {
					a.RemoveFromNM = append(a.RemoveFromNM, id)
				}
			}
		case hbRespAppsCleanup:
			id := &hadoopyarn.ApplicationIdProto{}
			if err = proto.Unmarshal(v, id); err == nil {
				a.AppsToCleanup = append(a.AppsToCleanup, id)
			}
		}
		return err
	})
	return a, err
}

// containerOfToken reads a container token's identifier (ContainerTokenIdentifierProto): the
// container's id and resource.
func containerOfToken(identifier []byte) (*hadoopyarn.ContainerIdProto, *hadoopyarn.ResourceProto, error) {
	var id *hadoopyarn.ContainerIdProto
	res := &hadoopyarn.ResourceProto{}
	err := eachField(identifier, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case containerTokenID:
			id = &hadoopyarn.ContainerIdProto{}
			return proto.Unmarshal(v, id)
		case containerTokenSize:
			return proto.Unmarshal(v, res)
		}
		return nil
	})
	if err == nil && id == nil {
		err = errors.New("the container token names no container")
	}
	return id, res, err
}
