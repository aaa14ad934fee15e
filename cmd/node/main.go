// Command node is the weir node binary with the sample jobs registered: keycount, keysum,
// wordcount and backpressure. Run `node help` for its commands and flags.
package main

import (
	"os"

	"github.com/weirstream/weir/cli"
)

func main() {
	registerSamples()
	registerBench()
	registerChaos()
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
