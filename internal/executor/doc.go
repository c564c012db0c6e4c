// Package executor is the launcher that runs in each task's container
// (`tfyarn task`): it reserves the task's port, meets the other tasks
// through the AM (package rendezvous), runs the user's program with
// TF_CONFIG, and reports how it ended. It talks to the AM only, never to
// YARN or HDFS.
//
// # The port race, and how the launcher avoids it
//
// A TensorFlow task must announce its port before its program starts,
// since every task needs everyone's address in TF_CONFIG. Launchers that
// pick a free port, close it and hope (TonY before port reuse, TFMesos)
// leave a window, often tens of seconds of Python imports, in which any
// other process on the node can be handed the same port, and the training
// dies with "address already in use". This launcher never lets go of the
// port until the program holds it: it binds the port with SO_REUSEPORT
// (and without SO_REUSEADDR) and does not listen. That blocks every other
// bind on the node, explicit or ephemeral, while a socket of the same user
// that also sets SO_REUSEPORT can bind it: TensorFlow's gRPC server does
// when TF_GRPC_REUSE_PORT=true (TensorFlow ≥ 2.3), which the launcher sets
// unless the user chose otherwise. Once /proc/net/tcp shows a listener on
// the port, the launcher closes its socket; the port changes hands without
// ever being free. Because the launcher's socket never listens, it never
// receives a connection meant for TensorFlow.
package executor
