//go:build !unix

package main

import (
	"errors"
	"os"
)

func socketStdio() (stdin, stdout *os.File, theirs []*os.File, err error) {
	return nil, nil, nil, errors.New("-stdio sockets needs Unix")
}
