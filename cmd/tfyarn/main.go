// Command tfyarn runs distributed TensorFlow on Hadoop YARN and inspects the
// cluster and its applications, speaking YARN's native RPC (no JVM).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
