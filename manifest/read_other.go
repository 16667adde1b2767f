//go:build !unix

package manifest

import "os"

// openFlags opens a manifest for reading. Outside Unix there are no named
// pipes in the file system to block on.
const openFlags = os.O_RDONLY
