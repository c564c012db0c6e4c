package hdfs

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoophdfs"
)

// renameNoReplace renames src to dst, failing (isExists) when dst exists.
//
// colinmarc's Rename always overwrites, which would let a concurrent uploader
// replace a cache file after another submission described it to YARN (new
// mtime: that application's localization fails). ClientProtocol.rename2 with
// overwriteDest=false is atomic on the NameNode, so it goes over our own ipc
// client with our own generated messages (yarnpb/hadoophdfs).
func (fs *FS) renameNoReplace(ctx context.Context, src, dst string) error {
	return fs.rename2(ctx, src, dst, false)
}

// renameReplacing renames src to dst, atomically replacing dst if it
// exists: readers see either the old file or the new one, never neither.
func (fs *FS) renameReplacing(ctx context.Context, src, dst string) error {
	return fs.rename2(ctx, src, dst, true)
}

func (fs *FS) rename2(ctx context.Context, src, dst string, overwrite bool) error {
	return fs.rpc.Call(ctx, "rename2", rename2Request(src, dst, overwrite), &hadoophdfs.Rename2ResponseProto{})
}

func rename2Request(src, dst string, overwrite bool) *hadoophdfs.Rename2RequestProto {
	return &hadoophdfs.Rename2RequestProto{
		Src:           proto.String(src),
		Dst:           proto.String(dst),
		OverwriteDest: proto.Bool(overwrite),
	}
}
