package rma

// SetNextReq sets the next request id (specs stand for a counter that
// has wrapped around).
func (k *Kernel) SetNextReq(id uint16) { k.nextReq = id }
