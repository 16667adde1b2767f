//go:build !linux

package socketclient

// writeAwait sends a request; the reply is read the ordinary way (see
// the Linux version for why it differs there).
func writeAwait(cn *conn, req []byte) error {
	_, err := cn.c.Write(req)
	return err
}
