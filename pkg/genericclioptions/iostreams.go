package genericclioptions

import "io"

// IOStreams are the standard streams a command writes to, replaceable in tests.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}
