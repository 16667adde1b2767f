package protocol

// heldBytes returns the bytes the live sessions hold on behalf of their
// requests, as their budgets count them.
func (s *Server) heldBytes() int {
	n := 0
	for _, ss := range s.liveSessions() {
		n += int(ss.budget.inUse())
	}
	return n
}
