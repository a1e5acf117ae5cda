package device

import (
	"fmt"
	"strconv"
)

func wrap(err error, context string) error { return fmt.Errorf("%s: %w", context, err) }

func hex(v uint64) string { return strconv.FormatUint(v, 16) }
