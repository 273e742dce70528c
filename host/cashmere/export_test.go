package cashmere

// Internal functions the specs check directly.
var (
	DirWordOf   = dirWord
	DirPermOf   = dirPerm
	DirHomeOf   = dirHome
	PollValueOf = pollValue
)

// DirFixed is the fixed-home bit.
const DirFixed = dirFixed
