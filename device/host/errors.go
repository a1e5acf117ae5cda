package host

import "errors"

// ErrInvalidOptions is returned by New for Options that no WebGPU adapter
// could report: a limit below WebGPU's minimum, an alignment that is not a
// power of two, a CopyAlignment other than 4 or a MapAlignment other than 8,
// or a negative fault count.
var ErrInvalidOptions = errors.New("host: invalid options")
