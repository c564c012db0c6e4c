// Package torchstore serves a key-value store in the protocol of PyTorch's
// TCPStore (c10d), the store torchrun's c10d rendezvous backend and
// torch.distributed's env:// initialisation talk to. tfyarn hosts it where
// the port was reserved, so that no process of the job has to bind a port
// another process could take first.
//
// The protocol, as torch's TCPStore client speaks it (learnt from torch's
// sources, torch/csrc/distributed/c10d/TCPStore*.cpp): a connection starts
// with VALIDATE (the byte 0, then the 32-bit magic number 0x3C85F7CE);
// then each command is one byte followed by its arguments. Integers are
// little-endian (the client sends them in its machine's order, and every
// platform torch ships for is little-endian); a key or a value is a 64-bit
// length followed by its bytes. Replies follow the same encoding. Every
// length is bounded (MaxKeyLen, MaxValueLen, MaxKeys) and the store as a
// whole too (MaxStoreBytes, MaxConns), so that no client can make the
// server allocate without limit. A key or a value grows as its bytes
// arrive (never to its announced length at once), out of a budget of
// MaxInFlightBytes shared by all requests being read; a request must
// arrive within RequestTimeout of its first byte, while a connection
// silent between requests (a client blocked in WAIT) is never timed out.
package torchstore
