package orca

// Encode and Decode expose the operation record.
func Encode(obj int, op uint32, arg int64) []byte { return encode(obj, op, arg) }

// Decode decodes an operation record.
func Decode(b []byte) (int, uint32, int64, []byte, bool) { return decode(b) }
