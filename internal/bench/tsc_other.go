//go:build !amd64

package bench

func rdtsc() uint64 { return 0 }

const haveTSC = false
