// Command patchctl validates Linux kernel patches for RDMA and NVMe over
// Fabrics end to end: import from mailing-list copies, apply to pinned
// kernel trees, check, build and boot. Each verb lives in its own file;
// the work is done by the stage packages under internal/.
package main

import (
	"os"
)

func main() {
	os.Exit(execute(os.Args[1:], stdIO()))
}
