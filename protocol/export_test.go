package protocol

// pendingBytes returns the bytes the live sessions hold for their
// clients: produced, not yet written.
func (s *Server) pendingBytes() int {
	n := 0
	for _, ss := range s.liveSessions() {
		ss.out.mu.Lock()
		n += ss.out.pending
		ss.out.mu.Unlock()
	}
	return n
}
