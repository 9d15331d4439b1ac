package mailpatch

import "context"

// ReadThread is ReadThreadContext without a deadline, for the tests.
func ReadThread(inputs []Input, series string, opts Options) (*Thread, error) {
	return ReadThreadContext(context.Background(), inputs, series, opts)
}
