package lciscen

import (
	"fmt"
	"unsafe"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/scenario"
)

// The bounds of the LCI scenarios' counts and sizes: each is derived from
// scenario.MemoryBudget and what one unit costs in lcitb's measurements,
// or from a limit of the model, and says which in its error (issue 12:
// these were plain constants, 10000 or 100000 iterations, 4 MiB sizes,
// 256 MiB of payload).

// timeEntryBytes is what a measurement keeps per iteration or message it
// times: derived: one clock.Time in a slice grown by append (the ping-pong's
// send times, the stream's completion times), up to 3 while it grows (the
// old array and the new one of twice its length): 3 x 8 B. calibrated
// check: a 2-node ping-pong's live heap (collected every 2048 events) grew
// by 24 B per round trip from 500 to 2500 round trips.
var timeEntryBytes = 3 * int64(unsafe.Sizeof(clock.Time(0)))

// bcastEntryBytes is what a broadcast measurement keeps per multicast:
// derived: the receivers it reached (an int) and its last arrival (a
// clock.Time), made at full length before the run: 16 B, as measured (16 B
// per multicast on 8 nodes, 500 against 2500).
var bcastEntryBytes = int64(unsafe.Sizeof(int(0)) + unsafe.Sizeof(clock.Time(0)))

// payloadByteBytes is what one byte of a stream's payload costs while the
// run lasts. calibrated: a stream of 8 messages of 1 MiB peaked at 8085032
// B of live heap: the sender queues every message at once, one copy of
// each payload.
const payloadByteBytes = 1

// maxPayload is the payload (messages x size) a run may queue: what fits in
// scenario.MemoryBudget at payloadByteBytes per byte. 100000 messages of
// 4 MB once passed validation and asked for 400 GB.
const maxPayload = scenario.MemoryBudget / payloadByteBytes

// maxMessageBytes is the largest message lcitb measures: the model's limit,
// Bench.validate's for a message fragmented at the MTU (16 MiB).
const maxMessageBytes = 1 << 24

// mtu is the LCI firmware's packet size: the model's limit for one packet
// («2 KB MTU»).
const mtu = 2048

// checkPayload refuses messages x size above maxPayload, naming key.
func checkPayload(key string, messages, size int) error {
	return scenario.CheckBudget(key, int64(messages)*int64(size), payloadByteBytes,
		fmt.Sprintf("payload byte the sender queues (%d messages x %d bytes)", messages, size))
}

// timesKey bounds a count of timed iterations or messages by the memory
// budget at timeEntryBytes each.
func timesKey(k scenario.KeySpec, what string) scenario.KeySpec {
	return k.Budget(timeEntryBytes, what+"'s time in a growing slice")
}

// maxPauseUs is scenario.MaxDelay in microseconds: the longest delay a
// scenario accepts.
const maxPauseUs = int64(scenario.MaxDelay / clock.Microsecond)
