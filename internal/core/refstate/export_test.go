package refstate

// WaitingCreates is how many Creates wait for the push in flight.
func (s *Store) WaitingCreates() int {
	s.creates.mu.Lock()
	defer s.creates.mu.Unlock()
	return len(s.creates.waiting)
}
