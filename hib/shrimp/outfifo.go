package shrimp

// fifoOccupancy returns the Outgoing FIFO's occupancy in bytes.
func (n *NI) fifoOccupancy() int { return 0 }
