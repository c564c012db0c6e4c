package hdfs

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// renameNoReplace renames src to dst, failing (isExists) when dst exists.
//
// colinmarc's Rename always overwrites, which would let a concurrent uploader
// replace a cache file after another submission described it to YARN (new
// mtime: that application's localization fails). ClientProtocol.rename2 with
// overwriteDest=false is atomic on the NameNode, so it goes over our own ipc
// client. The messages are colinmarc's generated types, found by name in the
// protobuf registry (its packages are internal, and yarnpb carries only the
// delegation-token part of ClientNamenodeProtocol).
func (fs *FS) renameNoReplace(ctx context.Context, src, dst string) error {
	return fs.rename2(ctx, src, dst, false)
}

// renameReplacing renames src to dst, atomically replacing dst if it
// exists: readers see either the old file or the new one, never neither.
func (fs *FS) renameReplacing(ctx context.Context, src, dst string) error {
	return fs.rename2(ctx, src, dst, true)
}

func (fs *FS) rename2(ctx context.Context, src, dst string, overwrite bool) error {
	req, resp, err := rename2Messages(src, dst, overwrite)
	if err != nil {
		return err
	}
	return fs.rpc.Call(ctx, "rename2", req, resp)
}

func rename2Messages(src, dst string, overwrite bool) (req, resp proto.Message, err error) {
	rq, err := newMessage("hadoop.hdfs.Rename2RequestProto")
	if err != nil {
		return nil, nil, err
	}
	setField(rq, "src", protoreflect.ValueOfString(src))
	setField(rq, "dst", protoreflect.ValueOfString(dst))
	setField(rq, "overwriteDest", protoreflect.ValueOfBool(overwrite))
	rs, err := newMessage("hadoop.hdfs.Rename2ResponseProto")
	if err != nil {
		return nil, nil, err
	}
	return rq.Interface(), rs.Interface(), nil
}

func newMessage(name protoreflect.FullName) (protoreflect.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
	if err != nil {
		return nil, fmt.Errorf("protobuf type %s (from colinmarc/hdfs) not linked in: %w", name, err)
	}
	return mt.New(), nil
}

// setField panics on a wrong name: that is a programming error, caught by the
// unit tests that build every request.
func setField(m protoreflect.Message, name protoreflect.Name, v protoreflect.Value) {
	fd := m.Descriptor().Fields().ByName(name)
	if fd == nil {
		panic(fmt.Sprintf("hdfs: %s has no field %s", m.Descriptor().FullName(), name))
	}
	m.Set(fd, v)
}
